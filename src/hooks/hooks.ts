/**
 * PreToolUse and PostToolUse hooks, in Claude Code's protocol, so existing hook scripts work:
 *
 * - A command hook gets the event as JSON on stdin (`session_id`, `cwd`, `hook_event_name`,
 *   `tool_name`, `tool_input`, `tool_use_id`; PostToolUse adds `tool_response`) and answers with
 *   its exit code and, on exit 0, optional JSON on stdout.
 * - Exit 2 blocks: stderr goes to the model. JSON may allow / deny / ask
 *   (`hookSpecificOutput.permissionDecision`, or the older `decision: "approve" | "block"`),
 *   rewrite the input (`updatedInput`), or add context (`additionalContext`).
 * - A hook has a timeout (seconds; default 60). A PreToolUse hook that crashes (any other
 *   non-zero exit, unparsable JSON) or times out blocks the call: it was meant to guard it.
 *   A PostToolUse failure is reported in the result's metadata and changes nothing else.
 *
 * Embedders can add hooks as Effect functions (`FunctionHook`) beside the configured commands.
 */
import { Context, Duration, Effect, Fiber, Layer, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { FreecodeConfig, sectionOf } from "../config/load.ts"
import { isRecord } from "../schema/json-schema.ts"
import { headOf } from "../text/cut.ts"
import { Workspace } from "../tool/workspace.ts"
import { type CommandHookConfig, type HookMatcherConfig, hooksSection } from "./config.ts"

export type HookEventName = "PreToolUse" | "PostToolUse"

/** What a hook receives (Claude Code's field names). */
export interface HookInput {
  readonly session_id: string
  readonly cwd: string
  readonly hook_event_name: HookEventName
  readonly tool_name: string
  readonly tool_input: unknown
  readonly tool_use_id: string
  /** PostToolUse: the result. */
  readonly tool_response?: unknown
  /** Set when a program made this call (the `code` tool): the program's call id. */
  readonly parent_tool_use_id?: string
}

/** What a hook answers, after parsing. */
export interface HookResponse {
  readonly decision?: "allow" | "ask" | "deny"
  readonly reason?: string
  readonly updatedInput?: Record<string, unknown>
  readonly additionalContext?: string
}

/** A hook written as an Effect function (for embedders). A failure or defect counts as a crash. */
export interface FunctionHook {
  readonly event: HookEventName
  readonly name: string
  /** As in the config: a tool name, `A|B`, a regular expression; absent, empty or `*` for every tool. */
  readonly matcher?: string
  readonly timeout?: Duration.Input
  readonly run: (input: HookInput) => Effect.Effect<HookResponse, unknown>
}

/** What one hook did, for the result's metadata. */
export interface HookOutcome {
  readonly event: HookEventName
  readonly hook: string
  readonly outcome: "allow" | "ask" | "deny" | "continue" | "crashed" | "timed out"
  readonly reason?: string
  readonly updatedInput?: boolean
  readonly additionalContext?: string
  readonly durationMs: number
}

export interface PreResult {
  /** The strictest decision any hook gave (a crash or timeout is a deny). */
  readonly decision: "allow" | "ask" | "deny" | undefined
  readonly reason: string | undefined
  /** The input after every rewrite, or undefined when no hook rewrote it. */
  readonly updatedInput: Record<string, unknown> | undefined
  readonly context: ReadonlyArray<string>
  readonly outcomes: ReadonlyArray<HookOutcome>
}

export interface PostResult {
  /** Text for the model: blocks' reasons and added context. */
  readonly feedback: ReadonlyArray<string>
  readonly outcomes: ReadonlyArray<HookOutcome>
}

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60

/** Claude Code's matcher: `*`/empty = all; otherwise a regular expression over the tool name (case-insensitive here). */
export const matcherMatches = (matcher: string | undefined, tool: string): boolean => {
  if (matcher === undefined || matcher === "" || matcher === "*") return true
  try {
    return new RegExp(`^(?:${matcher})$`, "i").test(tool)
  } catch {
    return matcher.toLowerCase() === tool.toLowerCase()
  }
}

interface Runnable {
  readonly event: HookEventName
  readonly name: string
  readonly matcher: string | undefined
  readonly timeout: Duration.Duration
  readonly run: (input: HookInput) => Effect.Effect<RawAnswer>
}

/** A hook's answer before it becomes an outcome. */
type RawAnswer =
  | { readonly kind: "answer"; readonly response: HookResponse }
  | { readonly kind: "crashed"; readonly reason: string }

const decisionOf = (v: unknown): HookResponse["decision"] =>
  v === "allow" || v === "approve" ? "allow" : v === "deny" || v === "block" ? "deny" : v === "ask" ? "ask" : undefined

/** Claude Code's JSON output, both the current `hookSpecificOutput` form and the older top-level one. */
export const parseHookJson = (json: unknown): HookResponse | string => {
  if (!isRecord(json)) return "the hook printed JSON that is not an object"
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {}
  const decision = decisionOf(specific.permissionDecision) ?? decisionOf(json.decision)
  const reason = [specific.permissionDecisionReason, json.reason, json.stopReason].find((r) => typeof r === "string")
  const updated = specific.updatedInput ?? json.updatedInput
  const context = specific.additionalContext ?? json.additionalContext
  if (updated !== undefined && !isRecord(updated)) return "updatedInput must be a JSON object"
  const stop = json.continue === false ? ("deny" as const) : undefined
  return {
    ...((stop ?? decision) === undefined ? {} : { decision: (stop ?? decision)! }),
    ...(typeof reason === "string" ? { reason } : {}),
    ...(updated === undefined ? {} : { updatedInput: updated as Record<string, unknown> }),
    ...(typeof context === "string" && context !== "" ? { additionalContext: context } : {})
  }
}

const encoder = new TextEncoder()

/**
 * A hook prints what it likes; what we keep of one stream is bounded (the first
 * HOOK_OUTPUT_MAX_CHARS characters, the rest read and dropped so the hook never blocks on a full
 * pipe). The model's copy is cut to its budget later, with the rest stored (src/orchestrator/shape.ts).
 */
export const HOOK_OUTPUT_MAX_CHARS = 1_000_000

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.runFold(
      () => ({ text: "", dropped: 0 }),
      (acc, s: string) => {
        const room = HOOK_OUTPUT_MAX_CHARS - acc.text.length
        if (room >= s.length) return { text: acc.text + s, dropped: acc.dropped }
        const kept = headOf(s, room)
        return { text: acc.text + kept, dropped: acc.dropped + s.length - kept.length }
      }
    ),
    Effect.map(({ text, dropped }) =>
      dropped === 0 ? text : `${text}\n[… the hook printed ${dropped} more characters, not kept …]`
    ),
    Effect.orElseSucceed(() => "")
  )

/**
 * Runs one command hook: `/bin/bash --norc -c COMMAND` in the project root, the event on stdin.
 * `--norc`: bash sources ~/.bashrc even for `-c` when its stdin is a socket (as Node's pipes
 * are), so without it every hook ran the person's shell start-up first — one that waits on a
 * lock (pyenv's rehash) held every hook, and so every call, for a minute.
 */
const commandHook =
  (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"], root: string, config: CommandHookConfig) =>
  (input: HookInput): Effect.Effect<RawAnswer> =>
    Effect.gen(function* () {
      const handle = yield* spawner.spawn(
        ChildProcess.make("/bin/bash", ["--norc", "-c", config.command], {
          cwd: root,
          env: { FREECODE_PROJECT_DIR: root, CLAUDE_PROJECT_DIR: root },
          extendEnv: true,
          stdin: { stream: Stream.make(encoder.encode(JSON.stringify(input))) },
          killSignal: "SIGTERM",
          forceKillAfter: "1 second"
        })
      )
      const out = yield* Effect.forkScoped(collect(handle.stdout))
      const err = yield* Effect.forkScoped(collect(handle.stderr))
      const code = yield* handle.exitCode
      const stdout = yield* Fiber.join(out).pipe(Effect.timeoutOption("500 millis"))
      const stderr = yield* Fiber.join(err).pipe(Effect.timeoutOption("500 millis"))
      const so = stdout._tag === "Some" ? stdout.value : ""
      const se = (stderr._tag === "Some" ? stderr.value : "").trim()
      if (code === 2) {
        return {
          kind: "answer",
          response: { decision: "deny", reason: se === "" ? "A hook blocked this call." : se }
        } as const
      }
      if (code !== 0) {
        return { kind: "crashed", reason: `exited with code ${code}${se === "" ? "" : `: ${se}`}` } as const
      }
      const text = so.trim()
      if (!text.startsWith("{")) {
        // Plain text on exit 0 is context for the model, as in Claude Code's PostToolUse transcript.
        return { kind: "answer", response: text === "" ? {} : { additionalContext: text } } as const
      }
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch (e) {
        return { kind: "crashed", reason: `printed invalid JSON (${(e as Error).message})` } as const
      }
      const parsed = parseHookJson(json)
      return typeof parsed === "string"
        ? ({ kind: "crashed", reason: parsed } as const)
        : ({ kind: "answer", response: parsed } as const)
    }).pipe(
      Effect.scoped,
      Effect.catch((e) => Effect.succeed<RawAnswer>({ kind: "crashed", reason: `could not run: ${String(e)}` }))
    )

const fromConfig = (
  spawner: ChildProcessSpawner.ChildProcessSpawner["Service"],
  root: string,
  event: HookEventName,
  matchers: ReadonlyArray<HookMatcherConfig> | undefined
): Array<Runnable> =>
  (matchers ?? []).flatMap((m) =>
    m.hooks.map((h) => ({
      event,
      name: h.command,
      matcher: m.matcher,
      timeout: Duration.seconds(h.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS),
      run: commandHook(spawner, root, h)
    }))
  )

const fromFunction = (h: FunctionHook): Runnable => ({
  event: h.event,
  name: h.name,
  matcher: h.matcher,
  timeout: Duration.fromInputUnsafe(h.timeout ?? Duration.seconds(DEFAULT_HOOK_TIMEOUT_SECONDS)),
  run: (input) =>
    h.run(input).pipe(
      Effect.map((response): RawAnswer => ({ kind: "answer", response })),
      Effect.catchCause((cause) => Effect.succeed<RawAnswer>({ kind: "crashed", reason: `failed: ${String(cause)}` }))
    )
})

const RANK = { allow: 0, ask: 1, deny: 2 } as const

export class Hooks extends Context.Service<
  Hooks,
  {
    readonly pre: (input: Omit<HookInput, "hook_event_name" | "tool_response">) => Effect.Effect<PreResult>
    readonly post: (input: Omit<HookInput, "hook_event_name">) => Effect.Effect<PostResult>
    /** Whether any hook is configured for the event (lets the dispatcher skip the work). */
    readonly has: (event: HookEventName, tool: string) => boolean
  }
>()("freecode/Hooks") {
  /** The hooks in freecode.json, then `extra` function hooks, in that order. */
  static readonly layer = (extra: ReadonlyArray<FunctionHook> = []) =>
    Layer.effect(
      Hooks,
      Effect.gen(function* () {
        const hooks = sectionOf(yield* FreecodeConfig, hooksSection)
        const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
        const { root } = yield* Workspace
        return makeHooks([
          ...fromConfig(spawner, root, "PreToolUse", hooks?.PreToolUse),
          ...fromConfig(spawner, root, "PostToolUse", hooks?.PostToolUse),
          ...extra.map(fromFunction)
        ])
      })
    )
}

/** Runs a hook within its timeout and turns its answer into an outcome. */
const runOne = Effect.fnUntraced(function* (hook: Runnable, input: HookInput) {
  const started = Date.now()
  const answer = yield* hook.run(input).pipe(Effect.timeoutOption(hook.timeout))
  const durationMs = Date.now() - started
  const base = { event: hook.event, hook: hook.name, durationMs }
  if (answer._tag === "None") {
    const outcome: HookOutcome = {
      ...base,
      outcome: "timed out",
      reason: `the hook "${hook.name}" did not answer within ${Duration.format(hook.timeout)}`
    }
    return { outcome, response: undefined }
  }
  if (answer.value.kind === "crashed") {
    const outcome: HookOutcome = {
      ...base,
      outcome: "crashed",
      reason: `the hook "${hook.name}" ${answer.value.reason}`
    }
    return { outcome, response: undefined }
  }
  const r = answer.value.response
  const outcome: HookOutcome = {
    ...base,
    outcome: r.decision ?? "continue",
    ...(r.reason === undefined ? {} : { reason: r.reason }),
    ...(r.updatedInput === undefined ? {} : { updatedInput: true }),
    ...(r.additionalContext === undefined ? {} : { additionalContext: r.additionalContext })
  }
  return { outcome, response: r }
})

/** The Hooks service over a list of runnable hooks (shared by the config and function forms). */
const makeHooks = (hooks: ReadonlyArray<Runnable>): Hooks["Service"] => {
  const matching = (event: HookEventName, tool: string) =>
    hooks.filter((h) => h.event === event && matcherMatches(h.matcher, tool))

  const pre = Effect.fnUntraced(function* (
    base: Omit<HookInput, "hook_event_name" | "tool_response">
  ): Effect.fn.Return<PreResult> {
    const outcomes: Array<HookOutcome> = []
    const context: Array<string> = []
    let decision: PreResult["decision"]
    let reason: string | undefined
    let updatedInput: Record<string, unknown> | undefined
    // In order: each hook sees the input as the hooks before it left it.
    for (const hook of matching("PreToolUse", base.tool_name)) {
      const input: HookInput = {
        ...base,
        hook_event_name: "PreToolUse",
        tool_input: updatedInput ?? base.tool_input
      }
      const { outcome, response } = yield* runOne(hook, input)
      outcomes.push(outcome)
      if (response === undefined) {
        // Crashed or timed out: it was meant to guard the call, so the call does not run.
        return {
          decision: "deny",
          reason: `${outcome.reason}; the call was not run.`,
          updatedInput,
          context,
          outcomes
        }
      }
      if (response.additionalContext !== undefined) context.push(response.additionalContext)
      if (response.updatedInput !== undefined) updatedInput = response.updatedInput
      if (response.decision !== undefined && (decision === undefined || RANK[response.decision] > RANK[decision])) {
        decision = response.decision
        reason = response.reason
      }
      if (decision === "deny") break
    }
    return { decision, reason, updatedInput, context, outcomes }
  })

  const post = Effect.fnUntraced(function* (base: Omit<HookInput, "hook_event_name">): Effect.fn.Return<PostResult> {
    const outcomes: Array<HookOutcome> = []
    const feedback: Array<string> = []
    for (const hook of matching("PostToolUse", base.tool_name)) {
      const { outcome, response } = yield* runOne(hook, { ...base, hook_event_name: "PostToolUse" })
      outcomes.push(outcome)
      if (response?.decision === "deny" && response.reason !== undefined) feedback.push(response.reason)
      if (response?.additionalContext !== undefined) feedback.push(response.additionalContext)
    }
    return { feedback, outcomes }
  })

  return Hooks.of({ pre, post, has: (event, tool) => matching(event, tool).length > 0 })
}

/** Hooks from a list of function hooks only (tests, embedders without a config). */
export const hooksOf = (hooks: ReadonlyArray<FunctionHook>): Hooks["Service"] => makeHooks(hooks.map(fromFunction))
