/**
 * `LspClients`: language servers started lazily, one per (workspace root, server), each in a
 * scope of its own that the layer's closes. A server that fails to start is reported once and
 * not retried; one that crashes is restarted on a later request, with backoff; every request has
 * a deadline. The client's typed failures (errors.ts) become the tools' failures here.
 */
import * as NodePath from "node:path"
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Scope } from "effect"
import type { Diagnostic } from "vscode-languageserver-protocol"
import { FreecodeConfig, sectionOf } from "../config/load.ts"
import { isTrusted } from "../config/trust.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { fail, type ToolFailure, TransientFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import { fileUri, LspClient } from "./client.ts"
import { lspSection, serversFromConfig } from "./config.ts"
import { type LspFailure, serverExited } from "./errors.ts"
import type { Place } from "./place.ts"
import { languageIdOf, SERVERS, type ServerSpec, serverFor, workspaceRootFor } from "./servers.ts"

export interface LspSettings {
  /** Deadline for one request (and for a pull of diagnostics). */
  readonly requestTimeoutMs: number
  /** Deadline for starting a server and its initialize handshake. */
  readonly startTimeoutMs: number
  /** After a crash, the first restart waits this long; each further crash doubles it. */
  readonly restartBackoffMs: number
  /** A server that crashed this many times is given up on. */
  readonly maxRestarts: number
  /** The server table; default SERVERS (src/lsp/servers.ts). */
  readonly servers: ReadonlyArray<ServerSpec>
  /**
   * Whether the project's own programs may start as servers (place.ts). Default: as
   * `freecode-tools trust` recorded for the project root.
   */
  readonly trusted?: boolean
}

export const DEFAULT_LSP_SETTINGS: LspSettings = {
  requestTimeoutMs: 30_000,
  startTimeoutMs: 60_000,
  restartBackoffMs: 1_000,
  maxRestarts: 5,
  servers: SERVERS
}

/** A file opened in its server, ready for requests. */
export interface LspDocument {
  readonly client: LspClient
  readonly server: string
  readonly uri: string
  readonly path: string
  /** The file's text as the server has it. */
  readonly text: string
}

type Entry =
  | { readonly state: "starting"; readonly ready: Deferred.Deferred<LspClient, ToolFailure> }
  | { readonly state: "ready"; readonly client: LspClient; readonly crashes: number }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "crashed"; readonly crashes: number; readonly restartAt: number }

const utf8 = new TextDecoder()

/** Why the handshake failed, as the end of "failed to start in <root>: …". */
const whyNotStarted = (e: LspFailure): string =>
  e._tag === "LspServerExited"
    ? e.reason
    : e._tag === "LspTimeout"
      ? `it did not answer initialize in ${e.timeoutMs / 1000} s`
      : `it refused initialize: ${e.detail}`

const make = (settings: LspSettings) =>
  Effect.gen(function* () {
    // The file a server is given, its workspace's markers and its program are looked up as the
    // tools read files (the project's file system, not necessarily the host's).
    const fs = yield* LocalFs
    const withFs = <A, E>(effect: Effect.Effect<A, E, LocalFs>) => Effect.provideService(effect, LocalFs, fs)
    // Starts and crash watches run in the layer's scope, not the caller's: a caller that gives up
    // leaves a start for the next caller; the layer's end interrupts them.
    const layerScope = yield* Effect.scope
    const entries = new Map<string, Entry>()
    /** Each running server's own scope: closed when it crashes, or with the layer. */
    const scopes = new Set<Scope.Closeable>()

    const current = (key: string): LspClient | undefined => {
      const entry = entries.get(key)
      return entry?.state === "ready" ? entry.client : undefined
    }

    const recordCrash = (key: string, spec: ServerSpec, root: string, crashes: number, now: number) => {
      entries.set(
        key,
        crashes + 1 >= settings.maxRestarts
          ? {
              state: "failed",
              message: `The ${spec.id} server for ${root} crashed ${crashes + 1} times; it is not restarted again.`
            }
          : { state: "crashed", crashes: crashes + 1, restartAt: now + settings.restartBackoffMs * 2 ** crashes }
      )
    }

    /** Ends a server's scope: its process group goes (client.ts, server-process.ts). */
    const closeScope = (scope: Scope.Closeable, exit: Exit.Exit<unknown, unknown>) =>
      Effect.suspend(() => {
        scopes.delete(scope)
        return Scope.close(scope, exit)
      })

    /** The start itself, after `delayMs`: the program looked up, the server started, its crash watched. */
    const run = (key: string, spec: ServerSpec, root: string, place: Place, crashes: number, delayMs: number) =>
      Effect.gen(function* () {
        if (delayMs > 0) yield* Effect.sleep(Duration.millis(delayMs))
        const command = yield* withFs(spec.resolve(root, place))
        if ("missing" in command) {
          return yield* Effect.fail(
            fail(`No ${spec.id} language server for ${root}: ${command.missing}. Use grep and read instead.`)
          )
        }
        const scope = yield* Scope.make()
        scopes.add(scope)
        const started = yield* LspClient.start(spec.id, command, root, settings.startTimeoutMs).pipe(
          Scope.provide(scope),
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : closeScope(scope, exit))),
          // Reported once: later calls get this message at once instead of another start.
          Effect.mapError((e) =>
            fail(`The ${spec.id} language server (${command.command}) failed to start in ${root}: ${whyNotStarted(e)}.`)
          )
        )
        entries.set(key, { state: "ready", client: started, crashes })
        yield* started.exited.pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.flatMap((now) => {
            if (current(key) === started) recordCrash(key, spec, root, crashes, now)
            return closeScope(scope, Exit.void)
          }),
          Effect.forkIn(layerScope)
        )
        return started
      })

    /** Starts the server in the layer's scope; calls arriving meanwhile wait for this same start. */
    const start = (key: string, spec: ServerSpec, root: string, place: Place, crashes: number, delayMs: number) =>
      Effect.gen(function* () {
        const ready = Deferred.makeUnsafe<LspClient, ToolFailure>()
        entries.set(key, { state: "starting", ready })
        yield* run(key, spec, root, place, crashes, delayMs).pipe(
          Effect.tapError((failure) =>
            Effect.sync(() => entries.set(key, { state: "failed", message: failure.message }))
          ),
          Effect.onExit((exit) => {
            if (!Exit.hasInterrupts(exit)) return Deferred.done(ready, exit)
            // Only the layer's end interrupts a start: whoever still waits is told, not left hanging.
            entries.delete(key)
            return Deferred.fail(
              ready,
              fail(`The ${spec.id} language server did not finish starting: the tools were shutting down; try again.`)
            )
          }),
          Effect.forkIn(layerScope)
        )
        return yield* Deferred.await(ready)
      })

    const clientFor = (spec: ServerSpec, root: string, place: Place): Effect.Effect<LspClient, ToolFailure> =>
      Effect.suspend(() => {
        const key = `${spec.id}@${root}`
        const entry = entries.get(key)
        if (entry === undefined) return start(key, spec, root, place, 0, 0)
        switch (entry.state) {
          case "ready":
            if (entry.client.alive) return Effect.succeed(entry.client)
            // Its pipe broke before its exit was handled: count the crash now.
            return Effect.flatMap(Clock.currentTimeMillis, (now) => {
              recordCrash(key, spec, root, entry.crashes, now)
              return clientFor(spec, root, place)
            })
          case "starting":
            return Deferred.await(entry.ready)
          case "failed":
            return Effect.fail(fail(entry.message))
          case "crashed":
            // Restarted once the backoff has passed.
            return Effect.flatMap(Clock.currentTimeMillis, (now) =>
              start(key, spec, root, place, entry.crashes, Math.max(0, entry.restartAt - now))
            )
        }
      })

    // Looked up once per project root: a trust recorded later takes effect in the next session.
    const trust = new Map<string, boolean>()
    const placeOf = (projectRoot: string): Effect.Effect<Place> => {
      const known = settings.trusted ?? trust.get(projectRoot)
      return known !== undefined
        ? Effect.succeed({ projectRoot, trusted: known })
        : Effect.map(isTrusted(projectRoot), (trusted) => {
            trust.set(projectRoot, trusted)
            return { projectRoot, trusted }
          })
    }

    const open = (path: string, projectRoot: string): Effect.Effect<LspDocument, ToolFailure | TransientFailure> =>
      Effect.flatMap(placeOf(projectRoot), (place) => {
        const spec = serverFor(settings.servers, path)
        if (spec === undefined)
          return Effect.fail(
            fail(`No language server handles ${NodePath.extname(path) || "files without an extension"} files here.`)
          )
        const text = fs.readFile(path).pipe(
          Effect.map((bytes) => utf8.decode(bytes)),
          Effect.mapError((e) => fail(`${path} cannot be read: ${readableError(e)}`))
        )
        const rootAndText = Effect.zip(withFs(workspaceRootFor(spec, path, projectRoot)), text)
        return Effect.flatMap(rootAndText, ([root, text]) =>
          Effect.flatMap(clientFor(spec, root, place), (client) =>
            client.sync(path, text, languageIdOf(spec, path)).pipe(
              Effect.filterOrFail(
                () => client.alive,
                () => serverExited(spec.id, "textDocument/didOpen", "it exited")
              ),
              Effect.map((uri) => ({ client, server: spec.id, uri, path, text: client.textOf(uri) ?? "" })),
              Effect.mapError(
                () => new TransientFailure({ message: `The ${spec.id} server exited while opening ${path}.` })
              )
            )
          )
        )
      }).pipe(Effect.withSpan("LspClients.open", { attributes: { path } }))

    const known = (path: string, projectRoot: string): Effect.Effect<LspDocument | undefined> => {
      const spec = serverFor(settings.servers, path)
      if (spec === undefined) return Effect.succeed(undefined)
      return Effect.map(withFs(workspaceRootFor(spec, path, projectRoot)), (root) => {
        const client = current(`${spec.id}@${root}`)
        const uri = fileUri(path)
        const text = client?.alive ? client.textOf(uri) : undefined
        return client === undefined || text === undefined ? undefined : { client, server: spec.id, uri, path, text }
      })
    }

    /**
     * The client's typed failure as the tools': a server that died is transient (the next call
     * restarts it, and lsp is retrySafe); a timeout or an error answer says what to do.
     */
    const asToolFailure = (doc: LspDocument, what: string, e: LspFailure): ToolFailure | TransientFailure =>
      e._tag === "LspServerExited" || !doc.client.alive
        ? new TransientFailure({ message: `The ${doc.server} server exited during ${what}.` })
        : fail(e.message)

    const request = <T>(
      doc: LspDocument,
      method: string,
      params: unknown
    ): Effect.Effect<T, ToolFailure | TransientFailure> =>
      doc.client.request<T>(method, params, settings.requestTimeoutMs).pipe(
        Effect.mapError((e) => asToolFailure(doc, method, e)),
        Effect.withSpan("LspClients.request", { attributes: { server: doc.server, method } })
      )

    const diagnostics = (doc: LspDocument) =>
      doc.client.diagnostics(doc.uri, settings.requestTimeoutMs).pipe(
        Effect.mapError((e) => asToolFailure(doc, "diagnostics", e)),
        Effect.withSpan("LspClients.diagnostics", { attributes: { server: doc.server, path: doc.path } })
      )

    // Every server at once (each may take its shutdown's few seconds); the starts and crash
    // watches forked above are interrupted before this runs.
    yield* Effect.addFinalizer((exit) =>
      Effect.forEach([...scopes], (scope) => closeScope(scope, exit), { concurrency: "unbounded", discard: true }).pipe(
        Effect.andThen(Effect.sync(() => entries.clear()))
      )
    )

    return LspClients.of({
      open,
      known,
      request,
      diagnostics,
      running: Effect.sync(() => [...entries].filter(([, e]) => e.state === "ready").map(([k]) => k))
    })
  })

export class LspClients extends Context.Service<
  LspClients,
  {
    /** Starts (or reuses) the server for `path` and syncs the file's current text into it. */
    readonly open: (path: string, projectRoot: string) => Effect.Effect<LspDocument, ToolFailure | TransientFailure>
    /**
     * The file as its running server last saw it, without syncing or starting anything: undefined
     * when no server has it open. Diagnostics on it are the ones from before the file changed.
     */
    readonly known: (path: string, projectRoot: string) => Effect.Effect<LspDocument | undefined>
    readonly request: <T>(
      doc: LspDocument,
      method: string,
      params: unknown
    ) => Effect.Effect<T, ToolFailure | TransientFailure>
    readonly diagnostics: (doc: LspDocument) => Effect.Effect<ReadonlyArray<Diagnostic>, ToolFailure | TransientFailure>
    /** The servers running now, as `server@root`. */
    readonly running: Effect.Effect<ReadonlyArray<string>>
  }
>()("freecode/LspClients") {
  static readonly layerWith = (overrides: Partial<LspSettings>) =>
    Layer.effect(LspClients, make({ ...DEFAULT_LSP_SETTINGS, ...overrides }))
  static readonly layer = LspClients.layerWith({})
  /** The server table from freecode.json's `lsp` section (src/lsp/config.ts) over the built-ins. */
  static readonly layerFromConfig = Layer.effect(
    LspClients,
    Effect.gen(function* () {
      const config = yield* FreecodeConfig
      return yield* make({
        ...DEFAULT_LSP_SETTINGS,
        servers: serversFromConfig(sectionOf(config, lspSection)),
        // As the configuration was read (`--trust` for one run); else as recorded.
        ...(config.trusted === undefined ? {} : { trusted: config.trusted })
      })
    })
  )
}
