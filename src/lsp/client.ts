/**
 * One running language server over stdio: the initialize handshake (answering the server's
 * workspace/configuration and client/registerCapability requests), documents opened and kept
 * in sync before each request, push diagnostics collected, requests with a deadline.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { pathToFileURL } from "node:url"
import type { Diagnostic, InitializeResult, ServerCapabilities } from "vscode-languageserver-protocol"
import type { MessageConnection } from "vscode-languageserver-protocol/node"
import { lazyImport } from "../load/lazy.ts"
import { headOf, tailOf } from "../text/cut.ts"
import type { ServerCommand } from "./servers.ts"

/** The LSP protocol (~45 modules) loads when the first language server starts, not with the package. */
const protocol = lazyImport(() => import("vscode-languageserver-protocol/node"))
type Protocol = Awaited<ReturnType<typeof protocol>>

export const fileUri = (path: string): string => pathToFileURL(path).href

/** A request the server did not answer in time. */
export class LspTimeout extends Error {}

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

interface OpenDocument {
  version: number
  text: string
}

/** What the connection's handlers fill in while the server runs. */
interface ServerState {
  readonly pushed: Map<string, ReadonlyArray<Diagnostic>>
  readonly pushWaiters: Map<string, Array<() => void>>
  readonly exitListeners: Array<(code: number | null) => void>
  exited: boolean
  closed: boolean
}

export class LspClient {
  readonly capabilities: ServerCapabilities
  private readonly child: ChildProcess
  private readonly connection: MessageConnection
  private readonly state: ServerState
  private readonly rpc: Protocol
  private readonly documents = new Map<string, OpenDocument>()

  private constructor(
    child: ChildProcess,
    connection: MessageConnection,
    capabilities: ServerCapabilities,
    state: ServerState,
    rpc: Protocol
  ) {
    this.rpc = rpc
    this.child = child
    this.connection = connection
    this.capabilities = capabilities
    this.state = state
  }

  /** False once the process exited or its pipe closed (the close usually comes first). */
  get alive(): boolean {
    return !this.state.exited && !this.state.closed
  }

  /** Starts the server in `root` and completes the initialize handshake within `timeoutMs`. */
  static async start(command: ServerCommand, root: string, timeoutMs: number): Promise<LspClient> {
    const rpc = await protocol()
    const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = rpc
    // Its own process group, so a kill also reaches whatever a wrapper script started.
    const child = spawn(command.command, [...command.args], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true
    })
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve)
      child.once("error", reject)
    })
    // Servers log to stderr; keep the tail (it explains a failed start) and never let the pipe fill.
    let stderrTail = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderrTail = tailOf(stderrTail + chunk.toString("utf8"), 2000)
    })
    await spawned
    child.stdin.on("error", () => undefined) // a write after the server died; its exit is reported instead
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin)
    )
    const state: ServerState = {
      pushed: new Map(),
      pushWaiters: new Map(),
      exitListeners: [],
      exited: false,
      closed: false
    }
    const exited = new Promise<never>((_, reject) => {
      child.once("exit", (code, signal) => {
        state.exited = true
        connection.dispose()
        for (const f of state.exitListeners) f(code)
        const why = headOf(stderrTail.trim().split("\n").slice(-3).join(" "), 400)
        reject(new Error(`it exited (${signal ?? `code ${code}`})${why === "" ? "" : `: ${why}`}`))
      })
    })
    exited.catch(() => undefined) // only the handshake below listens
    connection.onClose(() => {
      state.closed = true
    })
    // We send no settings: null for every section asked means "use your defaults".
    connection.onRequest("workspace/configuration", (params: { items: ReadonlyArray<unknown> }) =>
      params.items.map(() => null)
    )
    connection.onRequest("client/registerCapability", () => null)
    connection.onRequest("client/unregisterCapability", () => null)
    connection.onRequest("window/workDoneProgress/create", () => null)
    connection.onRequest("workspace/workspaceFolders", () => [{ uri: fileUri(root), name: root }])
    connection.onNotification(
      "textDocument/publishDiagnostics",
      (params: { uri: string; diagnostics: ReadonlyArray<Diagnostic> }) => {
        state.pushed.set(params.uri, params.diagnostics)
        for (const wake of state.pushWaiters.get(params.uri) ?? []) wake()
        state.pushWaiters.delete(params.uri)
      }
    )
    connection.listen()
    try {
      const init = await withTimeout(
        sendInitialize(connection, root, exited, command.initializationOptions),
        timeoutMs,
        "initialize"
      )
      await connection.sendNotification("initialized", {})
      return new LspClient(child, connection, init.capabilities, state, rpc)
    } catch (e) {
      killGroup(child)
      throw e
    }
  }

  /** Calls `f` when the server process exits. */
  whenExited(f: (code: number | null) => void): void {
    this.state.exitListeners.push(f)
  }

  /** Opens `path` in the server with `text` (as read now), or sends it if it changed since. */
  async sync(path: string, text: string, languageId: string): Promise<string> {
    const uri = fileUri(path)
    const open = this.documents.get(uri)
    if (open === undefined) {
      this.documents.set(uri, { version: 1, text })
      await this.notify("textDocument/didOpen", {
        textDocument: { uri, languageId, version: 1, text }
      })
    } else if (open.text !== text) {
      open.version++
      open.text = text
      this.state.pushed.delete(uri)
      await this.notify("textDocument/didChange", {
        textDocument: { uri, version: open.version },
        contentChanges: [{ text }]
      })
    }
    return uri
  }

  /** The text of an open document as the server has it. */
  textOf(uri: string): string | undefined {
    return this.documents.get(uri)?.text
  }

  request<T>(method: string, params: unknown, timeoutMs: number): Promise<T> {
    return this.noticingWriteFailure(
      withTimeout(this.connection.sendRequest<T>(method, params), timeoutMs, method),
      (e) => e instanceof this.rpc.ResponseError && e.code === this.rpc.ErrorCodes.MessageWriteError
    )
  }

  private notify(method: string, params: unknown): Promise<void> {
    // A notification's promise only ever fails when its write failed.
    return this.noticingWriteFailure(this.connection.sendNotification(method, params), () => true)
  }

  /**
   * A message that cannot be written means the server's stdin is gone, usually because it died
   * and its exit has not been reported yet. Treat the server as lost at once (so the caller sees
   * a crash and the next call restarts it) and make sure the process is really gone.
   */
  private noticingWriteFailure<T>(sent: Promise<T>, isWriteFailure: (e: unknown) => boolean): Promise<T> {
    return sent.catch((e: unknown) => {
      if (isWriteFailure(e)) {
        this.state.closed = true
        killGroup(this.child)
      }
      throw e
    })
  }

  /**
   * The document's diagnostics: pulled (textDocument/diagnostic) when the server supports it,
   * otherwise the last pushed set, waiting up to `timeoutMs` for the first one.
   */
  async diagnostics(uri: string, timeoutMs: number): Promise<ReadonlyArray<Diagnostic>> {
    if (this.capabilities.diagnosticProvider !== undefined) {
      const report = await this.request<{ kind: string; items?: ReadonlyArray<Diagnostic> }>(
        "textDocument/diagnostic",
        { textDocument: { uri } },
        timeoutMs
      )
      return report.items ?? []
    }
    const known = this.state.pushed.get(uri)
    if (known !== undefined) return known
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      const list = this.state.pushWaiters.get(uri) ?? []
      list.push(() => {
        clearTimeout(timer)
        resolve()
      })
      this.state.pushWaiters.set(uri, list)
    })
    return this.state.pushed.get(uri) ?? []
  }

  /** Asks the server to shut down, then makes sure the process is gone. */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.state.exited) return
    const gone = new Promise<void>((resolve) => this.child.once("exit", () => resolve()))
    try {
      await this.request("shutdown", null, timeoutMs)
      await this.connection.sendNotification("exit")
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, timeoutMs))])
    } catch {
      // a server that does not answer shutdown is killed below
    }
    // Also after a clean exit: what the server started itself (tsserver under
    // typescript-language-server) is still in its process group, and goes with it.
    killGroup(this.child)
    if (!this.state.exited) await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, timeoutMs))])
    await groupGone(this.child, Math.min(timeoutMs, 1000))
    this.connection.dispose()
  }
}

/** Waits (at most `ms`) until no process of the child's group is left; SIGKILL is not instant. */
const groupGone = async (child: ChildProcess, ms: number): Promise<void> => {
  const deadline = Date.now() + ms
  while (child.pid !== undefined && Date.now() < deadline) {
    try {
      process.kill(-child.pid, 0)
    } catch {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
  } catch {
    child.kill("SIGKILL")
  }
}

/**
 * The initialize request, failing as soon as the process exits instead of waiting for the
 * deadline, and with the exit's reason (the connection usually closes a moment before the exit
 * event, with a message that says nothing).
 */
const sendInitialize = async (
  connection: MessageConnection,
  root: string,
  exited: Promise<never>,
  initializationOptions: unknown
) => {
  try {
    return await Promise.race([
      connection.sendRequest<InitializeResult>("initialize", {
        processId: process.pid,
        rootUri: fileUri(root),
        workspaceFolders: [{ uri: fileUri(root), name: root }],
        capabilities: CAPABILITIES,
        ...(initializationOptions === undefined ? {} : { initializationOptions })
      }),
      exited
    ])
  } catch (e) {
    const exitReason = await Promise.race([
      exited.catch((reason: unknown) => reason),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000))
    ])
    throw exitReason ?? e
  }
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new LspTimeout(`${what} got no answer in ${ms / 1000} s`)), ms)
    promise.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })
