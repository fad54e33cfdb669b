/**
 * stdio for both eras. The first message decides: a 2025-era `initialize` goes to the SDK 1.32
 * server as before (sessions, elicitation), without loading anything more; anything else (a
 * 2026-07-28 `server/discover`, or a request carrying its revision in `_meta`) goes to the SDK
 * 2.x `serveStdio` entry, which pins the connection to one era from the opening exchange on and
 * serves `subscriptions/listen` for the 2026 era. Its 2025 branch (a client that probes with
 * `server/discover` and then falls back to `initialize`) is served by the same 1.32 server.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { isRecord } from "../schema/json-schema.ts"
import type { LineStdioTransport } from "./stdio-transport.ts"

/** Whether the opening message is a 2025-era handshake: `initialize` with no 2026 revision in `_meta`. */
export const isLegacyOpening = (message: JSONRPCMessage): boolean => {
  if (!("method" in message) || message.method !== "initialize" || !("id" in message)) return false
  const meta = isRecord(message.params) ? message.params._meta : undefined
  return !(isRecord(meta) && "io.modelcontextprotocol/protocolVersion" in meta)
}

/**
 * The stdio transport with the messages read before a server was chosen put back in front:
 * whoever connects next receives them first, in order, then the rest as they come.
 */
export class ReplayTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Told when the connection closes, whoever is connected. */
  readonly ended: Promise<void>
  private held: Array<JSONRPCMessage> | undefined
  private readonly inner: LineStdioTransport

  private constructor(inner: LineStdioTransport) {
    this.inner = inner
    this.held = []
    this.ended = new Promise((resolve) => {
      inner.onclose = () => {
        resolve()
        this.onclose?.()
      }
    })
    inner.onmessage = (m) => (this.held === undefined ? this.onmessage?.(m) : this.held.push(m))
    inner.onerror = (e) => this.onerror?.(e)
  }

  /** Starts reading `inner`; the first message, or undefined when the input ended before one. */
  static async open(
    inner: LineStdioTransport
  ): Promise<{ readonly transport: ReplayTransport; readonly first: JSONRPCMessage | undefined }> {
    const transport = new ReplayTransport(inner)
    const first = new Promise<JSONRPCMessage | undefined>((resolve) => {
      const push = inner.onmessage!
      inner.onmessage = (m) => {
        push(m)
        inner.onmessage = push
        resolve(m)
      }
      void transport.ended.then(() => resolve(undefined))
    })
    await inner.start()
    return { transport, first: await first }
  }

  async start(): Promise<void> {
    // Delivered once the caller's connect has set its handlers and returned.
    queueMicrotask(() => {
      const held = this.held ?? []
      this.held = undefined
      for (const m of held) this.onmessage?.(m)
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message)
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
