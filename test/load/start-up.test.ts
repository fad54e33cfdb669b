/**
 * The end of start-up is told (src/load/start-up.ts), and the installed CLI's entry listens for it:
 * until then entry/bundle-start.js has V8 compile whole every module it loads, and after it, a
 * later call's modules and worker threads are compiled lazily again.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { PassThrough } from "node:stream"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Io } from "../../src/cli/io.ts"
import { START_UP_OVER } from "../../src/load/start-up.ts"
import { LineStdioTransport } from "../../src/mcp/stdio-transport.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")

let told = 0
const listener = () => void told++
const listen = () => {
  told = 0
  process.on(START_UP_OVER as never, listener)
}
afterEach(() => void process.off(START_UP_OVER as never, listener))

describe("the end of start-up", () => {
  it("is what the installed CLI's entry waits for to compile lazily again", () => {
    const entry = NodeFs.readFileSync(NodePath.join(REPO, "entry/bundle-start.js"), "utf8")
    expect(entry).toContain(`process.once("${START_UP_OVER}"`)
  })

  it("is told when an MCP server over stdio sends its first message", async () => {
    listen()
    const stdout = new PassThrough()
    stdout.resume()
    const transport = new LineStdioTransport({ stdin: new PassThrough(), stdout })
    expect(told).toBe(0)
    await transport.send({ jsonrpc: "2.0", id: 1, result: {} })
    expect(told).toBeGreaterThan(0)
  })

  it("is told when a command writes its first output", async () => {
    listen()
    const firstOutput = Effect.gen(function* () {
      yield* (yield* Io).out("")
    })
    await Effect.runPromise(firstOutput.pipe(Effect.provide(Io.layerNode)))
    expect(told).toBeGreaterThan(0)
  })
})
