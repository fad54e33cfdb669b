/**
 * What a client is told about a tool agrees with what the `read-only` profile serves: both come
 * from changesNothing, and a tool that writes session state (memory, todowrite) is in neither.
 */
import { describe, expect, it } from "vitest"
import { toMcpTool } from "../../src/mcp/tool-wire.ts"
import { changesNothing } from "../../src/tool/read-only.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { builtinTools } from "../../src/tools/index.ts"
import { runProcess } from "../cli/helpers.ts"

// toMcpTool reads only the declaration; the tools' requirements do not matter here.
const byId = new Map(builtinTools.map((t) => [t.id, t as unknown as Tool]))

describe("read-only, to a client and to a profile", () => {
  it("memory and todowrite, which write, are not read-only; the file readers are", () => {
    for (const id of ["memory", "todowrite", "edit", "write", "bash", "apply_patch"]) {
      const tool = byId.get(id)!
      expect(toMcpTool(tool).annotations, id).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    }
    for (const id of ["read", "grep", "glob", "ls", "output"]) {
      expect(toMcpTool(byId.get(id)!).annotations, id).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    }
  })

  it("--profile read-only serves exactly the available tools whose readOnlyHint is true", async () => {
    const all = await runProcess(["tools", "--json"])
    const readOnly = await runProcess(["tools", "--json", "--profile", "read-only"])
    expect(readOnly.code).toBe(0)
    const ids = (out: string) =>
      (JSON.parse(out) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name).sort()
    const served = ids(readOnly.stdout)
    expect(served).not.toContain("memory")
    expect(served).not.toContain("todowrite")
    expect(served).toEqual(ids(all.stdout).filter((id) => changesNothing(byId.get(id)!)))
  })
})
