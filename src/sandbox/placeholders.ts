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
 * one lock per registry (SQLite's lock on a file in the registry: the kernel frees it if its
 * holder dies, and only this user can reach the file). A call adopts the placeholders an earlier
 * one left, and removal is left to `collect` (the sandbox runs it every second while any remain):
 * removing a folder is the costly part.
 *
 * The registry (placeholder-registry.ts) is one per user and machine, and refused unless it is
 * this user's own. Another user's sandbox cannot be in it, so a placeholder is removed only
 * when no mount namespace this process can see (`/proc/PID/mountinfo`, readable by every user)
 * still has it mounted, and adopted or removed only when it is this user's own folder.
 */
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processWide } from "../process-wide/process-wide.ts"
import { CONTROL_PATHS } from "./control-paths.ts"
import { myUid, type RegistryChoice, registryLock } from "./placeholder-registry.ts"

/** The names a placeholder may stand for: the first name of every control path. */
export const TOP_CONTROL_NAMES: ReadonlyArray<string> = [...new Set(CONTROL_PATHS.map((c) => c.path.split("/")[0]!))]

/** Without bubblewrap's answer, a manifest counts as live this long while its writer runs, and this long after. */
const PENDING_MS = 60_000
const ORPHAN_MS = 10_000

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
  /**
   * The placeholders this command relies on (existing empty folders): bind them read-only whole.
   * Its manifest names only this user's own; another's is held without being named.
   */
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

/** Still the folder made: this user's (another user's folder with the same numbers is not), same device and inode. */
const isEmpty = (dir: string): boolean => {
  try {
    const d = NodeFs.opendirSync(dir)
    try {
      return d.readSync() === null
    } finally {
      d.closeSync()
    }
  } catch {
    return false
  }
}

const same = (s: NodeFs.Stats, h: Held) => s.isDirectory() && s.uid === myUid() && s.dev === h.dev && s.ino === h.ino

/** Still the empty folder made here: removed. Anything else (someone's file, a folder with content) stays. */
const removeIfOurs = async (h: Held) => {
  try {
    if (same(await NodeFs.promises.lstat(h.path), h)) await NodeFs.promises.rmdir(h.path)
  } catch {}
}

interface Mount {
  readonly dev: string
  readonly root: string
  readonly at: string
}

/** The lines of a mountinfo file: device (major:minor), the mount's root in its file system, and where it is mounted. */
const mountsOf = (text: string | undefined): ReadonlyArray<Mount> => {
  const out: Array<Mount> = []
  // Spaces and the like are octal escapes (\040): undone, so paths compare as they are.
  const decode = (f: string) =>
    f.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)))
  for (const line of text?.split("\n") ?? []) {
    const f = line.split(" ")
    if (f.length < 5) continue
    out.push({ dev: f[2]!, root: decode(f[3]!), at: decode(f[4]!) })
  }
  return out
}

/** st_dev as mountinfo writes it (major:minor, Linux's encoding). */
const devText = (dev: number): string => {
  const d = BigInt(dev)
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn)
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn)
  return `${major}:${minor}`
}

/**
 * Which of `held` are a mount's root in some mount namespace this process can see: a sandbox
 * another registry knows of (another user's; every user can read any process's mountinfo). A
 * folder is found by its device and its path inside its file system (the mount's root field),
 * wherever that sandbox mounted it. Processes hidden from this one (another PID namespace,
 * hidepid) are not seen.
 */
const mountedElsewhere = async (held: ReadonlyArray<Held>): Promise<Set<string>> => {
  const own = mountsOf(readText("/proc/self/mountinfo"))
  const wanted = new Map<string, string>()
  for (const h of held) {
    const dev = devText(h.dev)
    // The mount here that holds it: the deepest mount point on its path, on its device.
    let best: Mount | undefined
    for (const m of own) {
      if (m.dev !== dev) continue
      if (h.path !== m.at && !h.path.startsWith(m.at === "/" ? "/" : `${m.at}/`)) continue
      if (best === undefined || m.at.length > best.at.length) best = m
    }
    if (best === undefined) continue
    wanted.set(`${dev} ${NodePath.join(best.root, NodePath.relative(best.at, h.path))}`, h.path)
  }
  const found = new Set<string>()
  if (wanted.size === 0) return found
  let pids: Array<string> = []
  try {
    pids = NodeFs.readdirSync("/proc").filter((n) => /^\d+$/.test(n) && n !== String(process.pid))
  } catch {}
  // Read off the loop's thread (a scan is ~20 ms for 100 processes here): the guard's events go on meanwhile.
  await Promise.all(
    pids.map(async (pid) => {
      let text: string | undefined
      try {
        text = await NodeFs.promises.readFile(`/proc/${pid}/mountinfo`, "utf8")
      } catch {}
      for (const m of mountsOf(text)) {
        const path = wanted.get(`${m.dev} ${m.root}`)
        if (path !== undefined) found.add(path)
      }
    })
  )
  return found
}

export interface Placeholders {
  /** Makes or adopts the placeholders of `roots` under the lock; the manifest names them. */
  readonly hold: (roots: ReadonlyArray<string>) => Promise<Hold>
  /** Removes what no live sandbox relies on; answers whether manifests of this process remain (live, or kept). */
  readonly collect: () => Promise<boolean>
}

interface Listed {
  readonly file: string
  readonly m: Manifest
  readonly live: boolean
}

/** The registry of `choice` (placeholder-registry.ts: refused unless it is this user's own folder). */
export const placeholders = (choice: RegistryChoice): Placeholders => {
  const { registry, serial } = registryLock(choice)

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
      const foreign: Array<string> = []
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
            if (h === undefined || !same(s, h)) {
              // Not ours: bound as it is — except an empty folder (another user's placeholder, or
              // one of another registry's), held read-only whole like ours but never adopted or
              // removed: pinning it instead would make mount points for its missing control
              // paths in a folder that is not ours (refused, or left behind in it).
              if (s.isDirectory() && isEmpty(path)) foreign.push(path)
              continue
            }
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
      return { paths: [...held.map((h) => h.path), ...foreign], info: infoOf(file) }
    })

  /**
   * Under the lock: dead manifests' placeholders that no live one names are removed, then the
   * manifests — except a placeholder still mounted in a sandbox this registry does not know
   * (another user's, or one started with another registry), which stays with its manifest until
   * a later collection finds it free.
   */
  const collect = () =>
    serial(async () => {
      const manifests = list()
      const liveNamed = new Set(manifests.filter((l) => l.live).flatMap((l) => l.m.paths.map((h) => h.path)))
      const dead = manifests.filter((l) => !l.live)
      const candidates = dead.flatMap(({ m }) => m.paths.filter((h) => !liveNamed.has(h.path)))
      const busy = candidates.length === 0 ? new Set<string>() : await mountedElsewhere(candidates)
      await Promise.all(candidates.filter((h) => !busy.has(h.path)).map((h) => removeIfOurs(h)))
      let kept = false
      for (const { file, m } of dead) {
        if (m.paths.some((h) => busy.has(h.path))) kept ||= m.pid === me().pid && m.start === me().start
        else drop(file)
      }
      return kept || manifests.some((l) => l.live && l.m.pid === me().pid && l.m.start === me().start)
    })

  return { hold, collect }
}
