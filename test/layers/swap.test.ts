/**
 * "Swap one piece": every service of the tool system is replaced by providing it to the
 * system, and the services that use it then get the one provided (layers/overridable.ts).
 * Tested as a class (every service the system builds, compared by identity) and by the three
 * pieces an embedder swaps most: an Approval, an OutputStore that sees every put, and an
 * in-memory file system that serves the file tools.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, FileSystem, Layer } from "effect"
import { ToolSystem } from "../../layers/live.ts"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { NativeFileSystem } from "../../src/fs/node-fs.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { OutputStore } from "../../src/output/store.ts"
import { Approval, type ApprovalQuestion } from "../../src/permission/approval.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"

const tempRoot = () => NodeFs.realpathSync(NodeFs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/freecode-swap-`))

describe("every service of the tool system can be swapped", () => {
  it.live("a system built where its services already exist uses each of them, not a default", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      NodeFs.writeFileSync(`${root}/a.txt`, "a\n")
      const first = yield* Layer.build(testToolSystem({ root }))
      // The registry is swapped on its own below: built-in tools cannot be registered twice in one.
      // (The memo map is Effect's own, of each build.)
      const given = Context.omit(ToolRegistry, Layer.CurrentMemoMap)(first)
      const second = yield* Layer.build(testToolSystem({ root }).pipe(Layer.provide(Layer.succeedContext(given))))
      const keys = [...given.mapUnsafe.keys()]
      expect(keys.length).toBeGreaterThan(20)
      const notTaken = keys.filter((key) => second.mapUnsafe.get(key) !== given.mapUnsafe.get(key))
      expect(notTaken).toEqual([])
    }).pipe(Effect.scoped)
  )

  it.live("a given ToolRegistry is the one the built-in tools are registered in and the Dispatcher calls", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      NodeFs.writeFileSync(`${root}/a.txt`, "a\n")
      const registry = yield* Layer.build(ToolRegistry.layer)
      const mine = Context.get(registry, ToolRegistry)
      const system = yield* Layer.build(testToolSystem({ root }).pipe(Layer.provide(Layer.succeedContext(registry))))
      expect(Context.get(system, ToolRegistry)).toBe(mine)
      expect((yield* mine.tools).map((t) => t.id)).toContain("read")
      const result = yield* Context.get(system, Dispatcher).dispatch(
        { id: "r1", name: "read", args: { filePath: "a.txt" } },
        { sessionId: "s" }
      )
      expect(result.status).toBe("ok")
    }).pipe(Effect.scoped)
  )

  it.live("an Approval and an OutputStore provided to ToolSystem.layer are asked and see every put", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      NodeFs.writeFileSync(`${root}/a.txt`, "a\n")
      const asked: Array<ApprovalQuestion> = []
      const puts: Array<string> = []
      const store = Layer.effect(
        OutputStore,
        Effect.map(OutputStore, (inner) =>
          OutputStore.of({
            ...inner,
            put: (request) => {
              puts.push(request.id)
              return inner.put(request)
            }
          })
        )
      ).pipe(Layer.provide(OutputStore.layerMemory), Layer.provide(OutputConfig.layerWith({})))
      const system = ToolSystem.layer({ root }).pipe(
        Layer.provide(Layer.merge(store, Approval.layerTest({ answer: "once" }, asked)))
      )
      const results = yield* Effect.flatMap(Dispatcher, (d) =>
        d.dispatchBatch(
          [
            { id: "c1", name: "read", args: { filePath: "a.txt" } },
            { id: "c2", name: "write", args: { filePath: "b.txt", content: "b\n" } },
            { id: "c3", name: "ls", args: {} },
            { id: "c4", name: "grep", args: { pattern: "a" } }
          ],
          { sessionId: "s" }
        )
      ).pipe(Effect.provide(system))
      expect(results.map((r) => r.status)).toEqual(["ok", "ok", "ok", "ok"])
      // Every stored result went through the store that was given.
      const stored = results.flatMap((r) => (r.outputId === undefined ? [] : [r.outputId]))
      expect(stored).toHaveLength(4)
      expect(puts).toEqual(expect.arrayContaining(stored))
      expect(asked.map((q) => q.tool)).toEqual(["write"])
      expect(NodeFs.readFileSync(`${root}/b.txt`, "utf8")).toBe("b\n")
    })
  )

  it.live(
    "an in-memory FileSystem given to ToolSystem.layer serves read, write, edit, apply_patch, ls, glob and grep",
    () =>
      Effect.gen(function* () {
        const root = "/memory-project"
        const files = { [`${root}/src/a.ts`]: "export const a = 1\n", [`${root}/README.md`]: "# a\n" }
        const system = ToolSystem.layer({ root }).pipe(
          Layer.provide(Layer.merge(MemoryFileSystem.layer(files), Approval.layerApproveAll))
        )
        const run = Effect.gen(function* () {
          const d = yield* Dispatcher
          const fs = yield* FileSystem.FileSystem
          const text = (rel: string) => fs.readFileString(`${root}/${rel}`)
          const one = yield* d.dispatchBatch(
            [
              { id: "r", name: "read", args: { filePath: "src/a.ts" } },
              { id: "l", name: "ls", args: {} },
              { id: "g", name: "glob", args: { pattern: "**/*.ts" } },
              { id: "s", name: "grep", args: { pattern: "const" } }
            ],
            { sessionId: "m" }
          )
          // A file added to the FileSystem is what the next calls see.
          yield* fs.writeFileString(`${root}/src/b.ts`, "export const b = 2\n")
          const two = yield* d.dispatchBatch(
            [
              { id: "g2", name: "glob", args: { pattern: "src/*.ts" } },
              { id: "r2", name: "read", args: { filePath: "src/b.ts" } }
            ],
            { sessionId: "m" }
          )
          // Each change lands in the FileSystem, as the next call and the FileSystem itself see it.
          const written = yield* d.dispatch(
            { id: "w", name: "write", args: { filePath: "src/new/c.ts", content: "export const c = 3\n" } },
            { sessionId: "m" }
          )
          const afterWrite = yield* text("src/new/c.ts")
          const edited = yield* d.dispatch(
            { id: "e", name: "edit", args: { filePath: "src/a.ts", oldString: "a = 1", newString: "a = 10" } },
            { sessionId: "m" }
          )
          const afterEdit = yield* text("src/a.ts")
          const patchText = [
            "*** Begin Patch",
            "*** Update File: src/b.ts",
            "@@",
            "-export const b = 2",
            "+export const b = 20",
            "*** Add File: src/d.ts",
            "+export const d = 4",
            "*** Delete File: README.md",
            "*** End Patch"
          ].join("\n")
          const patched = yield* d.dispatch({ id: "p", name: "apply_patch", args: { patchText } }, { sessionId: "m" })
          const afterPatch = {
            b: yield* text("src/b.ts"),
            d: yield* text("src/d.ts"),
            readme: yield* fs.exists(`${root}/README.md`)
          }
          // A patch that cannot apply in full changes nothing.
          const refused = yield* d.dispatch(
            {
              id: "p2",
              name: "apply_patch",
              args: {
                patchText: [
                  "*** Begin Patch",
                  "*** Update File: src/d.ts",
                  "@@",
                  "-export const d = 4",
                  "+export const d = 40",
                  "*** Update File: src/b.ts",
                  "@@",
                  "-not in the file",
                  "+x",
                  "*** End Patch"
                ].join("\n")
              }
            },
            { sessionId: "m" }
          )
          const three = yield* d.dispatchBatch(
            [
              { id: "g3", name: "glob", args: { pattern: "**/*.ts" } },
              { id: "s3", name: "grep", args: { pattern: "= [0-9]+0$" } },
              { id: "r3", name: "read", args: { filePath: "src/d.ts" } }
            ],
            { sessionId: "m" }
          )
          return {
            results: [...one, ...two, written, edited, patched, refused, ...three],
            contents: { afterWrite, afterEdit, afterPatch, dAfterRefused: yield* text("src/d.ts") },
            // Nothing but the files themselves: no temp file, lock or staging folder left in the project.
            tree: {
              root: yield* fs.readDirectory(root),
              src: yield* fs.readDirectory(`${root}/src`),
              tmp: yield* fs.exists("/tmp")
            },
            onDisk: (yield* LocalFs).onDisk
          }
        })
        const { results, contents, tree, onDisk } = yield* run.pipe(Effect.provide(system))
        expect(results.map((r) => [r.id, r.status])).toEqual([
          ["r", "ok"],
          ["l", "ok"],
          ["g", "ok"],
          ["s", "ok"],
          ["g2", "ok"],
          ["r2", "ok"],
          ["w", "ok"],
          ["e", "ok"],
          ["p", "ok"],
          ["p2", "error"],
          ["g3", "ok"],
          ["s3", "ok"],
          ["r3", "ok"]
        ])
        const output = (id: string) => results.find((r) => r.id === id)!.modelOutput
        expect(output("r")).toBe("1\texport const a = 1")
        expect(output("l")).toBe("./\n  src/\n    a.ts\n  README.md")
        expect(output("g")).toBe("src/a.ts")
        expect(output("s")).toBe("src/a.ts:1:export const a = 1")
        expect(output("g2")).toBe("src/a.ts\nsrc/b.ts")
        expect(output("r2")).toBe("1\texport const b = 2")
        expect(output("w")).toContain("Created src/new/c.ts")
        expect(output("e")).toContain("Edited src/a.ts at line 1")
        expect(output("p")).toContain("M src/b.ts")
        expect(output("p2")).toContain("Nothing was changed.")
        expect(contents).toEqual({
          afterWrite: "export const c = 3\n",
          afterEdit: "export const a = 10\n",
          afterPatch: { b: "export const b = 20\n", d: "export const d = 4\n", readme: false },
          dAfterRefused: "export const d = 4\n"
        })
        expect(output("g3").split("\n").sort()).toEqual(["src/a.ts", "src/b.ts", "src/d.ts", "src/new/c.ts"])
        expect(output("s3").split("\n").sort()).toEqual([
          "src/a.ts:1:export const a = 10",
          "src/b.ts:1:export const b = 20"
        ])
        expect(output("r3")).toBe("1\texport const d = 4")
        expect(tree.root).toEqual(["src"])
        expect([...tree.src].sort()).toEqual(["a.ts", "b.ts", "d.ts", "new"])
        // The platform layers over the given FileSystem, and nothing on this machine's disk.
        expect(onDisk).toBe(false)
        expect(NodeFs.existsSync(root)).toBe(false)
      })
  )
})

describe("which LocalFs the live system takes", () => {
  it.live(
    "the native layer where the FileSystem is said to be Node's own (the default, and the CLI); the platform one over any other",
    () =>
      Effect.gen(function* () {
        const root = tempRoot()
        const onDisk = Effect.map(LocalFs, (fs) => fs.onDisk)
        expect(yield* onDisk.pipe(Effect.provide(ToolSystem.layer({ root })))).toBe(true)
        // Inside Node's own services, as the CLI builds it, saying so: native.
        const saidNative = Layer.merge(NodeServices.layer, Layer.succeed(NativeFileSystem, true))
        expect(yield* onDisk.pipe(Effect.provide(ToolSystem.layer({ root }).pipe(Layer.provide(saidNative))))).toBe(
          true
        )
        // Node's FileSystem given without a word: it is gone through, as any given FileSystem.
        expect(
          yield* onDisk.pipe(Effect.provide(ToolSystem.layer({ root }).pipe(Layer.provide(NodeServices.layer))))
        ).toBe(false)
        // A wrapper that sees every read is another FileSystem: the tools must go through it.
        const seen: Array<string> = []
        const wrapped = Layer.effect(
          FileSystem.FileSystem,
          Effect.map(FileSystem.FileSystem, (fs) =>
            FileSystem.FileSystem.of({
              ...fs,
              readFile: (path) => {
                seen.push(path)
                return fs.readFile(path)
              }
            })
          )
        ).pipe(Layer.provide(NodeServices.layer))
        expect(yield* onDisk.pipe(Effect.provide(ToolSystem.layer({ root }).pipe(Layer.provide(wrapped))))).toBe(false)
      })
  )
})

describe("which WriteFs the system takes", () => {
  it.live(
    "over Node's own FileSystem the native layer (staging folder, lock files); over another the platform one",
    () =>
      Effect.gen(function* () {
        const write = (root: string, given: Layer.Layer<never>) =>
          Effect.flatMap(Dispatcher, (d) =>
            d.dispatch({ id: "w", name: "write", args: { filePath: "a.txt", content: "a\n" } }, { sessionId: "s" })
          ).pipe(
            Effect.provide(ToolSystem.layer({ root }).pipe(Layer.provide(Layer.merge(given, Approval.layerApproveAll))))
          )
        const native = tempRoot()
        expect((yield* write(native, Layer.empty)).status).toBe("ok")
        expect(NodeFs.readFileSync(`${native}/a.txt`, "utf8")).toBe("a\n")
        expect(NodeFs.existsSync(`${native}/.freecode/staging`)).toBe(true)
        // A wrapper that sees every write is another FileSystem: the edit tools must go through it.
        const wrappedRoot = tempRoot()
        const written: Array<string> = []
        const wrapped = Layer.effect(
          FileSystem.FileSystem,
          Effect.map(FileSystem.FileSystem, (fs) =>
            FileSystem.FileSystem.of({
              ...fs,
              writeFile: (path, data, options) => {
                written.push(path)
                return fs.writeFile(path, data, options)
              }
            })
          )
        ).pipe(Layer.provide(NodeServices.layer))
        expect((yield* write(wrappedRoot, wrapped)).status).toBe("ok")
        expect(NodeFs.readFileSync(`${wrappedRoot}/a.txt`, "utf8")).toBe("a\n")
        expect(written).toEqual([expect.stringMatching(/^\/.*\/\.a\.txt\.[^/]*\.tmp$/)])
        expect(NodeFs.readdirSync(wrappedRoot)).toEqual(["a.txt"])
      })
  )
})

describe("examples/swap.ts", () => {
  it("runs: a project in memory that every file tool reads and changes, an approval that records, a store that sees every put", () => {
    const lines = execFileSync(process.execPath, ["examples/swap.ts"], { encoding: "utf8" }).trim().split("\n")
    const results = lines.slice(0, -1).map((l) => JSON.parse(l))
    const { asked, puts, project } = JSON.parse(lines.at(-1)!)
    expect(results.map((r: { status: string }) => r.status)).toEqual(Array(10).fill("ok"))
    expect(results[1].modelOutput).toContain("(Skipped node_modules/")
    expect(results[4].modelOutput).toBe("1\tTOKEN=demo")
    expect(results[5].modelOutput).toBe("src/a.ts")
    expect(results[9].modelOutput.split("\n")).toEqual([
      "src/a.ts:1:export const a = 2",
      "src/b.ts:1:export const b = 3",
      'src/c.ts:1:export { a } from "./a.ts"',
      expect.stringContaining("(Skipped node_modules/")
    ])
    expect(project).toEqual({
      "src/a.ts": "export const a = 2\n",
      "src/b.ts": "export const b = 3\n",
      "src/c.ts": 'export { a } from "./a.ts"\n'
    })
    expect(asked.map((q: string) => q.split(":")[0])).toEqual(["read", "edit", "write", "apply_patch"])
    expect(puts).toEqual(results.map((r: { tool: string; outputId: string }) => `${r.tool}:${r.outputId}`))
    expect(NodeFs.existsSync("/project")).toBe(false)
  }, 60_000)
})
