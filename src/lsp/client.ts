/**
 * One running language server, as effects: the initialize handshake (answering the server's
 * workspace/configuration and client/registerCapability requests), documents opened and kept in
 * sync before each request, push diagnostics collected, requests with a deadline. `start` runs
 * in a Scope that owns the process (server-process.ts) and the connection (rpc.ts): closing it
 * asks the server to shut down (when the scope ends well) and then ends its process group.
 */
import { pathToFileURL } from "node:url"
import { Deferred, Duration, Effect, Exit, type Scope } from "effect"
import type { Diagnostic, InitializeResult, ServerCapabilities } from "vscode-languageserver-protocol"
import { type LspFailure, type LspServerExited, serverExited, timedOut } from "./errors.ts"
import { connect, type Rpc } from "./rpc.ts"
import { type ServerProcess, spawnServer } from "./server-process.ts"
import type { ServerCommand } from "./servers.ts"

export const fileUri = (path: string): string => pathToFileURL(path).href

const CAPABILITIES = {
  general: { positionEncodings: ["utf-16"] },
  textDocument: {
    synchronization: { didSave: true, dynamicRegistration: false },
    definition: { linkSupport: true },
    implementation: { linkSupport: true },
    references: {},
    hover: { contentFormat: ["markdown", "plaintext"] },
    documentSymbol: { hierarchicalDocumentSymbolSupport: true },
    callHierarchy: {},
    publishDiagnostics: { relatedInformation: false, versionSupport: true },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false }
  },
  workspace: { configuration: true, workspaceFolders: true, symbol: {} },
  window: { workDoneProgress: false }
}

/** How long a polite shutdown (shutdown, then exit) has before the group is killed. */
const SHUTDOWN_WITHIN = Duration.seconds(5)

interface OpenDocument {
  version: number
  text: string
}

/** The diagnostics a server pushed, and the waits for a file's first set. */
class Pushed {
  readonly sets = new Map<string, ReadonlyArray<Diagnostic>>()
  readonly waits = new Map<string, Deferred.Deferred<void>>()

  take(uri: string, diagnostics: ReadonlyArray<Diagnostic>): void {
    this.sets.set(uri, diagnostics)
    const wait = this.waits.get(uri)
    if (wait !== undefined) Deferred.doneUnsafe(wait, Effect.void)
    this.waits.delete(uri)
  }

  waitFor(uri: string): Deferred.Deferred<void> {
    const known = this.waits.get(uri)
    if (known !== undefined) return known
    const wait = Deferred.makeUnsafe<void>()
    this.waits.set(uri, wait)
    return wait
  }
}

export class LspClient {
  /** Names the server in messages. */
  readonly server: string
  readonly capabilities: ServerCapabilities
  readonly pid: number
  private readonly process: ServerProcess
  private readonly rpc: Rpc
  private readonly pushed: Pushed
  private readonly documents = new Map<string, OpenDocument>()

  private constructor(
    server: string,
    capabilities: ServerCapabilities,
    process: ServerProcess,
    rpc: Rpc,
    pushed: Pushed
  ) {
    this.server = server
    this.capabilities = capabilities
    this.pid = process.pid
    this.process = process
    this.rpc = rpc
    this.pushed = pushed
  }

  /** False once the process exited or the connection broke (a failed write comes before the exit). */
  get alive(): boolean {
    return !this.process.hasExited() && !this.rpc.lost()
  }

  /** Waits for the server's process to exit. */
  get exited(): Effect.Effect<void> {
    return Effect.asVoid(this.process.exit)
  }

  /**
   * Starts `command` in `root` and completes the initialize handshake within `timeoutMs`. The
   * scope owns the server: closing it (or interrupting the start) leaves no process behind.
   */
  static start(
    server: string,
    command: ServerCommand,
    root: string,
    timeoutMs: number
  ): Effect.Effect<LspClient, LspFailure, Scope.Scope> {
    return Effect.gen(function* () {
      const process = yield* spawnServer(command, root).pipe(
        Effect.mapError((reason) => serverExited(server, "initialize", reason))
      )
      const pushed = new Pushed()
      const rpc = yield* connect({
        server,
        input: process.stdout,
        output: process.stdin,
        onBroken: process.kill,
        handlers: {
          requests: {
            // We send no settings: null for every section asked means "use your defaults".
            "workspace/configuration": (params: { readonly items: ReadonlyArray<unknown> }) =>
              params.items.map(() => null),
            "client/registerCapability": () => null,
            "client/unregisterCapability": () => null,
            "window/workDoneProgress/create": () => null,
            "workspace/workspaceFolders": () => [{ uri: fileUri(root), name: root }]
          },
          notifications: {
            "textDocument/publishDiagnostics": (params: {
              readonly uri: string
              readonly diagnostics: ReadonlyArray<Diagnostic>
            }) => pushed.take(params.uri, params.diagnostics)
          }
        }
      })
      // The exit fails what is pending with its reason (the pipe closes a moment before, saying nothing).
      yield* Effect.forkScoped(Effect.map(process.exit, rpc.lose))
      const init = (yield* rpc
        .request("initialize", {
          processId: globalThis.process.pid,
          rootUri: fileUri(root),
          workspaceFolders: [{ uri: fileUri(root), name: root }],
          capabilities: CAPABILITIES,
          ...(command.initializationOptions === undefined
            ? {}
            : { initializationOptions: command.initializationOptions })
        })
        .pipe(withDeadline(server, "initialize", timeoutMs))) as InitializeResult
      yield* rpc.notify("initialized", {})
      const client = new LspClient(server, init.capabilities, process, rpc, pushed)
      yield* Effect.addFinalizer((exit) => (Exit.isSuccess(exit) ? client.shutdown : Effect.void))
      return client
    })
  }

  /** Opens `path` in the server with `text` (as read now), or sends it if it changed since. */
  sync(path: string, text: string, languageId: string): Effect.Effect<string, LspServerExited> {
    return Effect.suspend(() => {
      const uri = fileUri(path)
      const open = this.documents.get(uri)
      if (open === undefined) {
        this.documents.set(uri, { version: 1, text })
        return Effect.as(
          this.rpc.notify("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } }),
          uri
        )
      }
      if (open.text === text) return Effect.succeed(uri)
      open.version++
      open.text = text
      this.pushed.sets.delete(uri)
      return Effect.as(
        this.rpc.notify("textDocument/didChange", {
          textDocument: { uri, version: open.version },
          contentChanges: [{ text }]
        }),
        uri
      )
    })
  }

  /** The text of an open document as the server has it. */
  textOf(uri: string): string | undefined {
    return this.documents.get(uri)?.text
  }

  /** `method`'s answer, or a typed failure; past `timeoutMs` the request is cancelled. */
  request<T>(method: string, params: unknown, timeoutMs: number): Effect.Effect<T, LspFailure> {
    return this.rpc.request(method, params).pipe(withDeadline(this.server, method, timeoutMs)) as Effect.Effect<
      T,
      LspFailure
    >
  }

  /**
   * The document's diagnostics: pulled (textDocument/diagnostic) when the server supports it,
   * otherwise the last pushed set, waiting up to `timeoutMs` for the first one.
   */
  diagnostics(uri: string, timeoutMs: number): Effect.Effect<ReadonlyArray<Diagnostic>, LspFailure> {
    if (this.capabilities.diagnosticProvider !== undefined) {
      return Effect.map(
        this.request<{ readonly items?: ReadonlyArray<Diagnostic> }>(
          "textDocument/diagnostic",
          { textDocument: { uri } },
          timeoutMs
        ),
        (report) => report.items ?? []
      )
    }
    return Effect.suspend(() => {
      const known = this.pushed.sets.get(uri)
      if (known !== undefined) return Effect.succeed(known)
      // The first set, or nothing by the deadline; a server that dies meanwhile is a failure.
      const died = Effect.flatMap(this.process.exit, (reason) =>
        Effect.fail(serverExited(this.server, "textDocument/publishDiagnostics", reason))
      )
      return Deferred.await(this.pushed.waitFor(uri)).pipe(
        Effect.raceFirst(died),
        Effect.timeoutOption(Duration.millis(timeoutMs)),
        Effect.map(() => this.pushed.sets.get(uri) ?? [])
      )
    })
  }

  /** Asks the server to shut down and waits (bounded) for its exit; its scope then ends the group. */
  private get shutdown(): Effect.Effect<void> {
    if (!this.alive) return Effect.void
    return this.rpc
      .request("shutdown", null)
      .pipe(
        Effect.andThen(this.rpc.notify("exit", null)),
        Effect.andThen(this.process.exit),
        Effect.timeoutOption(SHUTDOWN_WITHIN),
        Effect.ignore
      )
  }
}

/** Past `timeoutMs` the request is interrupted (and so cancelled) and fails as a timeout. */
const withDeadline =
  (server: string, method: string, timeoutMs: number) =>
  <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | LspFailure> =>
    Effect.timeoutOrElse(self, {
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(timedOut(server, method, timeoutMs))
    })
