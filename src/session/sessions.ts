/**
 * The one owner of state kept per session. A feature that keeps something per session (the read
 * records, the stored outputs, the tools a surface found, saved approvals, todos, background jobs,
 * an MCP session's transport) asks for a `slot` here instead of keeping its own map, so every one
 * of them ends with the session, by one rule:
 *
 * - a session starts when something is kept for it, and each use (`touch`, a slot's `getOrCreate`)
 *   makes it the most recent;
 * - it ends when `end` is called (a client said goodbye), when it has been unused for `idleMs`,
 *   or when more than `maxSessions` are alive (the least recently used ends);
 * - a session `hold`s while a request of it is in flight: held, it is never idle and never the one
 *   evicted;
 * - ending drops its entry from every slot at once, then runs each slot's cleanup (jobs stopped,
 *   a transport closed, spilled files removed).
 */
import { Context, Effect, Fiber, Layer, Option } from "effect"
import { positiveInt } from "../setting/positive-int.ts"

export interface SessionSettings {
  /** Sessions alive at once; past it the least recently used one ends. */
  readonly maxSessions: number
  /** A session unused (and not held) for this long ends; undefined: never. */
  readonly idleMs?: number | undefined
}

export const SESSIONS_MAX_NAME = "FREECODE_SESSIONS_MAX"
export const SESSION_IDLE_NAME = "FREECODE_SESSION_IDLE_MS"
export const DEFAULT_MAX_SESSIONS = 50

/** One feature's state, keyed by session id, owned by Sessions. */
export interface SessionSlot<V> {
  /** The session's value, without counting as a use. */
  readonly get: (sessionId: string) => V | undefined
  /** The session's value, made when it has none; a use of the session. */
  readonly getOrCreate: (sessionId: string, make: () => V) => V
  readonly size: () => number
  /** Every session's value. */
  readonly values: () => IterableIterator<V>
}

export interface SessionsShape {
  readonly settings: SessionSettings
  /** A use of the session now: starts it, or makes it the most recent. */
  readonly touch: (sessionId: string) => void
  /** The session is in use until the returned function is called (a request in flight). */
  readonly hold: (sessionId: string) => () => void
  /** Ends a session now: its entry leaves every slot, then each slot's cleanup runs. */
  readonly end: (sessionId: string) => Effect.Effect<void>
  /** Waits for the cleanups of sessions that ended in the background (evicted, idle). */
  readonly settled: Effect.Effect<void>
  /** Whether the session is alive. */
  readonly has: (sessionId: string) => boolean
  /** Sessions alive now. */
  readonly size: () => number
  /** A new slot, named for `counts`; `onEnd` cleans up a value whose session ended. */
  readonly slot: <V>(name: string, onEnd?: (sessionId: string, value: V) => Effect.Effect<void>) => SessionSlot<V>
  /** Live sessions and each slot's entries, by slot name: what a test or a bench checks for leaks. */
  readonly counts: () => Readonly<Record<string, number>>
}

interface Live {
  lastUsed: number
  holds: number
}

interface Registered {
  readonly name: string
  readonly values: Map<string, unknown>
  readonly onEnd: ((sessionId: string, value: never) => Effect.Effect<void>) | undefined
}

/**
 * Sessions for one tool system. With an idle limit a timer checks for idle sessions; `close`
 * stops it and ends every session (what releasing the layer does).
 */
export const makeSessions = (settings: SessionSettings): SessionsShape & { readonly close: Effect.Effect<void> } => {
  /** Alive sessions, least recently used first (Map order). */
  const live = new Map<string, Live>()
  const slots: Array<Registered> = []

  /** Takes the session out of every slot now; returns the cleanups of what it held. */
  const detach = (sessionId: string): Array<Effect.Effect<void>> => {
    live.delete(sessionId)
    const cleanups: Array<Effect.Effect<void>> = []
    for (const s of slots) {
      if (!s.values.has(sessionId)) continue
      const value = s.values.get(sessionId)
      s.values.delete(sessionId)
      if (s.onEnd !== undefined) cleanups.push(s.onEnd(sessionId, value as never))
    }
    return cleanups
  }
  // A cleanup that fails is the feature's bug; it must not stop the others.
  const runAll = (cleanups: Array<Effect.Effect<void>>): Effect.Effect<void> =>
    Effect.forEach(cleanups, (c) => Effect.catchCause(c, () => Effect.void), {
      concurrency: "unbounded",
      discard: true
    })
  // Taken out of every slot first, so nothing finds a half-ended session while cleanups run.
  const end = (sessionId: string): Effect.Effect<void> => Effect.suspend(() => runAll(detach(sessionId)))
  /** Cleanups of sessions ended by an eviction, still running. */
  const background = new Set<Fiber.Fiber<void>>()
  /** Ends a session from a synchronous caller (an eviction): gone at once, its cleanups in the background. */
  const endSoon = (sessionId: string) => {
    const cleanups = detach(sessionId)
    if (cleanups.length === 0) return
    const fiber = Effect.runFork(runAll(cleanups))
    background.add(fiber)
    fiber.addObserver(() => background.delete(fiber))
  }
  const settled = Effect.suspend(() => Fiber.awaitAll([...background]))

  const use = (sessionId: string): Live => {
    const entry = live.get(sessionId) ?? { lastUsed: 0, holds: 0 }
    entry.lastUsed = Date.now()
    live.delete(sessionId)
    live.set(sessionId, entry)
    if (live.size > settings.maxSessions) {
      for (const [id, other] of live) {
        if (live.size <= settings.maxSessions) break
        if (id !== sessionId && other.holds === 0) endSoon(id)
      }
    }
    return entry
  }

  const sweep = () => {
    if (settings.idleMs === undefined) return
    const before = Date.now() - settings.idleMs
    for (const [id, entry] of live) if (entry.holds === 0 && entry.lastUsed < before) endSoon(id)
  }
  const timer =
    settings.idleMs === undefined ? undefined : setInterval(sweep, Math.max(50, Math.min(1_000, settings.idleMs / 2)))
  timer?.unref()

  return {
    settings,
    touch: (sessionId) => void use(sessionId),
    hold: (sessionId) => {
      const entry = use(sessionId)
      entry.holds++
      let released = false
      return () => {
        if (released) return
        released = true
        entry.holds--
        // The idle time counts from the end of the last request.
        entry.lastUsed = Date.now()
      }
    },
    end,
    settled: Effect.asVoid(settled),
    has: (sessionId) => live.has(sessionId),
    size: () => live.size,
    slot: <V>(name: string, onEnd?: (sessionId: string, value: V) => Effect.Effect<void>): SessionSlot<V> => {
      const values = new Map<string, V>()
      slots.push({ name, values, onEnd: onEnd as Registered["onEnd"] })
      return {
        get: (sessionId) => values.get(sessionId),
        getOrCreate: (sessionId, make) => {
          use(sessionId)
          let value = values.get(sessionId)
          if (value === undefined) {
            value = make()
            values.set(sessionId, value)
          }
          return value
        },
        size: () => values.size,
        values: () => values.values()
      }
    },
    counts: () => {
      const out: Record<string, number> = { sessions: live.size }
      for (const s of slots) out[s.name] = (out[s.name] ?? 0) + s.values.size
      return out
    },
    close: Effect.suspend(() => {
      if (timer !== undefined) clearInterval(timer)
      const ids = new Set([...live.keys(), ...slots.flatMap((s) => [...s.values.keys()])])
      return Effect.andThen(Effect.forEach(ids, end, { discard: true }), settled)
    })
  }
}

/** An integer setting that must be positive when set; undefined when unset (src/setting/positive-int.ts). */
export const positiveSetting = positiveInt

/**
 * FREECODE_SESSIONS_MAX (else the older FREECODE_OUTPUT_STORE_SESSIONS, else 50) and the idle
 * limit a command chose, else FREECODE_SESSION_IDLE_MS, else none. A value set but unusable is an
 * error naming it.
 */
export const sessionSettingsConfig = Effect.fnUntraced(function* (idleChosen?: number) {
  const max = (yield* positiveSetting(SESSIONS_MAX_NAME)) ?? (yield* positiveSetting("FREECODE_OUTPUT_STORE_SESSIONS"))
  const idle = idleChosen ?? (yield* positiveSetting(SESSION_IDLE_NAME))
  return { maxSessions: max ?? DEFAULT_MAX_SESSIONS, idleMs: idle } satisfies SessionSettings
})

/**
 * The idle limit a command chose (`mcp --http`: its `--session-idle` flag, else
 * FREECODE_SESSION_IDLE_MS, else 5 minutes); unset, FREECODE_SESSION_IDLE_MS or none.
 */
export const SessionIdleMs = Context.Reference<number | undefined>("freecode/SessionIdleMs", {
  defaultValue: () => undefined
})

export class Sessions extends Context.Service<Sessions, SessionsShape>()("freecode/Sessions") {
  /** From the environment (and SessionIdleMs); every session ends when the layer is released. */
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function* () {
      const settings = yield* sessionSettingsConfig(yield* SessionIdleMs)
      return yield* Effect.acquireRelease(
        Effect.sync(() => makeSessions(settings)),
        (s) => s.close
      )
    })
  )
  /** Fixed settings, for tests and embedders. */
  static readonly layerWith = (settings: Partial<SessionSettings> = {}) =>
    Layer.effect(
      Sessions,
      Effect.acquireRelease(
        Effect.sync(() => makeSessions({ maxSessions: DEFAULT_MAX_SESSIONS, ...settings })),
        (s) => s.close
      )
    )
}

/**
 * The system's Sessions, or, for a service built on its own (a test of one layer), sessions of
 * its own with the default cap and no idle limit.
 */
export const sessionsOrOwn: Effect.Effect<SessionsShape> = Effect.map(Effect.serviceOption(Sessions), (given) =>
  Option.getOrElse(given, () => makeSessions({ maxSessions: DEFAULT_MAX_SESSIONS }))
)
