/**
 * Approvals for 2026-07-28 clients, which cannot be sent a request in the middle of a call. A
 * call that needs the person is held where it asked (an approval in authorize, the `question`
 * tool, a program's nested call in code mode): its result is an `input_required` with the
 * elicitation form and a signed `requestState` (request-state.ts) bound to the call, its
 * arguments and the client. The client asks the person and retries with the answer; the retry
 * hands the answer to the held call, which goes on from where it stopped, so nothing in it runs
 * twice. A state is refused when it was altered, expired, already used, sent by another client
 * or for another call, or when the call it continues is no longer held (the server restarted,
 * or nobody answered in time: then the held call was refused, as when nobody can be asked).
 */
import { randomUUID } from "node:crypto"
import { Deferred, Effect, Exit, Fiber, Queue } from "effect"
import type { ElicitationAnswer, ElicitationForm, InputRoundShape } from "../prompt/input-round.ts"
import { isRecord } from "../schema/json-schema.ts"
import type { RequestStates, StateBinding, StateProblem } from "./request-state.ts"

/** What one request (the first call or a retry) brings for the held call to use while it answers it. */
export interface RequestIo {
  /** The call's live output, sent on this request (log and progress). */
  readonly onOutput: (chunk: string, offset: number) => void
  /** Whether this client can show an elicitation form (its `clientCapabilities`). */
  readonly canElicit: boolean
  /** Fires when the client cancels this request: the held call is cancelled as a whole. */
  readonly signal: AbortSignal
}

/** What the held call sees for its whole life, whichever request it is answering. */
export interface CallIo {
  readonly onOutput: (chunk: string, offset: number) => void
  readonly cancelled: Effect.Effect<void>
}

export type HeldOutcome<R> =
  | { readonly _tag: "Result"; readonly result: R }
  | {
      readonly _tag: "InputRequired"
      readonly inputRequests: Record<
        string,
        { readonly method: "elicitation/create"; readonly params: ElicitationForm }
      >
      readonly requestState: string
    }
  | { readonly _tag: "Refused"; readonly problem: StateProblem | "not-held"; readonly message: string }

type Reply =
  | { readonly _tag: "Answer"; readonly answer: ElicitationAnswer }
  | { readonly _tag: "Unavailable"; readonly reason: string }
interface Asked {
  readonly _tag: "Asked"
  readonly key: string
  readonly form: ElicitationForm
  readonly reply: Deferred.Deferred<Reply>
}
type Step<R> = Asked | { readonly _tag: "Done"; readonly result: R }

interface Held<R> {
  readonly id: string
  readonly binding: StateBinding
  readonly steps: Queue.Queue<Step<R>>
  readonly cancel: Deferred.Deferred<void>
  fiber: Fiber.Fiber<unknown> | undefined
  io: RequestIo
  pending: Asked | undefined
  /** Nobody answered in time: the call was told so, and any later question is answered the same. */
  expired: boolean
  timer: ReturnType<typeof setTimeout> | undefined
}

/** An answer in a retry's `inputResponses`, if it is one. */
const elicitationAnswer = (value: unknown): ElicitationAnswer | undefined => {
  if (!isRecord(value)) return undefined
  const { action, content } = value
  if (action !== "accept" && action !== "decline" && action !== "cancel") return undefined
  if (content !== undefined && !isRecord(content)) return undefined
  return content === undefined ? { action } : { action, content }
}

export interface HeldCalls<R> {
  /** Starts a call with a round of its own; answers with its result or what it needs first. */
  readonly start: (
    binding: StateBinding,
    request: RequestIo,
    run: (round: InputRoundShape, io: CallIo) => Effect.Effect<R>
  ) => Effect.Effect<HeldOutcome<R>>
  /** A retry: checks the state, hands the answer to the held call and answers as `start` does. */
  readonly resume: (
    binding: StateBinding,
    requestState: string,
    inputResponses: Record<string, unknown> | undefined,
    request: RequestIo
  ) => Effect.Effect<HeldOutcome<R>>
  /** How many calls are held now (tests, and the finalizer). */
  readonly size: () => number
  /** Ends every held call (the server is closing). */
  readonly close: Effect.Effect<void>
}

export const makeHeldCalls = <R>(states: RequestStates, ttlMs: number): HeldCalls<R> => {
  const held = new Map<string, Held<R>>()
  const minutes = Math.max(1, Math.round(ttlMs / 60_000))

  const expire = (h: Held<R>) => {
    h.expired = true
    held.delete(h.id)
    const asked = h.pending
    h.pending = undefined
    if (asked !== undefined) {
      Deferred.doneUnsafe(
        asked.reply,
        Exit.succeed<Reply>({
          _tag: "Unavailable",
          reason: `no answer came back from the MCP client within ${minutes} minute${minutes === 1 ? "" : "s"}`
        })
      )
    }
  }

  const arm = (h: Held<R>) => {
    if (h.timer !== undefined) clearTimeout(h.timer)
    h.timer = setTimeout(() => expire(h), ttlMs)
    h.timer.unref?.()
  }

  /**
   * Runs `answer` for `request`: the held call's output goes to it, and the client cancelling it
   * cancels the call, only while it is outstanding (a server may abort a request's signal once
   * it has been answered).
   */
  const answering = (h: Held<R>, request: RequestIo, answer: Effect.Effect<HeldOutcome<R>>) =>
    Effect.suspend(() => {
      h.io = request
      const cancel = () => Deferred.doneUnsafe(h.cancel, Exit.void)
      if (request.signal.aborted) cancel()
      request.signal.addEventListener("abort", cancel, { once: true })
      return Effect.ensuring(
        answer,
        Effect.sync(() => request.signal.removeEventListener("abort", cancel))
      )
    })

  const inputRequired = (h: Held<R>, asked: Asked): HeldOutcome<R> => {
    arm(h)
    return {
      _tag: "InputRequired",
      inputRequests: { [asked.key]: { method: "elicitation/create", params: asked.form } },
      requestState: states.sign(h.binding, { id: h.id, key: asked.key }, ttlMs)
    }
  }

  /** Waits for the held call's next step: its result, or its next question. */
  const next = (h: Held<R>): Effect.Effect<HeldOutcome<R>> =>
    Effect.map(Queue.take(h.steps), (step): HeldOutcome<R> => {
      if (step._tag === "Done") {
        held.delete(h.id)
        if (h.timer !== undefined) clearTimeout(h.timer)
        return { _tag: "Result", result: step.result }
      }
      h.pending = step
      return inputRequired(h, step)
    })

  const roundOf = (h: Held<R>): InputRoundShape => ({
    elicit: (form) =>
      Effect.gen(function* () {
        if (h.expired)
          return { _tag: "Unavailable", reason: "an earlier question of this call went unanswered" } as const
        if (!h.io.canElicit)
          return { _tag: "Unavailable", reason: "the MCP client does not support elicitation" } as const
        const reply = yield* Deferred.make<Reply>()
        yield* Queue.offer(h.steps, { _tag: "Asked", key: `ask_${randomUUID().slice(0, 8)}`, form, reply })
        return yield* Deferred.await(reply)
      })
  })

  return {
    start: (binding, request, run) =>
      Effect.gen(function* () {
        const h: Held<R> = {
          id: randomUUID(),
          binding,
          steps: yield* Queue.unbounded<Step<R>>(),
          cancel: yield* Deferred.make<void>(),
          fiber: undefined,
          io: request,
          pending: undefined,
          expired: false,
          timer: undefined
        }
        const io: CallIo = {
          onOutput: (chunk, offset) => h.io.onOutput(chunk, offset),
          cancelled: Deferred.await(h.cancel)
        }
        held.set(h.id, h)
        h.fiber = yield* Effect.forkDetach(
          Effect.flatMap(run(roundOf(h), io), (result) => Queue.offer(h.steps, { _tag: "Done", result }))
        )
        return yield* answering(h, request, next(h))
      }),

    resume: (binding, requestState, inputResponses, request) =>
      Effect.gen(function* () {
        const verified = states.verify<{ readonly id?: unknown; readonly key?: unknown }>(requestState, binding)
        if (!verified.ok) return { _tag: "Refused", problem: verified.problem, message: verified.message } as const
        const h = typeof verified.payload.id === "string" ? held.get(verified.payload.id) : undefined
        const asked = h?.pending
        if (h === undefined || asked === undefined || asked.key !== verified.payload.key) {
          return {
            _tag: "Refused",
            problem: "not-held",
            message:
              "The call this requestState continues is no longer held by this server (nobody answered in time, or the server restarted); call the tool again without requestState."
          } as const
        }
        const answer = elicitationAnswer(inputResponses?.[asked.key])
        // No answer to the question asked: ask it again, under a new state.
        if (answer === undefined) return inputRequired(h, asked)
        h.pending = undefined
        h.io = request
        yield* Deferred.succeed(asked.reply, { _tag: "Answer", answer })
        return yield* answering(h, request, next(h))
      }),

    size: () => held.size,

    close: Effect.suspend(() => {
      const fibers = [...held.values()].flatMap((h) => {
        if (h.timer !== undefined) clearTimeout(h.timer)
        return h.fiber === undefined ? [] : [h.fiber]
      })
      held.clear()
      return Effect.asVoid(Fiber.interruptAll(fibers))
    })
  }
}
