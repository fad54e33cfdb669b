/**
 * The shell corpus end to end through `freecode-tools` as a real child process, non-interactively
 * (no --yes), running the real bash tool: every case in one `run`, and every case that must be
 * refused through its own `freecode-tools call bash`. Markers must never appear.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { corpus, makeShellWorld } from "./shell-world.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const world = makeShellWorld()
afterAll(world.cleanup)
const rules = `${world.dir}/corpus-rules.json`
const compileCache = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-shell-cache-"))
afterAll(() => NodeFs.rmSync(compileCache, { recursive: true, force: true }))
NodeFs.writeFileSync(rules, JSON.stringify(corpus.rules))

const cli = (args: ReadonlyArray<string>, input = "") =>
  Effect.promise(
    () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [MAIN, ...args], {
          cwd: world.dir,
          // The compile cache makes each of the many short CLI processes start faster.
          env: { ...process.env, ...world.env, NO_COLOR: "1", NODE_COMPILE_CACHE: compileCache }
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
              (l) =>
                JSON.parse(l) as {
                  id: string
                  status: string
                  metadata: { permission?: { behavior: string; by: string } }
                }
            )
            .map((x) => [x.id, x])
        )
        expect(results.size).toBe(corpus.cases.length)
        const wrong: Array<string> = []
        for (const c of corpus.cases) {
          const result = results.get(`c${c.id}`)!
          const behavior = result.metadata.permission?.behavior
          if (c.expect === "refuse" && result.status !== "denied") wrong.push(`#${c.id} ran: ${c.command}`)
          if (c.expect === "deny" && result.metadata.permission?.by !== "rule")
            wrong.push(`#${c.id} not denied: ${c.command}`)
          if (c.expect === "allow" && behavior !== "allow") wrong.push(`#${c.id} refused: ${c.command}`)
        }
        expect(wrong).toEqual([])
        expect(world.markers()).toEqual([])
        expect(world.victimExists()).toBe(true)
      }),
    180_000
  )

  it.live(
    "call bash: every case that must be refused, one real process each, without --yes: denied, exit 1, no marker",
    () =>
      Effect.gen(function* () {
        const refused = corpus.cases.filter((c) => c.expect === "refuse" || c.expect === "deny")
        const wrong: Array<string> = []
        yield* Effect.forEach(
          refused,
          (c) =>
            Effect.gen(function* () {
              const command = world.fill(c)
              const r = yield* cli([
                "call",
                "bash",
                JSON.stringify({ command, timeout: 10_000 }),
                "--json",
                "--root",
                world.dir,
                "--config",
                rules
              ])
              const result = JSON.parse(r.stdout) as {
                status: string
                modelOutput: string
                metadata: { permission?: { behavior: string; by: string } }
              }
              if (r.code !== 1 || result.status !== "denied") wrong.push(`#${c.id} ran (${result.status}): ${command}`)
              // A deny rule refuses before anyone (here: no one) is asked.
              if (c.expect === "deny" && result.metadata.permission?.by !== "rule")
                wrong.push(`#${c.id} not denied by a rule: ${command}`)
              if (result.modelOutput.length < 40) wrong.push(`#${c.id} says too little: ${result.modelOutput}`)
              if (NodeFs.existsSync(world.marker(c.id))) wrong.push(`#${c.id} left its marker: ${command}`)
            }),
          { concurrency: 2, discard: true }
        )
        expect(wrong).toEqual([])
        expect(refused.length).toBeGreaterThanOrEqual(100)
        expect(world.markers()).toEqual([])
        expect(world.victimExists()).toBe(true)
      }),
    // About 160 processes of ~1.3 s CPU each on a shared two-core machine.
    1_800_000
  )

  it.live(
    "call bash: an allowed case runs without --yes; a refused one says why on stdout, status on stderr",
    () =>
      Effect.gen(function* () {
        const allowed = corpus.cases.find((c) => c.id === 2)!
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
        const refused = corpus.cases.find((c) => c.id === 64)!
        const no = yield* cli([
          "call",
          "bash",
          JSON.stringify({ command: world.fill(refused) }),
          "--root",
          world.dir,
          "--config",
          rules
        ])
        expect(no.code).toBe(1)
        expect(no.stderr).toBe("status: denied\n")
        expect(no.stdout).toContain("needs approval")
        expect(no.stdout).toContain("No one is available to approve it here")
        expect(NodeFs.existsSync(world.marker(refused.id))).toBe(false)
      }),
    120_000
  )
})
