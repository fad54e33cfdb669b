/**
 * A 2026-era retry for a call suspended in another replica's memory (a code-mode program waiting
 * on a nested approval: its tool started, so it must not run again), handed to that replica
 * through the shared store. The replica that got the retry (the receiver) has checked the state
 * and used it up; it writes the answer as a handoff row addressed to the holder (status `given`)
 * and announces it (PostgreSQL NOTIFY; on node:sqlite the holder polls). The holder takes it
 * (`taken`, guarded by its lease epoch), answers it as if the retry had come to it
 * (held-calls.ts `answerHere`), and writes the outcome back (`done`): the program's result, or
 * its next question under a new state. The receiver returns that.
 *
 * If the holder's lease is lost (it was fenced, or stopped and gave its lease back) while the
 * row is still `given`, the receiver withdraws it (`withdrawn`): the holder can no longer take
 * it (its epoch changed), so nothing after the approval ran, and the client is told so. If the
 * holder had taken it, the program ran on after the approval and its result is lost with it:
 * the client is told that, as a different problem.
 */
import { randomUUID } from "node:crypto"
import { type Context, Deferred, Effect, Queue, Schedule, type Scope } from "effect"
import { sharedStoreOf } from "../state/host-lease.ts"
import type { Forward, HeldCalls, HeldOutcome, HeldPlace, RequestIo } from "./held-calls.ts"

/** The channel: `a:HOLDER` (answers for it), `d:ID` (a handoff done), `c:ID` (cancelled), `x:HOLDER:HELD` (drop). */
export const HELD_CHANNEL = "freecode_held"

/** How often a waiting side looks at the store without a notification (a lost one, or node:sqlite). */
const POLL_MS = 250

interface PgListen {
  readonly listen: (
    channel: string
  ) => Effect.Effect<Queue.Dequeue<{ readonly payload: string }, unknown>, unknown, Scope.Scope>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, unknown>
}

interface HandoffRequest {
  readonly key: string
  readonly inputResponses?: Record<string, unknown>
  readonly canElicit: boolean
  readonly canVisit?: boolean
}

type Encoded =
  | { readonly kind: "wire"; readonly wire: unknown }
  | { readonly kind: "refused"; readonly problem: string; readonly message: string }

export interface HeldHandoff {
  readonly place: HeldPlace
  readonly forward: Forward
  readonly dropElsewhere: (holder: string, id: string) => Effect.Effect<void>
  /** Answers handoffs addressed to this holder with `held`, `toWire` giving a non-refused outcome's wire form. */
  readonly serve: <R>(
    held: HeldCalls<R>,
    toWire: (outcome: HeldOutcome<R>) => unknown
  ) => Effect.Effect<void, never, Scope.Scope>
}

const firstLine = (cause: unknown) => String(cause).split("\n")[0]

/** The handoff for a system with a shared store and a lease, or undefined without one. */
export const makeHeldHandoff = Effect.fnUntraced(function* (
  system: Context.Context<never>,
  ttlMs: number
): Effect.fn.Return<HeldHandoff | undefined, never, Scope.Scope> {
  const store = sharedStoreOf(system)
  if (store === undefined) return undefined
  const { sql, lease } = store
  const pg = "listen" in sql && "notify" in sql ? (sql as unknown as PgListen) : undefined
  const place: HeldPlace = {
    holder: `${lease.hostId}/${randomUUID().slice(0, 8)}`,
    host: { id: lease.hostId, epoch: lease.epoch }
  }
  const notify = (payload: string) => (pg === undefined ? Effect.void : Effect.ignore(pg.notify(HELD_CHANNEL, payload)))

  // Who waits for what: a receiver for its handoff's outcome, the holder for new handoffs.
  const waiters = new Map<string, () => void>()
  const cancels = new Map<string, AbortController>()
  let onAnswers: () => void = () => undefined
  let onDrop: (id: string) => void = () => undefined
  if (pg !== undefined) {
    const listenOnce = Effect.scoped(
      Effect.gen(function* () {
        const queue = yield* pg.listen(HELD_CHANNEL)
        while (true) {
          const { payload } = yield* Queue.take(queue)
          const [kind, target, extra] = payload.split(" ")
          if (target === undefined) continue
          if (kind === "a" && target === place.holder) onAnswers()
          else if (kind === "d") waiters.get(target)?.()
          else if (kind === "c") cancels.get(target)?.abort()
          else if (kind === "x" && target === place.holder && extra !== undefined) onDrop(extra)
        }
      })
    ).pipe(Effect.ignoreCause)
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(listenOnce, Effect.sleep(200))))
  }

  /** Sleeps until `id`'s notification or the poll interval, whichever comes first. */
  const nap = Effect.fnUntraced(function* (id: string) {
    const woken = yield* Deferred.make<void>()
    waiters.set(id, () => Deferred.doneUnsafe(woken, Effect.void))
    yield* Effect.raceFirst(Deferred.await(woken), Effect.sleep(POLL_MS)).pipe(
      Effect.ensuring(Effect.sync(() => waiters.delete(id)))
    )
  })

  const holderAlive = (host: string, epoch: number) =>
    Effect.map(
      sql<{ epoch: number | string }>`SELECT epoch FROM fc_hosts WHERE host_id = ${host}`,
      (rows) => rows[0] !== undefined && Number(rows[0].epoch) === epoch
    )

  const lost = (host: string, afterAnswer: boolean): HeldOutcome<never> =>
    afterAnswer
      ? {
          _tag: "Refused",
          problem: "replica-lost-after-answer",
          message: `The replica that ran the program this requestState continues (${host}) stopped after it was given the answer: what the program did after the approval may have partly run, and its result is lost. Check what it changed before calling the tool again without requestState.`
        }
      : {
          _tag: "Refused",
          problem: "replica-lost",
          message: `The program this requestState continues was lost with the replica that ran it (${host} stopped); nothing after the approval ran. The calls it made before it asked did run. Call the tool again without requestState to start it anew.`
        }

  const forward: Forward = (payload, inputResponses, request) =>
    Effect.gen(function* () {
      const id = randomUUID()
      const body: HandoffRequest = {
        key: payload.key,
        canElicit: request.canElicit,
        ...(request.canVisit === undefined ? {} : { canVisit: request.canVisit }),
        ...(inputResponses === undefined ? {} : { inputResponses })
      }
      const given = yield* sql<{
        ok: number
      }>`INSERT INTO fc_held_handoffs (nonce, holder, host_id, held_id, request, status, expires_at)
          SELECT ${id}, ${payload.holder}, ${payload.host}, ${payload.id}, ${JSON.stringify(body)}, 'given', ${Date.now() + ttlMs} ${lease.held}
          RETURNING 1 AS ok`.pipe(Effect.flatMap(lease.expectHeld), Effect.result)
      if (given._tag === "Failure") {
        return {
          _tag: "Refused",
          problem: "unavailable",
          message: `The answer could not be handed to the replica holding the program (${firstLine(given.failure)}); the requestState is used up. Call the tool again without requestState.`
        } as const
      }
      yield* notify(`a ${payload.holder}`)
      const deadline = Date.now() + ttlMs
      const withdraw = sql<{ ok: number }>`UPDATE fc_held_handoffs SET status = 'withdrawn'
          WHERE nonce = ${id} AND status = 'given' RETURNING 1 AS ok`
      const cancelled = Effect.callback<void>((resume) => {
        if (request.signal.aborted) return resume(Effect.void)
        request.signal.addEventListener("abort", () => resume(Effect.void), { once: true })
      })
      const wait = Effect.gen(function* () {
        while (true) {
          const rows = yield* sql<{
            status: string
            outcome: string | null
          }>`SELECT status, outcome FROM fc_held_handoffs WHERE nonce = ${id}`
          const row = rows[0]
          if (row?.status === "done" && row.outcome !== null) {
            yield* Effect.ignore(sql`DELETE FROM fc_held_handoffs WHERE nonce = ${id}`)
            const encoded = JSON.parse(row.outcome) as Encoded
            return encoded.kind === "wire"
              ? ({ _tag: "Wire", wire: encoded.wire } as const)
              : ({ _tag: "Refused", problem: encoded.problem, message: encoded.message } as HeldOutcome<never>)
          }
          const alive = yield* holderAlive(payload.host, payload.epoch ?? 1)
          if (!alive || (row?.status === "given" && Date.now() > deadline)) {
            const withdrawn = yield* withdraw
            if (withdrawn.length > 0) {
              yield* Effect.ignore(sql`DELETE FROM fc_held_handoffs WHERE nonce = ${id}`)
              return alive
                ? ({
                    _tag: "Refused",
                    problem: "not-held",
                    message:
                      "The replica holding the call this requestState continues did not take the answer in time; nothing after the approval ran. Call the tool again without requestState."
                  } as const)
                : lost(payload.host, false)
            }
            // Taken before it stopped: it may have finished meanwhile, else it is lost with it.
            const again = yield* sql<{ status: string }>`SELECT status FROM fc_held_handoffs WHERE nonce = ${id}`
            if (!alive && again[0]?.status !== "done") return lost(payload.host, true)
          }
          yield* nap(id)
        }
      })
      const onCancel = Effect.gen(function* () {
        // Not taken yet: it never will be. Taken: the holder cancels the program.
        const withdrawn = yield* Effect.orElseSucceed(withdraw, () => [])
        if (withdrawn.length === 0) yield* notify(`c ${id}`)
        return { _tag: "Refused", problem: "not-held", message: "The client cancelled the request." } as const
      })
      return yield* Effect.raceFirst(wait, Effect.andThen(cancelled, onCancel)).pipe(
        Effect.catchCause((cause) =>
          Effect.succeed<HeldOutcome<never>>({
            _tag: "Refused",
            problem: "unavailable",
            message: `The shared state store failed while waiting for the replica holding the program (${firstLine(cause)}). Call the tool again without requestState once it is back.`
          })
        )
      )
    })

  const serve = <R>(held: HeldCalls<R>, toWire: (outcome: HeldOutcome<R>) => unknown) =>
    Effect.gen(function* () {
      const run = Effect.runFork
      const answerOne = Effect.fnUntraced(function* (row: { nonce: string; held_id: string; request: string }) {
        const took = yield* sql<{ ok: number }>`UPDATE fc_held_handoffs SET status = 'taken'
              WHERE nonce = ${row.nonce} AND status = 'given' AND EXISTS (SELECT 1 FROM fc_hosts WHERE host_id = ${lease.hostId} AND epoch = ${lease.epoch})
              RETURNING 1 AS ok`
        if (took.length === 0) return
        const body = JSON.parse(row.request) as HandoffRequest
        const abort = new AbortController()
        cancels.set(row.nonce, abort)
        const io: RequestIo = {
          onOutput: () => undefined,
          canElicit: body.canElicit,
          ...(body.canVisit === undefined ? {} : { canVisit: body.canVisit }),
          signal: abort.signal
        }
        const outcome = yield* held
          .answerHere(row.held_id, body.key, body.inputResponses, io)
          .pipe(Effect.ensuring(Effect.sync(() => cancels.delete(row.nonce))))
        const encoded: Encoded =
          outcome._tag === "Refused"
            ? { kind: "refused", problem: outcome.problem, message: outcome.message }
            : { kind: "wire", wire: toWire(outcome) }
        yield* sql`UPDATE fc_held_handoffs SET status = 'done', outcome = ${JSON.stringify(encoded)}
              WHERE nonce = ${row.nonce} AND status = 'taken'`
        yield* notify(`d ${row.nonce}`)
      })
      let busy = false
      const look = Effect.suspend(() => {
        if (busy) return Effect.void
        busy = true
        return sql<{ nonce: string; held_id: string; request: string }>`SELECT nonce, held_id, request
            FROM fc_held_handoffs WHERE holder = ${place.holder} AND status = 'given'`.pipe(
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (row) => Effect.forkDetach(Effect.ignoreCause(answerOne(row))), { discard: true })
          ),
          Effect.ignoreCause,
          Effect.ensuring(
            Effect.sync(() => {
              busy = false
            })
          )
        )
      })
      onAnswers = () => void run(look)
      onDrop = (id) => void run(held.drop(id))
      // A notification can be lost (a reconnect, or none on node:sqlite): look anyway, also when
      // nothing is held here (an answer for a call that ended must be refused, not left waiting).
      yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(pg === undefined ? POLL_MS : POLL_MS * 4)))
      // Handoffs nobody finished (a receiver that died) go once well past their state's life.
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.ignore(
            Effect.suspend(() => sql`DELETE FROM fc_held_handoffs WHERE expires_at < ${Date.now() - ttlMs}`)
          ),
          Schedule.spaced(Math.max(60_000, ttlMs))
        )
      )
    })

  const handoff: HeldHandoff = {
    place,
    forward,
    dropElsewhere: (holder, id) => notify(`x ${holder} ${id}`),
    serve
  }
  return handoff
})
