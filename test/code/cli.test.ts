/** `--surface code` through the real CLI as child processes: `tools`, `call`, `run` and `mcp`. */
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { trust } from "../../src/config/trust.ts"
import { makeProject, REPO } from "../cli/helpers.ts"
import { cli, mcpClient } from "../support/cli-surface.ts"

const project = makeProject({ "notes.txt": "alpha\nbeta\n" })
afterAll(project.cleanup)
// A project whose own MCP server (the fixture) connects after the tools are registered; its folder
// is trusted as `freecode-tools trust` does, in the test run's state folder.
const withServer = makeProject({
  "freecode.json": JSON.stringify({
    mcpServers: { fx: { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/server.ts")] } }
  })
})
afterAll(withServer.cleanup)
beforeAll(() => Effect.runPromise(trust(withServer.root)))

const PROGRAM =
  'const r = await tools.read({ filePath: "notes.txt" }); return r.output.includes("beta") ? "found" : "missing"'

describe.concurrent("--surface code", () => {
  it.live(
    "tools --json lists the program tool, whose only required parameter is the program string",
    () =>
      Effect.gen(function* () {
        const r = yield* cli(["tools", "--surface", "code", "--json", "--root", project.root])
        expect(r.code).toBe(0)
        const listed = JSON.parse(r.stdout) as { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> }
        const code = listed.tools.find((t) => t.name === "code")!
        expect(listed.tools.map((t) => t.name)).toEqual(["code", "output"])
        expect(code.inputSchema.required).toEqual(["program"])
        expect((code.inputSchema.properties as Record<string, { type: string }>).program!.type).toBe("string")
        const plain = yield* cli(["tools", "--surface", "code", "--root", project.root])
        expect(plain.stdout).toMatch(/code\s+\d+\s+\d+/)
        expect(plain.stdout).toMatch(/total\s+\d+\s+\d+/)
      }),
    120_000
  )

  it.live(
    "tools: the program tool's typed API lists the project's MCP tools, which connect after it is registered",
    () =>
      Effect.gen(function* () {
        const r = yield* cli(["tools", "--surface", "code", "--json", "--root", withServer.root])
        expect(r.code).toBe(0)
        const listed = JSON.parse(r.stdout) as { tools: Array<{ name: string; description: string }> }
        expect(listed.tools.find((t) => t.name === "code")!.description).toContain("mcp__fx__tree_sum(args:")
      }),
    120_000
  )

  it.live(
    "call code runs a program; a direct call of another tool is refused with what to do instead",
    () =>
      Effect.gen(function* () {
        const ok = yield* cli([
          "call",
          "code",
          JSON.stringify({ program: PROGRAM }),
          "--surface",
          "code",
          "--root",
          project.root
        ])
        expect(ok.code).toBe(0)
        expect(ok.stdout).toContain("found")
        const refused = yield* cli([
          "call",
          "read",
          '{"filePath":"notes.txt"}',
          "--surface",
          "code",
          "--root",
          project.root
        ])
        expect(refused.code).not.toBe(0)
        expect(refused.stdout + refused.stderr).toContain("Only code and output are available here")
      }),
    120_000
  )

  it.live(
    "run: a program turn, and a nested call's full output is readable through output by its own id",
    () =>
      Effect.gen(function* () {
        const turns = [
          JSON.stringify([
            { id: "p1", name: "code", args: { program: 'await tools.read({ filePath: "notes.txt" })' } }
          ]),
          JSON.stringify([{ id: "o1", name: "output", args: { id: "p1.1" } }])
        ].join("\n")
        const r = yield* cli(["run", "--surface", "code", "--root", project.root], `${turns}\n`)
        expect(r.code).toBe(0)
        const [program, output] = r.stdout
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l))
        expect(program).toMatchObject({ id: "p1", tool: "code", status: "ok" })
        expect(program.modelOutput).not.toContain("alpha")
        expect(output).toMatchObject({ id: "o1", tool: "output", status: "ok" })
        expect(output.modelOutput).toContain("alpha")
      }),
    120_000
  )

  it.live(
    "mcp: a client lists code and output, and runs a program",
    () =>
      Effect.gen(function* () {
        const client = yield* mcpClient(["--surface", "code", "--root", project.root])
        const listed = yield* Effect.promise(() => client.listTools())
        expect(listed.tools.map((t) => t.name)).toEqual(["code", "output"])
        expect(listed.tools[0]!.inputSchema.required).toEqual(["program"])
        const result = yield* Effect.promise(() => client.callTool({ name: "code", arguments: { program: PROGRAM } }))
        expect(result.isError).toBeUndefined()
        expect((result.content as Array<{ type: string; text: string }>)[0]!.text).toContain("found")
      }).pipe(Effect.scoped),
    120_000
  )
})
