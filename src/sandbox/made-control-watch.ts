/**
 * Control paths made while a command runs, moved aside as they appear (control-guard.ts runs
 * this for every live sandbox): every folder of the writable roots the audit walk went through
 * is watched (inotify, through fs.watch; up to MAX_FOLDER_WATCHES), and a new entry with a
 * control path's name, or a new folder holding one, is moved aside once it has been still for
 * SETTLE_MS. The whole walk (`sweep`) runs again every second while a command runs (what a
 * watch missed: a folder past the cap, a queue that overflowed, one still changing), and when
 * it ends.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type ControlState, controlChanges, controlState, moveAside } from "./control-audit.ts"
import { CONTROL_PATHS, isControlName } from "./control-paths.ts"
import { secretFilesIn } from "./secret-files.ts"

/** What the watch reads and writes of one guarded sandbox (control-guard.ts's record of it). */
export interface Watched {
  /** The writable roots the audit walks. */
  readonly roots: ReadonlyArray<string>
  /** The root-relative display and quarantine: the project root. */
  readonly root: string
  /** Control paths that existed when the command started (controlState). */
  readonly start: ControlState
  /** The sandbox's own placeholders: not the command's making. */
  readonly skip: ReadonlySet<string>
  /** Stopped for a replaced bound entry: nothing more is moved aside on its account. */
  readonly stopped: boolean
  /** Bound entries replaced from outside: the guard's verdict names them, not the sweep. */
  readonly replaced: ReadonlyMap<string, unknown>
  /** Made paths already moved aside or reported: each is named once. */
  readonly handled: Set<string>
  /** Sentences for the command's result. */
  readonly notices: Array<string>
}

/**
 * Folders watched for control paths made in them, at most: inotify watches are a budget of the
 * user's (fs.inotify.max_user_watches, 8,192 on older kernels) shared with editors and the like.
 * Past it, a folder is left to the sweep every second.
 */
const MAX_FOLDER_WATCHES = 4_096
/** How long a new control path must be still before it is moved aside on its event (lookSoon). */
const SETTLE_MS = 100

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir === "/" ? "/" : `${dir}/`)

/** `p` as the result shows it: relative to the sandbox's project root. */
export const shown = (t: Pick<Watched, "root">, p: string) => NodePath.relative(t.root, p) || p

export interface MadeControlWatch {
  /** Watches these folders (up to the cap) for control paths made in them. */
  readonly watchFolders: (folders: ReadonlyArray<string>) => void
  /** The whole walk of `t`'s roots: what was made moved aside, what was replaced named. */
  readonly sweep: (t: Watched) => void
  /** How many folders are watched. */
  readonly size: () => number
  /** Every folder's watch closed. */
  readonly close: () => void
}

/**
 * `quarantine` is the folder what a command made is moved into; `live` the sandboxes running
 * now (the guard's own set, read at each event).
 */
export const madeControlWatch = (quarantine: string, live: ReadonlySet<Watched>): MadeControlWatch => {
  /** The roots' folders, watched for new entries (a made control path moved aside on its event). */
  const folderWatchers = new Map<string, NodeFs.FSWatcher>()

  /**
   * A new entry `name` in a watched folder `dir`: one with a control path's name, or a folder
   * (made, or renamed in) holding any, is looked at now rather than at the next sweep — made
   * since a running command started, it is moved aside. A new folder is watched too.
   */
  const onFolderEvent = (dir: string, type: string, name: string | null) => {
    if (name === null) {
      // The kernel's queue overflowed: what it held is looked for by the whole walk.
      for (const t of live) if (!t.stopped) sweep(t)
      return
    }
    if (type !== "rename" || live.size === 0) return
    const path = NodePath.join(dir, name)
    if (isControlName(name)) return lookSoon(dir, [path])
    if (name === "node_modules" || NodeFs.lstatSync(path, { throwIfNoEntry: false })?.isDirectory() !== true) return
    // A new folder (made, or renamed in with whatever it holds): watched, and what it holds looked at.
    const walk = secretFilesIn([path])
    watchFolders(walk.folders)
    if (walk.controls.length > 0) lookSoon(dir, walk.controls)
  }

  /**
   * Looks at `found` (new control-path entries below `dir`) once they have been still for
   * SETTLE_MS — no change to them or their control paths' entries — and moves aside what is
   * made: a command making one (`git init sub`, then a hook) is not cut off halfway, and what
   * it made is out of the way a moment after, not at the next sweep. One that keeps changing
   * is left to the sweep every second, as before.
   */
  const lookSoon = (dir: string, found: ReadonlyArray<string>) => {
    const look = () => {
      if (live.size === 0) return
      const newest = Math.max(
        0,
        ...found.flatMap((f) =>
          [f, ...CONTROL_PATHS.map((c) => NodePath.join(NodePath.dirname(f), c.path))].map(
            (p) => NodeFs.lstatSync(p, { throwIfNoEntry: false })?.ctimeMs ?? 0
          )
        )
      )
      const still = Date.now() - newest
      if (still < SETTLE_MS) return void setTimeout(look, SETTLE_MS - still + 1).unref()
      // Only what these bases hold is compared: `made`, never `replaced`, of a partial look.
      const now = controlState([], found)
      for (const t of live) {
        if (t.stopped || !t.roots.some((r) => inside(r, dir))) continue
        moveMade(t, controlChanges(t.start, now, t.skip).made)
      }
    }
    setTimeout(look, SETTLE_MS).unref()
  }

  const watchFolders = (folders: ReadonlyArray<string>) => {
    for (const dir of folders) {
      if (folderWatchers.has(dir)) continue
      if (folderWatchers.size >= MAX_FOLDER_WATCHES) return
      try {
        const w = NodeFs.watch(dir, { persistent: false }, (type, name) => onFolderEvent(dir, type, name))
        w.on("error", () => {
          w.close()
          folderWatchers.delete(dir)
        })
        folderWatchers.set(dir, w)
      } catch {} // gone already: nothing to make anything in
    }
  }

  /**
   * Moves each made path aside, every time it is found (made again after a move, it is moved
   * again), and names it once to every running command that could have made it (absent when it
   * started), not only to the one whose look found it first.
   */
  const moveMade = (t: Watched, made: ReadonlyArray<string>) => {
    for (const p of made) {
      const to = moveAside(p, t.root, quarantine)
      if (t.handled.has(p)) continue
      const notice =
        to === undefined
          ? `sandbox: ${shown(t, p)} was made while this command ran and could not be moved aside. It is a control path (git hooks and config, editor or agent settings: they run code with your rights outside the sandbox): check it before using it.`
          : `sandbox: moved ${shown(t, p)} aside to ${to}: it was made while this command ran, and it is a control path (git hooks and config, editor or agent settings run code with your rights outside the sandbox). Make such paths outside the sandbox (dangerouslyDisableSandbox), or move it back yourself if you meant it.`
      for (const other of new Set([t, ...live])) {
        if (other.handled.has(p) || other.start.has(p)) continue
        other.handled.add(p)
        other.notices.push(notice)
      }
    }
  }

  const sweep = (t: Watched) => {
    const walk = secretFilesIn(t.roots)
    const changes = controlChanges(t.start, controlState(t.roots, walk.controls, walk.unlisted), t.skip)
    moveMade(t, changes.made)
    watchFolders(walk.folders)
    for (const p of changes.replaced) {
      if (t.handled.has(p) || t.replaced.has(p)) continue
      t.handled.add(p)
      t.notices.push(
        `sandbox: ${shown(t, p)} was replaced or removed from outside the sandbox while this command ran (inside it is read-only); check that the new one is what you meant.`
      )
    }
    if (!walk.complete)
      t.notices.push("sandbox: the project is too large to audit completely for new control paths after this command.")
  }

  const close = () => {
    for (const w of folderWatchers.values()) w.close()
    folderWatchers.clear()
  }

  return { watchFolders, sweep, size: () => folderWatchers.size, close }
}
