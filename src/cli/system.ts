/**
 * Where the CLI gets its tool system. main.ts gives the live one (layers/live.ts); tests give
 * one with tools of their own. Building it is where the root and the config are checked.
 */

import { randomUUID } from "node:crypto"
import { realpathSync } from "node:fs"
import { homedir } from "node:os"
import { Config, Context, Effect, FileSystem, Layer, Option, Path, type Scope } from "effect"
import { loadConfig } from "../../layers/config.ts"
import { ConfigSource, FreecodeConfig, type FreecodeConfigShape, sectionOf, untrustedNote } from "../config/load.ts"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { McpClients } from "../mcp/clients.ts"
import type { CallContext } from "../orchestrator/orchestrator.ts"
import type { OutputStore } from "../output/store.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { describeSandbox, Sandbox } from "../sandbox/sandbox.ts"
import { SessionPersistence } from "../session/store.ts"
import { SharedStoreSetting } from "../state/layer.ts"
import { modelsSection, surfaceSection } from "../surface/config.ts"
import { type WiringRule, wiringFor, wiringTable } from "../surface/models.ts"
import {
  AUTO_DEFER_NAME,
  type AutoDeferral,
  DEFAULT_AUTO_DEFER_TOKENS,
  type DeferStrategy,
  type SurfacedDispatcher,
  surfaceIn,
  ToolSurface
} from "../surface/surface.ts"
import { CODE_TOOL, codeLayer } from "../tools/code.ts"
import { describeError, Misuse } from "./errors.ts"
import type { Surface } from "./flags.ts"
import { type Cancellation, Interrupts } from "./interrupts.ts"
import { Io } from "./io.ts"

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
  readonly surface: Option.Option<Surface>
  /** The model the tools are for (per-model wiring: src/surface/models.ts). */
  readonly model?: Option.Option<string>
  /** --surface deferred: how found tools are reached, and what is always declared. */
  readonly strategy?: Option.Option<DeferStrategy>
  readonly core?: Option.Option<string>
  /** The profile calls run under (a sub-agent's narrower rules); `tools` and `mcp` declare only what it allows. */
  readonly profile?: Option.Option<string>
  /** `call`/`run`: a session to resume; its state is kept in the project's session database. */
  readonly session?: Option.Option<string>
  /** --trust: the folder's own MCP servers, hooks and language servers may start, this run. */
  readonly trust?: boolean
  /** `mcp --store`: the store shared by replicas (docs/scaling.md). */
  readonly store?: Option.Option<string>
}

export interface Setup {
  /** Absolute path of an existing directory. */
  readonly root: string
  /** The config file given with --config (absolute), if any; else <root>/freecode.json is read when present. */
  readonly configFile: string | undefined
  /**
   * The configuration checkOptions loaded (freecode.json or --config, and .mcp.json): the tool
   * system is built with it, not from the files again. Absent: the layer reads the files.
   */
  readonly config?: FreecodeConfigShape | undefined
  /** The profile to narrow the dispatcher with, if any. */
  readonly profile: string | undefined
  /** The --session id, if any: the session's outputs and todos then persist (docs/session.md). */
  readonly session?: string | undefined
  /** `--store`, if given: outputs, grants, todos and job records live there (docs/scaling.md). */
  readonly store?: string | undefined
  /** Which tools are declared and reachable (src/surface/). */
  readonly surface: Surface
  /** --model, if given. */
  readonly model?: string | undefined
  readonly strategy?: DeferStrategy
  /** --core, split; undefined: the default core. */
  readonly core?: ReadonlyArray<string> | undefined
  /** `surface.autoDeferTokens` from freecode.json; FREECODE_AUTO_DEFER_TOKENS wins when set. */
  readonly autoDeferTokens?: number | undefined
  /** `models` from freecode.json: tried before the built-in wiring table. */
  readonly models?: ReadonlyArray<WiringRule> | undefined
}

/**
 * A project root taken from the current folder must not be the whole machine or the person's
 * home: every file there (keys, other projects) would be the model's to read and write. Given
 * explicitly with --root, it is the person's choice.
 */
const broadRoot = (root: string): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const real = (p: string) => {
      try {
        return realpathSync(p)
      } catch {
        return p
      }
    }
    const here = real(root)
    const which =
      here === "/" ? "the file system's root (/)" : here === real(homedir()) ? "your home folder" : undefined
    return which === undefined
      ? undefined
      : `The current folder is ${which}, too broad a project root: every file below it would be the model's to read and change. Run it in a project folder, or pass --root ${here} to mean it.`
  })

/** Checks --root and --config; every problem is a Misuse naming the flag. */
export const checkOptions = Effect.fnUntraced(function* (
  options: SystemOptions
): Effect.fn.Return<Setup, Misuse, FileSystem.FileSystem | Path.Path> {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(Option.getOrElse(options.root, () => "."))
  const info = yield* fs
    .stat(root)
    .pipe(Effect.mapError(() => new Misuse({ message: `--root ${root} does not exist.` })))
  if (info.type !== "Directory") return yield* new Misuse({ message: `--root ${root} is not a directory.` })
  if (Option.isNone(options.root)) {
    const broad = yield* broadRoot(root)
    if (broad !== undefined) return yield* new Misuse({ message: broad })
  }
  const configFile = Option.isNone(options.config) ? undefined : path.resolve(options.config.value)
  // Validated now, so a bad file is misuse (exit 2) naming the key, before anything runs.
  // Read as the system will read it: through the LocalFs the context's FileSystem asks for.
  const config = yield* loadConfig(root, configFile, options.trust === true ? { trusted: true } : {}).pipe(
    Effect.provide(LocalFs.layer),
    Effect.mapError((e) => new Misuse({ message: configFile === undefined ? e.message : `--config ${e.message}` }))
  )
  const profile = options.profile === undefined ? undefined : Option.getOrUndefined(options.profile)
  const session = options.session === undefined ? undefined : Option.getOrUndefined(options.session)
  const store = options.store === undefined ? undefined : Option.getOrUndefined(options.store)
  const model = options.model === undefined ? undefined : Option.getOrUndefined(options.model)
  const core = options.core === undefined ? undefined : Option.getOrUndefined(options.core)
  // A flag wins over freecode.json, which wins over the defaults.
  const fromFile = sectionOf(config, surfaceSection)
  return {
    root,
    configFile,
    config,
    profile,
    session,
    store,
    surface: Option.getOrElse(options.surface, () => fromFile?.mode ?? "all"),
    model,
    strategy: Option.getOrElse(options.strategy ?? Option.none(), () => fromFile?.strategy ?? "bridge"),
    core:
      core
        ?.split(",")
        .map((n) => n.trim())
        .filter((n) => n !== "") ?? fromFile?.core,
    autoDeferTokens: fromFile?.autoDeferTokens,
    models: sectionOf(config, modelsSection)
  }
})

/**
 * Builds the tool system for the scope; a failure to build (bad FREECODE_* settings) is a Misuse.
 * The configuration checkOptions loaded (or else the config file to read) reaches the factory's
 * layer through `ConfigSource`; a `--profile` narrows the
 * Dispatcher the commands get (an unknown profile is a Misuse).
 */
export const buildToolSystem = (
  setup: Setup | string,
  options: { readonly awaitMcpServers?: boolean } = {}
): Effect.Effect<Context.Context<Dispatcher | ToolRegistry | ToolSurface>, Misuse, ToolSystemFactory | Scope.Scope> =>
  Effect.gen(function* () {
    const factory = yield* ToolSystemFactory
    const {
      root,
      configFile,
      config,
      profile,
      session,
      store,
      surface,
      model,
      strategy,
      core,
      autoDeferTokens: fromFile,
      models
    } = typeof setup === "string"
      ? {
          root: setup,
          configFile: undefined,
          config: undefined,
          profile: undefined,
          session: undefined,
          store: undefined,
          surface: "all" as const
        }
      : setup
    const context = yield* Layer.build(factory.make(root)).pipe(
      Effect.provideService(ConfigSource, {
        ...(configFile === undefined ? {} : { file: configFile }),
        ...(config === undefined ? {} : { loaded: config })
      }),
      Effect.provideService(SessionPersistence, { persist: session !== undefined }),
      Effect.provideService(SharedStoreSetting, {
        store,
        // A fenced replica must not serve on: another has its sessions (docs/scaling.md).
        onFenced: (e) =>
          Effect.sync(() => {
            process.stderr.write(`freecode-tools: ${e.message}\n`)
            process.exit(75)
          })
      }),
      Effect.mapError((e) => new Misuse({ message: `cannot start the tool system: ${describeError(e)}` }))
    )
    // An untrusted folder's own programs were left out: say so once, with how to trust it.
    const loaded = Context.getOption(context, FreecodeConfig)
    const note = Option.isSome(loaded) ? untrustedNote(root, loaded.value) : undefined
    const io = yield* Effect.serviceOption(Io)
    if (note !== undefined && Option.isSome(io)) yield* io.value.err(`freecode-tools: ${note}\n`)
    // A one-shot command acts at once: let configured MCP servers connect first, so their tools
    // are there (each server's wait is bounded by its startupTimeout). `mcp` does not wait: its
    // clients hear about late tools through list_changed.
    const mcp = Context.getOption(context, McpClients)
    if (options.awaitMcpServers !== false && Option.isSome(mcp)) yield* mcp.value.ready
    // The code surface's program tool, over the system's own Dispatcher (docs/code-mode.md).
    if (surface === "code" && Context.get(context, ToolRegistry).lookup(CODE_TOOL) === undefined) {
      // Every tool system holds an OutputStore; the factory's type names only what the commands use.
      const services = context as Context.Context<ToolRegistry | Dispatcher | OutputStore>
      yield* Layer.build(codeLayer().pipe(Layer.provide(Layer.succeedContext(services))))
    }
    // The commands get the Dispatcher under the surface (and the profile): what they list and reach.
    const autoDeferTokens = yield* Config.Int(AUTO_DEFER_NAME).pipe(
      Config.withDefault(fromFile ?? DEFAULT_AUTO_DEFER_TOKENS),
      Effect.mapError(() => new Misuse({ message: `${AUTO_DEFER_NAME} must be a whole number of tokens (0: never).` }))
    )
    const surfaced = surfaceIn(context, {
      surface,
      ...(strategy === undefined ? {} : { strategy }),
      ...(core === undefined ? {} : { core }),
      ...(model === undefined ? {} : { exclude: wiringFor(model, wiringTable(models)).hide }),
      ...(surface === "all" && autoDeferTokens > 0 ? { autoDeferTokens } : {})
    })
    const narrowed =
      profile === undefined
        ? surfaced
        : yield* surfaced
            .withProfile(profile)
            .pipe(Effect.mapError((e) => new Misuse({ message: `--profile: ${e.message}` })))
    return Context.add(context, Dispatcher, narrowed).pipe(Context.add(ToolSurface, narrowed))
  })

/** What the sandbox does here, in a few words (`mcp` puts it on its serving line). */
export const sandboxState = (system: Context.Context<never>): Effect.Effect<string> =>
  Effect.map(Context.get(system, Sandbox).status, describeSandbox)

/** A bash `call` says in one line when the sandbox is on but cannot start (it then falls back). */
export const announceSandboxUnavailable = Effect.fnUntraced(function* (
  system: Context.Context<never>
): Effect.fn.Return<void, never, Io> {
  const sandbox = Context.get(system, Sandbox)
  if (sandbox.settings?.enabled !== true) return
  const status = yield* sandbox.status
  if (status.state === "unavailable") yield* (yield* Io).err(`freecode-tools: ${describeSandbox(status)}\n`)
})

/** What the CLI says when MCP tools were deferred because declaring them all would cost too much. */
export const autoDeferralNote = (auto: AutoDeferral): string =>
  `MCP tools deferred automatically: declaring every tool would cost ${auto.tokens} tokens, over ${AUTO_DEFER_NAME}=${auto.threshold}; the ${auto.deferred} MCP tools are found through tool_search.`

/** `call`, `run` and `mcp` say on stderr when the surface deferred MCP tools on its own. */
export const announceAutoDeferral = Effect.fnUntraced(function* (
  surface: SurfacedDispatcher
): Effect.fn.Return<void, never, Io> {
  const auto = yield* surface.autoDeferred
  if (auto !== undefined) yield* (yield* Io).err(`freecode-tools: ${autoDeferralNote(auto)}\n`)
})

/** The same for `mcp`, whose servers connect in the background: once they have connected. */
export const announceAutoDeferralWhenReady = Effect.fnUntraced(function* (
  system: Context.Context<ToolSurface>
): Effect.fn.Return<void, never, Io> {
  const mcp = Context.getOption(system, McpClients)
  if (Option.isSome(mcp)) yield* mcp.value.ready
  yield* announceAutoDeferral(Context.get(system, ToolSurface))
})

export interface CallOptions {
  readonly session: Option.Option<string>
  readonly yes: boolean
  readonly images: boolean
}

/** The CallContext for this process's calls; Ctrl-C is listened for while the scope is open. */
export const callContext = Effect.fnUntraced(function* (
  options: CallOptions
): Effect.fn.Return<
  { readonly context: CallContext; readonly cancellation: Cancellation },
  never,
  Interrupts | Scope.Scope
> {
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
