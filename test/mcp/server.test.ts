import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  CallToolResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer, Schema } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { toCallToolResult } from "../../src/mcp/tool-wire.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import type { ToolResult } from "../../src/tool/result.ts"
import { defineTool } from "../../src/tool/tool.ts"
import { REPO, startHttp, withServedClient, withToken } from "./helpers.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const SERVE = NodePath.join(REPO, "test/fixtures/mcp/serve.ts")

const makeProject = () => {
  const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-mcp-serve-"))
  NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\ngamma\n")
  NodeFs.mkdirSync(NodePath.join(root, "src"))
  NodeFs.writeFileSync(NodePath.join(root, "src/a.ts"), "export const a = 1\n")
  return root
}

type Text = { type: string; text?: string }
const textOf = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<Text>)
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n")

const rawPost = (url: string, host: string, token: string | undefined) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(url)
    const req = NodeHttp.request(
      {
        host: "127.0.0.1",
        port: u.port,
        path: u.pathname,
        method: "POST",
        headers: {
          host,
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        }
      },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      }
    )
    req.on("error", reject)
    req.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      })
    )
  })

describe("freecode-tools mcp over stdio, driven by the SDK client", () => {
  it("lists the tools with annotations, runs calls through the dispatcher, errors as isError", async () => {
    const root = makeProject()
    NodeFs.mkdirSync(NodePath.join(root, "allowed"))
    // --config: rules allow writes under allowed/ and seq, a PreToolUse hook blocks grep.
    const configFile = NodePath.join(root, "served.json")
    NodeFs.writeFileSync(
      configFile,
      JSON.stringify({
        permissions: { allow: ["Write(allowed/**)", "Bash(seq:*)"] },
        hooks: {
          PreToolUse: [
            { matcher: "grep", hooks: [{ type: "command", command: "echo 'grep is off limits here' >&2; exit 2" }] }
          ]
        }
      })
    )
    const client = new Client({ name: "test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "mcp", "--root", root, "--config", configFile],
      stderr: "pipe"
    })
    try {
      await client.connect(transport)
      expect(client.getServerVersion()?.name).toBe("freecode-tools")
      const { tools } = await client.listTools()
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
      expect(Object.keys(byName)).toEqual(expect.arrayContaining(["read", "ls", "glob", "grep", "output"]))
      expect(byName.read?.annotations).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false
      })
      expect(byName.webfetch?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true })
      // The schema goes out exactly as declared (McpServer would have refused raw JSON Schema).
      expect(byName.read?.inputSchema).toMatchObject({ type: "object", additionalProperties: false })
      expect(Object.keys(byName.read?.inputSchema.properties ?? {})).toContain("filePath")

      const read = await client.callTool({ name: "read", arguments: { filePath: "notes.txt" } })
      expect(read.isError).toBeUndefined()
      expect(textOf(read)).toContain("beta")
      // Read de-duplication is off by default over MCP (the server cannot know what the client
      // pruned): the same client re-reading gets the content again (test/mcp/stdio-first-run.test.ts).
      const again = await client.callTool({ name: "read", arguments: { filePath: "notes.txt" } })
      expect(textOf(again)).toContain("beta")

      const bad = await client.callTool({ name: "read", arguments: { file_path: "notes.txt" } })
      expect(bad.isError).toBe(true)
      expect(textOf(bad)).toContain("Invalid arguments for read")

      const unknown = await client.callTool({ name: "Reed", arguments: {} })
      expect(unknown.isError).toBe(true)
      expect(textOf(unknown)).toContain('No tool named "Reed"')

      // mcp runs in acceptEdits mode: a write inside the project runs (the client shows the person
      // every call); one outside asks, and this client cannot answer (no elicitation): refused.
      expect(byName.write?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
      const write = await client.callTool({ name: "write", arguments: { filePath: "new.txt", content: "x" } })
      expect(write.isError, textOf(write)).toBeUndefined()
      expect(NodeFs.readFileSync(NodePath.join(root, "new.txt"), "utf8")).toBe("x")
      const away = NodePath.join(NodeOs.tmpdir(), `freecode-outside-${process.pid}-${Date.now()}.txt`)
      const outside = await client.callTool({ name: "write", arguments: { filePath: away, content: "x" } })
      expect(outside.isError).toBe(true)
      expect(textOf(outside)).toContain("approv")
      expect(NodeFs.existsSync(away)).toBe(false)
      // ...and so does a path the configuration allows.
      const allowed = await client.callTool({ name: "write", arguments: { filePath: "allowed/x.txt", content: "x" } })
      expect(allowed.isError, textOf(allowed)).toBeUndefined()
      expect(NodeFs.readFileSync(NodePath.join(root, "allowed/x.txt"), "utf8")).toBe("x")

      // Output budgets: a long result is cut with a marker naming the output call for the rest.
      const long = await client.callTool({ name: "bash", arguments: { command: "seq 1 200000" } })
      const cut = textOf(long)
      expect(cut.length).toBeLessThan(100_000)
      const marker = cut.match(/Retrieve them with output (\{"id": "[^"]+", "offset": \d+, "limit": \d+\})/)?.[1]
      expect(marker, cut.slice(0, 2000)).toBeDefined()
      const rest = await client.callTool({ name: "output", arguments: JSON.parse(marker!) as Record<string, unknown> })
      expect(rest.isError).toBeUndefined()
      // The first omitted line (seq prints its own number) is missing from the cut and is in the rest.
      const first = String((JSON.parse(marker!) as { offset: number }).offset)
      expect(cut.split("\n")).not.toContain(first)
      expect(textOf(rest)).toMatch(new RegExp(`(^|\\D)${first}(\\D|$)`, "m"))

      // Hooks run too.
      const grep = await client.callTool({ name: "grep", arguments: { pattern: "alpha" } })
      expect(grep.isError).toBe(true)
      expect(textOf(grep)).toContain("grep is off limits here")
    } finally {
      await client.close()
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 90_000)
})

describe("freecode-tools mcp --profile", () => {
  it("serves only what the profile allows: read-only lists no mutating tool and refuses one by name", async () => {
    const root = makeProject()
    const client = new Client({ name: "test", version: "1.0.0" })
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [MAIN, "mcp", "--root", root, "--profile", "read-only"],
          stderr: "pipe"
        })
      )
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(["read", "grep", "glob", "ls"]))
      for (const mutating of ["bash", "edit", "write", "apply_patch"]) expect(names).not.toContain(mutating)
      const write = await client.callTool({ name: "write", arguments: { filePath: "x.txt", content: "x" } })
      expect(write.isError).toBe(true)
      expect(NodeFs.existsSync(NodePath.join(root, "x.txt"))).toBe(false)
    } finally {
      await client.close()
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("the system's McpClients, configured in freecode.json", () => {
  it("connects in the background; its tools reach an MCP client of ours through list_changed", async () => {
    const root = makeProject()
    const fixture = { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/server.ts")] }
    NodeFs.writeFileSync(NodePath.join(root, "freecode.json"), JSON.stringify({ mcpServers: { fx: fixture } }))
    NodeFs.writeFileSync(NodePath.join(root, ".mcp.json"), JSON.stringify({ mcpServers: { dot: fixture } }))
    const client = new Client({ name: "test", version: "1.0.0" })
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++
    })
    try {
      await client.connect(
        // The folder's own servers start only in a trusted folder: --trust, for this run.
        new StdioClientTransport({
          command: process.execPath,
          args: [MAIN, "mcp", "--root", root, "--trust"],
          stderr: "pipe"
        })
      )
      let tools: Awaited<ReturnType<Client["listTools"]>>["tools"] = []
      const names = () => tools.map((t) => t.name)
      for (
        let i = 0;
        i < 300 && !(names().includes("mcp__fx__tree_sum") && names().includes("mcp__dot__tree_sum"));
        i++
      ) {
        await new Promise((r) => setTimeout(r, 100))
        tools = (await client.listTools()).tools
      }
      // freecode.json's servers and .mcp.json's alike.
      expect(names()).toContain("mcp__fx__tree_sum")
      expect(names()).toContain("mcp__dot__tree_sum")
      expect(changed).toBeGreaterThan(0)
      expect(tools.find((t) => t.name === "mcp__fx__tree_sum")?.annotations).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true
      })
      const sum = await client.callTool({
        name: "mcp__fx__tree_sum",
        arguments: { root: { value: 2, children: [{ value: 5 }] } }
      })
      expect(textOf(sum)).toBe("7")
    } finally {
      await client.close()
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 90_000)
})

describe("freecode-tools mcp over streamable HTTP", () => {
  it("serves sessions to the SDK client and refuses a foreign Host header", async () => {
    const root = makeProject()
    const server = await startHttp(MAIN, ["mcp", "--http", "0", "--root", root])
    const client = new Client({ name: "test", version: "1.0.0" })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), withToken(server.token)))
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain("grep")
      const ls = await client.callTool({ name: "ls", arguments: {} })
      expect(textOf(ls)).toContain("notes.txt")
      const first = await client.callTool({ name: "read", arguments: { filePath: "notes.txt" } })
      expect(textOf(first)).toContain("beta")
      // Another MCP session has been shown nothing: it gets the content, not a pointer.
      const other = new Client({ name: "other", version: "1.0.0" })
      await other.connect(new StreamableHTTPClientTransport(new URL(server.url), withToken(server.token)))
      expect(textOf(await other.callTool({ name: "read", arguments: { filePath: "notes.txt" } }))).toContain("beta")
      await other.close()
      // DNS rebinding: a page on evil.example resolving to 127.0.0.1 must not get in.
      expect(await rawPost(server.url, "evil.example:80", server.token)).toBe(403)
      expect(await rawPost(server.url, new URL(server.url).host, server.token)).toBe(200)
    } finally {
      await client.close()
      server.child.kill("SIGTERM")
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 90_000)

  it("passes the official conformance suite's tool scenarios (others in the baseline, with reasons)", async () => {
    // The suite sends no token: the fixture serves on loopback with --auth none.
    const server = await startHttp(SERVE, ["mcp", "--http", "0", "--auth", "none", "--root", REPO])
    const outDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-conformance-"))
    const run = (args: ReadonlyArray<string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(
          NodePath.join(REPO, "node_modules/.bin/conformance"),
          ["server", "--url", server.url, "-o", outDir, ...args],
          { cwd: outDir, env: { ...process.env, PATH: `${NodePath.dirname(process.execPath)}:${process.env.PATH}` } }
        )
        let out = ""
        child.stdout.on("data", (b: Buffer) => (out += b.toString()))
        child.stderr.on("data", (b: Buffer) => (out += b.toString()))
        child.on("close", (code) => resolve({ code, out }))
      })
    try {
      const active = await run([
        "--expected-failures",
        NodePath.join(REPO, "test/fixtures/mcp/conformance-baseline.yml")
      ])
      for (const scenario of [
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-with-logging",
        "tools-call-error",
        "tools-call-with-progress",
        "dns-rebinding-protection"
      ]) {
        expect(active.out).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`))
      }
      expect(active.code, active.out.slice(-3000)).toBe(0)
      const schema = await run(["--scenario", "json-schema-2020-12"])
      expect(schema.out).toMatch(/json-schema-2020-12-\$schema\s*\]\s*\S*SUCCESS/)
      expect(schema.out).toMatch(/json-schema-2020-12-\$defs\s*\]\s*\S*SUCCESS/)
      expect(schema.out).not.toContain("FAILURE")
      expect(schema.code, schema.out.slice(-3000)).toBe(0)
    } finally {
      server.child.kill("SIGTERM")
      NodeFs.rmSync(outDir, { recursive: true, force: true })
    }
  }, 300_000)
})

describe("toCallToolResult", () => {
  const base: ToolResult = {
    id: "c1",
    tool: "t",
    status: "ok",
    title: "t",
    modelOutput: "out",
    uiOutput: "out",
    outputChars: 3,
    outputLines: 1,
    truncated: false,
    metadata: {},
    attempts: 1,
    durationMs: 1
  }
  const png = { mimeType: "image/png", data: Buffer.from("png").toString("base64") }

  // The server skips the SDK's own check of each result (src/mcp/tool-server.ts): this is it.
  it("makes a result the MCP schema accepts, for every kind of content", () => {
    const cases: Array<ToolResult> = [
      base,
      { ...base, modelOutput: "" },
      { ...base, status: "error", modelOutput: "it failed", error: { tag: "ToolFailure", message: "it failed" } },
      { ...base, status: "denied", modelOutput: "" },
      { ...base, metadata: { image: png } },
      { ...base, metadata: { images: [png, png, { mimeType: 1 }] } },
      { ...base, metadata: { audio: { mimeType: "audio/wav", data: "AAAA" } } },
      {
        ...base,
        metadata: {
          resources: [
            { uri: "file:///a.txt", text: "a", mimeType: "text/plain" },
            { uri: "file:///b.bin", blob: "AAAA" },
            { uri: 7 },
            "nonsense"
          ]
        }
      },
      { ...base, metadata: { structuredContent: { answer: 42 } } },
      { ...base, metadata: { structuredContent: "not an object" } }
    ]
    for (const result of cases) {
      const made = toCallToolResult(result)
      const parsed = CallToolResultSchema.safeParse(made)
      expect(parsed.success, JSON.stringify(made)).toBe(true)
      expect(made.content.length).toBeGreaterThan(0)
      expect(made.isError === true).toBe(result.status !== "ok")
    }
    expect(toCallToolResult({ ...base, metadata: { images: [png, png, { mimeType: 1 }] } }).content).toHaveLength(3)
    expect(toCallToolResult({ ...base, metadata: { structuredContent: "not an object" } })).not.toHaveProperty(
      "structuredContent"
    )
  })
})

describe("makeToolServer", () => {
  it.live("refuses a tool call asked to run as a task, which it does not offer, before the handler", () =>
    Effect.gen(function* () {
      yield* withServedClient((client) =>
        Effect.gen(function* () {
          const refused = yield* Effect.promise(() =>
            client
              .request(
                { method: "tools/call", params: { name: "read", arguments: { filePath: "x" }, task: { ttl: 1000 } } },
                CallToolResultSchema
              )
              .then(
                () => undefined,
                (e: unknown) => e
              )
          )
          expect(refused).toBeInstanceOf(McpError)
          expect((refused as McpError).message).toMatch(/does not support task/i)
          // An ordinary call still works.
          const ok = yield* Effect.promise(() => client.callTool({ name: "ls", arguments: {} }))
          expect(ok.isError).not.toBe(true)
        })
      )
    }).pipe(Effect.provide(Layer.fresh(testToolSystem({ root: NodeOs.tmpdir() }))))
  )

  it.live("sends a running tool's live output as log messages, and as progress when asked", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.registerScoped(
        defineTool({
          id: "ticker",
          description: "Emits three lines while it runs.",
          parameters: Schema.Struct({}),
          execute: (_args, ctx) =>
            Effect.gen(function* () {
              for (const n of [1, 2, 3]) yield* ctx.emit(`tick ${n}\n`)
              return { title: "ticker", output: "", streamed: true }
            })
        })
      )
      const logged: Array<unknown> = []
      yield* withServedClient(
        (client) =>
          Effect.gen(function* () {
            const progress: Array<number> = []
            const result = yield* Effect.promise(() =>
              client.callTool({ name: "ticker", arguments: {} }, undefined, {
                onprogress: (p) => progress.push(p.progress)
              })
            )
            expect(textOf(result)).toBe("tick 1\ntick 2\ntick 3\n")
            expect(logged).toEqual(["tick 1\n", "tick 2\n", "tick 3\n"])
            // Progress counts the characters sent so far.
            expect(progress).toEqual([7, 14, 21])
          }),
        (client) => {
          client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
            logged.push(n.params.data)
          })
        }
      )
    }).pipe(Effect.provide(Layer.fresh(testToolSystem({ root: NodeOs.tmpdir() }))))
  )

  it.live("announces tools/list_changed when the registry changes", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      let changed = 0
      yield* withServedClient(
        (client) =>
          Effect.gen(function* () {
            const before = yield* Effect.promise(() => client.listTools())
            yield* registry.registerScoped(
              defineTool({
                id: "late_tool",
                description: "Registered after the client connected.",
                parameters: Schema.Struct({}),
                execute: () => Effect.succeed({ title: "late", output: "late" })
              })
            )
            for (let i = 0; i < 100 && changed === 0; i++) yield* Effect.sleep("20 millis")
            expect(changed).toBeGreaterThan(0)
            const after = yield* Effect.promise(() => client.listTools())
            expect(after.tools.length).toBe(before.tools.length + 1)
            expect(after.tools.map((t) => t.name)).toContain("late_tool")
          }),
        (client) => {
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
            changed++
          })
        }
      )
    }).pipe(Effect.provide(Layer.fresh(testToolSystem({ root: NodeOs.tmpdir() }))))
  )
})
