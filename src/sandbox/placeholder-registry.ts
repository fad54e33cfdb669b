/**
 * Where the placeholders' registry is (placeholders.ts) and why it can be trusted: one folder
 * per user and machine, whatever the environment says (not below TMPDIR: two processes of one
 * user with different TMPDIRs would judge each other's placeholders unknown); every folder on
 * its way this user's or root's and writable by nobody else (a shared folder only with the
 * sticky bit), so a registry another user made or could swap is refused, never read; and its
 * lock (SQLite's lock on a file in it: the kernel frees it if its holder dies, and only this
 * user can reach the file), under which placeholders are made, adopted and removed.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { DatabaseSync } from "node:sqlite"

/** How long to wait for the lock before the command is refused (it never runs unguarded). */
const LOCK_WAIT_MS = 5_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The registry's lock: an exclusive SQLite transaction on `lock.db` in the registry (an fcntl
 * lock, freed by the kernel when its holder dies, honoured across network namespaces). Nobody
 * else can open the file: the registry folder is this user's, 0700. Waiting is polled on the
 * loop (busy timeout 0), never a blocked thread.
 */
const locked = async <A>(db: () => DatabaseSync, body: () => A | Promise<A>): Promise<A> => {
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    const conn = db()
    let got = false
    try {
      conn.exec("BEGIN EXCLUSIVE")
      got = true
    } catch (e) {
      if (!/locked|busy/i.test(String((e as Error).message))) throw e
    }
    if (got) {
      try {
        return await body()
      } finally {
        conn.exec("COMMIT")
      }
    }
    if (Date.now() > deadline) throw new Error("another sandboxed command held the placeholder lock for over 5 s")
    await sleep(2)
  }
}

/** This process's user id (0 where there is none to ask: Linux always has one). */
export const myUid = (): number => process.getuid?.() ?? 0

/**
 * `dir` and every folder above it are safe to trust: real folders (no link), each this user's or
 * root's, writable by no one else — or, for a shared folder such as /tmp, with the sticky bit, so
 * no one else can rename or remove what this user made in it. Throws a sentence otherwise.
 */
export const checkPrivatePath = (dir: string): void => {
  let p = dir
  for (;;) {
    const s = NodeFs.lstatSync(p, { throwIfNoEntry: false })
    if (s === undefined || !s.isDirectory())
      throw new Error(`${p} is not a folder (a link, or missing); the placeholder registry ${dir} is not used`)
    const mine = s.uid === myUid()
    if (!mine && s.uid !== 0)
      throw new Error(
        `${p} belongs to another user (uid ${s.uid}), who could change what the placeholder registry ${dir} holds; remove it, or let the sandbox use another registry`
      )
    const othersWrite = (s.mode & 0o022) !== 0
    if (othersWrite && (p === dir || (s.mode & 0o1000) === 0))
      throw new Error(
        `${p} is writable by other users, who could change what the placeholder registry ${dir} holds; remove it or make it private`
      )
    const up = NodePath.dirname(p)
    if (up === p) return
    p = up
  }
}

/**
 * A place the registry may be: `path`, made 0700 when missing, below `within`, which must already
 * be there (never made: a login manager's runtime folder, a home).
 */
export interface RegistryPlace {
  readonly within: string
  readonly path: string
}

/** Where a registry is looked for: one folder (made when missing), or places tried in order. */
export type RegistryChoice = string | ReadonlyArray<RegistryPlace>

/** This user's home as the system's user database says (not $HOME, which differs between processes). */
const userHome = (): string | undefined => {
  try {
    return NodeOs.userInfo().homedir || undefined
  } catch {
    return undefined
  }
}

/**
 * This user's registry places, in the one order every process of theirs tries them, each named
 * from the user id and the user database only (never TMPDIR, XDG_RUNTIME_DIR or HOME, which
 * differ between a user's processes): the machine's `/tmp/freecode-tools-UID`; when another
 * user made that first (or it is unsafe), the login manager's `/run/user/UID` (only root can
 * make a folder in /run/user); else the home's `.local/state/freecode-tools`. The first that is
 * this user's own, safe, is the registry, so all of that user's processes agree on it.
 */
export const registryPlaces = (
  uid: number = myUid(),
  bases: { readonly tmp: string; readonly runtime: string; readonly home: string | undefined } = {
    tmp: "/tmp",
    runtime: "/run/user",
    home: userHome()
  }
): ReadonlyArray<RegistryPlace> => [
  { within: bases.tmp, path: NodePath.join(bases.tmp, `freecode-tools-${uid}`, "placeholders") },
  {
    within: NodePath.join(bases.runtime, String(uid)),
    path: NodePath.join(bases.runtime, String(uid), "freecode-tools", "placeholders")
  },
  ...(bases.home === undefined
    ? []
    : [{ within: bases.home, path: NodePath.join(bases.home, ".local", "state", "freecode-tools", "placeholders") }])
]

/** This user's registry places on this machine (registryPlaces). */
export const defaultRegistry = (): ReadonlyArray<RegistryPlace> => registryPlaces()

/** The folders a choice may use: each read-only inside every sandbox. */
export const registryFolders = (choice: RegistryChoice): ReadonlyArray<string> =>
  typeof choice === "string" ? [choice] : choice.map((p) => p.path)

/**
 * Makes `place.path` below `place.within` (which must be there) one folder at a time, each made
 * 0700 only in a folder already found to be this user's or root's and writable by no one else,
 * and each found so itself (one another user made first, even in the moment before, is looked
 * at, not written in). Throws a sentence otherwise.
 */
const makePlace = (place: RegistryPlace): void => {
  if (NodeFs.lstatSync(place.within, { throwIfNoEntry: false }) === undefined)
    throw new Error(`${place.within} does not exist`)
  let p = place.within
  for (const name of NodePath.relative(place.within, place.path).split(NodePath.sep)) {
    p = NodePath.join(p, name)
    try {
      NodeFs.mkdirSync(p, { mode: 0o700 })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    const s = NodeFs.lstatSync(p)
    if (!s.isDirectory()) throw new Error(`${p} is not a folder (a link?)`)
    if (s.uid !== myUid() && s.uid !== 0) throw new Error(`${p} belongs to another user (uid ${s.uid})`)
    if ((s.mode & 0o022) !== 0) throw new Error(`${p} is writable by other users`)
  }
}

/** The registry folder of `choice`: the first place that is this user's own and safe, made 0700 when missing. */
export const chooseRegistry = (choice: RegistryChoice): string => {
  if (typeof choice === "string") {
    NodeFs.mkdirSync(choice, { recursive: true, mode: 0o700 })
    checkPrivatePath(choice)
    return choice
  }
  const why: Array<string> = []
  for (const place of choice) {
    try {
      makePlace(place)
      checkPrivatePath(place.path)
      return place.path
    } catch (e) {
      why.push(`${place.path}: ${(e as Error).message}`)
    }
  }
  throw new Error(
    `no placeholder registry of this user's can be trusted (${why.join("; ")}); remove the folder another user made, or make one of these places this user's own`
  )
}

export interface RegistryLock {
  /** The registry folder, chosen and checked (chooseRegistry) each time. */
  readonly registry: () => string
  /** Runs `body` under the registry's lock, one at a time in this process. */
  readonly serial: <A>(body: () => A | Promise<A>) => Promise<A>
}

/** The registry of `choice` (chooseRegistry, each time: refused unless it is this user's own folder) and its lock. */
export const registryLock = (choice: RegistryChoice): RegistryLock => {
  const registry = (): string => chooseRegistry(choice)
  // The lock's file, opened once; opened again when the file there is another one (a cleaner of
  // /tmp removed the registry): a lock on a removed file would keep no one else out.
  let conn: { readonly db: DatabaseSync; readonly ino: number } | undefined
  const db = (): DatabaseSync => {
    const file = NodePath.join(registry(), "lock.db")
    const now = NodeFs.lstatSync(file, { throwIfNoEntry: false })
    if (conn !== undefined && now?.ino === conn.ino) return conn.db
    conn?.db.close()
    const sqlite = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite")
    const opened = new sqlite.DatabaseSync(file, { timeout: 0 })
    conn = { db: opened, ino: NodeFs.lstatSync(file).ino }
    return opened
  }
  let queue: Promise<unknown> = Promise.resolve()
  // One at a time in this process too, so its own calls do not spin on the lock.
  const serial = <A>(body: () => A | Promise<A>): Promise<A> => {
    const next = queue.then(() => locked(db, body))
    queue = next.catch(() => undefined)
    return next
  }

  return { registry, serial }
}
