/**
 * The tool contract. One declaration holds everything about a tool; every field has a
 * reader (the orchestrator, the registry, the permission layer); no table anywhere else
 * keys off a tool's name.
 */
import { Duration, type Effect, Result, Schema, type SchemaAST, SchemaIssue } from "effect"
import { deriveParameters } from "../schema/derive.ts"
import type { JsonSchema, ObjectJsonSchema } from "../schema/json-schema.ts"
import { copyPlain, plainCheck } from "../schema/plain-decode.ts"
import { clip } from "../text/cut.ts"
import {
  type ArgumentIssue,
  type ExecuteError,
  InvalidArguments,
  type PermissionDenied,
  type ToolFailure
} from "./errors.ts"
import { intendedKey } from "./key-hint.ts"

/** What a tool knows about the call it is running. */
export interface ToolContext {
  readonly sessionId: string
  readonly callId: string
  /** The project root: relative paths resolve against it. */
  readonly root: string
  /** Whether the model on the other end can look at images (spec gap 9). */
  readonly canSeeImages: boolean
  /** Streams a piece of running output to the UI (tool_output events) and the partial output. */
  readonly emit: (chunk: string) => Effect.Effect<void>
  /**
   * A file for a child process's stdout and stderr, owned by the output store, for a tool that
   * returns `streamed: true` (bash): the output is what the child writes there, then anything
   * emitted after. Open it before emitting anything. Only the orchestrator provides it.
   */
  readonly capture?: Effect.Effect<Capture, ToolFailure>
  /**
   * Whether a file a search found may be shown to this caller, by the permission rules the call
   * runs under: "denied" by a deny rule (hide it entirely), "secret" (a .env-like file whose
   * reading needs approval: hide its contents). Absent: everything may be shown. A search that
   * hides only what is denied (ls, glob list names, never contents) passes `secrets: false`,
   * and is told "ok" for a secret file without the check being made.
   */
  readonly searchable?: Searchability
  /**
   * The paths the permission rules checked for this call, each as given (absolute) and as it
   * really was then (links followed). A tool that opens one verifies that the file it opened is
   * that real path (docs/permissions.md, "Check, then use"). Absent when no rules ran.
   */
  readonly checked?: ReadonlyArray<CheckedPath>
  /**
   * What the caller said about this call (the orchestrator's CallContext): its cancel, who
   * approves, and whether a program made it. A tool that dispatches calls of its own (`code`)
   * hands these on, so its calls are cancelled, approved and tagged like it.
   */
  readonly caller?: CallerContext
}

/**
 * The file a write's path landed on when the rules looked (its own entry, links not followed):
 * device, inode and mode (type and permission bits). A write verifies that the file it changes
 * is still this one (src/edit/write-transaction.ts).
 */
export interface CheckedEntry {
  readonly dev: number
  readonly ino: number
  readonly mode: number
}

/** A path the permission rules checked: as given (absolute), as it really was (links followed), and what was there. */
export interface CheckedPath {
  readonly abs: string
  readonly real: string
  /** For a write, on the native file system: the file there (null: nothing). Absent: not looked at. */
  readonly entry?: CheckedEntry | null
  /**
   * For a write, on the native file system: the folder `real` is in (null: none there yet, the
   * write makes it). A write refuses to change a file in another folder put at that path since
   * (one renamed into its place), not only in one reached through a link.
   */
  readonly folder?: CheckedEntry | null
  /** When `folder` is null: the deepest folder there, which the write makes the rest from (src/edit/make-folders.ts). */
  readonly base?: CheckedBase
}

/** The deepest existing folder above a write's missing folders as the rules saw it, and when (ms). */
export interface CheckedBase {
  readonly path: string
  readonly entry: CheckedEntry
  readonly at: number
}

/** The part of a call's CallContext a tool may read (see ToolContext.caller). */
export interface CallerContext {
  readonly sessionId: string
  readonly canSeeImages?: boolean
  readonly cancelled?: Effect.Effect<void>
  readonly approve?: (request: {
    readonly tool: string
    readonly args: unknown
    readonly reason: string
  }) => Effect.Effect<boolean>
  readonly onOutput?: (chunk: string, offset: number) => void
  readonly parentCallId?: string
}

export type Searchable = "ok" | "denied" | "secret"

/** ToolContext.searchable: a found file's verdict; `secrets` (default true): tell secret files apart. */
export type Searchability = (abs: string, secrets?: boolean) => Searchable

/** A file a child process writes its output into; see ToolContext.capture. */
export interface Capture {
  readonly path: string
  /** Reads what the child wrote since the last call (a bounded amount), so a UI sees it as it arrives. */
  readonly follow: Effect.Effect<void>
  /** Reads everything written so far: call it once the child has exited. */
  readonly toEnd: Effect.Effect<void>
  /** Past this many bytes the output is over its limit: stop the child. */
  readonly limitBytes: number
  /** True once the file is larger than limitBytes (its size on disk, not what was read of it). */
  readonly overLimit: Effect.Effect<boolean>
  /** Characters of output so far (as of the last follow). */
  readonly chars: () => number
  /** Whether the output so far ends with a newline. */
  readonly endsWithNewline: () => boolean
}

/** What a successful execute returns. Data, never markup. */
export interface ToolOutput {
  readonly title: string
  readonly output: string
  readonly metadata?: Readonly<Record<string, unknown>>
  /**
   * The full output is exactly what the tool emitted through `ctx.emit` (and `output` is
   * ignored). The orchestrator spools emitted output into the store as it arrives, spilling to
   * a file past the store's budget, so a tool printing hundreds of MB never holds it as one
   * string. bash uses this.
   */
  readonly streamed?: true
}

/**
 * Which kind of output a call prints (a diff, a file, search hits, a build or test log, other):
 * the class output compression shapes by. A tool may declare it; bash guesses it from the command.
 */
export const OUTPUT_KINDS = ["diff", "cat", "search", "log", "other"] as const
export type OutputKind = (typeof OUTPUT_KINDS)[number]

/** How the model's copy is cut when it exceeds the budget. */
export type TruncateDirection = "head" | "tail" | "both"

/**
 * What a person's cancel does to a running call: `cancel` stops it and returns what it had;
 * `block` lets it finish (a half-done write is worse than a late answer).
 */
export type InterruptBehavior = "cancel" | "block"

/** Kinds of effect a tool has on the world; the permission layer classifies calls by them. */
export type Operation =
  | "file.read"
  | "file.write"
  | "file.search"
  | "shell.exec"
  | "network.fetch"
  | "session.read"
  | "session.write"
  | "agent.spawn"
  /** Runs a program whose every tool call is dispatched and decided on its own (`code`). */
  | "program.run"
  | "person.ask"
  | "mcp.call"
  /** Reads an MCP server's resources; the servers it reads are what `paths` declares. */
  | "mcp.resource"

export type PermissionBehavior = "allow" | "ask" | "deny"

export interface PermissionCheck {
  readonly behavior: PermissionBehavior
  readonly reason?: string
}

/** Where a tool came from; tools that come and go at runtime sort after the fixed ones. */
export type ToolSource = "builtin" | "mcp" | "extension"

/** A tool as the registry and orchestrator see it: arguments are decoded before they reach it. */
export interface Tool<R = never> {
  readonly id: string
  readonly description: string
  readonly source: ToolSource
  /** The JSON Schema of the parameters, derived once. */
  readonly inputSchema: ObjectJsonSchema
  /** Decodes raw arguments, reporting every failing path. */
  readonly decode: (input: unknown) => Result.Result<unknown, InvalidArguments>
  /** The Schema `decode` uses, for a tool declared with one (an MCP tool has only its JSON Schema). */
  readonly parameters?: Schema.Codec<unknown, unknown, never, unknown>
  readonly concurrencySafe: boolean
  readonly mutates: boolean
  readonly retrySafe: boolean
  readonly interruptBehavior: InterruptBehavior
  readonly timeout: (args: unknown) => Duration.Input
  /** What to do instead, told to the model when a call times out (bash: run it in the background). */
  readonly timeoutAdvice?: string
  /** The most characters of output the model may see from one call; undefined = the global budget. */
  readonly maxResultSizeChars: number | undefined
  readonly truncate: TruncateDirection
  /**
   * The kind of output a call prints, from its arguments (bash: classifyCommand); compression
   * shapes the model's copy by it, on success and on a timeout's partial output alike.
   * Absent or undefined: the usual head+tail cut.
   */
  readonly outputKind?: (args: unknown) => OutputKind | undefined
  readonly operations: ReadonlyArray<Operation>
  readonly requiresApproval: boolean
  /** The paths a call would touch, resolved against the project root. */
  readonly paths: (args: unknown, ctx: ToolContext) => ReadonlyArray<string>
  readonly validateInput:
    | ((args: unknown, ctx: ToolContext) => Effect.Effect<void, InvalidArguments | ToolFailure, R>)
    | undefined
  readonly checkPermissions: ((args: unknown, ctx: ToolContext) => Effect.Effect<PermissionCheck, never, R>) | undefined
  readonly execute: (args: unknown, ctx: ToolContext) => Effect.Effect<ToolOutput, ExecuteError, R>
  /**
   * A tool that only names another call to run in its place (tool_call): the call path prepares
   * that call instead, from the decoded arguments, and never runs this tool's execute.
   */
  readonly forwards?: (args: unknown) => Result.Result<ForwardedCall, InvalidArguments>
  /**
   * A description that depends on what the caller can reach (`code`'s typed API): the tools
   * visible to that caller, its profiles applied. What declares tools for a caller (a surface, a
   * narrowed dispatcher) uses it through `describedFor` (reach.ts); `description` is the
   * unnarrowed view.
   */
  readonly describeIn?: (reach: ReadonlyArray<Tool>) => string
  /**
   * What a program (code mode) gets besides the output text, from a successful call's full
   * output and metadata: read gives `text`, the file without line numbers, when it holds all of it.
   * Never shown to the model.
   */
  readonly programValue?: ProgramValue
}

/** See Tool.programValue. */
export type ProgramValue = (
  output: string,
  metadata: Readonly<Record<string, unknown>>
) => Readonly<Record<string, unknown>>

/** The call a forwarding tool names: a tool and its arguments. */
export interface ForwardedCall {
  readonly name: string
  readonly args: unknown
}

/** The declaration a tool file writes. Only `id`, `description`, `parameters` and `execute` are required. */
export interface ToolSpec<P, R> {
  readonly id: string
  readonly description: string
  /** An Effect Schema of the arguments. Give every property a type and a description. */
  readonly parameters: Schema.Codec<P, unknown, never, unknown>
  readonly source?: ToolSource
  /** Default false: an unknown tool gets a batch of its own. */
  readonly concurrencySafe?: boolean
  /** Default false: never claims to have changed anything. */
  readonly mutates?: boolean
  /** Default false: only a tool that says a rerun is safe is ever rerun. */
  readonly retrySafe?: boolean
  /** Default "block": a cancel waits rather than leave half-done work. */
  readonly interruptBehavior?: InterruptBehavior
  /** Default 2 minutes. A function reads per-call arguments (bash's `timeout`). */
  readonly timeout?: Duration.Input | ((args: P) => Duration.Input)
  /** Default none. What to do instead when a call times out; it joins the timeout message. */
  readonly timeoutAdvice?: string
  readonly maxResultSizeChars?: number
  /** Default "both": keep head and tail, since errors and summaries live at the end. */
  readonly truncate?: TruncateDirection
  /** Default none. What kind of output a call prints (diff, cat, search, log, other), for compression. */
  readonly outputKind?: (args: P) => OutputKind | undefined
  readonly permissions?: {
    readonly operations?: ReadonlyArray<Operation>
    readonly requiresApproval?: boolean
  }
  readonly paths?: (args: P, ctx: ToolContext) => ReadonlyArray<string>
  readonly validateInput?: (args: P, ctx: ToolContext) => Effect.Effect<void, InvalidArguments | ToolFailure, R>
  readonly checkPermissions?: (args: P, ctx: ToolContext) => Effect.Effect<PermissionCheck, never, R>
  readonly execute: (args: P, ctx: ToolContext) => Effect.Effect<ToolOutput, ExecuteError, R>
  /** See Tool.forwards. */
  readonly forwards?: (args: P) => Result.Result<ForwardedCall, InvalidArguments>
  /** See Tool.programValue. */
  readonly programValue?: ProgramValue
}

export const DEFAULT_TIMEOUT: Duration.Input = "2 minutes"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(arguments)"
    : path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let at: unknown = input
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined
    at = (at as Record<PropertyKey, unknown>)[key]
  }
  return at
}

const describeValue = (value: unknown): string => {
  if (value === undefined) return "nothing"
  const json = JSON.stringify(value)
  const text = json === undefined ? String(value) : json
  return clip(text, 80, "...")
}

/** Turns a schema failure into issues that say, for each path, what was expected and what came. */
export const argumentIssues = (
  issue: SchemaIssue.Issue,
  input: unknown,
  /** The tool's parameters: an unexpected key is answered with the one it most likely meant. */
  schema?: JsonSchema
): ReadonlyArray<ArgumentIssue> =>
  formatIssues(issue).issues.map((i) => {
    const path = (i.path ?? []).map((p) =>
      typeof p === "object" && p !== null && "key" in p ? p.key : p
    ) as Array<PropertyKey>
    const got = valueAt(input, path)
    const unexpected = /excess|unexpected/i.test(i.message)
    const meant = unexpected && schema !== undefined ? intendedKey(schema, path) : undefined
    const message =
      meant !== undefined
        ? `${i.message}: did you mean \`${meant}\`?`
        : i.message === "Missing key" || unexpected
          ? i.message
          : `${i.message}, got ${describeValue(got)}`
    return { path: renderPath(path), message }
  })

/** Builds the InvalidArguments error the model sees, listing every failing path at once. */
export const invalidArguments = (tool: string, issues: ReadonlyArray<ArgumentIssue>): InvalidArguments =>
  new InvalidArguments({
    tool,
    issues: [...issues],
    message: [
      `Invalid arguments for ${tool}. Fix every item below and call again:`,
      ...issues.map((i) => `- ${i.path}: ${i.message}`)
    ].join("\n")
  })

/** A fixed timeout, parsed once rather than on every call. */
const constant =
  (duration: Duration.Duration) =>
  (_args: unknown): Duration.Input =>
    duration

/** Every error at once (the model fixes them in one go); a property the tool does not take is one. */
export const DECODE_OPTIONS: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }

/** Builds a tool from its declaration, filling the fail-closed defaults. */
export const defineTool = <P, R = never>(spec: ToolSpec<P, R>): Tool<R> => {
  const inputSchema = deriveParameters(spec.id, spec.parameters)
  const decodeP = Schema.decodeUnknownResult(spec.parameters)
  // Valid arguments of a plain JSON schema decode to (a copy of) themselves: checked, not decoded.
  const plain = plainCheck(spec.parameters.ast, DECODE_OPTIONS)
  const timeout = spec.timeout ?? DEFAULT_TIMEOUT
  const as = (args: unknown) => args as P
  return {
    id: spec.id,
    description: spec.description,
    source: spec.source ?? "builtin",
    inputSchema,
    parameters: spec.parameters as Schema.Codec<unknown, unknown, never, unknown>,
    decode: (input) =>
      plain?.(input) === true
        ? Result.succeed(copyPlain(input))
        : Result.mapError(decodeP(input, DECODE_OPTIONS), (e) =>
            invalidArguments(spec.id, argumentIssues(e.issue, input, inputSchema))
          ),
    concurrencySafe: spec.concurrencySafe ?? false,
    mutates: spec.mutates ?? false,
    retrySafe: spec.retrySafe ?? false,
    interruptBehavior: spec.interruptBehavior ?? "block",
    timeout: typeof timeout === "function" ? (args) => timeout(as(args)) : constant(Duration.fromInputUnsafe(timeout)),
    ...(spec.timeoutAdvice === undefined ? {} : { timeoutAdvice: spec.timeoutAdvice }),
    maxResultSizeChars: spec.maxResultSizeChars,
    truncate: spec.truncate ?? "both",
    ...(spec.outputKind === undefined ? {} : { outputKind: (args: unknown) => spec.outputKind!(as(args)) }),
    operations: spec.permissions?.operations ?? [],
    requiresApproval: spec.permissions?.requiresApproval ?? false,
    paths: spec.paths === undefined ? () => [] : (args, ctx) => spec.paths!(as(args), ctx),
    validateInput: spec.validateInput === undefined ? undefined : (args, ctx) => spec.validateInput!(as(args), ctx),
    checkPermissions:
      spec.checkPermissions === undefined ? undefined : (args, ctx) => spec.checkPermissions!(as(args), ctx),
    execute: (args, ctx) => spec.execute(as(args), ctx),
    ...(spec.forwards === undefined ? {} : { forwards: (args: unknown) => spec.forwards!(as(args)) }),
    ...(spec.programValue === undefined ? {} : { programValue: spec.programValue })
  }
}

export type { PermissionDenied, ToolFailure }
