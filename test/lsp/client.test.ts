/**
 * The client's typed failures against a scripted server (test/lsp/fake-server.mjs): a server that
 * dies mid-request, one that never answers, one that answers with an error; and what interruption
 * does: a request interrupted is cancelled in the server, and the fiber that owns a server, once
 * interrupted, leaves no process behind. Paced by what the server writes down, never by a sleep.
 */
import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { LspClient } from "../../src/lsp/client.ts"
import { LspClients } from "../../src/lsp/service.ts"
import { nodeLayer } from "../fs/layers.ts"
import { type FakeMode, fakeCommand, fakeProject, fakeSpec } from "./fake.ts"
import { alive, eventually } from "./wait.ts"

const command = fakeCommand
const project = fakeProject("freecode-lsp-client-")

/** What the server was asked and told so far (hang mode): "hover", "cancelled". */
const heard = (log: string): Array<string> =>
  existsSync(`${log}.requests`) ? readFileSync(`${log}.requests`, "utf8").trim().split("\n") : []

/** The pid of the server started last (`start <ms> <pid>`). */
const lastPid = (log: string): number => Number(readFileSync(log, "utf8").trim().split("\n").at(-1)!.split(" ")[2])

/** Starts the fake server in `mode`, opens the file and asks for a hover with `timeoutMs`. */
const hoverOn = (mode: FakeMode, root: string, file: string, log: string, timeoutMs = 600_000) =>
  Effect.gen(function* () {
    const client = yield* LspClient.start("fake", command(mode, log), root, 30_000)
    const uri = yield* client.sync(file, "first text\n", "fake")
    return yield* client.request(
      "textDocument/hover",
      { textDocument: { uri }, position: { line: 0, character: 0 } },
      timeoutMs
    )
  })

describe("LspClient's typed failures", () => {
  it.live("a server that dies mid-request fails the request with its exit, at once, not at the deadline", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      // The deadline is ten minutes: only the exit can end this request within the test's time.
      const error = yield* Effect.scoped(Effect.flip(hoverOn("crash", root, file, log)))
      expect(error._tag).toBe("LspServerExited")
      expect(error.message).toBe(
        "The fake language server stopped during textDocument/hover: it exited (code 1). The next call starts it again."
      )
      expect(alive(lastPid(log))).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("a request past its deadline fails as LspTimeout, saying what to do, and is cancelled in the server", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      yield* Effect.scoped(
        Effect.gen(function* () {
          const error = yield* Effect.flip(hoverOn("hang", root, file, log, 300))
          expect(error._tag).toBe("LspTimeout")
          expect(error.message).toBe("The fake server did not answer textDocument/hover in 0.3 s; try again.")
          yield* eventually("the server heard the cancellation", () => heard(log).includes("cancelled"))
        })
      )
      expect(alive(lastPid(log))).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("an error answer is an LspProtocolError with the server's code and words", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      const error = yield* Effect.scoped(Effect.flip(hoverOn("refuse", root, file, log)))
      expect(error._tag).toBe("LspProtocolError")
      expect(error._tag === "LspProtocolError" && error.code).toBe(-32603)
      expect(error.message).toMatch(/^The fake server failed textDocument\/hover: .*no hover here\. Use grep and read/)
    }).pipe(Effect.provide(nodeLayer))
  )
  it.live("bytes that are not JSON-RPC fail the request as an LspProtocolError, and the server is killed", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      // Answers initialize properly, then garbles its answer to the first request after it.
      const script = `
        require("fs").appendFileSync(${JSON.stringify(log)}, "start 0 " + process.pid + "\\n")
        const send = (body) => process.stdout.write("Content-Length: " + Buffer.byteLength(body) + "\\r\\n\\r\\n" + body)
        let buf = ""
        process.stdin.on("data", (d) => {
          buf += d
          for (let m; (m = /Content-Length: (\\d+)\\r\\n\\r\\n/.exec(buf)) !== null; ) {
            const end = m.index + m[0].length + Number(m[1])
            if (buf.length < end) return
            const msg = JSON.parse(buf.slice(m.index + m[0].length, end))
            buf = buf.slice(end)
            if (msg.method === "initialize") send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { capabilities: {} } }))
            else if (msg.id !== undefined) send("{not json")
          }
        })
        setInterval(() => {}, 1000)`
      const client = yield* LspClient.start(
        "garbler",
        { command: process.execPath, args: ["-e", script] },
        root,
        30_000
      )
      const error = yield* Effect.flip(client.request("textDocument/hover", { textDocument: { uri: file } }, 600_000))
      expect(error._tag).toBe("LspProtocolError")
      expect(error.message).toBe(
        "The garbler server failed textDocument/hover: it sent a message that is not JSON. Use grep and read instead, or try again."
      )
      expect(client.alive).toBe(false)
      const pid = lastPid(log)
      yield* eventually(`the garbler (pid ${pid}) was killed`, () => !alive(pid))
    }).pipe(Effect.scoped, Effect.provide(nodeLayer))
  )
})

describe("interruption", () => {
  it.live("of a request cancels it in the server, which goes on running", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      yield* Effect.scoped(
        Effect.gen(function* () {
          const client = yield* LspClient.start("fake", command("hang", log), root, 30_000)
          const uri = yield* client.sync(file, "first text\n", "fake")
          const params = { textDocument: { uri }, position: { line: 0, character: 0 } }
          const asking = yield* Effect.forkChild(client.request("textDocument/hover", params, 600_000))
          yield* eventually("the server was asked", () => heard(log).includes("hover"))
          yield* Fiber.interrupt(asking)
          yield* eventually("the server heard the cancellation", () => heard(log).includes("cancelled"))
          expect(client.alive).toBe(true)
          expect(alive(client.pid)).toBe(true)
        })
      )
      expect(alive(lastPid(log))).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("of the fiber that owns the server ends its process before the interruption returns", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      const owner = yield* Effect.forkChild(Effect.scoped(hoverOn("hang", root, file, log)))
      yield* eventually("the server was asked", () => heard(log).includes("hover"))
      const pid = lastPid(log)
      expect(alive(pid)).toBe(true)
      yield* Fiber.interrupt(owner)
      expect(alive(pid)).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("during the handshake ends the process that never answered initialize", () =>
    Effect.gen(function* () {
      const { root, log } = yield* project
      const silent = `require("fs").appendFileSync(${JSON.stringify(log)}, "start 0 " + process.pid + "\\n"); process.stdin.resume()`
      const starting = yield* Effect.forkChild(
        Effect.scoped(LspClient.start("silent", { command: process.execPath, args: ["-e", silent] }, root, 600_000))
      )
      yield* eventually("the server started", () => existsSync(log))
      const pid = lastPid(log)
      expect(alive(pid)).toBe(true)
      yield* Fiber.interrupt(starting)
      expect(alive(pid)).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("of a call through LspClients, with the layer, ends the server the layer started", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      const fake = fakeSpec("hang", log)
      const call = Effect.gen(function* () {
        const clients = yield* LspClients
        const doc = yield* clients.open(file, root)
        return yield* clients.request(doc, "textDocument/hover", {
          textDocument: { uri: doc.uri },
          position: { line: 0, character: 0 }
        })
      }).pipe(Effect.provide(LspClients.layerWith({ servers: [fake], requestTimeoutMs: 600_000, trusted: true })))
      const fiber = yield* Effect.forkChild(call)
      yield* eventually("the server was asked", () => heard(log).includes("hover"))
      const pid = lastPid(log)
      yield* Fiber.interrupt(fiber)
      expect(alive(pid)).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )
})
