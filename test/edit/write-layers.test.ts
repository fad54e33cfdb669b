/**
 * The edit tools over both WriteFs layers: the native one on real files in a temp folder, the
 * platform one over an in-memory FileSystem. The same cases, the guarantees that hold in both:
 * one writer per file, a patch all or nothing, the replaced file's mode kept, a link out of the
 * project refused and a dangling one written through, no temp file left behind.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, type Scope } from "effect"
import { WriteFs } from "../../src/edit/write-fs.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { ReadState } from "../../src/read-state/read-state.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { run, runFailure } from "../tools/helpers.ts"
import { ctxFor, failingRename, project } from "./helpers.ts"

type Files = Readonly<Record<string, string>>

interface Setup {
  readonly name: string
  /** A project holding `files` (relative paths), its root, and the layer the tools run on. */
  readonly make: (files: Files) => Effect.Effect<{ root: string; layer: Layer.Layer<Services> }, never, Scope.Scope>
  /** A WriteFs of this kind over `fs` (a FileSystem with a fault injected). */
  readonly writesOver: (fs: FileSystem.FileSystem) => Layer.Layer<WriteFs>
}

type Services = FileSystem.FileSystem | LocalFs | WriteFs | ReadState

const withReadState = <R>(layer: Layer.Layer<R>) => Layer.merge(layer, ReadState.layerWith({ dedup: true }))

const native: Setup = {
  name: "native, on disk",
  make: (files) =>
    Effect.gen(function* () {
      const root = yield* project(files).pipe(Effect.provide(NodeServices.layer))
      const layer = withReadState(
        Layer.merge(LocalFs.layerNative, WriteFs.layerNative).pipe(Layer.provideMerge(NodeServices.layer))
      )
      return { root, layer }
    }).pipe(Effect.orDie),
  writesOver: (fs) => Layer.fresh(WriteFs.layerNative).pipe(Layer.provide(Layer.succeed(FileSystem.FileSystem, fs)))
}

let projects = 0
const memory: Setup = {
  name: "platform, in memory",
  make: (files) =>
    Effect.sync(() => {
      const root = `/memory-${++projects}`
      const given = Object.fromEntries(Object.entries(files).map(([rel, text]) => [`${root}/${rel}`, text]))
      const layer = withReadState(
        Layer.merge(LocalFs.layerPlatform, WriteFs.layerPlatform).pipe(
          Layer.provideMerge(MemoryFileSystem.layer({ [`${root}/.keep`]: "", ...given }))
        )
      )
      return { root, layer }
    }),
  writesOver: (fs) => Layer.fresh(WriteFs.layerPlatform).pipe(Layer.provide(Layer.succeed(FileSystem.FileSystem, fs)))
}

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

/** The names in `dir` but `.keep` and the staging folder: what a user of the project sees. */
const listed = (fs: FileSystem.FileSystem, dir: string) =>
  Effect.map(fs.readDirectory(dir), (names) => names.filter((n) => n !== ".keep" && n !== ".freecode").sort())

describe.each([native, memory])("write, edit and apply_patch over WriteFs: $name", (setup) => {
  it.live("one writer per file: twenty edits of one file at once all land", () =>
    Effect.gen(function* () {
      const { root, layer } = yield* setup.make({ "log.txt": "end\n" })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        // Each read yields once it has read, so that without the lock every edit would load the
        // same content before any of them wrote (the in-memory one, whose calls never wait).
        const slow = FileSystem.FileSystem.of({
          ...fs,
          readFile: (path) => Effect.tap(fs.readFile(path), () => Effect.yieldNow)
        })
        const edits = Array.from({ length: 20 }, (_, i) =>
          run(EditTool, { filePath: "log.txt", oldString: "end\n", newString: `line ${i}\nend\n` }, ctxFor(root))
        )
        yield* Effect.all(edits, { concurrency: "unbounded" }).pipe(Effect.provide(setup.writesOver(slow)))
        const lines = (yield* fs.readFileString(`${root}/log.txt`)).trim().split("\n")
        expect(lines).toHaveLength(21)
        expect(lines.at(-1)).toBe("end")
        expect(new Set(lines).size).toBe(21)
        expect(yield* listed(fs, root)).toEqual(["log.txt"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )

  it.live("a patch whose second rename fails changes no file and leaves no temp file", () =>
    Effect.gen(function* () {
      const { root, layer } = yield* setup.make({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const flaky = failingRename(fs, 2)
        const message = yield* runFailure(
          ApplyPatchTool,
          {
            patchText: patch(
              "*** Update File: a.txt",
              "@@",
              "-a",
              "+A",
              "*** Update File: b.txt",
              "@@",
              "-b",
              "+B",
              "*** Add File: d.txt",
              "+d",
              "*** Delete File: c.txt"
            )
          },
          ctxFor(root)
        ).pipe(Effect.provide(setup.writesOver(flaky)))
        expect(message).toContain("disk full")
        expect(message).toContain("rolled back")
        expect(yield* fs.readFileString(`${root}/a.txt`)).toBe("a\n")
        expect(yield* fs.readFileString(`${root}/b.txt`)).toBe("b\n")
        expect(yield* fs.readFileString(`${root}/c.txt`)).toBe("c\n")
        expect(yield* listed(fs, root)).toEqual(["a.txt", "b.txt", "c.txt"])
        // The same patch on a working file system applies in full.
        yield* run(
          ApplyPatchTool,
          { patchText: patch("*** Update File: a.txt", "@@", "-a", "+A", "*** Delete File: c.txt") },
          ctxFor(root)
        )
        expect(yield* fs.readFileString(`${root}/a.txt`)).toBe("A\n")
        expect(yield* listed(fs, root)).toEqual(["a.txt", "b.txt"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )

  it.live("a write keeps the mode of the file it replaces", () =>
    Effect.gen(function* () {
      const { root, layer } = yield* setup.make({ "run.sh": "echo a\n" })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.chmod(`${root}/run.sh`, 0o750)
        yield* run(EditTool, { filePath: "run.sh", oldString: "echo a", newString: "echo b" }, ctxFor(root))
        expect(yield* fs.readFileString(`${root}/run.sh`)).toBe("echo b\n")
        expect((yield* fs.stat(`${root}/run.sh`)).mode & 0o777).toBe(0o750)
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )

  it.live("a link inside the project that leads out is refused; a dangling one is written through", () =>
    Effect.gen(function* () {
      const { root, layer } = yield* setup.make({ "in/a.txt": "a\n" })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const outside = yield* fs.makeTempDirectoryScoped()
        yield* fs.symlink(outside, `${root}/out`)
        const refused = yield* runFailure(WriteTool, { filePath: "out/x.txt", content: "x\n" }, ctxFor(root))
        expect(refused).toContain("a symbolic link on its path leads outside it")
        expect(yield* fs.exists(`${outside}/x.txt`)).toBe(false)
        // A dangling link to a file inside: the write creates its target, and the link stays.
        yield* fs.symlink("in/new.txt", `${root}/link.txt`)
        yield* run(WriteTool, { filePath: "link.txt", content: "n\n" }, ctxFor(root))
        expect(yield* fs.readFileString(`${root}/in/new.txt`)).toBe("n\n")
        expect((yield* fs.lstat(`${root}/link.txt`)).type).toBe("SymbolicLink")
        expect(yield* listed(fs, `${root}/in`)).toEqual(["a.txt", "new.txt"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )

  it.live("a folder is not a file: edit and write refuse it, saying so", () =>
    Effect.gen(function* () {
      const { root, layer } = yield* setup.make({ "dir/a.txt": "a\n" })
      yield* Effect.gen(function* () {
        expect(
          yield* runFailure(EditTool, { filePath: "dir", oldString: "a", newString: "b" }, ctxFor(root))
        ).toContain("dir is a directory")
        expect(yield* runFailure(WriteTool, { filePath: "dir", content: "b" }, ctxFor(root))).toContain(
          "dir is a directory"
        )
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )
})

describe("the platform layer's locks belong to the FileSystem", () => {
  it.live("two WriteFs layers over one in-memory FileSystem queue on the same locks: every edit lands", () =>
    Effect.gen(function* () {
      const root = "/shared"
      const fs = MemoryFileSystem.make({ [`${root}/log.txt`]: "end\n" })
      // As in the one-writer test above: without a shared lock every edit loads the same content.
      const slow = FileSystem.FileSystem.of({
        ...fs,
        readFile: (path) => Effect.tap(fs.readFile(path), () => Effect.yieldNow)
      })
      const over = Layer.succeed(FileSystem.FileSystem, slow)
      // Two systems: each its own WriteFs (fresh: not shared through the memo map) and ReadState.
      const systems = [0, 1].map(() =>
        Layer.mergeAll(
          Layer.fresh(WriteFs.layerPlatform),
          LocalFs.layerPlatform,
          Layer.fresh(ReadState.layerWith({ dedup: true }))
        ).pipe(Layer.provideMerge(over))
      )
      const edits = Array.from({ length: 20 }, (_, i) =>
        run(EditTool, { filePath: "log.txt", oldString: "end\n", newString: `line ${i}\nend\n` }, ctxFor(root)).pipe(
          Effect.provide(systems[i % 2]!)
        )
      )
      yield* Effect.all(edits, { concurrency: "unbounded" })
      const lines = (yield* fs.readFileString(`${root}/log.txt`)).trim().split("\n")
      expect(new Set(lines).size).toBe(21)
      expect(lines.at(-1)).toBe("end")
      expect(yield* fs.readDirectory(root)).toEqual(["log.txt"])
    })
  )
})
