/** `freecode-tools tools`, run as a real child process. */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { countTokens, TOKEN_RULE } from "../../src/cli/estimate.ts"
import { makeProject, runProcess } from "./helpers.ts"

const project = makeProject()
afterAll(project.cleanup)
const cli = (...args: Array<string>) => Effect.promise(() => runProcess(args))

interface Listed {
  readonly tools: ReadonlyArray<{
    readonly name: string
    readonly description: string
    readonly inputSchema: unknown
    readonly chars: number
    readonly tokens: number
    readonly concurrencySafe: boolean
    readonly mutates: boolean
    readonly retrySafe: boolean
    readonly operations: ReadonlyArray<string>
  }>
  readonly totalChars: number
  readonly totalTokens: number
  readonly searchable: ReadonlyArray<string>
}

describe.concurrent("tools", () => {
  it.live(
    "openai-strict: the bridge's tool_call is sent with strict false, so its arguments stay an open map",
    () =>
      Effect.gen(function* () {
        const r = yield* cli(
          "tools",
          "--json",
          "--root",
          project.root,
          "--surface",
          "deferred",
          "--provider",
          "openai-strict"
        )
        expect(r.code).toBe(0)
        const payload = JSON.parse(r.stdout) as ReadonlyArray<{
          function: { name: string; strict: boolean; parameters: { properties: Record<string, unknown> } }
        }>
        const call = payload.find((t) => t.function.name === "tool_call")!.function
        expect(call.strict).toBe(false)
        expect(call.parameters.properties.arguments).toEqual({
          type: "object",
          description: "Its arguments, per its schema."
        })
        // The tools that can be strict still are.
        expect(payload.find((t) => t.function.name === "read")!.function.strict).toBe(true)
      }),
    180_000
  )
  it.live(
    "a warning (a skipped skill) goes to stderr: stdout stays the JSON alone",
    () =>
      Effect.gen(function* () {
        const bad = makeProject({
          ".claude/skills/bad/SKILL.md": "---\nname: bad\ndescription: [unclosed\n---\nbody\n"
        })
        try {
          const r = yield* cli("tools", "--json", "--root", bad.root)
          expect(r.code).toBe(0)
          expect(() => JSON.parse(r.stdout)).not.toThrow()
          expect(r.stderr).toContain("skipped skill")
        } finally {
          bad.cleanup()
        }
      }),
    180_000
  )
  it.live(
    "--profile: the declared list is what the profile allows (read-only: no mutating tool), and the header says so",
    () =>
      Effect.gen(function* () {
        const all = JSON.parse((yield* cli("tools", "--json", "--root", project.root)).stdout) as Listed
        const r = yield* cli("tools", "--json", "--root", project.root, "--profile", "read-only")
        expect(r.code).toBe(0)
        const listed = JSON.parse(r.stdout) as Listed
        expect(listed.tools.length).toBeGreaterThan(0)
        expect(listed.tools.length).toBeLessThan(all.tools.length)
        for (const t of listed.tools) expect(t.mutates).toBe(false)
        expect(listed.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["read", "grep"]))
        const text = yield* cli("tools", "--root", project.root, "--profile", "read-only")
        expect(text.stdout.split("\n")[0]).toBe(
          `${listed.tools.length} tools declared at ${project.root} (surface all, profile read-only)`
        )
        const unknown = yield* cli("tools", "--root", project.root, "--profile", "nope")
        expect(unknown.code).toBe(2)
        expect(unknown.stderr).toContain('No profile named "nope"')
      }),
    180_000
  )
  it.live(
    "--json: each tool with its declaration's characters and o200k tokens, and the totals",
    () =>
      Effect.gen(function* () {
        const r = yield* cli("tools", "--json", "--root", project.root)
        expect(r.code).toBe(0)
        const listed = JSON.parse(r.stdout) as Listed
        const names = listed.tools.map((t) => t.name)
        expect(names).toEqual(expect.arrayContaining(["output", "read"]))
        for (const t of listed.tools) {
          const declaration = { name: t.name, description: t.description, inputSchema: t.inputSchema }
          expect(t.chars).toBe(JSON.stringify(declaration).length)
          expect(t.tokens).toBe(countTokens(declaration))
          expect(t.tokens).toBeGreaterThan(10)
        }
        expect(listed.totalTokens).toBe(listed.tools.reduce((n, t) => n + t.tokens, 0))
        expect(listed.totalChars).toBe(listed.tools.reduce((n, t) => n + t.chars, 0))
        expect(listed.searchable).toEqual([])
        const output = listed.tools.find((t) => t.name === "output")!
        expect(output).toMatchObject({
          concurrencySafe: true,
          mutates: false,
          retrySafe: true,
          operations: ["session.read"]
        })

        const text = yield* cli("tools", "--root", project.root)
        expect(text.code).toBe(0)
        const lines = text.stdout.split("\n")
        expect(lines[0]).toBe(`${listed.tools.length} tools declared at ${project.root} (surface all)`)
        expect(lines[1]).toContain(TOKEN_RULE)
        expect(text.stdout).toMatch(
          new RegExp(`\\noutput +${output.chars} +${output.tokens}  Read the part of an earlier tool result`)
        )
        expect(text.stdout).toMatch(new RegExp(`\\ntotal +${listed.totalChars} +${listed.totalTokens}\\n(\\n|$)`))
      }),
    240_000
  )

  it.live(
    "--surface deferred: the core, tool_search and tool_call, and what is found through the search",
    () =>
      Effect.gen(function* () {
        const r = yield* cli("tools", "--json", "--surface", "deferred", "--root", project.root)
        expect(r.code).toBe(0)
        const listed = JSON.parse(r.stdout) as Listed & { surface: string; strategy: string }
        expect(listed).toMatchObject({ surface: "deferred", strategy: "bridge" })
        expect(listed.tools.map((t) => t.name)).toEqual(["bash", "read", "tool_search", "tool_call"])
        expect(listed.searchable).toEqual(expect.arrayContaining(["edit", "grep", "output", "write"]))
        expect(listed.totalTokens).toBeLessThanOrEqual(600)

        const text = yield* cli("tools", "--surface", "deferred", "--root", project.root)
        expect(text.stdout.split("\n")[0]).toBe(
          `4 tools declared at ${project.root} (surface deferred, strategy bridge)`
        )
        expect(text.stdout).toMatch(/\nfound through tool_search \(not declared\): \d+ tools: apply_patch, edit, /)
        expect(text.stdout).toMatch(/^not available: websearch: /m)

        const shell = JSON.parse(
          (yield* cli("tools", "--json", "--surface", "shell", "--root", project.root)).stdout
        ) as Listed
        expect(shell.tools.map((t) => t.name)).toEqual(["bash", "output"])

        const gemini = yield* cli(
          "tools",
          "--surface",
          "shell",
          "--provider",
          "gemini",
          "--json",
          "--root",
          project.root
        )
        const param = JSON.parse(gemini.stdout) as ReadonlyArray<{
          functionDeclarations: ReadonlyArray<{ name: string }>
        }>
        expect(param[0]!.functionDeclarations.map((d) => d.name)).toEqual(["bash", "output"])
        // Without --json, each row is the size of that provider's own entry, and the total theirs.
        const sized = yield* cli("tools", "--surface", "shell", "--provider", "gemini", "--root", project.root)
        expect(sized.stdout).toContain("declaration shape: gemini's tools parameter entry")
        const entries = param[0]!.functionDeclarations
        for (const d of entries) {
          expect(sized.stdout).toMatch(new RegExp(`\\n${d.name} +${JSON.stringify(d).length} +${countTokens(d)}  `))
        }
        const total = entries.reduce((n, d) => n + countTokens(d), 0)
        expect(sized.stdout).toMatch(new RegExp(`\\ntotal +\\d+ +${total}\\n`))
      }),
    240_000
  )

  it.live(
    "--provider anthropic --json prints the request parameter: cache_control on the last tool only",
    () =>
      Effect.gen(function* () {
        const r = yield* cli("tools", "--provider", "anthropic", "--json", "--root", project.root)
        expect(r.code).toBe(0)
        const param = JSON.parse(r.stdout) as ReadonlyArray<Record<string, unknown>>
        expect(param.length).toBeGreaterThan(1)
        expect(param.map((t) => "cache_control" in t)).toEqual(param.map((_, i) => i === param.length - 1))
        expect(param[param.length - 1]!.cache_control).toEqual({ type: "ephemeral" })
        for (const t of param)
          expect(Object.keys(t)).toEqual(expect.arrayContaining(["name", "description", "input_schema"]))
      }),
    240_000
  )

  it.live(
    "--provider gemini --json is one functionDeclarations entry; a bad --provider is misuse",
    () =>
      Effect.gen(function* () {
        const r = yield* cli("tools", "--provider", "gemini", "--json", "--root", project.root)
        expect(r.code).toBe(0)
        const param = JSON.parse(r.stdout) as ReadonlyArray<{ functionDeclarations: ReadonlyArray<{ name: string }> }>
        expect(param).toHaveLength(1)
        expect(param[0]!.functionDeclarations.map((d) => d.name)).toContain("read")

        const bad = yield* cli("tools", "--provider", "claude")
        expect(bad.code).toBe(2)
        expect(bad.stdout).toBe("")
        expect(bad.stderr).toContain('Invalid value for flag --provider: "claude"')
      }),
    240_000
  )

  it.live(
    "says what is missing and why: websearch without a search API, an MCP server that fails to start",
    () =>
      Effect.gen(function* () {
        const broken = makeProject({
          "freecode.json": JSON.stringify({ mcpServers: { broken: { command: "/bin/false" } } })
        })
        try {
          // The folder's own MCP server starts only in a trusted folder (--trust: for this run).
          const r = yield* cli("tools", "--root", broken.root, "--trust")
          expect(r.code).toBe(0)
          expect(r.stdout).toMatch(/^not available: websearch: no search API is configured: set SEARXNG_URL/m)
          expect(r.stdout).toMatch(/^not available: mcp server broken: /m)
          const listed = JSON.parse((yield* cli("tools", "--json", "--root", broken.root, "--trust")).stdout) as {
            readonly unavailable: ReadonlyArray<{ readonly id: string; readonly reason: string }>
          }
          expect(listed.unavailable.map((u) => u.id)).toEqual(["agent", "skill", "websearch", "mcp server broken"])
        } finally {
          broken.cleanup()
        }
      }),
    240_000
  )
})
