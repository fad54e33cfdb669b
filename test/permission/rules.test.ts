/** Matching a shell rule's program by any path (deny and ask rules), and exactly (allow rules). */
import { describe, expect, it } from "@effect/vitest"
import { matchesCommand, matchesCommandAnyPath } from "../../src/permission/rules.ts"

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
