/**
 * The host side of the control paths' protection, for as long as any sandbox of this process
 * runs: what a mount inside cannot hold.
 *
 * - **Replaced from outside.** A read-only bind sits on a file's entry; when a process outside
 *   renames a new file over it (`git config`, `git push -u`, an editor saving `freecode.json`) or
 *   removes it, the kernel lifts the bind in every sandbox, and a command still running there
 *   could write the new file (or read a secret file's new version). The folders holding every
 *   bound entry are watched (inotify, through fs.watch); when one of the entries is another file
 *   than the one bound, each sandbox that bound the old one is stopped at once (its PID
 *   namespace's init is killed, which ends everything inside) and the result says why. A folder
 *   bound whole keeps what is renamed into it read-only, so those need no watch to hold.
 * - **Made while it runs** (made-control-watch.ts, control-audit.ts): every folder of the
 *   writable roots the walk went through is watched too, and a new control path is moved aside
 *   a moment after it is made; the whole walk again every second while it runs (tick), and when
 *   it ends.
 *
 * A sandbox is known by bubblewrap's `--info-fd` answer (the host pid of its init), the same
 * file the placeholders' registry reads.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type ControlState, moveAside } from "./control-audit.ts"
import { madeControlWatch, shown, type Watched } from "./made-control-watch.ts"

export interface Guarded {
  /** bubblewrap's info file (the sandbox's init pid); undefined under Seatbelt (audited at the end only). */
  readonly info: string | undefined
  /** The writable roots the audit walks. */
  readonly roots: ReadonlyArray<string>
  /** The root-relative display and quarantine: the project root. */
  readonly root: string
  /** Control paths that existed when the command started (controlState). */
  readonly start: ControlState
  /** Entries bound inside (read-only, hidden, pinned): a replacement of one lifts its bind. */
  readonly bound: ReadonlyArray<string>
  /** The sandbox's own placeholders: not the command's making. */
  readonly skip: ReadonlySet<string>
  /** The folders of the roots the start's walk went through: watched for control paths made in them. */
  readonly folders?: ReadonlyArray<string>
  /**
   * Bound entries that are hidden only (credential and secret files, not writable anyway): a
   * replacement lifts their hiding, so it stops the command all the same, but the new file is
   * the person's (a shell saving its history, `aws configure`) and is never moved aside.
   */
  readonly hiddenOnly: ReadonlySet<string>
}

interface Tracked extends Guarded, Watched {
  readonly boundIds: ReadonlyMap<string, string>
  readonly notices: Array<string>
  pid: number | undefined
  ended: boolean
  stopped: boolean
  /**
   * From the first replacement of a bound entry until the command is gone: each replaced entry,
   * whether its replacement came as an event (`seen`; else a look found it), and whether an
   * event named it after that (`touched`: a write, a change of mode, another rename — inotify
   * keeps events in order, so those came after the replacement).
   */
  readonly replaced: Map<string, { readonly seen: boolean; touched: boolean }>
  /** Made paths already moved aside or reported: each is named once. */
  readonly handled: Set<string>
  /** Once stopped: resolves when the verdict on its replaced entries is in its notices. */
  settled: Promise<void> | undefined
}

const TICK_MS = 1_000
/** How long watches outlive the last sandbox (rewatch). */
const IDLE_MS = 5_000
/** How long a sandbox may go without bubblewrap's answer before it counts as never started. */
const START_MS = 30_000
const identity = (p: string): string | undefined => {
  const s = NodeFs.lstatSync(p, { throwIfNoEntry: false })
  return s === undefined ? undefined : `${s.dev}:${s.ino}`
}

const childPid = (info: string): number | undefined => {
  try {
    const m = /"child-pid":\s*(\d+)/.exec(NodeFs.readFileSync(info, "utf8"))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/** Running and not a zombie (a PID namespace's init is a zombie only once all inside are gone). */
const running = (pid: number): boolean => {
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/**
 * Resolves once the loop has read what the kernel queued before now: fs.watch events are read in
 * the poll phase, and each setImmediate runs after one (two, so a poll begun before counts too).
 */
const afterEvents = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

export interface ControlGuard {
  /** Starts guarding the sandbox of `key` (the command line it runs). */
  readonly track: (key: object, guarded: Guarded) => void
  /** Once the command of `key` has ended: the last look, and everything found, as sentences for its result. */
  readonly audit: (key: object) => Promise<ReadonlyArray<string>>
  /** The command tracked under `key` is audited under `also` too (the line `wrap` makes of a launch). */
  readonly alias: (key: object, also: object) => void
  readonly close: () => void
}

/** `quarantine` is the folder what a command made is moved into (inside the state folder). */
export const controlGuard = (quarantine: string): ControlGuard => {
  const byKey = new WeakMap<object, Tracked>()
  const live = new Set<Tracked>()
  const watchers = new Map<string, NodeFs.FSWatcher>()
  /** The roots' folders, watched for control paths made in them (moved aside as they appear). */
  const made = madeControlWatch(quarantine, live)
  const { sweep, watchFolders } = made
  let ticker: ReturnType<typeof setInterval> | undefined
  const started = new WeakMap<Tracked, number>()
  /** Stopped for a replaced entry, not yet gone: events naming that entry are still counted. */
  const stopping = new Set<Tracked>()
  let lastBusy = 0

  const pidOf = (t: Tracked): number | undefined => {
    if (t.pid === undefined && t.info !== undefined) t.pid = childPid(t.info)
    return t.pid
  }

  const isRunning = (t: Tracked): boolean => {
    if (t.ended) return false
    const pid = pidOf(t)
    if (pid === undefined) return t.info !== undefined && Date.now() - (started.get(t) ?? 0) < START_MS
    return running(pid)
  }

  /**
   * Once the stopped sandbox is gone: a replaced entry that was named by an event after its
   * replacement, or whose replacement no event showed, may hold what the command wrote, and is
   * moved aside whole; one nobody touched since is left as the person's. `gone` is false when
   * the sandbox could not be seen to end: then every replaced entry counts as touched.
   */
  const settle = (t: Tracked, gone: boolean) => {
    if (!stopping.delete(t)) return
    if (!gone) for (const r of t.replaced.values()) r.touched = true
    for (const [p, id] of t.boundIds)
      if (!t.replaced.has(p) && identity(p) !== id) t.replaced.set(p, { seen: false, touched: false })
    for (const [p, r] of t.replaced) {
      if (t.hiddenOnly.has(p)) {
        t.notices.push(
          `sandbox: ${p} was replaced or removed from outside the sandbox while this command ran, which lifts its hiding inside, so the command was stopped; it could read the new version in the moment before.`
        )
        continue
      }
      const what = `${shown(t, p)} was replaced or removed from outside the sandbox while this command ran, which lifts its read-only protection inside, so the command was stopped`
      if (!r.touched && r.seen) {
        t.notices.push(
          `sandbox: ${what}; nothing wrote it after it was replaced (a write through a memory map is not seen): check ${p} if in doubt.`
        )
        continue
      }
      const why = r.touched
        ? "it was written after it was replaced"
        : "whether it was written after it was replaced is not known"
      const to = NodeFs.existsSync(p) ? moveAside(p, t.root, quarantine) : undefined
      t.notices.push(
        to === undefined
          ? `sandbox: ${what}; ${why}, so it may hold what the command wrote: check ${p} before anything uses it.`
          : `sandbox: ${what}; ${why}, so it may hold what the command wrote, and it is moved aside to ${to}. Put back the version you meant.`
      )
    }
  }

  /** Stops the sandbox: its init killed, the kernel ends every process in its PID namespace. */
  const stop = (t: Tracked) => {
    if (t.stopped) return
    t.stopped = true
    stopping.add(t)
    let done: () => void = () => {}
    t.settled = new Promise((resolve) => (done = resolve))
    // Every write inside queued its event before the process that made it was gone; the verdict
    // waits until the loop has read them all (afterEvents), or a write counts as never made.
    const verdict = (gone: boolean) =>
      afterEvents().then(() => {
        settle(t, gone)
        done()
      })
    const kill = (tries: number) => {
      const pid = pidOf(t)
      if (pid !== undefined) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {}
        // Gone once its init is reaped or a zombie: then nothing inside can write any more.
        const wait = (left: number) => {
          if (!running(pid)) return void verdict(true)
          if (left === 0) return void verdict(false)
          setTimeout(() => wait(left - 1), 2).unref()
        }
        return wait(2_500)
      }
      // bubblewrap has not answered yet: its init is not there to kill; look again shortly.
      if (tries > 0 && !t.ended) setTimeout(() => kill(tries - 1), 5).unref()
      else void verdict(t.ended)
    }
    kill(2_000)
  }

  /**
   * An event named `only` (or, without it, a look at every entry): a bound entry that is another
   * file now is replaced, and stops the command; one replaced already is touched again.
   */
  const checkBound = (t: Tracked, only?: string) => {
    for (const [p, id] of t.boundIds) {
      if (only !== undefined && p !== only) continue
      const r = t.replaced.get(p)
      if (r !== undefined) {
        if (only !== undefined) r.touched = true
        continue
      }
      if (identity(p) === id) continue
      t.replaced.set(p, { seen: only !== undefined, touched: false })
      stop(t)
    }
  }

  const onEvent = (dir: string, name: string | null) => {
    // No name: the kernel's queue overflowed and events were lost; every replaced entry counts as touched.
    if (name === null) {
      for (const t of stopping) for (const r of t.replaced.values()) r.touched = true
      for (const t of live) if (!t.stopped) checkBound(t)
      return
    }
    // A stopped sandbox may have left the live set already (its end seen first) and still be
    // waiting for its verdict: events naming its replaced entries count until then.
    const path = NodePath.join(dir, name)
    for (const t of live) if (!t.stopped) checkBound(t, path)
    for (const t of stopping) checkBound(t, path)
  }

  /**
   * Watches the folders of every live sandbox's bound entries. Watches no longer wanted stay
   * until the guard has been idle for IDLE_MS: back-to-back calls bind the same entries, and
   * setting a watch up again each call would cost more than keeping it.
   */
  const rewatch = (idle = false) => {
    const wanted = new Set<string>()
    for (const t of live) for (const p of t.boundIds.keys()) wanted.add(NodePath.dirname(p))
    if (live.size > 0) lastBusy = Date.now()
    for (const [dir, w] of watchers) {
      if (wanted.has(dir) || !idle) continue
      w.close()
      watchers.delete(dir)
    }
    for (const dir of wanted) {
      if (watchers.has(dir)) continue
      try {
        const w = NodeFs.watch(dir, { persistent: false }, (_type, name) => onEvent(dir, name))
        w.on("error", () => {
          w.close()
          watchers.delete(dir)
        })
        watchers.set(dir, w)
      } catch {} // a folder gone already: its entries show as replaced on the next look
    }
    if (idle && live.size === 0) made.close()
    if (live.size === 0 && watchers.size === 0 && made.size() === 0 && ticker !== undefined) {
      clearInterval(ticker)
      ticker = undefined
    } else if ((live.size > 0 || watchers.size > 0 || made.size() > 0) && ticker === undefined) {
      ticker = setInterval(tick, TICK_MS)
      ticker.unref()
    }
  }

  const end = (t: Tracked) => {
    if (t.ended) return
    t.ended = true
    live.delete(t)
    sweep(t)
    rewatch()
  }

  const tick = () => {
    if (live.size === 0 && Date.now() - lastBusy > IDLE_MS) return rewatch(true)
    for (const t of [...live]) {
      if (!t.stopped) checkBound(t) // a missed event is caught here
      if (isRunning(t)) sweep(t)
      // Ended: what the kernel queued before that (a replacement, a write after it) is read first.
      else void afterEvents().then(() => end(t))
    }
  }

  const track = (key: object, g: Guarded) => {
    const boundIds = new Map<string, string>()
    const t: Tracked = {
      ...g,
      boundIds,
      notices: [],
      pid: undefined,
      ended: false,
      stopped: false,
      replaced: new Map(),
      handled: new Set(),
      settled: undefined
    }
    started.set(t, Date.now())
    byKey.set(key, t)
    if (g.info === undefined) return // Seatbelt: rules by path, nothing to lift; audited at the end
    live.add(t)
    watchFolders(g.folders ?? [])
    // Watch first, then note what is bound: a replacement in between is seen either way.
    for (const p of g.bound) boundIds.set(p, "")
    rewatch()
    for (const p of g.bound) {
      const id = identity(p)
      if (id === undefined) boundIds.delete(p)
      else boundIds.set(p, id)
    }
    rewatch()
  }

  const audit = async (key: object): Promise<ReadonlyArray<string>> => {
    const t = byKey.get(key)
    if (t === undefined) return []
    // A replacement the kernel queued before the command ended is read first, so it stops (and
    // is judged) like one seen while it ran; a stop's verdict is waited for.
    await afterEvents()
    if (!t.stopped && !t.ended) checkBound(t) // a missed event is caught here, as in tick
    end(t)
    if (t.settled !== undefined) await t.settled
    return t.notices.splice(0)
  }

  const close = () => {
    for (const t of [...live]) end(t)
    for (const t of [...stopping]) settle(t, false)
    for (const w of watchers.values()) w.close()
    watchers.clear()
    made.close()
    if (ticker !== undefined) clearInterval(ticker)
    ticker = undefined
  }

  const alias = (key: object, also: object) => {
    const t = byKey.get(key)
    if (t !== undefined) byKey.set(also, t)
  }

  return { track, audit, alias, close }
}
