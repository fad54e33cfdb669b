import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { DEFAULT_RESTART, restartDelay } from "../../src/mcp/clients.ts"
import { expandEnv, loadMcpServers } from "../../src/mcp/config.ts"
import { parseToolsPage } from "../../src/mcp/list.ts"
import { assignToolNames, MAX_TOOL_NAME, mcpToolName } from "../../src/mcp/names.ts"
import { flattenResult } from "../../src/mcp/result.ts"
import { nodeLayer } from "../fs/layers.ts"

describe("names", () => {
  it("maps characters providers refuse and keeps the readable form when it fits", () => {
    expect(mcpToolName("my server", "get.item")).toBe("mcp__my_server__get_item")
    expect(mcpToolName("gh", "create_issue")).toBe("mcp__gh__create_issue")
  })

  it("shortens long names with a hash; two tools that map alike never collide; routes back", () => {
    const long = mcpToolName("s", "x".repeat(100))
    expect(long.length).toBe(MAX_TOOL_NAME)
    expect(mcpToolName("s", `${"x".repeat(99)}y`)).not.toBe(long)
    const names = assignToolNames("s", ["a.b", "a_b", "a-b"])
    expect(names.size).toBe(3)
    expect(names.get("mcp__s__a_b")).toBe("a.b")
    expect([...names.values()].sort()).toEqual(["a-b", "a.b", "a_b"])
    expect([...names.keys()].every((n) => /^[A-Za-z0-9_-]+$/.test(n))).toBe(true)
  })
})

describe("parseToolsPage", () => {
  it("keeps the good tools and names the bad ones", () => {
    const page = parseToolsPage({
      tools: [
        { name: "ok", inputSchema: { type: "object" }, annotations: { readOnlyHint: true, bogus: 1 } },
        { name: "no_schema" },
        { inputSchema: {} },
        "junk",
        { name: "task_only", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
        { name: "task_optional", inputSchema: { type: "object" }, execution: { taskSupport: "optional" } }
      ],
      nextCursor: "2"
    })
    expect(page.tools.map((t) => [t.name, t.annotations])).toEqual([
      ["ok", { readOnlyHint: true }],
      ["task_optional", {}]
    ])
    // A plain tools/call to a task-only tool is refused by its server: it is not offered.
    expect(page.skipped).toEqual([
      { name: "no_schema", reason: "its inputSchema is not a JSON object" },
      { name: "#2", reason: "it has no name" },
      { name: "#3", reason: "it has no name" },
      { name: "task_only", reason: "it can only run as an MCP task, which this client does not start" }
    ])
    expect(page.nextCursor).toBe("2")
  })
})

describe("flattenResult", () => {
  it("text joined; blobs and media to metadata; unknown content kept as a line", () => {
    const flat = flattenResult({
      content: [
        { type: "text", text: "a" },
        { type: "resource", resource: { uri: "x://b", blob: "AAAA" } },
        { type: "mystery", value: 1 }
      ],
      isError: true
    })
    expect(flat.isError).toBe(true)
    expect(flat.output).toBe(
      'a\n[resource x://b, 3 bytes: metadata.resources[0]]\n[mystery content: {"type":"mystery","value":1}]'
    )
    expect(flat.metadata.resources).toEqual([{ uri: "x://b", mimeType: "application/octet-stream", blob: "AAAA" }])
  })

  it("structured content alone still says something to the model", () => {
    expect(flattenResult({ content: [], structuredContent: { n: 1 } }).output).toBe('{\n  "n": 1\n}')
  })
})

describe("restartDelay", () => {
  it("doubles from 1 s and stops at 30 s by default", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => Duration.toMillis(restartDelay(DEFAULT_RESTART, n)))
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
  })
})

describe("config", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config syntax under test
  it("expands ${VAR} and ${VAR:-default}", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config syntax under test
    expect(expandEnv("Bearer ${TOKEN}", { TOKEN: "abc" })).toBe("Bearer abc")
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config syntax under test
    expect(expandEnv("${MISSING:-fallback}/${EMPTY:-x}", { EMPTY: "" })).toBe("fallback/x")
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config syntax under test
    expect(expandEnv("${MISSING}", {})).toBe("")
  })

  it.effect("reads .mcp.json and freecode.json at the root; freecode.json wins a name both define", () =>
    Effect.gen(function* () {
      const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-mcp-config-"))
      NodeFs.writeFileSync(
        NodePath.join(root, ".mcp.json"),
        JSON.stringify({ mcpServers: { a: { command: "a-server" }, b: { url: "http://127.0.0.1:1/mcp" } } })
      )
      NodeFs.writeFileSync(
        NodePath.join(root, "freecode.json"),
        JSON.stringify({ mcpServers: { a: { command: "better-a", args: ["--x"], trusted: false } } })
      )
      const servers = yield* loadMcpServers(root)
      expect(servers).toEqual({
        a: { command: "better-a", args: ["--x"], trusted: false },
        b: { url: "http://127.0.0.1:1/mcp" }
      })
      NodeFs.writeFileSync(NodePath.join(root, "bad.json"), JSON.stringify({ mcpServers: { c: { args: [] } } }))
      const error = yield* Effect.flip(loadMcpServers(root, "bad.json"))
      expect(error.message).toContain('each server needs "command" or "url"')
      NodeFs.rmSync(root, { recursive: true, force: true })
    }).pipe(Effect.provide(nodeLayer))
  )
})
