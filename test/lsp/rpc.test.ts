/**
 * The JSON-RPC framing (src/lsp/rpc.ts) over plain streams: what a server's pipe may do that a
 * well-behaved test server rarely does: an answer cut into single bytes (a UTF-8 character split
 * between chunks), several messages in one chunk, a server request between them; and what a lost
 * connection does to a request still waiting.
 */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { connect } from "../../src/lsp/rpc.ts"

const frame = (message: object): Buffer => {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8")
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body])
}

/** A connection over two pipes: `toClient` is what the server writes, `written` what the client sent. */
const pipes = Effect.gen(function* () {
  const toClient = new PassThrough()
  const fromClient = new PassThrough()
  const written: Array<Record<string, unknown>> = []
  let buffer = ""
  fromClient.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8")
    for (
      let m = /Content-Length: (\d+)\r\n\r\n/.exec(buffer);
      m !== null;
      m = /Content-Length: (\d+)\r\n\r\n/.exec(buffer)
    ) {
      const end = m.index + m[0].length + Number(m[1])
      if (buffer.length < end) return
      written.push(JSON.parse(buffer.slice(m.index + m[0].length, end)))
      buffer = buffer.slice(end)
    }
  })
  let broken = 0
  const rpc = yield* connect({
    server: "piped",
    input: toClient,
    output: fromClient,
    onBroken: () => broken++,
    handlers: {
      requests: {
        "workspace/configuration": (p: { readonly items: ReadonlyArray<unknown> }) => p.items.map(() => null)
      },
      notifications: {}
    }
  })
  /** Waits until the client has sent `n` messages (each write lands on a later turn of the loop). */
  const sent = (n: number) =>
    Effect.suspend(() => (written.length >= n ? Effect.void : Effect.fail("not yet"))).pipe(
      Effect.retry({ schedule: Schedule.spaced("1 millis"), times: 5000 }),
      Effect.orDie
    )
  return { rpc, toClient, written, sent, broken: () => broken }
})

describe("rpc framing", () => {
  it.live("an answer in single bytes, a UTF-8 character split between them", () =>
    Effect.gen(function* () {
      const { rpc, toClient, written, sent } = yield* pipes
      const asking = yield* Effect.forkChild(rpc.request("textDocument/hover", { at: 1 }))
      yield* sent(1)
      expect(written[0]).toMatchObject({ jsonrpc: "2.0", id: 1, method: "textDocument/hover", params: { at: 1 } })
      for (const byte of frame({ id: 1, result: { value: "déjà vu" } })) toClient.write(Buffer.from([byte]))
      expect(yield* Fiber.join(asking)).toEqual({ value: "déjà vu" })
    }).pipe(Effect.scoped)
  )

  it.live("a server request and two answers in one chunk: the request answered, each answer to its caller", () =>
    Effect.gen(function* () {
      const { rpc, toClient, written, sent } = yield* pipes
      const first = yield* Effect.forkChild(rpc.request("a", null))
      const second = yield* Effect.forkChild(rpc.request("b", null))
      yield* sent(2)
      toClient.write(
        Buffer.concat([
          frame({ id: 2, result: "for b" }),
          frame({ id: 7, method: "workspace/configuration", params: { items: [{}, {}] } }),
          frame({ id: 1, result: "for a" }),
          frame({ id: 8, method: "unknown/method" })
        ])
      )
      expect(yield* Fiber.join(first)).toBe("for a")
      expect(yield* Fiber.join(second)).toBe("for b")
      yield* sent(4)
      expect(written.slice(2)).toEqual([
        { jsonrpc: "2.0", id: 7, result: [null, null] },
        { jsonrpc: "2.0", id: 8, error: { code: -32601, message: "Unhandled method unknown/method" } }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("a lost connection fails what waits with its reason, and what comes after at once", () =>
    Effect.gen(function* () {
      const { rpc, sent } = yield* pipes
      const waiting = yield* Effect.forkChild(rpc.request("slow", null))
      yield* sent(1)
      rpc.lose("it exited (code 9)")
      const error = yield* Effect.flip(Fiber.join(waiting))
      expect(error.message).toBe(
        "The piped language server stopped during slow: it exited (code 9). The next call starts it again."
      )
      const later = yield* Effect.flip(rpc.request("later", null))
      expect(later._tag).toBe("LspServerExited")
    }).pipe(Effect.scoped)
  )

  it.live("a header without Content-Length is a protocol error, and the connection is given up as broken", () =>
    Effect.gen(function* () {
      const { rpc, toClient, sent, broken } = yield* pipes
      const waiting = yield* Effect.forkChild(rpc.request("any", null))
      yield* sent(1)
      toClient.write("Content-Type: nothing\r\n\r\n{}")
      const error = yield* Effect.flip(Fiber.join(waiting))
      expect(error._tag).toBe("LspProtocolError")
      expect(error.message).toBe(
        "The piped server failed any: it sent a message without Content-Length. Use grep and read instead, or try again."
      )
      expect(rpc.lost()).toBe(true)
      expect(broken()).toBe(1)
    }).pipe(Effect.scoped)
  )
})
