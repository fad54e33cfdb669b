/**
 * Imports point one way: the config folder is below every feature whose section it loads, and
 * no chain of imports leads from a feature back into it. Read from the source text, so a new
 * import that closes a cycle fails here, naming the files.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"

const SRC = NodePath.resolve(import.meta.dirname, "../../src")

/** folder -> folder it imports -> the imports that make the edge ("file -> file"). */
const folderGraph = (): Map<string, Map<string, Array<string>>> => {
  const graph = new Map<string, Map<string, Array<string>>>()
  const walk = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const file = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (entry.name.endsWith(".ts")) {
        const from = NodePath.relative(SRC, file)
        const folder = from.split(NodePath.sep)[0]!
        if (!from.includes(NodePath.sep)) continue
        const text = NodeFs.readFileSync(file, "utf8")
        for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s+["']([^"']+)["']/g)) {
          if (!m[1]!.startsWith(".")) continue
          const target = NodePath.relative(SRC, NodePath.resolve(NodePath.dirname(file), m[1]!))
          if (target.startsWith("..") || !target.includes(NodePath.sep)) continue
          const to = target.split(NodePath.sep)[0]!
          if (to === folder) continue
          const edges = graph.get(folder) ?? new Map<string, Array<string>>()
          edges.set(to, [...(edges.get(to) ?? []), `${from} -> ${target}`])
          graph.set(folder, edges)
        }
      }
    }
  }
  walk(SRC)
  return graph
}

/** Every folder reachable from `start` by imports. */
const reachable = (graph: Map<string, Map<string, Array<string>>>, start: string): Set<string> => {
  const seen = new Set<string>()
  const queue = [...(graph.get(start)?.keys() ?? [])]
  while (queue.length > 0) {
    const next = queue.pop()!
    if (seen.has(next)) continue
    seen.add(next)
    queue.push(...(graph.get(next)?.keys() ?? []))
  }
  return seen
}

describe("folder imports", () => {
  const graph = folderGraph()

  it("the graph is read: features import config, as they should", () => {
    for (const feature of ["permission", "hooks", "mcp", "lsp", "surface"]) {
      expect(graph.get(feature)?.has("config"), feature).toBe(true)
    }
  })

  it("nothing config imports leads back to config", () => {
    const below = reachable(graph, "config")
    expect(below.has("config")).toBe(false)
    for (const feature of ["permission", "hooks", "mcp", "lsp", "surface"]) {
      expect(below.has(feature), `config reaches ${feature}: ${JSON.stringify([...(graph.get("config") ?? [])])}`).toBe(
        false
      )
    }
  })

  it("no two of the folders whose config was split import each other", () => {
    const touched = ["config", "permission", "hooks", "mcp", "lsp"]
    const pairs = touched.flatMap((a) =>
      touched.flatMap((b) =>
        a < b && graph.get(a)?.has(b) && graph.get(b)?.has(a)
          ? [[...graph.get(a)!.get(b)!, ...graph.get(b)!.get(a)!]]
          : []
      )
    )
    expect(pairs).toEqual([])
  })
})
