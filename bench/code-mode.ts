/**
 * Code mode against granular calls and one shell command, on the survey's two tasks, scripted
 * (no model): the rename (DB_HOST → DATABASE_HOST across compose, Terraform, .env and docs, with
 * DB_HOST_OLD unchanged) and the reference lookup (the callers of getUserById; a same-named
 * method in a second module; mentions in comments and docs). For each: model round trips, the
 * characters and o200k tokens that enter the context (the calls the model writes and the results
 * it reads), and time. Then, in the same run, a deny rule on .env: the program's edit of it is
 * refused while the shell command, approved once as a whole, rewrote it. Then the runtime:
 * a program's cold and warm start, and a nested call's overhead over a direct dispatch.
 *   node bench/code-mode.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../layers/config.ts"
import { toolSystem } from "../layers/system.ts"
import { acquire } from "../src/code/thread.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../src/output/config.ts"
import { Approval } from "../src/permission/approval.ts"
import { ToolRegistry } from "../src/registry/registry.ts"
import { definitionOf } from "../src/surface/surface.ts"
import { countTokens, encodeO200k } from "../src/surface/tokens.ts"
import type { ToolCall, ToolResult } from "../src/tool/result.ts"

const FILES: Record<string, string> = {
  "docker-compose.yml":
    "services:\n  api:\n    environment:\n      - DB_HOST=db\n      - DB_HOST_OLD=legacy\n      - DB_PORT=5432\n",
  "infra/main.tf": 'variable "DB_HOST" {}\nresource "x" "y" {\n  host = var.DB_HOST\n  old  = var.DB_HOST_OLD\n}\n',
  ".env": "DB_HOST=localhost\nDB_HOST_OLD=old.local\n",
  "docs/setup.md": "# Setup\nSet DB_HOST to the database host. DB_HOST_OLD is kept for the migration.\n",
  "src/users/repo.ts": "export class UserRepo {\n  getUserById(id: string) { return db.find(id) }\n}\n",
  "src/admin/repo.ts":
    "export class AdminRepo {\n  // not the user one: getUserById here reads admins\n  getUserById(id: string) { return admins.find(id) }\n}\n",
  "src/api/handler.ts":
    'import { UserRepo } from "../users/repo"\nconst repo = new UserRepo()\nexport const get = (id: string) => repo.getUserById(id)\n',
  "src/api/admin.ts":
    'import { AdminRepo } from "../admin/repo"\nexport const admin = (id: string) => new AdminRepo().getUserById(id)\n',
  "docs/api.md": "getUserById(id) returns the user; see src/users/repo.ts.\n"
}

const project = () => {
  const root = mkdtempSync(join(tmpdir(), "freecode-code-bench-"))
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, name)), { recursive: true })
    writeFileSync(join(root, name), text)
  }
  return root
}

const system = (root: string, config: FreecodeConfigData = {}) =>
  Layer.build(
    toolSystem({
      root,
      config,
      outputConfig: OutputConfig.layerWith({}),
      code: true,
      approval: Approval.layerApproveAll
    }).pipe(Layer.provideMerge(NodeServices.layer))
  )

interface Tally {
  trips: number
  calls: number
  chars: number
  tokens: number
  ms: number
}

/**
 * Runs turns of calls (each turn one round trip) and counts what enters the context, the same
 * for every side: each call as the model writes it (`{name, args}` JSON: a program's text and a
 * command's are escaped alike) and each result as the model reads it (`modelOutput`).
 */
const drive = (
  dispatcher: Dispatcher["Service"],
  turns: ReadonlyArray<(prev: ReadonlyArray<ToolResult>) => ReadonlyArray<ToolCall>>
) =>
  Effect.gen(function* () {
    const t: Tally = { trips: 0, calls: 0, chars: 0, tokens: 0, ms: 0 }
    const started = performance.now()
    let prev: ReadonlyArray<ToolResult> = []
    const seen: Array<string> = []
    for (const turn of turns) {
      const calls = turn(prev)
      t.trips += 1
      t.calls += calls.length
      prev = yield* dispatcher.dispatchBatch(calls, { sessionId: "bench" })
      const text = [
        ...calls.map((c) => JSON.stringify({ name: c.name, args: c.args })),
        ...prev.map((r) => r.modelOutput)
      ].join("\n")
      seen.push(...prev.map((r) => r.modelOutput))
      t.chars += text.length
      t.tokens += encodeO200k(text).length
    }
    t.ms = performance.now() - started
    return { tally: t, last: prev, seen: seen.join("\n") }
  })

let n = 0
const id = () => `c${++n}`
const call = (name: string, args: unknown): ToolCall => ({ id: id(), name, args })

const RENAMED = ["docker-compose.yml", "infra/main.tf", ".env", "docs/setup.md"]
const renamedText = (name: string) => FILES[name]!.replace(/DB_HOST(?![A-Za-z0-9_])/g, "DATABASE_HOST")

/** Granular rename: grep, read each file, edit each occurrence, grep to check. */
const renameGranular = [
  () => [call("grep", { pattern: "DB_HOST\\b" })],
  () => RENAMED.map((f) => call("read", { filePath: f })),
  () => [
    call("edit", { filePath: "docker-compose.yml", oldString: "- DB_HOST=db", newString: "- DATABASE_HOST=db" }),
    call("edit", { filePath: "infra/main.tf", oldString: 'variable "DB_HOST"', newString: 'variable "DATABASE_HOST"' }),
    call("edit", { filePath: "infra/main.tf", oldString: "var.DB_HOST\n", newString: "var.DATABASE_HOST\n" }),
    call("edit", { filePath: ".env", oldString: "DB_HOST=localhost", newString: "DATABASE_HOST=localhost" }),
    call("edit", { filePath: "docs/setup.md", oldString: "Set DB_HOST to", newString: "Set DATABASE_HOST to" })
  ],
  () => [call("grep", { pattern: "DB_HOST\\b" })]
]
const SED = `sed -i -E 's/DB_HOST([^_A-Za-z0-9]|$)/DATABASE_HOST\\1/g' ${RENAMED.join(" ")} && grep -rn 'DB_HOST\\b' . || true`
const renameShell = [() => [call("bash", { command: SED, description: "rename DB_HOST" })]]
/**
 * The program an agent writes from the description: `update` each file with a regex replace
 * (read's text in, write's content out); a refusal is listed by the tool, so it is only caught,
 * so that one refused file does not stop the others.
 */
const RENAME_PROGRAM = `for (const f of ${JSON.stringify(RENAMED).replace(/,/g, ", ")})
  await update(f, (t) => t.replace(/DB_HOST\\b/g, "DATABASE_HOST")).catch(() => {})`
/** The same without the helper: read's `text`, then write; what `update` saves is the difference. */
const RENAME_BY_HAND = `for (const filePath of ${JSON.stringify(RENAMED).replace(/,/g, ", ")}) {
  const { text } = await tools.read({ filePath })
  await tools.write({ filePath, content: text.replace(/DB_HOST\\b/g, "DATABASE_HOST") }).catch(() => {})
}`
const renameProgram = [() => [call("code", { program: RENAME_PROGRAM })]]
const renameByHand = [() => [call("code", { program: RENAME_BY_HAND })]]

/** Reference lookup of getUserById callers. */
const refsGranular = [
  () => [call("grep", { pattern: "getUserById" })],
  () =>
    ["src/users/repo.ts", "src/admin/repo.ts", "src/api/handler.ts", "src/api/admin.ts"].map((f) =>
      call("read", { filePath: f })
    )
]
// grep, not rg: rg is not on every machine's PATH (the grep tool brings its own).
const refsShell = [
  () => [
    call("bash", {
      command: "grep -rn 'getUserById' . ; grep -rn 'UserRepo\\|AdminRepo' src",
      description: "find callers"
    })
  ]
]
const REFS_PROGRAM = `const { output } = await tools.grep({ pattern: "getUserById\\\\(", include: "*.ts" })
for (const [, at, code] of output.matchAll(/^(.+?:\\d+):(.*)$/gm))
  if (!/^\\s*(\\/\\/|getUserById)/.test(code)) {
    const file = (await tools.read({ filePath: at.split(":")[0] })).output
    console.log(at, /UserRepo/.test(file) ? "UserRepo" : "AdminRepo")
  }`
const refsProgram = [() => [call("code", { program: REFS_PROGRAM })]]

/** What each task must have done, whatever the side: a side that failed is not measured. */
const checkRename = (root: string, seen: string, denyEnv: boolean) => {
  for (const f of RENAMED) {
    const want = denyEnv && f === ".env" ? FILES[f]! : renamedText(f)
    if (readFileSync(join(root, f), "utf8") !== want) return `${f} was not renamed as asked`
  }
  return /invalid arguments|not found|threw/i.test(seen) ? `a call failed: ${seen}` : undefined
}
const checkRefs = (_root: string, seen: string) =>
  ["src/api/handler.ts:3", "src/api/admin.ts:2"].every((at) => seen.includes(at)) &&
  !/not found|invalid arguments|threw/i.test(seen)
    ? undefined
    : `the callers were not found: ${seen}`

const row = (name: string, t: Tally) =>
  `| ${name} | ${t.trips} | ${t.calls} | ${t.chars} | ${t.tokens} | ${t.ms.toFixed(0)} |`

const measure = (
  label: string,
  turns: ReadonlyArray<() => ReadonlyArray<ToolCall>>,
  check: (root: string, seen: string) => string | undefined,
  config?: FreecodeConfigData
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const root = project()
      const ctx = yield* system(root, config)
      const { tally, last, seen } = yield* drive(Context.get(ctx, Dispatcher), turns)
      const problem = check(root, seen)
      const env = readFileSync(join(root, ".env"), "utf8")
      rmSync(root, { recursive: true, force: true })
      if (problem !== undefined) return yield* Effect.die(new Error(`${label}: ${problem}`))
      return { label, tally, last, env }
    })
  )

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** What a surface's declarations cost on every request (o200k tokens of `{name, description, inputSchema}`). */
const declared = (names: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const root = project()
      const ctx = yield* system(root)
      const tools = yield* Context.get(ctx, ToolRegistry).tools
      rmSync(root, { recursive: true, force: true })
      return tools.filter((t) => names.includes(t.id)).reduce((sum, t) => sum + countTokens(definitionOf(t)), 0)
    })
  )

const main = Effect.gen(function* () {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}, ${cpus().length} cores\n`
  )
  console.log("| task | round trips | calls | context chars | context tokens | ms |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  const rename = (root: string, seen: string) => checkRename(root, seen, false)
  const results: Array<Effect.Success<ReturnType<typeof measure>>> = []
  for (const [label, turns, check] of [
    ["rename: granular", renameGranular, rename],
    ["rename: one shell command", renameShell, rename],
    ["rename: one program", renameProgram, rename],
    ["rename: one program, read and write by hand", renameByHand, rename],
    ["references: granular", refsGranular, checkRefs],
    ["references: one shell command", refsShell, checkRefs],
    ["references: one program", refsProgram, checkRefs]
  ] as const) {
    const r = yield* measure(label, turns, check)
    results.push(r)
    console.log(row(label, r.tally))
  }
  const ratio = (a: number, b: number) => (a / b).toFixed(2)
  const [, rs, rp, rh, , fs, fp] = results
  const both = (r: ReadonlyArray<(typeof results)[number] | undefined>, k: "trips" | "tokens") =>
    r.reduce((s, x) => s + x!.tally[k], 0)
  console.log(
    `\nprogram / shell: rename trips ${ratio(rp!.tally.trips, rs!.tally.trips)}, tokens ${ratio(rp!.tally.tokens, rs!.tally.tokens)} (by hand ${ratio(rh!.tally.tokens, rs!.tally.tokens)}); references trips ${ratio(fp!.tally.trips, fs!.tally.trips)}, tokens ${ratio(fp!.tally.tokens, fs!.tally.tokens)}; both tasks tokens ${ratio(both([rp, fp], "tokens"), both([rs, fs], "tokens"))}`
  )
  console.log(`program's answers: ${[rp, fp].map((r) => JSON.stringify(r!.last[0]!.modelOutput)).join(", ")}`)
  const [shellDecl, codeDecl] = [yield* declared(["bash", "output"]), yield* declared(["code", "output"])]
  console.log(
    `declared on every request (not in the rows above): shell surface (bash, output) ${shellDecl} tokens, code surface (code, output) ${codeDecl} tokens`
  )

  // A deny rule on .env: the shell's one approval covered the whole command; the program's edit is refused.
  const deny: FreecodeConfigData = { permissions: { deny: ["Edit(./.env)"] } }
  const shell = yield* measure("shell with deny", renameShell, (root, seen) => checkRename(root, seen, false), deny)
  const program = yield* measure(
    "program with deny",
    renameProgram,
    (root, seen) => checkRename(root, seen, true),
    deny
  )
  console.log(
    `\nwith deny Edit(./.env): after the shell command .env reads ${JSON.stringify(shell.env.split("\n")[0])}; after the program ${JSON.stringify(program.env.split("\n")[0])}`
  )
  console.log(`program's answer: ${program.last[0]!.modelOutput.replace(/\n/g, " | ")}`)

  // The runtime: cold start (a fresh thread), warm start, nested call overhead (alternating rounds, medians).
  yield* Effect.scoped(
    Effect.gen(function* () {
      const root = project()
      const ctx = yield* system(root)
      const d = Context.get(ctx, Dispatcher)
      const run = (program: string) => d.dispatch(call("code", { program }), { sessionId: "rt" })
      const cpu = () => {
        const u = process.cpuUsage()
        return (u.user + u.system) / 1000
      }
      const cold: Array<number> = []
      const coldCpu: Array<number> = []
      for (let i = 0; i < 7; i++) {
        // Empty the pool of warm threads: the next program starts a thread and loads the interpreter.
        // (Taking more than the pool holds starts threads: they are ended, and their ends awaited,
        // before the clock starts, so their start-up CPU is not counted as the program's.)
        const held = [acquire(), acquire(), acquire()]
        yield* Effect.promise(() => Promise.all(held.map((w) => w.terminate())))
        const [t, c] = [performance.now(), cpu()]
        yield* run("return 1")
        cold.push(performance.now() - t)
        coldCpu.push(cpu() - c)
      }
      const warm: Array<number> = []
      const warmCpu: Array<number> = []
      for (let i = 0; i < 21; i++) {
        const [t, c] = [performance.now(), cpu()]
        yield* run("return 1")
        warm.push(performance.now() - t)
        warmCpu.push(cpu() - c)
      }
      console.log(
        `\nprogram start (\`return 1\`, the whole code call): on a fresh thread (thread start + interpreter load) median ${median(cold).toFixed(1)} ms wall, ${median(coldCpu).toFixed(1)} ms CPU (${cold.length} runs); on a warm thread (a fresh interpreter runtime) median ${median(warm).toFixed(1)} ms wall, ${median(warmCpu).toFixed(1)} ms CPU (${warm.length} runs)`
      )
      // Wall time is what a caller waits; CPU time (every thread of the process) is what the call
      // costs, and is far less moved by the other processes on a loaded machine.
      const N = 200
      const rounds = 7
      const wall = { direct: [] as Array<number>, nested: [] as Array<number> }
      const cpuMs = { direct: [] as Array<number>, nested: [] as Array<number> }
      for (let r = 0; r < rounds; r++) {
        let t = performance.now()
        let c = cpu()
        for (let i = 0; i < N; i++) yield* d.dispatch(call("read", { filePath: "docs/api.md" }), { sessionId: `d${r}` })
        wall.direct.push((performance.now() - t) / N)
        cpuMs.direct.push((cpu() - c) / N)
        t = performance.now()
        c = cpu()
        const done = yield* d.dispatch(
          call("code", { program: `for (let i = 0; i < ${N}; i++) await tools.read({ filePath: "docs/api.md" })` }),
          { sessionId: `p${r}` }
        )
        if (done.status !== "ok") return yield* Effect.die(new Error(done.modelOutput))
        wall.nested.push((performance.now() - t - median(warm)) / N)
        cpuMs.nested.push((cpu() - c - median(warmCpu)) / N)
      }
      const report = (what: string, m: { direct: Array<number>; nested: Array<number> }) => {
        const diffs = m.direct.map((x, i) => m.nested[i]! - x)
        return `${what}: direct dispatch median ${median(m.direct).toFixed(3)} ms/call, from one program ${median(m.nested).toFixed(3)} ms/call, overhead median ${median(diffs).toFixed(3)} ms/call (rounds: ${diffs.map((x) => x.toFixed(2)).join(", ")})`
      }
      console.log(`read, ${N} calls × ${rounds} rounds, alternating:`)
      console.log(`  ${report("wall", wall)}`)
      console.log(`  ${report("CPU", cpuMs)}`)
      rmSync(root, { recursive: true, force: true })
    })
  )
})

Effect.runPromise(main).then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
