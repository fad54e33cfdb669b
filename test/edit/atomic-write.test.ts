import { spawn } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FileSystem, Option, PlatformError } from "effect"
import { writeFileAtomic } from "../../src/edit/atomic-write.ts"
import { withFileLocksOn } from "../../src/edit/path-lock.ts"
import { joinPath } from "../../src/path/path.ts"
import { pathLocks } from "../../src/read-state/read-state.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, layer, project, readText, writesOver } from "./helpers.ts"

/** The real FileSystem with one method made to fail, as a full disk or a crash would. */
const breaking = (method: "rename" | "chmod") =>
  Effect.gen(function* () {
    const real = yield* FileSystem.FileSystem
    const failure = PlatformError.systemError({
      _tag: "Unknown",
      module: "FileSystem",
      method,
      description: "injected fault"
    })
    return FileSystem.FileSystem.of({ ...real, [method]: () => Effect.fail(failure) })
  })

describe("atomic write", () => {
  it.live("a failed rename leaves the original intact and no temp file behind", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "original\n" })
      const broken = yield* breaking("rename")
      const result = yield* Effect.result(
        writeFileAtomic(joinPath(root, "f.txt"), new TextEncoder().encode("new\n")).pipe(
          Effect.provideService(FileSystem.FileSystem, broken)
        )
      )
      expect(result._tag).toBe("Failure")
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("original\n")
      expect(yield* fs.readDirectory(root)).toEqual(["f.txt"])
    }).pipe(Effect.provide(layer))
  )

  it.live("an edit whose write fails is an error result and the file is unchanged", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": "a = 1\n" })
      const broken = yield* breaking("rename")
      const failure = yield* Effect.flip(
        run(EditTool, { filePath: "f.txt", oldString: "a = 1", newString: "a = 2" }, ctxFor(root)).pipe(
          Effect.provide(writesOver(broken))
        )
      )
      expect(failure._tag).toBe("ToolFailure")
      expect(failure.message).toContain("injected fault")
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("a = 1\n")
      expect(pathLocks.get().size()).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it.live(
    "a process killed in the middle of writing leaves the old file",
    () =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* project({ "big.txt": "original content\n" })
        const target = joinPath(root, "big.txt")
        // A child writes 256 MB through writeFileAtomic; it is killed as soon as its temp file
        // exists, long before the write can finish.
        const script = `
          import { NodeServices } from "@effect/platform-node"
          import { Effect } from "effect"
          import { writeFileAtomic } from ${JSON.stringify(new URL("../../src/edit/atomic-write.ts", import.meta.url).href)}
          const bytes = new Uint8Array(256 * 1024 * 1024).fill(120)
          await Effect.runPromise(writeFileAtomic(${JSON.stringify(target)}, bytes).pipe(Effect.provide(NodeServices.layer)))
        `
        const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
          cwd: process.cwd(),
          stdio: "ignore"
        })
        const killed = yield* Effect.promise(
          () =>
            new Promise<boolean>((resolve) => {
              const timer = setInterval(async () => {
                const { readdirSync } = await import("node:fs")
                if (readdirSync(root).some((n) => n.endsWith(".tmp"))) {
                  clearInterval(timer)
                  child.kill("SIGKILL")
                  resolve(true)
                }
              }, 2)
              child.on("exit", () => {
                clearInterval(timer)
                resolve(false)
              })
            })
        )
        expect(killed).toBe(true)
        yield* Effect.promise(
          () =>
            new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.on("exit", r)))
        )
        expect(yield* readText(target)).toBe("original content\n")
        const left = yield* fs.readDirectory(root)
        expect(left).toContain("big.txt")
      }).pipe(Effect.provide(layer)),
    60_000
  )

  it.live("a symlink is written through (relative and dangling links included); the link itself stays", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "dir/target.txt": "old\n" })
      yield* fs.symlink("dir/target.txt", joinPath(root, "rel-link"))
      yield* writeFileAtomic(joinPath(root, "rel-link"), new TextEncoder().encode("new\n"))
      expect((yield* fs.lstat(joinPath(root, "rel-link"))).type).toBe("SymbolicLink")
      expect(yield* fs.readLink(joinPath(root, "rel-link"))).toBe("dir/target.txt")
      expect(yield* readText(joinPath(root, "dir/target.txt"))).toBe("new\n")
      // A link whose target does not exist yet: the target is created, the link kept.
      yield* fs.symlink("dir/later.txt", joinPath(root, "dangling"))
      yield* writeFileAtomic(joinPath(root, "dangling"), new TextEncoder().encode("made\n"))
      expect((yield* fs.lstat(joinPath(root, "dangling"))).type).toBe("SymbolicLink")
      expect(yield* readText(joinPath(root, "dir/later.txt"))).toBe("made\n")
      expect((yield* fs.readDirectory(root)).sort()).toEqual(["dangling", "dir", "rel-link"])
      expect((yield* fs.readDirectory(joinPath(root, "dir"))).sort()).toEqual(["later.txt", "target.txt"])
    }).pipe(Effect.provide(layer))
  )

  it.live("keeps the mode of the file it replaces", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "x.sh": "echo\n" })
      yield* fs.chmod(joinPath(root, "x.sh"), 0o700)
      yield* writeFileAtomic(joinPath(root, "x.sh"), new TextEncoder().encode("echo 2\n"))
      expect((yield* fs.stat(joinPath(root, "x.sh"))).mode & 0o777).toBe(0o700)
    }).pipe(Effect.provide(layer))
  )
})

/** The machine-wide lock files alone (the transaction takes ReadState's in-process lock first). */
const withPathLocks = <A, E>(paths: Array<string>, staging: undefined, effect: Effect.Effect<A, E>) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => withFileLocksOn(fs, paths, staging, effect))

describe("per-path lock files", () => {
  it.live("serialize work on one path and let different paths run together", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const job = (path: string, name: string) =>
        withPathLocks(
          [path],
          undefined,
          Effect.gen(function* () {
            log.push(`${name}+`)
            yield* Effect.sleep("30 millis")
            log.push(`${name}-`)
          })
        )
      yield* Effect.all([job("/p/a", "a1"), job("/p/a", "a2")], { concurrency: "unbounded" })
      // Exclusion, not order: which of two simultaneous callers goes first is not promised
      // (each resolves its real path before it queues), only that neither starts inside the other.
      expect([
        ["a1+", "a1-", "a2+", "a2-"],
        ["a2+", "a2-", "a1+", "a1-"]
      ]).toContainEqual(log)
      // Different paths: the call on /p/a waits, holding its lock, until the call on /p/b has
      // started — which it can only do if /p/b's lock is not queued behind /p/a's.
      const bStarted = yield* Deferred.make<void>()
      const waitsForB = withPathLocks(["/p/a"], undefined, Deferred.await(bStarted))
      const startsB = withPathLocks(["/p/b"], undefined, Deferred.succeed(bStarted, undefined))
      const together = yield* Effect.all([waitsForB, startsB], { concurrency: "unbounded" }).pipe(
        Effect.timeoutOption("10 seconds")
      )
      expect(Option.isSome(together)).toBe(true)
    }).pipe(Effect.provide(layer))
  )

  it.live("several paths are taken in one order, so crossing sets do not deadlock", () =>
    Effect.gen(function* () {
      const both = (paths: Array<string>) => withPathLocks(paths, undefined, Effect.sleep("10 millis"))
      yield* Effect.all([both(["/q/x", "/q/y"]), both(["/q/y", "/q/x"]), both(["/q/x", "/q/y"])], {
        concurrency: "unbounded"
      }).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.provide(layer))
  )
})
