/** Rule strings: what validateRule says about a rule that would not do what it looks like, and matching a program by any path. */
import { describe, expect, it } from "@effect/vitest"
import { matchesCommand, matchesCommandAnyPath, validateRule } from "../../src/permission/rules.ts"

const TOOLS = ["bash", "read", "write", "edit", "grep", "glob", "webfetch"]

describe("validateRule", () => {
  it("accepts the rules the docs show", () => {
    for (const r of [
      "Bash(npm run test:*)",
      "Bash(git status:*)",
      "Read(./secrets/**)",
      "Edit(src/**)",
      "WebFetch(domain:x.org)"
    ])
      expect(validateRule(r, TOOLS)).toBeUndefined()
    for (const r of ["mcp__github__*", "mcp__github", "Bash", "bash(ls *)", "grep(src/**)", "*"])
      expect(validateRule(r, TOOLS)).toBeUndefined()
  })

  it("a tool name that names nothing is an error with what was meant", () => {
    expect(validateRule("Bsh(rm:*)", TOOLS)).toMatch(/no tool is named Bsh.*Did you mean Bash\?/)
    expect(validateRule("Raed(./x)", TOOLS)).toMatch(/Did you mean Read\?/)
    expect(validateRule("Frobnicate(x)", TOOLS)).not.toMatch(/Did you mean/)
    expect(validateRule("Frobnicate(x)", TOOLS)).toMatch(/no tool is named Frobnicate/)
    // Without the list of tools only the shape is checked.
    expect(validateRule("Bsh(rm:*)")).toBeUndefined()
  })

  it("a space around :* is an error that shows the rule meant", () => {
    expect(validateRule("Bash(rm: *)", TOOLS)).toMatch(/Did you mean Bash\(rm:\*\)\?/)
    expect(validateRule("Bash(git push :*)", TOOLS)).toMatch(/Did you mean Bash\(git push:\*\)\?/)
    expect(validateRule("Bash(rm:* -rf)", TOOLS)).toMatch(/only allowed at the end/)
  })

  it("a string that is not a rule says what a rule looks like", () => {
    expect(validateRule("Bash(", TOOLS)).toMatch(/is not a rule/)
    expect(validateRule("Bash()", TOOLS)).toMatch(/empty parentheses/)
  })
})

describe("a program named by path", () => {
  const rm = { words: ["/bin/rm"], prefix: true }
  const bare = { words: ["rm"], prefix: true }
  it("deny and ask rules match it by any path, and only that program", () => {
    for (const words of [["rm", "x"], ["/usr/bin/rm", "x"], ["/bin/rm"], ["./rm", "-rf", "/"]])
      expect([matchesCommandAnyPath(rm, words), matchesCommandAnyPath(bare, words)]).toEqual([true, true])
    for (const words of [["rmdir", "x"], ["/bin/rmx"], ["ls", "rm"]])
      expect(matchesCommandAnyPath(rm, words)).toBe(false)
    expect(matchesCommandAnyPath({ words: ["/bin/git", "push"], prefix: true }, ["git", "push", "-f"])).toBe(true)
    expect(matchesCommandAnyPath({ words: ["/bin/git", "push"], prefix: true }, ["git", "pull"])).toBe(false)
  })
  it("allow rules compare the words exactly (a path never borrows a bare rule)", () => {
    expect(matchesCommand({ words: ["ls"], prefix: true }, ["./evil/ls"])).toBe(false)
    expect(matchesCommand({ words: ["ls"], prefix: true }, ["lsof"])).toBe(false)
  })
})
