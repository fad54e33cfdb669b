/**
 * The stdio server transport: one JSON-RPC message per line on stdin, answers on stdout.
 *
 * The SDK's own keeps at most 10 MiB of unread input and, past that, closes itself: one large
 * message (a write of a big file's content) silently ended the whole `mcp` server. Here a line
 * over the limit is skipped up to its newline and the server goes on: the sender gets an
 * Invalid Request error for it (when its id can be read from the line's start) and stderr says
 * what happened. Lines that are not JSON-RPC are reported the same way and skipped.
 *
 * Which schema says a line is JSON-RPC is the caller's (`check`): over stdio that is the schema of
 * the SDK of the era the client opens with, known only once its first message is read
 * (stdio-eras.ts), so this file loads neither SDK.
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { startUpOver } from "../load/start-up.ts"

export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024
const INVALID_REQUEST = -32600

/** A line's JSON value as a JSON-RPC message, or a throw that says why it is not one (an SDK's `JSONRPCMessageSchema.parse`). */
export type MessageCheck = (value: unknown) => JSONRPCMessage

/** Of a line too long to keep, this much of its start is kept to find its id. */
const HEAD_BYTES = 4096

/** The request id near the start of a message (`"id":7` or `"id":"abc"`), if any. */
const idNear = (head: string): string | number | undefined => {
  const m = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(head)
  if (m === null) return undefined
  return m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : Number(m[1])
}

export class LineStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Told each line's JSON value, in order, while there is no `check` yet (see `accept`). */
  onunchecked?: (value: unknown) => void
  /** How a line's JSON value is checked; until it is set, values go to `onunchecked` unchecked. */
  check: MessageCheck | undefined

  private chunks: Array<Buffer> = []
  private held = 0
  /** Set while a too-long line is being skipped: its start, and how long it is so far. */
  private skipping: { head: string; bytes: number } | undefined
  private readonly ondata = (chunk: Buffer) => this.take(chunk)
  private readonly onStdinError = (error: Error) => this.onerror?.(error)

  private readonly stdin: NodeJS.ReadableStream
  private readonly stdout: NodeJS.WritableStream
  private readonly report: (line: string) => void
  private readonly maxBytes: number

  constructor(
    options: {
      readonly stdin?: NodeJS.ReadableStream
      readonly stdout?: NodeJS.WritableStream
      /** Where skipped input is reported (default stderr: stdout is the protocol's). */
      readonly report?: (line: string) => void
      readonly maxBytes?: number
      readonly check?: MessageCheck
    } = {}
  ) {
    this.check = options.check
    this.stdin = options.stdin ?? process.stdin
    this.stdout = options.stdout ?? process.stdout
    this.report = options.report ?? ((line) => void process.stderr.write(`freecode-tools: ${line}\n`))
    this.maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.ondata)
    this.stdin.on("error", this.onStdinError)
  }

  private take(chunk: Buffer): void {
    let from = 0
    while (from < chunk.length) {
      const nl = chunk.indexOf(10, from)
      const end = nl === -1 ? chunk.length : nl
      const piece = chunk.subarray(from, end)
      if (this.skipping !== undefined) this.skipping.bytes += piece.length
      else if (this.held + piece.length > this.maxBytes) {
        const head = Buffer.concat([...this.chunks, piece])
          .subarray(0, HEAD_BYTES)
          .toString("utf8")
        this.skipping = { head, bytes: this.held + piece.length }
        this.chunks = []
        this.held = 0
      } else if (piece.length > 0) {
        this.chunks.push(Buffer.from(piece))
        this.held += piece.length
      }
      if (nl === -1) return
      this.endLine()
      from = nl + 1
    }
  }

  private endLine(): void {
    if (this.skipping !== undefined) {
      const { head, bytes } = this.skipping
      this.skipping = undefined
      this.tooLong(head, bytes)
      return
    }
    const line = Buffer.concat(this.chunks).toString("utf8").replace(/\r$/, "")
    this.chunks = []
    this.held = 0
    if (line.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (e) {
      this.skip(e as Error)
      return
    }
    if (this.check === undefined) this.onunchecked?.(value)
    else this.accept(value)
  }

  /**
   * A line's JSON value checked as a message: delivered, or reported and skipped. Lines read
   * while `check` was unset are given back here by whoever set it.
   */
  accept(value: unknown): void {
    let message: JSONRPCMessage
    try {
      message = this.check!(value)
    } catch (e) {
      this.skip(e as Error)
      return
    }
    this.onmessage?.(message)
  }

  /** A line that is not a JSON-RPC message: said on stderr, told to onerror, skipped. */
  skip(e: Error): void {
    this.report(`skipped a line on stdin that is not a JSON-RPC message (${e.message.slice(0, 200)})`)
    this.onerror?.(e)
  }

  private tooLong(head: string, bytes: number): void {
    const id = idNear(head)
    const limit = `${this.maxBytes / 1024 / 1024} MiB`
    this.report(
      `skipped a message of ${bytes} bytes on stdin: one message may be at most ${limit}${id === undefined ? "" : ` (request id ${JSON.stringify(id)}, answered with an error)`}`
    )
    if (id === undefined) return
    void this.send({
      jsonrpc: "2.0",
      id,
      error: {
        code: INVALID_REQUEST,
        message: `The message was ${bytes} bytes; one message may be at most ${limit}, so it was not read. Send less in one call: a path to a file instead of its content, or the content in parts.`
      }
    })
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.ondata)
    this.stdin.off("error", this.onStdinError)
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause()
    this.chunks = []
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    startUpOver()
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once("drain", resolve)
    })
  }
}
