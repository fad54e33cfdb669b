/**
 * The CLI in-process on tools of the test's own: approval, the call context (session, images),
 * Ctrl-C, and the run loop. Exit codes are the runner's return value, as main.ts uses them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { OutputTool } from "../../src/tools/output.ts"
import { Echo, Guarded, slow, Whoami } from "./fixtures.ts"
import { jsonLines, makeProject, runInProcess } from "./helpers.ts"

const withProject = <A, E, R>(use: (root: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => makeProject()),
    ({ root }) => use(root),
    ({ cleanup }) => Effect.sync(cleanup)
  )

const tools = [Echo, Whoami, Guarded, OutputTool]

describe("call (in-process)", () => {
  it.live("a call that asks for approval is refused without --yes, with the dispatcher's reason", () =>
    withProject((root) =>
      Effect.gen(function* () {
        const refused = yield* runInProcess(["call", "guarded", "--root", root, "--json"], { tools })
        expect(refused.code).toBe(1)
        const result = JSON.parse(refused.stdout)
        expect(result.status).toBe("denied")
        expect(result.modelOutput).toContain("No one is available to approve it here")

        const approved = yield* runInProcess(["call", "guarded", "--root", root, "--yes"], { tools })
        expect(approved).toEqual({ code: 0, stdout: "did the guarded thing\n", stderr: "" })
      })
    )
  )

  it.live("--session and --images reach the tool; the session defaults to a fresh id", () =>
    withProject((root) =>
      Effect.gen(function* () {
        const given = yield* runInProcess(["call", "whoami", "--root", root, "--session", "s-42", "--images"], {
          tools
        })
        expect(given.stdout).toBe(`session=s-42 images=true root=${root}\n`)
        const a = yield* runInProcess(["call", "whoami", "--root", root], { tools })
        const b = yield* runInProcess(["call", "whoami", "--root", root], { tools })
        expect(a.stdout).toMatch(/^session=\S+ images=false /)
        expect(a.stdout).not.toBe(b.stdout)
      })
    )
  )

  it.live("Ctrl-C makes a cancellable tool return 'interrupted' with its partial output; exit 1", () =>
    withProject((root) =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const cancel = yield* Deferred.make<void>()
        const fiber = yield* runInProcess(["call", "slow", "--root", root], { tools: [slow(started)], cancel }).pipe(
          Effect.forkChild
        )
        yield* Deferred.await(started)
        yield* Deferred.succeed(cancel, undefined)
        const done = yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"))
        expect(done.code).toBe(1)
        expect(done.stdout).toContain("was cancelled by the person")
        expect(done.stdout).toContain("partial line 1")
        expect(done.stderr).toBe("status: interrupted\n")
      })
    )
  )
})

describe("run (in-process)", () => {
  it.live("one session for the whole run: a later line reads an earlier call's stored output", () =>
    withProject((root) =>
      Effect.gen(function* () {
        const out = yield* runInProcess(["run", "--root", root], {
          tools,
          stdin: [
            JSON.stringify([
              { id: "a", name: "echo", args: { text: "one\ntwo\nthree" } },
              { id: "b", name: "whoami", args: {} }
            ]),
            "",
            "[]",
            JSON.stringify([{ id: "c", name: "output", args: { id: "a", offset: 2, limit: 1 } }])
          ]
        })
        expect(out.code).toBe(0)
        const lines = jsonLines(out.stdout)
        expect(lines.map((l) => [l.id, l.status])).toEqual([
          ["a", "ok"],
          ["b", "ok"],
          ["c", "ok"]
        ])
        expect(lines[2]!.modelOutput).toContain("2\ttwo")
        expect(lines[2]!.modelOutput).not.toContain("three")
      })
    )
  )

  it.live("Ctrl-C during a turn: the turn's results are written, then the run stops with 130", () =>
    withProject((root) =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const cancel = yield* Deferred.make<void>()
        const fiber = yield* runInProcess(["run", "--root", root], {
          tools: [slow(started), Echo],
          cancel,
          stdin: [
            JSON.stringify([
              { id: "s", name: "slow", args: {} },
              { id: "e", name: "echo", args: { text: "after" } }
            ]),
            JSON.stringify([{ id: "never", name: "echo", args: { text: "not read" } }])
          ]
        }).pipe(Effect.forkChild)
        yield* Deferred.await(started)
        yield* Deferred.succeed(cancel, undefined)
        const done = yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"))
        expect(done.code).toBe(130)
        const lines = jsonLines(done.stdout)
        // echo is not cancellable ("block" by default), so it still runs after the cancel.
        expect(lines.map((l) => [l.id, l.status])).toEqual([
          ["s", "interrupted"],
          ["e", "ok"]
        ])
      })
    )
  )
})
