/** `--surface deferred|shell` through the real CLI: `call`, `run` and `mcp` as child processes. */
import { execFile } from "node:child_process"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { trust } from "../../src/config/trust.ts"
import { mcpClient, cli as run } from "../support/cli-surface.ts"
import { makeProject, REPO, runProcess } from "./helpers.ts"

const project = makeProject()
afterAll(project.cleanup)
const catalogue = makeProject({
  "freecode.json": JSON.stringify({
    mcpServers: {
      cat: { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/catalogue.ts"), "60"] }
    }
  })
})
afterAll(catalogue.cleanup)
// Its own MCP server starts only in a trusted folder: recorded as `freecode-tools trust` does,
// in the test run's own state folder (which the CLI processes inherit).
beforeAll(() => Effect.runPromise(trust(catalogue.root)))

/** The CLI with extra environment variables. */
const cliWithEnv = (env: Record<string, string>, ...args: Array<string>) =>
  Effect.promise(
    () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [NodePath.join(REPO, "src/cli/main.ts"), ...args],
          { env: { ...process.env, ...env } },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
        )
      )
  )
const cli = (...args: Array<string>) => run(args)

describe.concurrent("--surface", () => {
  it.live(
    "call: tool_search and tool_call under deferred; anything but bash and output is refused under shell",
    () =>
      Effect.gen(function* () {
        const search = yield* cli(
          "call",
          "tool_search",
          '{"query":"select:grep"}',
          "--surface",
          "deferred",
          "--json",
          "--root",
          project.root
        )
        expect(search.code).toBe(0)
        const found = JSON.parse(search.stdout)
        expect(found).toMatchObject({ tool: "tool_search", status: "ok", metadata: { matches: ["grep"] } })
        expect(found.modelOutput).toContain('"name":"grep"')

        const bridged = yield* cli(
          "call",
          "tool_call",
          '{"name":"grep","arguments":{"pattern":"small"}}',
          "--surface",
          "deferred",
          "--root",
          project.root
        )
        expect(bridged.code).toBe(0)
        expect(bridged.stdout).toContain("README.md")

        const shell = yield* cli(
          "call",
          "read",
          '{"filePath":"README.md"}',
          "--surface",
          "shell",
          "--root",
          project.root
        )
        expect(shell.code).toBe(1)
        expect(shell.stdout).toContain("Only bash and output are available here")
        expect(shell.stderr).toBe("status: error\n")
      }),
    120_000
  )

  it.live(
    "run: a search turn, then a bridged call turn, in one session",
    () =>
      Effect.gen(function* () {
        const turns = [
          JSON.stringify([{ id: "s1", name: "tool_search", args: { query: "find files by glob" } }]),
          JSON.stringify([{ id: "s2", name: "tool_call", args: { name: "glob", arguments: { pattern: "**/*.ts" } } }])
        ].join("\n")
        const r = yield* Effect.promise(() =>
          runProcess(["run", "--surface", "deferred", "--root", project.root], `${turns}\n`)
        )
        expect(r.code).toBe(0)
        const [search, call] = r.stdout
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l))
        expect(search.metadata.matches[0]).toBe("glob")
        expect(call).toMatchObject({ id: "s2", tool: "glob", status: "ok" })
        expect(call.modelOutput).toContain("src/main.ts")
      }),
    120_000
  )

  it.live(
    "mcp: an MCP client sees the deferred surface and reaches a deferred tool through tool_call",
    () =>
      Effect.gen(function* () {
        const client = yield* mcpClient(["--surface", "deferred", "--root", project.root])
        const listed = yield* Effect.promise(() => client.listTools())
        expect(listed.tools.map((t) => t.name)).toEqual(["bash", "read", "tool_search", "tool_call"])
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "tool_call", arguments: { name: "ls", arguments: {} } })
        )
        expect(result.isError).toBeUndefined()
        const text = (result.content as Array<{ type: string; text: string }>)[0]!.text
        expect(text).toContain("README.md")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "mcp with expand: a search announces list_changed and the found tools join the session's tools/list",
    () =>
      Effect.gen(function* () {
        let changed = 0
        const client = yield* mcpClient(
          ["--surface", "deferred", "--strategy", "expand", "--root", project.root],
          (c) =>
            c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
              changed++
            })
        )
        const before = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
        expect(before).not.toContain("write")
        const found = yield* Effect.promise(() =>
          client.callTool({ name: "tool_search", arguments: { query: "select:write" } })
        )
        expect(found.isError).toBeUndefined()
        // The notification travels after the result; give it a moment.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        expect(changed).toBeGreaterThan(0)
        const after = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
        expect(after).toContain("write")
        expect(after.slice(0, before.length)).toEqual(before)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "tools: MCP tools over FREECODE_AUTO_DEFER_TOKENS are deferred, and the CLI says so; 0 turns it off",
    () =>
      Effect.gen(function* () {
        const text = yield* cli("tools", "--root", catalogue.root)
        expect(text.code).toBe(0)
        expect(text.stdout).toMatch(
          /\nMCP tools deferred automatically: declaring every tool would cost \d+ tokens, over FREECODE_AUTO_DEFER_TOKENS=10000; the 60 MCP tools are found through tool_search\.\n/
        )
        const listed = JSON.parse((yield* cli("tools", "--json", "--root", catalogue.root)).stdout)
        expect(listed.autoDeferred).toMatchObject({ threshold: 10000, deferred: 60 })
        expect(listed.tools.map((t: { name: string }) => t.name)).toContain("tool_search")
        expect(listed.searchable).toHaveLength(60)

        const off = yield* cliWithEnv({ FREECODE_AUTO_DEFER_TOKENS: "0" }, "tools", "--json", "--root", catalogue.root)
        const all = JSON.parse(off.stdout)
        expect(all.autoDeferred).toBeUndefined()
        expect(all.tools.filter((t: { name: string }) => t.name.startsWith("mcp__cat__"))).toHaveLength(60)

        // call and run say so on stderr, keeping stdout the result.
        const called = yield* cli(
          "call",
          "tool_search",
          '{"query":"select:mcp__cat__desktopcommander_list_directory"}',
          "--root",
          catalogue.root
        )
        expect(called.code).toBe(0)
        expect(called.stderr).toMatch(
          /^freecode-tools: MCP tools deferred automatically: declaring every tool would cost \d+ tokens, over FREECODE_AUTO_DEFER_TOKENS=10000; the 60 MCP tools are found through tool_search\.\n$/
        )
        expect(called.stdout).toContain('"name":"mcp__cat__desktopcommander_list_directory"')
        const quiet = yield* cliWithEnv(
          { FREECODE_AUTO_DEFER_TOKENS: "0" },
          "call",
          "ls",
          "{}",
          "--root",
          catalogue.root
        )
        expect(quiet).toMatchObject({ code: 0, stderr: "" })

        const bad = yield* cliWithEnv({ FREECODE_AUTO_DEFER_TOKENS: "lots" }, "tools", "--root", project.root)
        expect(bad.code).toBe(2)
        expect(bad.stderr).toContain("FREECODE_AUTO_DEFER_TOKENS must be a whole number")
      }),
    300_000
  )

  it.live(
    "mcp: says on stderr, once its servers have connected, that their tools were deferred; tools/list has tool_search",
    () =>
      Effect.gen(function* () {
        let stderr = ""
        // The MCP client starts the server with a minimal environment (not the test's state
        // folder), so the folder is trusted for this run with the flag.
        const client = yield* mcpClient(["--root", catalogue.root, "--trust"], (_, transport) =>
          transport.stderr?.on("data", (chunk: Buffer) => {
            stderr += chunk.toString()
          })
        )
        // The first line says it is serving; the next, once the servers connected, what was deferred.
        for (let i = 0; i < 600 && !stderr.includes("deferred"); i++) yield* Effect.sleep("100 millis")
        expect(stderr).toMatch(
          /^freecode-tools mcp: serving \d+ tools for .* over stdio(?:; sandbox: [^\n]*)?\nfreecode-tools: MCP tools deferred automatically: declaring every tool would cost \d+ tokens, over FREECODE_AUTO_DEFER_TOKENS=10000; the 60 MCP tools are found through tool_search\.\n/
        )
        const names = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
        expect(names).toContain("tool_search")
        expect(names.some((n) => n.startsWith("mcp__cat__"))).toBe(false)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "--model: a patch-trained model gets apply_patch and not edit, in its provider's dialect",
    () =>
      Effect.gen(function* () {
        const gpt = JSON.parse((yield* cli("tools", "--json", "--model", "gpt-5", "--root", project.root)).stdout)
        const names = gpt.tools.map((t: { name: string }) => t.name)
        expect(names).toContain("apply_patch")
        expect(names).not.toContain("edit")
        const param = JSON.parse(
          (yield* cli("tools", "--json", "--model", "gpt-5", "--provider", "anthropic", "--root", project.root)).stdout
        )
        // --provider wins over the model's dialect, and prints the exact parameter.
        expect(param.map((t: { name: string }) => t.name)).toEqual(names)
        expect(param[0]).toHaveProperty("input_schema")
        const claude = yield* cli("tools", "--model", "claude-sonnet-4-5", "--root", project.root)
        expect(claude.stdout).toContain("declaration shape: anthropic's tools parameter entry")
        expect(claude.stdout).toMatch(/\nedit +\d+/)
        expect(claude.stdout).not.toMatch(/\napply_patch +\d+/)
      }),
    180_000
  )

  it.live(
    "--strategy expand and --core: what is always declared, and whether tool_call is",
    () =>
      Effect.gen(function* () {
        const expand = JSON.parse(
          (yield* cli(
            "tools",
            "--json",
            "--surface",
            "deferred",
            "--strategy",
            "expand",
            "--core",
            "read, grep",
            "--root",
            project.root
          )).stdout
        )
        expect(expand).toMatchObject({ surface: "deferred", strategy: "expand" })
        expect(expand.tools.map((t: { name: string }) => t.name)).toEqual(["grep", "read", "tool_search"])
        const bare = JSON.parse(
          (yield* cli("tools", "--json", "--surface", "deferred", "--core", "", "--root", project.root)).stdout
        )
        expect(bare.tools.map((t: { name: string }) => t.name)).toEqual(["tool_search", "tool_call"])
        expect(bare.totalTokens).toBeLessThan(250)
      }),
    180_000
  )
})
