/**
 * The shape of the source stays true. Its folders are each top-level folder of src/, src/'s own
 * files (the entry) as one more, and the compositions in the top-level layers/: no two folders
 * import each other (directly or round a longer loop), no two files of one folder either
 * (type-only imports count: a service's shape lives apart from the layers that implement it),
 * and no source file grows past 400 lines. Imports are read from the source text, so the check
 * needs no build and no dependency.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative, sep } from "node:path"
import { describe, expect, it } from "vitest"

const REPO = normalize(join(import.meta.dirname, ".."))
const SRC = join(REPO, "src")
const LAYERS = join(REPO, "layers")
const ROOTS = [SRC, LAYERS]

/** Static `import … from`, `export … from`, side-effect `import "…"` and dynamic `import("…")`. */
const IMPORT_PATTERNS: ReadonlyArray<RegExp> = [
  /^[ \t]*(?:import|export)\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s+from\s*["']([^"']+)["']/gm,
  /^[ \t]*import\s*["']([^"']+)["']/gm,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g
]

/** The module specifiers a source file imports (relative or not). */
const importsOf = (source: string): Array<string> =>
  IMPORT_PATTERNS.flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[1]!))

interface Edge {
  readonly from: string
  readonly to: string
  readonly fromFile: string
  readonly toFile: string
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))

/** Every source file: src/ and layers/. */
const allSourceFiles = (): Array<string> => ROOTS.flatMap(sourceFiles)

const isSource = (file: string): boolean => ROOTS.some((root) => file.startsWith(root + sep))

/**
 * The folder a file belongs to, named from the repository: "src/<folder>" for a top-level
 * folder of src/, "src" for a file directly in src/, "layers" for the compositions.
 */
const folderOf = (file: string): string => {
  const parts = relative(REPO, file).split(sep)
  if (parts[0] === "src") return parts.length > 2 ? `src/${parts[1]}` : "src"
  return parts[0]!
}

/** The relative imports of a source file that land in a source file, resolved. */
const targetsOf = (file: string): Array<string> =>
  importsOf(readFileSync(file, "utf8"))
    .filter((spec) => spec.startsWith("."))
    .map((spec) => normalize(join(dirname(file), spec)))
    .filter(isSource)

/** Every import from one folder into another. */
const folderEdges = (): Array<Edge> =>
  allSourceFiles().flatMap((file) =>
    targetsOf(file)
      .map((target) => ({
        from: folderOf(file),
        to: folderOf(target),
        fromFile: relative(REPO, file),
        toFile: relative(REPO, target)
      }))
      .filter((e) => e.from !== e.to)
  )

/** Every import from one file into another file of the same folder (below it too). */
const fileEdges = (): Array<Edge> =>
  allSourceFiles().flatMap((file) =>
    targetsOf(file)
      .filter((target) => folderOf(target) === folderOf(file))
      .map((target) => ({
        from: relative(REPO, file),
        to: relative(REPO, target),
        fromFile: relative(REPO, file),
        toFile: relative(REPO, target)
      }))
  )

/** The strongly connected sets of two or more folders (Tarjan), each a folder cycle. */
const folderCycles = (edges: ReadonlyArray<Pick<Edge, "from" | "to">>): Array<Array<string>> => {
  const next = new Map<string, Set<string>>()
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set())
    if (!next.has(e.to)) next.set(e.to, new Set())
    next.get(e.from)!.add(e.to)
  }
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const cycles: Array<Array<string>> = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const set: Array<string> = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      set.push(w)
    } while (w !== v)
    if (set.length > 1) cycles.push(set.sort())
  }
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v)
  return cycles
}

describe("the import reader", () => {
  it("reads every form of import and export, and nothing from prose", () => {
    const source = [
      `import { a,`,
      `  b } from "./multi-line.ts"`,
      `import type { T } from "../tool/tool.ts"`,
      `import * as NodePath from "node:path"`,
      `import Default, { c } from "./default.ts"`,
      `export { d } from "./re-export.ts"`,
      `export * from "./star.ts"`,
      `export type { E } from "./type-export.ts"`,
      `import "./side-effect.ts"`,
      `const m = await import("./dynamic.ts")`,
      ` * a comment that says import { x } from "./not-an-import.ts"`,
      `const s = "from './not-either.ts'"`
    ].join("\n")
    expect(importsOf(source).sort()).toEqual(
      [
        "./multi-line.ts",
        "../tool/tool.ts",
        "node:path",
        "./default.ts",
        "./re-export.ts",
        "./star.ts",
        "./type-export.ts",
        "./side-effect.ts",
        "./dynamic.ts"
      ].sort()
    )
  })

  it("finds a two-folder cycle and a longer loop, and no cycle in a one-way graph", () => {
    const edge = (from: string, to: string) => ({ from, to })
    expect(folderCycles([edge("a", "b"), edge("b", "a"), edge("c", "a")])).toEqual([["a", "b"]])
    expect(folderCycles([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("d", "c")])).toEqual([["a", "b", "c"]])
    expect(folderCycles([edge("a", "b"), edge("b", "c"), edge("a", "c")])).toEqual([])
  })
})

describe("src/ and layers/", () => {
  it("has no folder that imports a folder importing it back", () => {
    const edges = folderEdges()
    // The reader sees the real graph: the root module imports the tool contract, the
    // compositions import the services, and the CLI imports the compositions.
    expect(edges.some((e) => e.from === "src" && e.to === "src/tool")).toBe(true)
    expect(edges.some((e) => e.from === "layers" && e.to === "src/tools")).toBe(true)
    expect(edges.some((e) => e.from === "src/cli" && e.to === "layers")).toBe(true)
    const cycles = folderCycles(edges).map((set) => ({
      folders: set,
      imports: edges
        .filter((e) => set.includes(e.from) && set.includes(e.to))
        .map((e) => `${e.fromFile} -> ${e.toFile}`)
        .sort()
    }))
    expect(cycles).toEqual([])
  })

  it("has no cycle between the files of one folder, type-only imports included", () => {
    const edges = fileEdges()
    expect(
      edges.some((e) => e.from === "src/orchestrator/call-path.ts" && e.to === "src/orchestrator/prepare.ts")
    ).toBe(true)
    expect(edges.some((e) => e.from === "layers/live.ts" && e.to === "layers/system.ts")).toBe(true)
    expect(folderCycles(edges)).toEqual([])
  })

  it("keeps the pure helpers a leaf: path/, text/ and load/ import no other folder of src/", () => {
    const out = folderEdges().filter((e) => e.from === "src/path" || e.from === "src/text" || e.from === "src/load")
    expect(out.map((e) => `${e.fromFile} -> ${e.toFile}`)).toEqual([])
  })

  it("keeps layers/ at the top: only the entry (src/index.ts) and the CLI (src/cli/) import it", () => {
    const into = folderEdges().filter((e) => e.to === "layers" && e.from !== "src" && e.from !== "src/cli")
    expect(into.map((e) => `${e.fromFile} -> ${e.toFile}`)).toEqual([])
  })

  it("has no source file over 400 lines", () => {
    const files = allSourceFiles()
    expect(files.some((file) => file.startsWith(LAYERS + sep))).toBe(true)
    const long = files
      .map((file) => ({ file: relative(REPO, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter((f) => f.lines > 400)
    expect(long).toEqual([])
  })
})
