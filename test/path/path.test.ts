import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { displayDir, displayPath, isInside, relativeInside, resolvePath } from "../../src/path/path.ts"
import { similarNames } from "../../src/path/similar-names.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { ReadTool } from "../../src/tools/read.ts"

describe("paths", () => {
  it("resolves against the root, keeps absolute paths, does not expand ~", () => {
    expect(resolvePath("/proj", "src/a.ts")).toBe("/proj/src/a.ts")
    expect(resolvePath("/proj", "./src/../b.ts")).toBe("/proj/b.ts")
    expect(resolvePath("/proj", "/etc/hosts")).toBe("/etc/hosts")
    expect(resolvePath("/proj", "~/notes")).toBe("/proj/~/notes")
  })

  it("renders paths relative to the root inside it, absolute outside", () => {
    expect(displayPath("/proj", "/proj/src/a.ts")).toBe("src/a.ts")
    expect(displayPath("/proj", "/proj")).toBe(".")
    expect(displayPath("/proj", "/project2/x")).toBe("/project2/x")
    expect(displayPath("/proj", "/etc/hosts")).toBe("/etc/hosts")
    expect(displayDir("/proj", "/proj")).toBe("./")
    expect(displayDir("/proj", "/proj/src")).toBe("src/")
  })

  it("relativeInside agrees with path.relative, prefix look-alikes and unclean paths included", () => {
    const slow = (dir: string, abs: string) => {
      const rel = NodePath.relative(dir, abs)
      return rel.startsWith("..") || NodePath.isAbsolute(rel) ? undefined : rel
    }
    const cases: Array<readonly [string, string]> = [
      ["/a/b", "/a/b/c.ts"],
      ["/a/b", "/a/b"],
      ["/a/b", "/a/bc/d.ts"],
      ["/a/b", "/a"],
      ["/", "/etc/hosts"],
      ["/a/b/", "/a/b/c"],
      ["/a/b", "/a/b/../c"],
      ["/a/./b", "/a/b/c"],
      ["/a/b", "/a/b//c"],
      ["/a/b", "/x/y"]
    ]
    for (const [dir, abs] of cases) {
      expect(relativeInside(dir, abs), `${dir} ~ ${abs}`).toBe(slow(dir, abs))
      expect(isInside(dir, abs), `${dir} ~ ${abs}`).toBe(slow(dir, abs) !== undefined)
    }
  })

  it("finds similar names: case, extension, containment, small edits; best first", () => {
    const names = ["Readme.md", "readme.txt", "index.ts", "index.test.ts", "indx.ts", "zebra.go"]
    expect(similarNames("README.md", names)).toEqual(["Readme.md", "readme.txt"])
    expect(similarNames("index.js", names)).toEqual(["index.ts", "index.test.ts", "indx.ts"])
    expect(similarNames("nothing-like-it.rs", names)).toEqual([])
  })
})

describe("tool declarations", () => {
  const tools = [ReadTool, LsTool, GlobTool, GrepTool]

  it("describe every parameter, and keep descriptions short", () => {
    for (const tool of tools) {
      const sentences = tool.description.split(/(?<=\.)\s+/).length
      expect(sentences, tool.id).toBeLessThanOrEqual(4)
      expect(tool.description.length, tool.id).toBeLessThan(400)
      expect(tool.inputSchema.additionalProperties, tool.id).toBe(false)
      for (const [name, schema] of Object.entries(tool.inputSchema.properties)) {
        expect(typeof schema.description, `${tool.id}.${name}`).toBe("string")
        expect(JSON.stringify(schema), `${tool.id}.${name}`).not.toMatch(/null|NaN/)
      }
    }
  })

  it("derive the JSON Schema the model sees", () => {
    expect(ReadTool.inputSchema.required).toEqual(["filePath"])
    expect(ReadTool.inputSchema.properties.offset).toMatchObject({ type: "integer" })
    expect(GrepTool.inputSchema.properties.head_limit).toMatchObject({ type: "integer" })
    expect(LsTool.inputSchema.properties.ignore).toMatchObject({ type: "array", items: { type: "string" } })
    expect(GlobTool.inputSchema.required).toEqual(["pattern"])
  })
})
