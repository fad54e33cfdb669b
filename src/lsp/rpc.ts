/**
 * JSON-RPC 2.0 over a language server's stdio (the LSP base protocol: each message a JSON body
 * after a `Content-Length` header), as effects. The connection belongs to a Scope: closing it
 * stops reading and fails whatever is still pending. A request is an Effect that fails typed
 * (errors.ts); interrupting it (a deadline, the caller giving up) forgets it and tells the server
 * with `$/cancelRequest`. The process behind the pipes is the caller's (server-process.ts): when
 * it exits, the caller says so with `lose`, and every pending request fails with the exit's reason.
 */
import type { Readable, Writable } from "node:stream"
import { Deferred, Effect, type Scope } from "effect"
import { type LspProtocolError, type LspServerExited, protocolError, serverExited } from "./errors.ts"

interface Message {
  readonly id?: number | string | null
  readonly method?: string
  readonly params?: unknown
  readonly result?: unknown
  readonly error?: { readonly code?: unknown; readonly message?: unknown }
}

/** What the client answers and hears; the server's requests not named here get MethodNotFound. */
export interface RpcHandlers {
  readonly requests: Readonly<Record<string, (params: never) => unknown>>
  readonly notifications: Readonly<Record<string, (params: never) => void>>
}

export interface Rpc {
  readonly request: (method: string, params: unknown) => Effect.Effect<unknown, LspServerExited | LspProtocolError>
  readonly notify: (method: string, params: unknown) => Effect.Effect<void, LspServerExited>
  /** The server is gone (`reason`: how it ended): pending requests fail with it, so do later ones. */
  readonly lose: (reason: string) => void
  /** Whether the connection was lost: the process ended, a write failed or the server sent garbage. */
  readonly lost: () => boolean
}

const METHOD_NOT_FOUND = -32601
const INTERNAL_ERROR = -32603
/** A header that long without its end is not the LSP base protocol. */
const MAX_HEADER_BYTES = 8192

/** Writes one message, header then body: a large body is encoded once, never joined to its header. */
const writeMessage = (output: Writable, message: object, done?: (e: Error | null | undefined) => void) => {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message })
  output.write(`Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n`, "ascii")
  output.write(body, "utf8", done)
}

/**
 * Cuts the byte stream into messages. Chunks are kept apart until a whole message can be there,
 * so a large answer arriving in many chunks is joined once, not once per chunk.
 */
const messageReader = () => {
  let chunks: Array<Buffer> = []
  let held = 0
  let need = 1
  return (chunk: Buffer): Array<Message> | { readonly wrong: string } => {
    chunks.push(chunk)
    held += chunk.length
    const out: Array<Message> = []
    while (held >= need) {
      const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      chunks = [buffer]
      const headerEnd = buffer.indexOf("\r\n\r\n")
      if (headerEnd < 0) {
        if (held > MAX_HEADER_BYTES) return { wrong: "a header with no end" }
        need = held + 1
        break
      }
      const length = /(?:^|\r\n)content-length:[ \t]*(\d+)/i.exec(buffer.subarray(0, headerEnd).toString("ascii"))
      if (length === null) return { wrong: "a message without Content-Length" }
      const end = headerEnd + 4 + Number(length[1])
      if (held < end) {
        need = end
        break
      }
      let message: unknown
      try {
        message = JSON.parse(buffer.subarray(headerEnd + 4, end).toString("utf8"))
      } catch {
        return { wrong: "a message that is not JSON" }
      }
      if (typeof message !== "object" || message === null) return { wrong: "a message that is not an object" }
      out.push(message as Message)
      const rest = buffer.subarray(end)
      chunks = rest.length === 0 ? [] : [rest]
      held = rest.length
      need = 1
    }
    return out
  }
}

/**
 * Reads `input` and writes `output` for the server named `server`. `onBroken` is told when the
 * connection breaks while the process may still run (a failed write, a garbled message): the
 * caller kills it, so the next call starts a fresh server.
 */
export const connect = (options: {
  readonly server: string
  readonly input: Readable
  readonly output: Writable
  readonly handlers: RpcHandlers
  readonly onBroken: () => void
}): Effect.Effect<Rpc, never, Scope.Scope> => {
  const { server, input, output, handlers } = options
  type Failure = LspServerExited | LspProtocolError
  const pending = new Map<number, { readonly method: string; readonly answer: Deferred.Deferred<unknown, Failure> }>()
  let nextId = 1
  let lostReason: string | undefined
  const read = messageReader()

  const fail = (reason: string, why: (method: string) => Failure) => {
    if (lostReason !== undefined) return
    lostReason = reason
    input.off("data", onData)
    for (const { method, answer } of pending.values()) Deferred.doneUnsafe(answer, Effect.fail(why(method)))
    pending.clear()
  }
  const lose = (reason: string) => fail(reason, (method) => serverExited(server, method, reason))
  const broken = (reason: string, why: (method: string) => Failure) => {
    fail(reason, why)
    options.onBroken()
  }

  /** Written without waiting: answers to the server and cancellations, whose failure the next send reports. */
  const post = (message: object) => {
    if (lostReason === undefined) writeMessage(output, message)
  }

  const handle = (message: Message) => {
    if (message.method === undefined) {
      if (typeof message.id !== "number") return
      const waiting = pending.get(message.id)
      if (waiting === undefined) return // answered after its caller gave up
      pending.delete(message.id)
      const error = message.error
      Deferred.doneUnsafe(
        waiting.answer,
        error === undefined
          ? Effect.succeed(message.result ?? null)
          : Effect.fail(
              protocolError(
                server,
                waiting.method,
                typeof error.message === "string" ? error.message : JSON.stringify(error),
                typeof error.code === "number" ? error.code : undefined
              )
            )
      )
    } else if (message.id !== undefined) {
      const answer = handlers.requests[message.method]
      if (answer === undefined) {
        post({ id: message.id, error: { code: METHOD_NOT_FOUND, message: `Unhandled method ${message.method}` } })
        return
      }
      // A server's malformed params must not throw out of the stream's listener (and the process).
      try {
        post({ id: message.id, result: answer(message.params as never) ?? null })
      } catch (e) {
        post({ id: message.id, error: { code: INTERNAL_ERROR, message: e instanceof Error ? e.message : String(e) } })
      }
    } else {
      try {
        handlers.notifications[message.method]?.(message.params as never)
      } catch {
        // A notification no handler can read is dropped, as an unknown one is.
      }
    }
  }

  function onData(chunk: Buffer) {
    const messages = read(chunk)
    if ("wrong" in messages) {
      const reason = `it sent ${messages.wrong}`
      broken(reason, (method) => protocolError(server, method, reason))
      return
    }
    for (const message of messages) handle(message)
  }

  const send = (message: object, method: string): Effect.Effect<void, LspServerExited> =>
    Effect.callback<void, LspServerExited>((resume) => {
      if (lostReason !== undefined) return resume(Effect.fail(serverExited(server, method, lostReason)))
      writeMessage(output, message, (e) => {
        if (e === null || e === undefined) return resume(Effect.void)
        // Its stdin is gone, usually because it died and its exit is not reported yet.
        const reason = `its input closed: ${e.message}`
        broken(reason, (m) => serverExited(server, m, reason))
        resume(Effect.fail(serverExited(server, method, lostReason ?? reason)))
      })
    })

  const request = (method: string, params: unknown): Effect.Effect<unknown, Failure> =>
    Effect.suspend(() => {
      if (lostReason !== undefined) return Effect.fail(serverExited(server, method, lostReason))
      const id = nextId++
      const answer = Deferred.makeUnsafe<unknown, Failure>()
      pending.set(id, { method, answer })
      return send({ id, method, params }, method).pipe(
        Effect.andThen(Deferred.await(answer)),
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (pending.delete(id)) post({ method: "$/cancelRequest", params: { id } })
          })
        ),
        Effect.ensuring(Effect.sync(() => pending.delete(id)))
      )
    })

  return Effect.acquireRelease(
    Effect.sync(() => {
      input.on("data", onData)
      return {
        request,
        notify: (method: string, params: unknown) => send({ method, params }, method),
        lose,
        lost: () => lostReason !== undefined
      } satisfies Rpc
    }),
    () => Effect.sync(() => lose("the connection was closed"))
  )
}
