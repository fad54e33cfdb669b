/**
 * Where the CLI gets its tool system. main.ts gives the live one (layers/live.ts); tests give
 * one with tools of their own. Building it is where the root and the config are checked.
 */
import { randomUUID } from "node:crypto"
import { Context, Effect, FileSystem, Layer, Option, Path, type Scope } from "effect"
import type { Dispatcher } from "../dispatch/dispatcher.ts"
import type { CallContext } from "../orchestrator/orchestrator.ts"
import type { ToolRegistry } from "../registry/registry.ts"
import { describeError, Misuse } from "./errors.ts"
import type { Surface } from "./flags.ts"
import { type Cancellation, Interrupts } from "./interrupts.ts"

export type ToolSystemLayer = Layer.Layer<Dispatcher | ToolRegistry, unknown>

export class ToolSystemFactory extends Context.Service<
  ToolSystemFactory,
  { readonly make: (root: string) => ToolSystemLayer }
>()("freecode/cli/ToolSystemFactory") {
  static readonly layer = (make: (root: string) => ToolSystemLayer) => Layer.succeed(ToolSystemFactory, { make })
}

export interface SystemOptions {
  readonly root: Option.Option<string>
  readonly config: Option.Option<string>
  readonly surface: Surface
}

export interface Setup {
  /** Absolute path of an existing directory. */
  readonly root: string
  /** The parsed config file, when one was given (not read by anything yet). */
  readonly config: Option.Option<Record<string, unknown>>
}

/** Checks --root, --config and --surface; every problem is a Misuse naming the flag. */
export const checkOptions = (options: SystemOptions): Effect.Effect<Setup, Misuse, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (options.surface !== "all") {
      return yield* new Misuse({
        message: `--surface ${options.surface} is not available yet; only --surface all is implemented.`
      })
    }
    const root = path.resolve(Option.getOrElse(options.root, () => "."))
    const info = yield* fs
      .stat(root)
      .pipe(Effect.mapError(() => new Misuse({ message: `--root ${root} does not exist.` })))
    if (info.type !== "Directory") return yield* new Misuse({ message: `--root ${root} is not a directory.` })
    const config = Option.isNone(options.config) ? Option.none() : Option.some(yield* loadConfig(options.config.value))
    return { root, config }
  })

const loadConfig = (file: string): Effect.Effect<Record<string, unknown>, Misuse, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs
      .readFileString(file)
      .pipe(Effect.mapError((e) => new Misuse({ message: `--config ${file} cannot be read: ${e.message}` })))
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      return yield* new Misuse({ message: `--config ${file} is not valid JSON: ${(e as Error).message}` })
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return yield* new Misuse({ message: `--config ${file} must hold a JSON object.` })
    }
    return parsed as Record<string, unknown>
  })

/** Builds the tool system for the scope; a failure to build (bad FREECODE_* settings) is a Misuse. */
export const buildToolSystem = (
  root: string
): Effect.Effect<Context.Context<Dispatcher | ToolRegistry>, Misuse, ToolSystemFactory | Scope.Scope> =>
  Effect.gen(function* () {
    const factory = yield* ToolSystemFactory
    return yield* Layer.build(factory.make(root)).pipe(
      Effect.mapError((e) => new Misuse({ message: `cannot start the tool system: ${describeError(e)}` }))
    )
  })

export interface CallOptions {
  readonly session: Option.Option<string>
  readonly yes: boolean
  readonly images: boolean
}

/** The CallContext for this process's calls; Ctrl-C is listened for while the scope is open. */
export const callContext = (
  options: CallOptions
): Effect.Effect<
  { readonly context: CallContext; readonly cancellation: Cancellation },
  never,
  Interrupts | Scope.Scope
> =>
  Effect.gen(function* () {
    const interrupts = yield* Interrupts
    const cancellation = yield* interrupts.listen
    const context: CallContext = {
      sessionId: Option.getOrElse(options.session, () => randomUUID()),
      canSeeImages: options.images,
      cancelled: cancellation.cancelled,
      ...(options.yes ? { approve: () => Effect.succeed(true) } : {})
    }
    return { context, cancellation }
  })
