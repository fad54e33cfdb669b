/** The README's examples run as written. */
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"

const node = (args: ReadonlyArray<string>) =>
  execFileSync(process.execPath, args, { cwd: process.cwd(), encoding: "utf8" })

describe("README examples", () => {
  it("examples/embed.ts declares the tools and turns one model turn into history entries", () => {
    const lines = node(["examples/embed.ts", process.cwd()]).trim().split("\n")
    expect(lines[0]).toMatch(/^\d+ tools declared$/)
    const [glob, grep] = lines.slice(1).map((l) => JSON.parse(l))
    expect(glob).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: false })
    expect(glob.content).toContain("README.md")
    expect(grep).toMatchObject({ tool_use_id: "toolu_2", is_error: false })
    expect(grep.content).toMatch(/README\.md:\d+:/)
  })

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
  })
})
