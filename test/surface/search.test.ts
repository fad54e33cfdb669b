import { describe, expect, it } from "@effect/vitest"
import { rankTools, selectNames } from "../../src/surface/search.ts"

const tools = [
  { id: "read", description: "Read a text file as numbered lines." },
  { id: "mcp__github__create_issue", description: "Create a new issue in a GitHub repository." },
  { id: "mcp__github__list_issues", description: "List issues in a GitHub repository with filtering options." },
  { id: "mcp__playwright__browser_take_screenshot", description: "Take a screenshot of the current page." },
  { id: "webfetch", description: "Fetch an http(s) URL and return it as markdown." }
]

describe("selectNames", () => {
  it("reads select:a,b (trimmed, any case of the prefix); anything else is a ranked query", () => {
    expect(selectNames("select:read, mcp__github__create_issue")).toEqual(["read", "mcp__github__create_issue"])
    expect(selectNames("  SELECT:a,,b ")).toEqual(["a", "b"])
    expect(selectNames("select:")).toEqual([])
    expect(selectNames("please select: a")).toBeUndefined()
  })
})

describe("rankTools", () => {
  it("ranks name words above description words, keeps ties in the given order", () => {
    expect(rankTools("create issue", tools, 5).map((t) => t.id)).toEqual([
      "mcp__github__create_issue",
      "mcp__github__list_issues"
    ])
    expect(rankTools("screenshot", tools, 5).map((t) => t.id)).toEqual(["mcp__playwright__browser_take_screenshot"])
    expect(rankTools("github", tools, 1).map((t) => t.id)).toEqual(["mcp__github__create_issue"])
  })

  it("an exact (unprefixed) name wins; a query of no words finds nothing", () => {
    expect(rankTools("list_issues", tools, 5)[0]!.id).toBe("mcp__github__list_issues")
    expect(rankTools("url markdown", tools, 5).map((t) => t.id)).toEqual(["webfetch"])
    expect(rankTools("  ,, ", tools, 5)).toEqual([])
    expect(rankTools("zebra", tools, 5)).toEqual([])
  })
})
