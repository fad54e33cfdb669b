/** `freecode-tools run`, run as a real child process and driven through its stdin. */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { driveProcess, jsonLines, makeProject, runProcess } from "./helpers.ts"

const project = makeProject()
afterAll(project.cleanup)

const turn = (...calls: ReadonlyArray<{ id: string; name: string; args?: unknown }>) => JSON.stringify(calls)
const readReadme = (id: string) => ({ id, name: "read", args: { filePath: "README.md" } })

describe("run", () => {
  it.live("three lines, one malformed: results in order, an error line for the bad one, exit 2", () =>
    Effect.gen(function* () {
      const input = [
        turn(readReadme("a")),
        "this is not json",
        turn({ id: "b", name: "output", args: { id: "a", offset: 3 } })
      ]
      const r = yield* Effect.promise(() => runProcess(["run", "--root", project.root], `${input.join("\n")}\n`))
      expect(r.stderr).toBe("")
      expect(r.code).toBe(2)
      const lines = jsonLines(r.stdout)
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatchObject({ id: "a", tool: "read", status: "ok" })
      expect(lines[1]).toEqual({
        line: 2,
        status: "error",
        modelOutput: expect.stringMatching(/^line 2: not valid JSON/)
      })
      // Same session and store across lines: the output tool finds call "a" from line 1.
      expect(lines[2]).toMatchObject({ id: "b", tool: "output", status: "ok" })
      expect(lines[2]!.modelOutput).toContain("output of read call a")
      expect(lines[2]!.modelOutput).toContain("A small project.")
    })
  )

  it.live("each turn is written and flushed before the next line is read", () => {
    const cli = driveProcess(["run", "--root", project.root, "--session", "driven"])
    return Effect.gen(function* () {
      cli.send(turn(readReadme("r1")))
      const first = yield* Effect.promise(() => cli.take(1))
      expect(JSON.parse(first[0]!)).toMatchObject({ id: "r1", status: "ok" })

      cli.send(
        turn({ id: "o1", name: "output", args: { id: "r1", pattern: "Demo" } }, { id: "x1", name: "nope", args: {} })
      )
      const second = yield* Effect.promise(() => cli.take(2))
      expect(second.map((l) => JSON.parse(l).id)).toEqual(["o1", "x1"])
      expect(JSON.parse(second[0]!).status).toBe("ok")
      expect(JSON.parse(second[1]!).status).toBe("error")

      cli.send("")
      cli.send("[]")
      cli.end()
      const done = yield* Effect.promise(() => cli.done)
      expect(done.code).toBe(0)
      expect(cli.received()).toHaveLength(3)
    }).pipe(Effect.ensuring(Effect.sync(() => cli.kill())))
  })

  it.live("Ctrl-C while waiting for the next line stops the run with 130", () => {
    const cli = driveProcess(["run", "--root", project.root])
    return Effect.gen(function* () {
      cli.send(turn(readReadme("r1")))
      yield* Effect.promise(() => cli.take(1))
      cli.child.kill("SIGINT")
      const done = yield* Effect.promise(() => cli.done)
      expect(done.code).toBe(130)
      expect(done.stderr).toContain("cancelling")
    }).pipe(Effect.ensuring(Effect.sync(() => cli.kill())))
  })

  it.live("reads turns from a FILE; a FILE that does not exist is misuse", () =>
    Effect.gen(function* () {
      const file = NodePath.join(project.root, "turns.jsonl")
      NodeFs.writeFileSync(
        file,
        `${turn(readReadme("f1"))}\n\n${turn({ id: "f2", name: "output", args: { id: "f1" } })}\n`
      )
      const r = yield* Effect.promise(() => runProcess(["run", file, "--root", project.root]))
      expect(r.code).toBe(0)
      expect(jsonLines(r.stdout).map((l) => [l.id, l.status])).toEqual([
        ["f1", "ok"],
        ["f2", "ok"]
      ])

      const missing = yield* Effect.promise(() => runProcess(["run", NodePath.join(project.root, "nope.jsonl")]))
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/cannot read .*nope\.jsonl/)
    })
  )
})
