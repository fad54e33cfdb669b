/** The README's examples run as written. */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

const node = (args: ReadonlyArray<string>) =>
  execFileSync(process.execPath, args, { cwd: process.cwd(), encoding: "utf8" })

/** The README's embedding example, exactly as printed, importing the package from this checkout. */
const readmeEmbedding = (): string => {
  const readme = readFileSync("README.md", "utf8")
  const section = readme.slice(readme.indexOf("## Embedding it"))
  const block = section.match(/```ts\n([\s\S]*?)```/)
  if (block === null) throw new Error("README.md has no ts block under 'Embedding it'")
  return block[1]!.replace(/from "freecode-tools"/g, 'from "./src/index.ts"')
}

describe("README examples", () => {
  it("the README's embedding example runs as printed: one model turn becomes history entries", () => {
    const code = `${readmeEmbedding()}\nconsole.log(JSON.stringify(history))\n`
    const out = node(["--input-type=module-typescript", "-e", code])
    const history = JSON.parse(out.trim().split("\n").pop()!)
    expect(history).toHaveLength(2)
    expect(history[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: false })
    expect(history[0].content).toContain("README.md")
    expect(history[1]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_2", is_error: false })
    expect(history[1].content).toMatch(/README\.md:\d+:/)
  }, 120_000)

  it("examples/embed.ts declares the tools and turns one model turn into history entries", () => {
    const lines = node(["examples/embed.ts", process.cwd()]).trim().split("\n")
    expect(lines[0]).toMatch(/^\d+ tools declared$/)
    const [glob, grep] = lines.slice(1).map((l) => JSON.parse(l))
    expect(glob).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: false })
    expect(glob.content).toContain("README.md")
    expect(grep).toMatchObject({ tool_use_id: "toolu_2", is_error: false })
    expect(grep.content).toMatch(/README\.md:\d+:/)
  }, 120_000)

  it("examples/turns.jsonl runs as a session: every call ok, the last turn reads back an earlier result", () => {
    const results = node(["src/cli/main.ts", "run", "examples/turns.jsonl"])
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ["t1_glob", "ok"],
      ["t1_grep", "ok"],
      ["t2_read", "ok"],
      ["t3_ls", "ok"],
      ["t3_typo", "ok"],
      ["t4_output", "ok"]
    ])
    expect(results[4].tool).toBe("grep")
    expect(results[5].modelOutput).toContain("output of grep call t1_grep")
    expect(results[5].modelOutput).toContain("src/tools/read.ts")
  }, 120_000)
})

describe("the README's main command", () => {
  it("`npx freecode-tools mcp` from the project folder serves the tools over stdio (the built bin)", async () => {
    const client = new Client({ name: "readme", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: "npx",
        args: ["--no-install", "freecode-tools", "mcp"],
        cwd: process.cwd(),
        env: { ...getDefaultEnvironment(), PATH: process.env.PATH ?? "" },
        stderr: "pipe"
      })
    )
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(["read", "grep", "bash", "edit"]))
      const read = await client.callTool({ name: "read", arguments: { filePath: "package.json", limit: 2 } })
      expect(read.isError).toBeUndefined()
      expect(JSON.stringify(read.content)).toContain('\\"name\\": \\"freecode-tools\\"')
    } finally {
      await client.close()
    }
  }, 120_000)
})

describe("docs/writing-a-tool.md", () => {
  it("the walkthrough's tool file works as printed, through the one execution path", () => {
    const doc = readFileSync("docs/writing-a-tool.md", "utf8")
    const file = doc.match(/```ts\n([\s\S]*?)```/)![1]!
    const code = `${file.replaceAll('"../', '"./src/')}
import { testToolSystem } from "./layers/test.ts"
import { Orchestrator } from "./src/orchestrator/orchestrator.ts"
const results = await Effect.runPromise(
  Orchestrator.use((o) =>
    o.executeBatch(
      [
        { id: "c1", name: "wc", args: { filePath: "package.json" } },
        { id: "c2", name: "WC", args: { filePath: "nope.txt" } },
        { id: "c3", name: "wc", args: {} }
      ],
      { sessionId: "s" }
    )
  ).pipe(Effect.provide(testToolSystem({ root: process.cwd(), tools: [WcTool] })))
)
console.log(JSON.stringify(results))
`
    const results = JSON.parse(node(["--input-type=module-typescript", "-e", code]).trim().split("\n").pop()!)
    const text = readFileSync("package.json", "utf8")
    expect(results[0]).toMatchObject({ tool: "wc", status: "ok", title: "wc package.json" })
    expect(results[0].modelOutput).toBe(
      `${text.split("\n").length} lines, ${text.split(/\s+/).filter(Boolean).length} words, ${text.length} chars`
    )
    expect(results[1]).toMatchObject({
      status: "error",
      modelOutput: "Cannot read nope.txt. Check the path with ls or glob."
    })
    expect(results[2]).toMatchObject({ status: "error", error: { tag: "InvalidArguments" } })
  }, 120_000)
})
