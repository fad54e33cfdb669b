/**
 * Test helpers for the file tools: a ctx, decode-then-execute, and a fixture tree in a temp
 * directory (real files, real rg, no mocks).
 */
import { Effect, FileSystem, Result } from "effect"
import { joinPath } from "../../src/path/path.ts"
import type { ToolFailure } from "../../src/tool/errors.ts"
import type { Tool, ToolContext, ToolOutput } from "../../src/tool/tool.ts"

export const makeCtx = (root: string, options: { readonly canSeeImages?: boolean } = {}): ToolContext => ({
  sessionId: "test-session",
  callId: "test-call",
  root,
  canSeeImages: options.canSeeImages ?? false,
  emit: () => Effect.void
})

/** Decodes `args` with the tool's schema (as the orchestrator does), then executes. */
export const run = <R>(tool: Tool<R>, args: unknown, ctx: ToolContext) =>
  Effect.suspend(() => {
    const decoded = tool.decode(args)
    if (Result.isFailure(decoded)) return Effect.die(new Error(`decode failed: ${decoded.failure.message}`))
    return tool.execute(decoded.success, ctx)
  })

/** Runs and expects a ToolFailure; returns its message. */
export const runFailure = <R>(tool: Tool<R>, args: unknown, ctx: ToolContext) =>
  Effect.flip(run(tool, args, ctx)).pipe(
    Effect.map((e) => {
      if (e._tag !== "ToolFailure") throw new Error(`expected ToolFailure, got ${e._tag}: ${e.message}`)
      return (e as ToolFailure).message
    })
  )

export const outputLines = (out: ToolOutput): Array<string> => out.output.split("\n")

/** Writes files (path -> content; `null` makes an empty directory) under `dir`. */
export const writeTree = (dir: string, tree: Readonly<Record<string, string | Uint8Array | null>>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    for (const [rel, content] of Object.entries(tree)) {
      const abs = joinPath(dir, rel)
      if (content === null) {
        yield* fs.makeDirectory(abs, { recursive: true })
        continue
      }
      yield* fs.makeDirectory(joinPath(abs, ".."), { recursive: true })
      if (typeof content === "string") yield* fs.writeFileString(abs, content)
      else yield* fs.writeFile(abs, content)
    }
  })

const enc = new TextEncoder()
const binary = (text: string) => {
  const bytes = enc.encode(text)
  const out = new Uint8Array(bytes.length + 2)
  out.set(bytes.subarray(0, 6))
  out[6] = 0
  out[7] = 0
  out.set(bytes.subarray(6), 8)
  return out
}

/**
 * The shared fixture: a project at `<tmp>/proj` inside a parent whose own .gitignore (`*.md`)
 * must NOT apply (rules stop at the project root).
 */
export const FIXTURE: Readonly<Record<string, string | Uint8Array | null>> = {
  ".gitignore": "# root rules\n*.log\n!keep.log\n/build\nnode_modules/\n",
  "README.md": "# needle readme\n",
  ".hidden/secret.ts": "export const hidden = 'needle'\n",
  ".git/config": "[core] needle in git\n",
  ".git/HEAD": "ref: refs/heads/main\n",
  "build/out.js": "needle build\n",
  "logs/a.log": "needle log\n",
  "logs/keep.log": "needle keep\n",
  "node_modules/pkg/index.js": "needle module\n",
  "docs/guide.txt": "the needle in docs\n",
  empty: null,
  "src/.gitignore": "gen/\n/local.txt\n",
  "src/a.ts": "const a = 1\n// needle here\nno match\nneedle again\n",
  "src/b.tsx": "export const B = () => 'needle tsx'\n",
  "src/build/keep.js": "needle src build\n",
  "src/gen/g.ts": "needle generated\n",
  "src/local.txt": "needle local\n",
  "src/bin.dat": binary("needle binary"),
  "src/sub/.gitignore": "*.tmp\n",
  "src/sub/local.txt": "needle sub local\n",
  "src/sub/x.tmp": "needle tmp\n",
  "src/sub/keep.log": "needle sub keep\n",
  "src/sub/deep/c.ts": "needle deep\n",
  "src/sub/deep/d.log": "needle deep log\n",
  "src/sub/gen/x.ts": "needle sub gen\n"
}

/** Every regular file of the fixture the rules keep, root-relative, sorted. */
export const FIXTURE_FILES = [
  ".gitignore",
  ".hidden/secret.ts",
  "README.md",
  "docs/guide.txt",
  "logs/keep.log",
  "src/.gitignore",
  "src/a.ts",
  "src/b.tsx",
  "src/bin.dat",
  "src/build/keep.js",
  "src/sub/.gitignore",
  "src/sub/deep/c.ts",
  "src/sub/keep.log",
  "src/sub/local.txt"
]

/** Makes the fixture in a scoped temp directory; returns the project root. */
export const makeFixture = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const tmp = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-tools-" })
  yield* fs.writeFileString(joinPath(tmp, ".gitignore"), "*.md\n")
  const root = joinPath(tmp, "proj")
  yield* writeTree(root, FIXTURE)
  return root
})
