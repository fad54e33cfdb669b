/**
 * stdio for both eras. The first message decides: a 2025-era `initialize` goes to the SDK 1.32
 * server as before (sessions, elicitation), without loading anything more; anything else (a
 * 2026-07-28 `server/discover`, or a request carrying its revision in `_meta`) goes to the SDK
 * 2.x `serveStdio` entry, which pins the connection to one era from the opening exchange on and
 * serves `subscriptions/listen` for the 2026 era. Its 2025 branch (a client that probes with
 * `server/discover` and then falls back to `initialize`) is served by the same 1.32 server.
 *
 * Each era's SDK also says which lines are JSON-RPC messages (its `JSONRPCMessageSchema`), so a
 * client of one era loads nothing of the other's: the opening line's JSON picks the era whose
 * schema checks it, and, once a line passed, every later one.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { lazyImport } from "../load/lazy.ts"
import { isRecord } from "../schema/json-schema.ts"
import type { LineStdioTransport, MessageCheck } from "./stdio-transport.ts"

/** Whether the opening message is a 2025-era handshake: `initialize` with no 2026 revision in `_meta`. */
export const isLegacyOpening = (message: unknown): boolean => {
  if (!isRecord(message) || message.method !== "initialize" || !("id" in message)) return false
  const meta = isRecord(message.params) ? message.params._meta : undefined
  return !(isRecord(meta) && "io.modelcontextprotocol/protocolVersion" in meta)
}

const legacyCheck = lazyImport(() =>
  import("@modelcontextprotocol/sdk/types.js").then(
    (sdk): MessageCheck =>
      (v) =>
        sdk.JSONRPCMessageSchema.parse(v)
  )
)
const modernCheck = lazyImport(() =>
  import("@modelcontextprotocol/server").then(
    (sdk): MessageCheck =>
      (v) =>
        sdk.parseJSONRPCMessage(v) as JSONRPCMessage
  )
)

/** The JSON-RPC check of the era a message opens: SDK 1.32's for a 2025 handshake, else SDK 2.x's. */
export const checkOfEra = (opening: unknown): Promise<MessageCheck> =>
  isLegacyOpening(opening) ? legacyCheck() : modernCheck()

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

  /**
   * Starts reading `inner` (which has no `check` yet); the first message, or undefined when the
   * input ended before one. Lines are checked by the era of the first that is JSON (`checkFor`);
   * one that fails is reported and skipped, and the next decides. What was read meanwhile is
   * checked in order once the era is known.
   */
  static async open(
    inner: LineStdioTransport,
    checkFor: (opening: unknown) => Promise<MessageCheck> = checkOfEra
  ): Promise<{ readonly transport: ReplayTransport; readonly first: JSONRPCMessage | undefined }> {
    const transport = new ReplayTransport(inner)
    // A check that cannot be loaded (a broken install) fails the opening, as a static import would.
    const first = new Promise<JSONRPCMessage | undefined>((resolve, reject) => {
      const waiting: Array<unknown> = []
      let deciding = false
      let ended = false
      const decide = async () => {
        deciding = true
        while (waiting.length > 0) {
          const check = await checkFor(waiting[0])
          let message: JSONRPCMessage
          try {
            message = check(waiting.shift())
          } catch (e) {
            inner.skip(e as Error)
            continue
          }
          // From here every line is checked as it is read; the ones that came meanwhile follow in order.
          inner.check = check
          inner.onmessage?.(message)
          for (const value of waiting.splice(0)) inner.accept(value)
          return resolve(message)
        }
        deciding = false
        if (ended) resolve(undefined)
      }
      inner.onunchecked = (value) => {
        waiting.push(value)
        if (!deciding) decide().catch(reject)
      }
      void transport.ended.then(() => {
        ended = true
        if (!deciding) resolve(undefined)
      })
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
