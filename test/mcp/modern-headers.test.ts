/**
 * `mcp --http`, 2026-07-28 era: the standard request headers a load balancer routes on
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) are required and must say what the body
 * says; a request that leaves one out or contradicts its body is refused before any tool runs.
 * The tool list carries its cache hint.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { TOOL_LIST_TTL_MS } from "../../src/mcp/modern-server.ts"
import { serveHttp } from "../../src/mcp/transports.ts"
import { approvalTools } from "../fixtures/mcp/approval-tools.ts"

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "headers-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

const served = Effect.gen(function* () {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-headers-")))
  yield* Effect.addFinalizer(() => Effect.sync(() => NodeFs.rmSync(root, { recursive: true, force: true })))
  const system = yield* Layer.build(testToolSystem({ root, tools: approvalTools }))
  const serving = yield* serveHttp(system, 0, { modern: { stateDir: NodePath.join(root, ".state") } })
  const token = serving.auth.kind === "token" ? serving.auth.token : ""
  let id = 0
  const post = (method: string, params: Record<string, unknown>, headers: Record<string, string>) =>
    Effect.promise(async () => {
      const response = await fetch(serving.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: { _meta: meta, ...params } })
      })
      return { status: response.status, text: await response.text() }
    })
  return { root, post }
})

const standard = (method: string, name?: string) => ({
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": method,
  ...(name === undefined ? {} : { "mcp-name": name })
})

describe("the 2026 era's standard headers over HTTP", () => {
  it.live(
    "required, and checked against the body; the tool list carries its cache hint",
    () =>
      Effect.gen(function* () {
        const { post } = yield* served
        const listed = yield* post("tools/list", {}, standard("tools/list"))
        expect(listed.status).toBe(200)
        expect(listed.text).toContain(`"ttlMs":${TOOL_LIST_TTL_MS}`)
        expect(listed.text).toContain('"cacheScope":"private"')

        const call = { name: "add_tool", arguments: {} }
        const noMethod = yield* post("tools/call", call, {
          "mcp-protocol-version": "2026-07-28",
          "mcp-name": "add_tool"
        })
        expect(noMethod.status).toBe(400)
        expect(noMethod.text).toContain("Mcp-Method")
        const otherMethod = yield* post("tools/call", call, standard("tools/list", "add_tool"))
        expect(otherMethod.status).toBe(400)
        const otherName = yield* post("tools/call", call, standard("tools/call", "count"))
        expect(otherName.status).toBe(400)
        const noName = yield* post("tools/call", call, standard("tools/call"))
        expect(noName.status).toBe(400)
        const noVersion = yield* post("tools/call", call, { "mcp-method": "tools/call", "mcp-name": "add_tool" })
        expect(noVersion.status).toBe(400)
        // None of those ran the tool; the one that says what its body says does.
        const right = yield* post("tools/call", call, standard("tools/call", "add_tool"))
        expect(right.status).toBe(200)
        expect(right.text).toContain("registered late_")
        const relisted = yield* post("tools/list", {}, standard("tools/list"))
        expect(relisted.text.match(/"name":"late_\d+"/g) ?? []).toHaveLength(1)
      }).pipe(Effect.scoped),
    60_000
  )
})
