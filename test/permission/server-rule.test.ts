/** The `server:` specifier of `read_mcp_resource` rules: which MCP servers' resources a rule names. */
import { describe, expect, it } from "vitest"
import { kindOf, matchesServer, namesTool, parseRule } from "../../src/permission/rules.ts"

describe("server: rules", () => {
  it("names one server exactly, or a glob of them; nothing without the server: prefix", () => {
    expect(matchesServer("server:docs", "docs")).toBe(true)
    expect(matchesServer("server:docs", "docs2")).toBe(false)
    expect(matchesServer("server:docs", "my-docs")).toBe(false)
    expect(matchesServer("server:doc*", "docs2")).toBe(true)
    expect(matchesServer("server:*", "anything")).toBe(true)
    // Regular-expression characters in a name are plain characters.
    expect(matchesServer("server:a.b", "axb")).toBe(false)
    expect(matchesServer("docs", "docs")).toBe(false)
    expect(matchesServer("domain:docs", "docs")).toBe(false)
  })

  it("a tool declaring mcp.resource is of the resource kind, and the rule names it", () => {
    const tool = { id: "read_mcp_resource", operations: ["mcp.resource" as const] }
    expect(kindOf(tool)).toBe("resource")
    const rule = parseRule("Read_MCP_Resource(server:docs)")
    expect(typeof rule).not.toBe("string")
    if (typeof rule === "string") return
    expect(rule.specifier).toBe("server:docs")
    expect(namesTool(rule, tool)).toBe(true)
    // The Read family names file tools only: it does not reach resources.
    const read = parseRule("Read")
    if (typeof read === "string") return
    expect(namesTool(read, tool)).toBe(false)
  })
})
