/**
 * Placeholders for the control paths missing at the top of a writable root (a `freecode.json`,
 * `.mcp.json` or `.git` that is not there yet). bubblewrap can hold a name only with a mount
 * point, and a mount point needs an entry on the host: so before a sandboxed command starts, each
 * missing one is made here as an empty folder (git shows no empty folder, and the config loader
 * reads one as no file), bound read-only inside, and removed once no running sandbox, of this
 * process or another, still relies on it.
 *
 * "No longer relied on" is the kernel's answer, not a count kept here: removing an entry that is
 * a mount point in another mount namespace detaches that mount there, so a placeholder removed
 * while a concurrent call, a background job or another process's sandbox still runs would open
 * the hole in that sandbox. Each command that relies on placeholders has a manifest in the
 * registry (a folder of this user's, never writable from inside) naming them, and bubblewrap
 * writes the host pid of the sandbox's first process into the manifest's `.info` file
 * (`--info-fd`). That process is the PID namespace's init: it turns zombie only after every
 * other process of the sandbox is gone, so "that pid is gone or a zombie" means nothing inside
 * can still see the mount. Before bubblewrap has written it, the manifest counts as live while
 * its writer runs (for a bounded time). Making, adopting and removing placeholders happen under
 * one lock per registry (an abstract Unix socket, which the kernel frees if its holder dies). A
 * call adopts the placeholders an earlier one left, and removal is left to `collect` (the
 * sandbox runs it every second while any remain): removing a folder is the costly part.
 */
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { processWide } from "../process-wide/process-wide.ts"
import { CONTROL_PATHS } from "./control-paths.ts"

/** The names a placeholder may stand for: the first name of every control path. */
export const TOP_CONTROL_NAMES: ReadonlyArray<string> = [...new Set(CONTROL_PATHS.map((c) => c.path.split("/")[0]!))]

/** Without bubblewrap's answer, a manifest counts as live this long while its writer runs, and this long after. */
const PENDING_MS = 60_000
const ORPHAN_MS = 10_000
/** How long to wait for the lock before the command is refused (it never runs unguarded). */
const LOCK_WAIT_MS = 5_000

interface Held {
  readonly path: string
  readonly dev: number
  readonly ino: number
}

interface Manifest {
  readonly pid: number
  readonly start: string
  readonly ns: string
  readonly created: number
  readonly paths: ReadonlyArray<Held>
}

export interface Hold {
  /** The placeholders this command relies on (existing empty folders): bind them read-only. */
  readonly paths: ReadonlyArray<string>
  /** Where bubblewrap writes its `--info-fd` answer. */
  readonly info: string
}

const readText = (p: string): string | undefined => {
  try {
    return NodeFs.readFileSync(p, "utf8")
  } catch {
    return undefined
  }
}

/** Field 22 of /proc/PID/stat (its start time), or its state (field 3); counted after the last `)`. */
const statFields = (pid: number): ReadonlyArray<string> | undefined => {
  const stat = readText(`/proc/${pid}/stat`)
  return stat?.slice(stat.lastIndexOf(")") + 2).split(" ")
}

/** This process as a manifest names it (its pid, start time and PID namespace), read once, on first use. */
const self = processWide("this process", () => {
  let ns = ""
  try {
    ns = NodeFs.readlinkSync("/proc/self/ns/pid")
  } catch {}
  return { pid: process.pid, start: statFields(process.pid)?.[19] ?? "", ns }
})
const me = () => self.get()

/** Running and not a zombie: a PID namespace's init is a zombie only once all inside are gone. */
const running = (pid: number): boolean => {
  const state = statFields(pid)?.[0]
  return state !== undefined && state !== "Z" && state !== "X"
}

const live = (m: Manifest, info: string | undefined, now: number): boolean => {
  // Another PID namespace's pids cannot be asked after from here: only its own writers judge it.
  if (m.ns !== me().ns || m.ns === "") return true
  const child = info === undefined ? undefined : /"child-pid":\s*(\d+)/.exec(info)?.[1]
  if (child !== undefined) return running(Number(child))
  const age = now - m.created
  if (age < ORPHAN_MS) return true
  return age < PENDING_MS && statFields(m.pid)?.[19] === m.start
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The registry's lock: an abstract socket bound by one process at a time, freed by the kernel on death. */
const locked = async <A>(name: string, body: () => A | Promise<A>): Promise<A> => {
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    const server = await new Promise<NodeNet.Server | undefined>((resolve) => {
      const s = NodeNet.createServer()
      s.once("error", () => resolve(undefined))
      s.listen({ path: name }, () => resolve(s))
    })
    if (server !== undefined) {
      try {
        return await body()
      } finally {
        // The name is free once the socket is closed, which happens on the loop: wait for it, or
        // the next caller finds it taken and waits out a retry.
        await new Promise((resolve) => server.close(resolve))
      }
    }
    if (Date.now() > deadline) throw new Error("another sandboxed command held the placeholder lock for over 5 s")
    await sleep(2)
  }
}

const same = (s: NodeFs.Stats, h: Held) => s.isDirectory() && s.dev === h.dev && s.ino === h.ino

/** Still the empty folder made here: removed. Anything else (someone's file, a folder with content) stays. */
const removeIfOurs = async (h: Held) => {
  try {
    if (same(await NodeFs.promises.lstat(h.path), h)) await NodeFs.promises.rmdir(h.path)
  } catch {}
}

export interface Placeholders {
  /** Makes or adopts the placeholders of `roots` under the lock; the manifest names them. */
  readonly hold: (roots: ReadonlyArray<string>) => Promise<Hold>
  /** Removes what no live sandbox relies on; answers whether manifests of this process remain. */
  readonly collect: () => Promise<boolean>
}

interface Listed {
  readonly file: string
  readonly m: Manifest
  readonly live: boolean
}

/** The registry of `dir` (made 0700 when missing; refused unless it is this user's own folder). */
export const placeholders = (dir: string): Placeholders => {
  const registry = (): string => {
    NodeFs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const s = NodeFs.lstatSync(dir)
    if (!s.isDirectory() || s.uid !== process.getuid?.() || (s.mode & 0o022) !== 0)
      throw new Error(`${dir} is not a private folder of this user; remove it`)
    return dir
  }
  const lockName = `\0freecode-tools-placeholders:${dir}`
  let queue: Promise<unknown> = Promise.resolve()
  // One at a time in this process too, so its own calls do not spin on the socket.
  const serial = <A>(body: () => A | Promise<A>): Promise<A> => {
    const next = queue.then(() => locked(lockName, body))
    queue = next.catch(() => undefined)
    return next
  }

  /** Under the lock: every manifest, judged. */
  const list = (): Array<Listed> => {
    const reg = registry()
    const now = Date.now()
    const out: Array<Listed> = []
    for (const name of NodeFs.readdirSync(reg)) {
      if (!name.endsWith(".json")) continue
      const file = NodePath.join(reg, name)
      try {
        const m = JSON.parse(NodeFs.readFileSync(file, "utf8")) as Manifest
        out.push({ file, m, live: live(m, readText(infoOf(file)), now) })
      } catch {} // written to a temporary name and renamed: a manifest is whole or absent
    }
    return out
  }
  const infoOf = (file: string) => file.replace(/\.json$/, ".info")
  const drop = (file: string) => {
    NodeFs.rmSync(file, { force: true })
    NodeFs.rmSync(infoOf(file), { force: true })
  }

  /**
   * Under the lock. A missing name is made; one that is a placeholder already (named by any
   * manifest, live or not, and still the same empty folder) is adopted, so back-to-back calls
   * reuse it: removing a folder costs a journal write (1–3 ms on this machine's ext4) and is left
   * to `collect`, off the call's path. A dead manifest whose every placeholder was adopted goes.
   */
  const hold = (roots: ReadonlyArray<string>): Promise<Hold> =>
    serial(() => {
      const manifests = list()
      const known = new Map<string, Held>()
      for (const { m } of manifests) for (const h of m.paths) known.set(h.path, h)
      const held: Array<Held> = []
      for (const root of roots) {
        for (const name of TOP_CONTROL_NAMES) {
          const path = NodePath.join(root, name)
          let s = NodeFs.lstatSync(path, { throwIfNoEntry: false })
          if (s === undefined) {
            try {
              NodeFs.mkdirSync(path, { mode: 0o755 })
            } catch (e) {
              // Made by someone else a moment ago: an existing control path, bound as such.
              if ((e as NodeJS.ErrnoException).code === "EEXIST") continue
              throw e
            }
            s = NodeFs.lstatSync(path)
          } else {
            const h = known.get(path)
            if (h === undefined || !same(s, h)) continue // the person's own: bound as it is
          }
          held.push({ path, dev: s.dev, ino: s.ino })
        }
      }
      const mine = new Set(held.map((h) => h.path))
      for (const { file, m, live: alive } of manifests) if (!alive && m.paths.every((h) => mine.has(h.path))) drop(file)
      const id = `${me().pid}-${randomBytes(6).toString("hex")}`
      const file = NodePath.join(registry(), `${id}.json`)
      const manifest: Manifest = { ...me(), created: Date.now(), paths: held }
      NodeFs.writeFileSync(`${file}.tmp`, JSON.stringify(manifest), { mode: 0o600 })
      NodeFs.renameSync(`${file}.tmp`, file)
      return { paths: held.map((h) => h.path), info: infoOf(file) }
    })

  /** Under the lock: dead manifests' placeholders that no live one names are removed, then the manifests. */
  const collect = () =>
    serial(async () => {
      const manifests = list()
      const liveNamed = new Set(manifests.filter((l) => l.live).flatMap((l) => l.m.paths.map((h) => h.path)))
      const dead = manifests.filter((l) => !l.live)
      await Promise.all(
        dead.flatMap(({ m }) => m.paths.filter((h) => !liveNamed.has(h.path))).map((h) => removeIfOurs(h))
      )
      for (const { file } of dead) drop(file)
      return manifests.some((l) => l.live && l.m.pid === me().pid && l.m.start === me().start)
    })

  return { hold, collect }
}

/** This user's registry: one per machine and user, so every process of theirs shares it. */
export const defaultRegistry = (): string =>
  NodePath.join(NodeOs.tmpdir(), `freecode-tools-${process.getuid?.() ?? "user"}`, "placeholders")
