/**
 * The shell corpus end to end: every case through `freecode-tools` as a real child process,
 * non-interactively (no --yes), running the real bash tool. Markers must never appear.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { corpus, makeShellWorld } from "./shell-world.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const world = makeShellWorld()
afterAll(world.cleanup)
const rules = `${world.dir}/corpus-rules.json`
NodeFs.writeFileSync(rules, JSON.stringify(corpus.rules))

const cli = (args: ReadonlyArray<string>, input = "") =>
  Effect.promise(
    () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [MAIN, ...args], {
          cwd: world.dir,
          env: { ...process.env, ...world.env, NO_COLOR: "1" }
        })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
        child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, stdout, stderr }))
        child.stdin.end(input)
      })
  )

describe("shell corpus through the CLI", () => {
  it.live(
    "run: every refused case comes back denied, every allowed one runs, no marker appears",
    () =>
      Effect.gen(function* () {
        const turns = corpus.cases.map((c) =>
          JSON.stringify([{ id: `c${c.id}`, name: "bash", args: { command: world.fill(c), timeout: 10_000 } }])
        )
        const r = yield* cli(["run", "-", "--root", world.dir, "--config", rules], `${turns.join("\n")}\n`)
        expect(r.stderr).toBe("")
        const results = new Map(
          r.stdout
            .split("\n")
            .filter((l) => l !== "")
            .map(
              (l) => JSON.parse(l) as { id: string; status: string; metadata: { permission?: { behavior: string } } }
            )
            .map((x) => [x.id, x])
        )
        expect(results.size).toBe(corpus.cases.length)
        const wrong: Array<string> = []
        for (const c of corpus.cases) {
          const result = results.get(`c${c.id}`)!
          const behavior = result.metadata.permission?.behavior
          if (c.expect === "refuse" && result.status !== "denied") wrong.push(`#${c.id} ran: ${c.command}`)
          if (c.expect === "deny" && behavior !== "deny") wrong.push(`#${c.id} not denied: ${c.command}`)
          if (c.expect === "allow" && behavior !== "allow") wrong.push(`#${c.id} refused: ${c.command}`)
        }
        expect(wrong).toEqual([])
        expect(world.markers()).toEqual([])
        expect(world.victimExists()).toBe(true)
      }),
    180_000
  )

  it.live(
    "call: refused without --yes (exit 1, status denied, the reason on stdout); an allowed one runs",
    () =>
      Effect.gen(function* () {
        const pick = (id: number) => corpus.cases.find((c) => c.id === id)!
        const refused = corpus.cases.filter((c) => c.expect === "refuse").slice(0, 3)
        for (const c of refused) {
          const r = yield* cli([
            "call",
            "bash",
            JSON.stringify({ command: world.fill(c) }),
            "--root",
            world.dir,
            "--config",
            rules
          ])
          expect(r.code).toBe(1)
          expect(r.stderr).toBe("status: denied\n")
          expect(r.stdout).toContain("needs approval")
          expect(NodeFs.existsSync(world.marker(c.id))).toBe(false)
        }
        const allowed = pick(2)
        const ok = yield* cli([
          "call",
          "bash",
          JSON.stringify({ command: allowed.command }),
          "--root",
          world.dir,
          "--config",
          rules
        ])
        expect(ok.code).toBe(0)
        expect(ok.stdout).toContain("input.txt")
      }),
    120_000
  )
})
