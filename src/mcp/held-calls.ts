/**
 * Approvals for 2026-07-28 clients, which cannot be sent a request in the middle of a call. A
 * call that needs the person is held where it asked (an approval in authorize, the `question`
 * tool, a program's nested call in code mode): its result is an `input_required` with the
 * elicitation form and a signed `requestState` (request-state.ts) bound to the call, its
 * arguments and the client. The client asks the person and retries with the answer; the retry
 * hands the answer to the held call, which goes on from where it stopped, so nothing in it runs
 * twice. The question may also be a URL to visit (an upstream server's, src/mcp/questions.ts),
 * for a client that declared URL-mode elicitation. A state is refused when it was altered, expired, already used, sent by another client
 * or for another call, or when the call it continues is no longer held (the server restarted,
 * or nobody answered in time: then the held call was refused, as when nobody can be asked).
 *
 * Replicas sharing a store (docs/scaling.md): the state says which set of held calls holds the
 * call (`holder`, on which replica's lease), and a retry may reach another replica. A call that
 * has not started its tool (only the permission checks ran: the question is its approval) is
 * run again there from the start, with the answers so far, signed in the state, given to the
 * questions it asks again; the holder drops its copy. A call whose tool started (a code-mode
 * program waiting on a nested approval) must not run again: the retry is forwarded to its holder
 * (`Forward`, held-handoff.ts), which answers it as if it had come there.
 */
import { createHash, randomUUID } from "node:crypto"
import { Deferred, Effect, Exit, Fiber, Queue } from "effect"
import type { ElicitationAnswer, ElicitationForm, InputRoundShape, UrlRequest } from "../prompt/input-round.ts"
import { isRecord } from "../schema/json-schema.ts"
import { canonicalJson, type RequestStates, type StateBinding, type StateProblem } from "./request-state.ts"

/** What one request (the first call or a retry) brings for the held call to use while it answers it. */
export interface RequestIo {
  /** The call's live output, sent on this request (log and progress). */
  readonly onOutput: (chunk: string, offset: number) => void
  /** Whether this client can show an elicitation form (its `clientCapabilities`). */
  readonly canElicit: boolean
  /** Whether it can send the person to a URL (URL-mode elicitation): an upstream server's login or page. */
  readonly canVisit?: boolean
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
      readonly inputRequests: Record<string, { readonly method: "elicitation/create"; readonly params: Question }>
      readonly requestState: string
    }
  /** The outcome another replica's held call gave, already as the wire carries it. */
  | { readonly _tag: "Wire"; readonly wire: unknown }
  | { readonly _tag: "Refused"; readonly problem: HeldProblem; readonly message: string }

/**
 * Why a retry was refused: its state (request-state.ts); the call is no longer held; or the
 * replica that held it is gone, with what that means for the work after the approval.
 */
export type HeldProblem = StateProblem | "not-held" | "replica-lost" | "replica-lost-after-answer"

/** One question answered while the call had not started its tool: its form's hash and the answer. */
export interface Given {
  readonly form: string
  readonly answer: ElicitationAnswer
}

/** What a state carries (signed): which held call and question, where, and how to run it again. */
export interface StatePayload {
  readonly id: string
  readonly key: string
  /** The set of held calls that holds it (one per server). */
  readonly holder?: string
  /** The holder's replica lease (host id and epoch), when replicas share a store. */
  readonly host?: string
  readonly epoch?: number
  /** Present while the call has not started its tool: it may run again from the start with these. */
  readonly replay?: { readonly asked: string; readonly answers: ReadonlyArray<Given> }
}

/** Where a set of held calls lives. */
export interface HeldPlace {
  readonly holder: string
  readonly host?: { readonly id: string; readonly epoch: number }
}

/**
 * A retry for a call suspended in another replica's memory: handed to its holder, which answers
 * it (`answerHere`); the answer comes back as the wire carries it, or a refusal.
 */
export type Forward = (
  payload: StatePayload & { readonly holder: string; readonly host: string },
  inputResponses: Record<string, unknown> | undefined,
  request: RequestIo
) => Effect.Effect<HeldOutcome<never>>

export interface HeldOptions {
  readonly place?: HeldPlace
  /** Hands a retry to the replica holding a suspended call (undefined: such a retry is `not-held`). */
  readonly forward?: Forward
  /** Tells the holder of a call run again here to drop its copy. */
  readonly dropElsewhere?: (holder: string, id: string) => Effect.Effect<void>
}

/** What a held call may ask: a form, or a URL to visit (sent the 2026 way: without an id). */
type Question = ElicitationForm | Omit<UrlRequest, "elicitationId">

/** A form's identity: the same question asked again hashes the same. */
export const formHash = (form: Question): string => createHash("sha256").update(canonicalJson(form)).digest("base64url")

type Reply =
  | { readonly _tag: "Answer"; readonly answer: ElicitationAnswer }
  | { readonly _tag: "Unavailable"; readonly reason: string }
interface Asked {
  readonly _tag: "Asked"
  readonly key: string
  readonly form: Question
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
  /** Its tool (or a tool it called) started: a question now cannot be answered by running it again. */
  started: boolean
  /** The questions answered before it started, in order (signed into its states). */
  readonly answers: Array<Given>
  /** Answers given with a retry on another replica, for the questions the call asks again here. */
  readonly presets: Array<Given>
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
  /**
   * A retry: checks the state, hands the answer to the held call and answers as `start` does.
   * `run` is the call, for a call held elsewhere that runs again here.
   */
  readonly resume: (
    binding: StateBinding,
    requestState: string,
    inputResponses: Record<string, unknown> | undefined,
    request: RequestIo,
    run: (round: InputRoundShape, io: CallIo) => Effect.Effect<R>
  ) => Effect.Effect<HeldOutcome<R>>
  /** A retry another replica checked (its state used up there) and handed here. */
  readonly answerHere: (
    id: string,
    key: string,
    inputResponses: Record<string, unknown> | undefined,
    request: RequestIo
  ) => Effect.Effect<HeldOutcome<R>>
  /** Ends a held call whose state was used on another replica (it ran again there). */
  readonly drop: (id: string) => Effect.Effect<void>
  readonly place: HeldPlace
  /** How many calls are held now (tests, and the finalizer). */
  readonly size: () => number
  /** Ends every held call (the server is closing). */
  readonly close: Effect.Effect<void>
}

const NOT_HELD =
  "The call this requestState continues is no longer held by this server (nobody answered in time, or the server restarted); call the tool again without requestState."

export const makeHeldCalls = <R>(states: RequestStates, ttlMs: number, options: HeldOptions = {}): HeldCalls<R> => {
  const held = new Map<string, Held<R>>()
  const place: HeldPlace = options.place ?? { holder: randomUUID() }
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
    const payload: StatePayload = {
      id: h.id,
      key: asked.key,
      holder: place.holder,
      ...(place.host === undefined ? {} : { host: place.host.id, epoch: place.host.epoch }),
      ...(h.started ? {} : { replay: { asked: formHash(asked.form), answers: h.answers } })
    }
    return {
      _tag: "InputRequired",
      inputRequests: { [asked.key]: { method: "elicitation/create", params: asked.form } },
      requestState: states.sign(h.binding, payload, ttlMs)
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
    canVisit: h.io.canElicit && h.io.canVisit === true,
    started: Effect.sync(() => {
      h.started = true
    }),
    elicit: (question) =>
      Effect.gen(function* () {
        const form: Question =
          question.mode === "url" ? { mode: "url", message: question.message, url: question.url } : question
        // Run again from a retry on another replica: the questions asked there are answered
        // with what the person said, while they are the same questions in the same order.
        const preset = h.presets.shift()
        if (preset !== undefined) {
          if (preset.form === formHash(form)) {
            if (!h.started) h.answers.push(preset)
            return { _tag: "Answer", answer: preset.answer } as const
          }
          h.presets.length = 0
        }
        if (h.expired)
          return { _tag: "Unavailable", reason: "an earlier question of this call went unanswered" } as const
        if (!h.io.canElicit)
          return { _tag: "Unavailable", reason: "the MCP client does not support elicitation" } as const
        if (form.mode === "url" && h.io.canVisit !== true)
          return { _tag: "Unavailable", reason: "the MCP client does not support url-mode elicitation" } as const
        const reply = yield* Deferred.make<Reply>()
        yield* Queue.offer(h.steps, { _tag: "Asked", key: `ask_${randomUUID().slice(0, 8)}`, form, reply })
        return yield* Deferred.await(reply)
      })
  })

  const startWith = Effect.fnUntraced(function* (
    binding: StateBinding,
    request: RequestIo,
    run: (round: InputRoundShape, io: CallIo) => Effect.Effect<R>,
    presets: Array<Given>
  ): Effect.fn.Return<HeldOutcome<R>> {
    const h: Held<R> = {
      id: randomUUID(),
      binding,
      steps: yield* Queue.unbounded<Step<R>>(),
      cancel: yield* Deferred.make<void>(),
      fiber: undefined,
      io: request,
      pending: undefined,
      expired: false,
      timer: undefined,
      started: false,
      answers: [],
      presets
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
  })

  /** Hands an answer to a call held here (its state already checked and used up). */
  const answerHere = Effect.fnUntraced(function* (
    id: string,
    key: string,
    inputResponses: Record<string, unknown> | undefined,
    request: RequestIo
  ): Effect.fn.Return<HeldOutcome<R>> {
    const h = held.get(id)
    const asked = h?.pending
    if (h === undefined || asked === undefined || asked.key !== key) {
      return { _tag: "Refused", problem: "not-held", message: NOT_HELD } as const
    }
    const answer = elicitationAnswer(inputResponses?.[asked.key])
    // No answer to the question asked: ask it again, under a new state.
    if (answer === undefined) return inputRequired(h, asked)
    h.pending = undefined
    h.io = request
    if (!h.started) h.answers.push({ form: formHash(asked.form), answer })
    yield* Deferred.succeed(asked.reply, { _tag: "Answer", answer })
    return yield* answering(h, request, next(h))
  })

  return {
    start: (binding, request, run) => startWith(binding, request, run, []),

    resume: (binding, requestState, inputResponses, request, run) =>
      Effect.gen(function* () {
        const verified = yield* states.verify<StatePayload>(requestState, binding)
        if (!verified.ok) return { _tag: "Refused", problem: verified.problem, message: verified.message } as const
        const payload = verified.payload
        const holder = typeof payload.holder === "string" ? payload.holder : place.holder
        if (holder === place.holder) return yield* answerHere(payload.id, payload.key, inputResponses, request)
        const replay = payload.replay
        // Another server holds it. Nothing of it ran but the permission checks: run it here
        // (the state is used up for every replica, so the holder's copy can never continue).
        if (replay !== undefined && states.shared) {
          if (options.dropElsewhere !== undefined) yield* options.dropElsewhere(holder, payload.id)
          const answer = elicitationAnswer(inputResponses?.[payload.key])
          const presets = answer === undefined ? replay.answers : [...replay.answers, { form: replay.asked, answer }]
          return yield* startWith(binding, request, run, [...presets])
        }
        if (options.forward !== undefined && typeof payload.host === "string") {
          return yield* options.forward({ ...payload, holder, host: payload.host }, inputResponses, request)
        }
        return { _tag: "Refused", problem: "not-held", message: NOT_HELD } as const
      }),

    answerHere,

    drop: (id) =>
      Effect.suspend(() => {
        const h = held.get(id)
        if (h === undefined) return Effect.void
        held.delete(id)
        if (h.timer !== undefined) clearTimeout(h.timer)
        return h.fiber === undefined ? Effect.void : Effect.asVoid(Fiber.interrupt(h.fiber))
      }),

    place,

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
