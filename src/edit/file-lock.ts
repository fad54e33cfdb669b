/**
 * A lock shared by every process on the machine, keyed by a file's real path: a lock file
 * created with O_EXCL in a private folder of the system's temp directory (never in the project).
 * It names its owner (owner.ts) and the owner's staging folder. A lock whose owner no longer
 * runs — killed mid-edit — is broken, after the owner's unfinished work in that staging folder
 * is rolled forward or back (staging.ts), so a crash never blocks a file and never leaves it
 * half-written. Breaking is itself serialized by a second O_EXCL file, so two processes that
 * both find the same dead owner cannot break a lock that one of them has just taken.
 */
import { createHash } from "node:crypto"
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as NodePath from "node:path"
import { Duration, Effect, PlatformError } from "effect"
import { processWide } from "../process-wide/process-wide.ts"
import { alive, me, type Owner, ownerTag, parseOwner } from "./owner.ts"

/** How long a call waits for another process's lock before it gives up (busy: try again). */
const WAIT = Duration.seconds(30)
/** A lock or break file with no readable owner older than this was left by a crash between create and write. */
const UNREADABLE_STALE_MS = 5_000

/**
 * Makes `dir` a folder private to this user (0700). Something else at that path that this user
 * owns (a file, a link: a damaged state) is moved aside as `<dir>.damaged-<time>` and a fresh
 * folder made; a path another user owns is refused — it may be planted — saying what to do.
 * Returns what was moved aside, in words for the log.
 */
const privateFolder = (dir: string, uid: number | undefined): string | undefined => {
  let moved: string | undefined
  const look = () => {
    try {
      return NFS.lstatSync(dir)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw e
    }
  }
  let st = look()
  if (st !== undefined && !st.isDirectory() && (uid === undefined || st.uid === uid)) {
    const aside = `${dir}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`
    NFS.renameSync(dir, aside)
    moved = `the lock folder ${dir} was not a folder; it was moved aside to ${aside} and a fresh one made (delete the old one when you have looked at it)`
    st = undefined
  }
  if (st === undefined) {
    try {
      NFS.mkdirSync(dir, { mode: 0o700 })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    st = look()
  }
  if (st === undefined || !st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    throw new Error(
      `the lock folder ${dir} is not a folder of this user, so edits cannot lock files there; remove it, or set TMPDIR to a folder of your own`
    )
  }
  if ((st.mode & 0o077) !== 0) NFS.chmodSync(dir, 0o700)
  return moved
}

/**
 * The lock folder, `<tmp>/freecode-tools-<uid>/locks` (private to the user), and what was moved
 * aside to make it, until the log has said so once. The machine's, not a system's: every system
 * in the process locks files in the same folder, so it is made (and checked) once per process. A
 * folder that cannot be made leaves nothing behind, and the next lock tries again.
 */
const lockFolder = processWide("lock folder", () => {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined
  const base = NodePath.join(OS.tmpdir(), `freecode-tools-${uid ?? 0}`)
  const dir = NodePath.join(base, "locks")
  const moved = [privateFolder(base, uid), privateFolder(dir, uid)].filter((m) => m !== undefined)
  return { dir, notice: moved.length === 0 ? undefined : moved.join("; ") }
})

/** `<tmp>/freecode-tools-<uid>/locks`, private to the user. */
export const locksFolder = (): string => lockFolder.get().dir

export const lockFileOf = (key: string): string =>
  NodePath.join(locksFolder(), `${createHash("sha256").update(key).digest("hex").slice(0, 40)}.lock`)

interface Holder {
  readonly owner: Owner | undefined
  readonly staging: string | undefined
  readonly ageMs: number
}

const readHolder = (file: string): Holder | undefined => {
  try {
    const text = NFS.readFileSync(file, "utf8")
    const [tag, staging] = text.split("\n")
    const age = Date.now() - NFS.statSync(file).mtimeMs
    return { owner: parseOwner(tag ?? ""), staging: staging === "" ? undefined : staging, ageMs: age }
  } catch {
    return undefined
  }
}

const stale = (h: Holder): boolean => (h.owner === undefined ? h.ageMs > UNREADABLE_STALE_MS : !alive(h.owner))

/** O_EXCL create with our name in it; false when it exists. */
const tryCreate = (file: string, staging: string): boolean => {
  let fd: number
  try {
    fd = NFS.openSync(file, NFS.constants.O_CREAT | NFS.constants.O_EXCL | NFS.constants.O_WRONLY, 0o600)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  }
  try {
    NFS.writeSync(fd, `${ownerTag(me)}\n${staging}\n`)
  } finally {
    NFS.closeSync(fd)
  }
  return true
}

const sameOwner = (a: Owner | undefined, b: Owner | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.pid === b.pid && a.start === b.start)

/** Removes `file` if it is still held by the stale `holder`; true when it is gone. */
const breakStale = (file: string, holder: Holder): boolean => {
  const breaker = `${file}.break`
  if (!tryCreate(breaker, "")) {
    const b = readHolder(breaker)
    if (b !== undefined && stale(b)) NFS.rmSync(breaker, { force: true })
    return false
  }
  try {
    const now = readHolder(file)
    if (now === undefined) return true
    if (!sameOwner(now.owner, holder.owner) || !stale(now)) return false
    NFS.rmSync(file, { force: true })
    return true
  } finally {
    NFS.rmSync(breaker, { force: true })
  }
}

const busy = (key: string, holder: Holder | undefined) =>
  PlatformError.systemError({
    _tag: "Busy",
    module: "FileSystem",
    method: "lock",
    pathOrDescriptor: key,
    description: `another process${holder?.owner === undefined ? "" : ` (pid ${holder.owner.pid})`} is changing this file`
  })

const io = <A>(key: string, run: () => A) =>
  Effect.try({
    try: run,
    catch: (e) =>
      PlatformError.systemError({
        _tag: "Unknown",
        module: "FileSystem",
        method: "lock",
        pathOrDescriptor: key,
        description: e instanceof Error ? e.message : String(e),
        cause: e
      })
  })

/**
 * Takes the machine-wide lock of `key` (a real path) for `staging` (this call's staging
 * folder); `recover` is run on a dead owner's staging folder before its lock is broken.
 */
export const acquireFileLock = Effect.fnUntraced(function* (
  key: string,
  staging: string,
  recover: (staging: string) => Effect.Effect<void>
): Effect.fn.Return<string, PlatformError.PlatformError> {
  const file = yield* io(key, () => lockFileOf(key))
  const folder = lockFolder.get()
  if (folder.notice !== undefined) {
    const notice = folder.notice
    folder.notice = undefined
    yield* Effect.logWarning(notice)
  }
  const deadline = Date.now() + Duration.toMillis(WAIT)
  let pause = 2
  for (;;) {
    if (yield* io(key, () => tryCreate(file, staging))) return file
    const holder = yield* io(key, () => readHolder(file))
    if (holder === undefined) continue // released meanwhile
    if (stale(holder)) {
      if (holder.staging !== undefined) yield* recover(holder.staging)
      if (yield* io(key, () => breakStale(file, holder))) continue
    }
    if (Date.now() > deadline) return yield* Effect.fail(busy(key, holder))
    yield* Effect.sleep(Duration.millis(pause + Math.random() * pause))
    pause = Math.min(pause * 2, 50)
  }
})

export const releaseFileLock = (file: string): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      if (sameOwner(readHolder(file)?.owner, me)) NFS.rmSync(file, { force: true })
    } catch {
      // a lock we cannot remove is stale once we exit; the next taker breaks it
    }
  })
