/**
 * Where the CLI gets its tool system. main.ts gives the live one (layers/live.ts); tests give
 * one with tools of their own. Building it is where the root and the config are checked.
 */
import { randomUUID } from "node:crypto"
import { Context, Effect, FileSystem, Layer, Option, Path, type Scope } from "effect"
import { ConfigSource, loadConfig } from "../config/load.ts"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { McpClients } from "../mcp/clients.ts"
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
  /** `call`/`run`: the profile the calls run under (a sub-agent's narrower rules). */
  readonly profile?: Option.Option<string>
}

export interface Setup {
  /** Absolute path of an existing directory. */
  readonly root: string
  /** The config file given with --config (absolute), if any; else <root>/freecode.json is read when present. */
  readonly configFile: string | undefined
  /** The profile to narrow the dispatcher with, if any. */
  readonly profile: string | undefined
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
    const configFile = Option.isNone(options.config) ? undefined : path.resolve(options.config.value)
    // Validated now, so a bad file is misuse (exit 2) naming the key, before anything runs.
    yield* loadConfig(root, configFile).pipe(
      Effect.mapError((e) => new Misuse({ message: configFile === undefined ? e.message : `--config ${e.message}` }))
    )
    const profile = options.profile === undefined ? undefined : Option.getOrUndefined(options.profile)
    return { root, configFile, profile }
  })

/**
 * Builds the tool system for the scope; a failure to build (bad FREECODE_* settings) is a Misuse.
 * The config file reaches the factory's layer through `ConfigSource`; a `--profile` narrows the
 * Dispatcher the commands get (an unknown profile is a Misuse).
 */
export const buildToolSystem = (
  setup: Setup | string,
  options: { readonly awaitMcpServers?: boolean } = {}
): Effect.Effect<Context.Context<Dispatcher | ToolRegistry>, Misuse, ToolSystemFactory | Scope.Scope> =>
  Effect.gen(function* () {
    const factory = yield* ToolSystemFactory
    const { root, configFile, profile } =
      typeof setup === "string" ? { root: setup, configFile: undefined, profile: undefined } : setup
    const context = yield* Layer.build(factory.make(root)).pipe(
      Effect.provideService(ConfigSource, configFile === undefined ? {} : { file: configFile }),
      Effect.mapError((e) => new Misuse({ message: `cannot start the tool system: ${describeError(e)}` }))
    )
    // A one-shot command acts at once: let configured MCP servers connect first, so their tools
    // are there (each server's wait is bounded by its startupTimeout). `mcp` does not wait: its
    // clients hear about late tools through list_changed.
    const mcp = Context.getOption(context, McpClients)
    if (options.awaitMcpServers !== false && Option.isSome(mcp)) yield* mcp.value.ready
    if (profile === undefined) return context
    const narrowed = yield* Context.get(context, Dispatcher)
      .withProfile(profile)
      .pipe(Effect.mapError((e) => new Misuse({ message: `--profile: ${e.message}` })))
    return Context.add(context, Dispatcher, narrowed)
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
