/**
 * `LspClients`: language servers started lazily, one per (workspace root, server), shut down
 * with the layer's scope. A server that fails to start is reported once and not retried; one
 * that crashes is restarted on a later request, with backoff; every request has a deadline.
 */
import * as NodePath from "node:path"
import { Context, Effect, Layer } from "effect"
import type { Diagnostic } from "vscode-languageserver-protocol"
import { FreecodeConfig, sectionOf } from "../config/load.ts"
import { isTrusted } from "../config/trust.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { fail, type ToolFailure, TransientFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import { fileUri, LspClient, LspTimeout } from "./client.ts"
import { lspSection, serversFromConfig } from "./config.ts"
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
  | { readonly state: "starting"; readonly ready: Promise<LspClient> }
  | { readonly state: "ready"; readonly client: LspClient; readonly crashes: number }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "crashed"; readonly crashes: number; readonly restartAt: number }

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const utf8 = new TextDecoder()

const make = (settings: LspSettings) =>
  Effect.gen(function* () {
    // The file a server is given, its workspace's markers and its program are looked up as the
    // tools read files (the project's file system, not necessarily the host's).
    const fs = yield* LocalFs
    const withFs = <A, E>(effect: Effect.Effect<A, E, LocalFs>) => Effect.provideService(effect, LocalFs, fs)
    /** For the starts below, which run as promises (client.ts). */
    const resolveCommand = (spec: ServerSpec, root: string, place: Place) =>
      Effect.runPromiseWith(Context.make(LocalFs, fs))(spec.resolve(root, place))
    const entries = new Map<string, Entry>()
    let closing = false

    const current = (key: string): LspClient | undefined => {
      const entry = entries.get(key)
      return entry?.state === "ready" ? entry.client : undefined
    }

    const recordCrash = (key: string, spec: ServerSpec, root: string, crashes: number) => {
      entries.set(
        key,
        crashes + 1 >= settings.maxRestarts
          ? {
              state: "failed",
              message: `The ${spec.id} server for ${root} crashed ${crashes + 1} times; it is not restarted again.`
            }
          : { state: "crashed", crashes: crashes + 1, restartAt: Date.now() + settings.restartBackoffMs * 2 ** crashes }
      )
    }

    const start = (key: string, spec: ServerSpec, root: string, place: Place, crashes: number): Promise<LspClient> => {
      // Calls arriving while the program is looked up wait for this same start.
      const ready = resolveCommand(spec, root, place).then((command) => {
        if ("missing" in command) {
          const message = `No ${spec.id} language server for ${root}: ${command.missing}. Use grep and read instead.`
          entries.set(key, { state: "failed", message })
          throw new Error(message)
        }
        return LspClient.start(command, root, settings.startTimeoutMs).then(
          (client) => {
            entries.set(key, { state: "ready", client, crashes })
            client.whenExited(() => {
              if (!closing && current(key) === client) recordCrash(key, spec, root, crashes)
            })
            return client
          },
          (e: unknown) => {
            // Reported once: later calls get this message at once instead of another start.
            const message = `The ${spec.id} language server (${command.command}) failed to start in ${root}: ${describe(e)}.`
            entries.set(key, { state: "failed", message })
            throw new Error(message)
          }
        )
      })
      entries.set(key, { state: "starting", ready })
      return ready
    }

    const clientFor = (spec: ServerSpec, root: string, place: Place): Promise<LspClient> => {
      const key = `${spec.id}@${root}`
      const entry = entries.get(key)
      if (entry === undefined) return start(key, spec, root, place, 0)
      switch (entry.state) {
        case "ready":
          if (entry.client.alive) return Promise.resolve(entry.client)
          // Its pipe closed before the exit event was handled: count the crash now.
          recordCrash(key, spec, root, entry.crashes)
          return clientFor(spec, root, place)
        case "starting":
          return entry.ready
        case "failed":
          return Promise.reject(new Error(entry.message))
        case "crashed": {
          // Restart after the backoff; calls arriving meanwhile wait for the same start.
          const wait = Math.max(0, entry.restartAt - Date.now())
          const ready = new Promise((resolve) => setTimeout(resolve, wait)).then(() =>
            start(key, spec, root, place, entry.crashes)
          )
          entries.set(key, { state: "starting", ready })
          return ready
        }
      }
    }

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
        let client: LspClient | undefined
        const text = fs.readFile(path).pipe(
          Effect.map((bytes) => utf8.decode(bytes)),
          Effect.mapError((e) => fail(`${path} cannot be read: ${readableError(e)}`))
        )
        const rootAndText = Effect.zip(withFs(workspaceRootFor(spec, path, projectRoot)), text)
        return Effect.flatMap(rootAndText, ([root, text]) =>
          Effect.tryPromise({
            try: async () => {
              client = await clientFor(spec, root, place)
              const uri = await client.sync(path, text, languageIdOf(spec, path))
              if (!client.alive) throw new Error("exited")
              return { client, server: spec.id, uri, path, text: client.textOf(uri) ?? "" }
            },
            catch: (e) =>
              client !== undefined && !client.alive
                ? new TransientFailure({ message: `The ${spec.id} server exited while opening ${path}.` })
                : fail(describe(e))
          })
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

    /** A failure on a client whose server died is transient: the next call restarts the server. */
    const lost = (doc: LspDocument, what: string): TransientFailure | undefined =>
      doc.client.alive
        ? undefined
        : new TransientFailure({ message: `The ${doc.server} server exited during ${what}.` })

    const request = <T>(
      doc: LspDocument,
      method: string,
      params: unknown
    ): Effect.Effect<T, ToolFailure | TransientFailure> =>
      Effect.tryPromise({
        try: () => doc.client.request<T>(method, params, settings.requestTimeoutMs),
        catch: (e) =>
          lost(doc, method) ??
          (e instanceof LspTimeout
            ? fail(
                `The ${doc.server} server did not answer ${method} in ${settings.requestTimeoutMs / 1000} s; try again.`
              )
            : fail(`The ${doc.server} server failed ${method}: ${describe(e)}`))
      }).pipe(Effect.withSpan("LspClients.request", { attributes: { server: doc.server, method } }))

    const diagnostics = (doc: LspDocument) =>
      Effect.tryPromise({
        try: () => doc.client.diagnostics(doc.uri, settings.requestTimeoutMs),
        catch: (e) =>
          lost(doc, "diagnostics") ?? fail(`The ${doc.server} server could not report diagnostics: ${describe(e)}`)
      }).pipe(Effect.withSpan("LspClients.diagnostics", { attributes: { server: doc.server, path: doc.path } }))

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closing = true
        const clients = [...entries.values()].flatMap(
          (e): Array<Promise<LspClient | undefined>> =>
            e.state === "ready"
              ? [Promise.resolve(e.client)]
              : e.state === "starting"
                ? [e.ready.catch(() => undefined)]
                : []
        )
        await Promise.all(clients.map(async (c) => (await c)?.shutdown(5_000)))
        entries.clear()
      })
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
