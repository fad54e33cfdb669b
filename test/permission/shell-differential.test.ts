/**
 * The analyzer against bash itself. Commands are generated (grammar, known classes, corpus
 * mutations; seeded), decided by the permission engine, then run by real bash with a clean
 * environment, a temp HOME, cwd in a temp dir and a PATH holding no program at all: every
 * program bash tries to run lands in `command_not_found_handle`, which only records its argv
 * (with builtins, nothing real runs). Two properties:
 *
 * - allowed ⇒ every program bash ran is one an allow rule or the read-only list covers;
 * - every program bash ran is among the analysis's candidates, or the analysis says what runs
 *   cannot be known (so a deny rule would have seen it or refused).
 *
 * Bounded: FREECODE_SHELL_SOAK=N runs N generated commands (default 120) with
 * FREECODE_SHELL_SEED (default fixed), for a longer local soak.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { commandSpecifier, matchesCommand } from "../../src/permission/rules.ts"
import { notReadOnly } from "../../src/permission/shell/read-only.ts"
import { analyzeCommand, READ_ONLY } from "../../src/permission/shell.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"
import { CLASSES, fromGrammar, mutate, random } from "./shell-generate.ts"
import { corpus } from "./shell-world.ts"

const COUNT = Number(process.env.FREECODE_SHELL_SOAK ?? 120)
const SEED = Number(process.env.FREECODE_SHELL_SEED ?? 17)

const ALLOW = [
  "Bash(ls:*)",
  "Bash(echo:*)",
  "Bash(cat:*)",
  "Bash(grep:*)",
  "Bash(printf:*)",
  "Bash(git status:*)",
  "Bash(true)",
  "Bash(find:*)",
  "Bash(xargs:*)",
  "Bash(env:*)",
  "Bash(test:*)",
  "Bash(read:*)",
  "Bash(declare:*)",
  "Bash(export:*)",
  "Bash(let:*)",
  "Bash(python3:*)"
]
const patterns = ALLOW.map((r) => commandSpecifier(r.slice(5, -1))).map((s) => ({
  words: s.text.split(" "),
  prefix: s.prefix
}))
/** Programs that only run their arguments (the rules look through them): what they run is what counts. */
const passThrough = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const [name, ...rest] = argv
  if (name === "nohup") return passThrough(rest)
  if (name === "time") return passThrough(rest[0] === "-p" ? rest.slice(1) : rest)
  if (name === "nice") return passThrough(rest[0] === "-n" ? rest.slice(2) : rest)
  if (name === "timeout") {
    let i = 0
    while (rest[i]?.startsWith("-")) i += /^-[sk]$/.test(rest[i]!) ? 2 : 1
    return passThrough(rest.slice(i + 1))
  }
  return argv
}
const covered = (ran: ReadonlyArray<string>) => {
  const argv = passThrough(ran)
  return (
    patterns.some((p) => matchesCommand(p, argv)) ||
    (READ_ONLY[argv[0]!] !== undefined && notReadOnly(argv) === undefined)
  )
}

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-diff-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))
const work = NodePath.join(base, "work")
const home = NodePath.join(base, "home")
const empty = NodePath.join(base, "empty-path")
for (const d of [work, home, empty]) NodeFs.mkdirSync(d)
NodeFs.writeFileSync(NodePath.join(work, "input.txt"), "b\na\n")

// Exported into bash through the environment, as bash imports functions.
const HANDLER = `() { printf '%s\\0' "$@" > "$MARKS/$BASHPID.$RANDOM"; return 127; }`

/** Corpus commands that are safe to run with no program on PATH: no paths, no builtins that reach outside. */
const runnable = (c: string) =>
  !c.replace(/\/dev\/null/g, "").includes("/") &&
  !/\b(cd|pushd|popd|kill|exec|hash|enable|ulimit|builtin|source|command\s+-p|while|until|for|select|coproc)\b|(^|[;&|\s])\.\s/.test(
    c
  )

const cmds = NodePath.join(base, "commands")
const marksDir = NodePath.join(base, "marks")
for (const d of [cmds, marksDir]) NodeFs.mkdirSync(d)

/**
 * Runs every command file in $1 with bash, in a subshell each, marks in $2/<n>. The driver uses
 * builtins only (it has the same empty PATH), and gives each command 3 s of CPU: with no
 * program to run, nothing can block for long.
 */
const DRIVER = `cd "$3" || exit 1
ulimit -t 3
for f in "$1"/*; do
  n=\${f##*/}; c=; IFS= read -r -d '' c < "$f"
  ( export MARKS="$2/$n"; exec /bin/bash -c "$c" ) </dev/null >/dev/null 2>&1
done
exit 0`

const generate = (): ReadonlyArray<string> => {
  const r = random(SEED)
  const seeds = corpus.cases.map((c) => c.command.replaceAll("{M}", "marker")).filter(runnable)
  // The corpus's allowed commands as they are, so the allow side is exercised too.
  const allowed = corpus.cases.filter((c) => c.expect === "allow").map((c) => c.command.replaceAll("{M}", "marker"))
  const out = new Set<string>([...CLASSES, ...allowed.filter(runnable)])
  const fixed = out.size
  while (out.size < COUNT + fixed) {
    const k = r.int(3)
    const c = k === 0 ? fromGrammar(r) : mutate(r, k === 1 ? r.pick(CLASSES) : r.pick(r.next() < 0.5 ? allowed : seeds))
    if (runnable(c)) out.add(c)
  }
  return [...out]
}

const ctx: ToolContext = { sessionId: "diff", callId: "c", root: work, canSeeImages: false, emit: () => Effect.void }
const layer = PermissionEngine.layer.pipe(
  Layer.provide([FreecodeConfig.layerWith({ permissions: { allow: ALLOW } }), Workspace.layer(work)]),
  Layer.provideMerge(nodeLayer)
)

const basename = (w: string) => w.slice(w.lastIndexOf("/") + 1)

describe("the analyzer against real bash", () => {
  it("the harness sees what bash runs: a program with no shim is recorded, a builtin is not", () => {
    const marks = NodePath.join(base, "probe")
    NodeFs.mkdirSync(marks)
    try {
      execFileSync("/bin/bash", ["-c", "echo hi >/dev/null; touch a 'b c'; $'\\x72m' x"], {
        cwd: work,
        env: { PATH: empty, HOME: home, MARKS: marks, "BASH_FUNC_command_not_found_handle%%": HANDLER },
        stdio: "ignore"
      })
    } catch {
      // The last program was not found: exit 127.
    }
    const seen = NodeFs.readdirSync(marks).map((f) => NodeFs.readFileSync(NodePath.join(marks, f), "utf8").split("\0"))
    expect(seen.map((a) => a.slice(0, -1)).sort()).toEqual([
      ["rm", "x"],
      ["touch", "a", "b c"]
    ])
  })

  it.live(
    `${COUNT} generated commands (seed ${SEED}): nothing allowed runs an unlisted program, nothing runs unseen`,
    () =>
      Effect.gen(function* () {
        const engine = yield* PermissionEngine
        const commands = generate()
        const t0 = performance.now()
        const decided = []
        for (const [i, command] of commands.entries()) {
          const decision = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx })
          const analysis = yield* analyzeCommand(command)
          NodeFs.writeFileSync(NodePath.join(cmds, String(i)), command)
          NodeFs.mkdirSync(NodePath.join(marksDir, String(i)))
          decided.push({
            command,
            allowed: decision.behavior === "allow",
            analysis,
            marks: NodePath.join(marksDir, String(i))
          })
        }
        const t1 = performance.now()
        // One driver runs them all: a process per command from the test runner costs far more.
        execFileSync("/bin/bash", ["-c", DRIVER, "driver", cmds, marksDir, work], {
          env: { PATH: empty, HOME: home, "BASH_FUNC_command_not_found_handle%%": HANDLER },
          stdio: "ignore",
          timeout: 120_000
        })
        const runs = decided
        console.log(
          `differential: ${runs.length} commands, ${runs.filter((r) => r.allowed).length} allowed, decided in ${(t1 - t0).toFixed(0)} ms, run in ${(performance.now() - t1).toFixed(0)} ms`
        )
        // Background jobs and process substitutions may still be writing.
        execFileSync("/bin/sleep", ["0.3"])
        const unsafe: Array<string> = []
        const unseen: Array<string> = []
        let allowed = 0
        for (const run of runs) {
          const ran = NodeFs.readdirSync(run.marks).map((f) =>
            NodeFs.readFileSync(NodePath.join(run.marks, f), "utf8").split("\0").slice(0, -1)
          )
          if (run.allowed) allowed++
          for (const argv of ran) {
            if (run.allowed && !covered(argv)) unsafe.push(`${JSON.stringify(run.command)} ran ${JSON.stringify(argv)}`)
            const names = new Set(run.analysis.candidates.map((c) => basename(c.words[0] ?? "")))
            if (run.analysis.opaque.length === 0 && !names.has(basename(argv[0] ?? "")))
              unseen.push(`${JSON.stringify(run.command)} ran ${JSON.stringify(argv)} unseen`)
          }
        }
        expect(unsafe).toEqual([])
        expect(unseen).toEqual([])
        // The test must have allowed some commands, or it proves nothing about allows.
        expect(allowed).toBeGreaterThan(10)
        expect(runs.length).toBeGreaterThanOrEqual(COUNT)
      }).pipe(Effect.provide(layer)),
    // A soak of thousands of commands takes minutes on a shared machine.
    Math.max(120_000, COUNT * 300)
  )
})
