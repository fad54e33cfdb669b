/**
 * Read-only commands run without asking, flag-aware: the list's commands and composites of them
 * are allowed with no rule in default and acceptEdits modes; the options that make an allowed
 * program write a file or run a program are shown to do so in a real git repository, then
 * refused; paths outside the project or to secrets ask, as the read tool would.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-ro-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

/** A small git repository with one commit and a change, so git's read-only commands have work. */
const makeRepo = (dir: string) => {
  NodeFs.mkdirSync(NodePath.join(dir, "src"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "input.txt"), "b\na\nc\n")
  NodeFs.writeFileSync(NodePath.join(dir, "src", "a.ts"), "export const a = 1\n")
  NodeFs.writeFileSync(NodePath.join(dir, ".env"), "TOKEN=1\n")
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir, stdio: "ignore" })
  git("init", "-q")
  git("add", "input.txt", "src")
  git("commit", "-qm", "one")
  NodeFs.writeFileSync(NodePath.join(dir, "input.txt"), "b\na\nc\nd\n")
}
const root = NodePath.join(base, "project")
makeRepo(root)

/**
 * git subcommands that read the index or diff run what the repository's config names
 * (core.fsmonitor on every index read, textconv, external diff, gpg for signatures): they ask.
 * Recursive search reads every file below, secrets included: it asks.
 */
const CONFIGURED = [
  "git status",
  "git status --short",
  "git diff",
  "git log --oneline -5",
  "git show --stat HEAD",
  "git ls-files",
  "grep -rn a src"
]

const READ_ONLY = [
  "ls -la src",
  "ls",
  "git branch",
  "git branch -a -v",
  "git rev-parse HEAD",
  "cat input.txt | wc -l",
  "grep -n a src/a.ts",
  "grep -n '/usr' input.txt",
  "sed -n -e '/hello/p' input.txt",
  "awk '/hello/ {print $1}' input.txt",
  "find . -name '*.ts' -not -path './.git/*'",
  "sort -u input.txt",
  "sed -n '1,2p' input.txt",
  "sed -e 's/a/b/g' input.txt",
  "sed -ne '1p' input.txt",
  "echo /etc/passwd",
  "awk '{print $1}' input.txt",
  "head -n 2 input.txt && tail -n 1 input.txt",
  "[ -f input.txt ] && echo yes",
  "wc -l src/*.ts",
  "du -sh src",
  "command -v ls"
]

/** Allowed programs whose own options write a file or run a program: each changes the directory when run. */
const STRETCH = [
  "git diff --output=out",
  "git log -p --output=out",
  "sort -o out input.txt",
  "sort -uo out input.txt",
  "sort --outp=out input.txt",
  "sed -n 'w out' input.txt",
  "sed 's/a/b/w out' input.txt",
  "sed '1e touch out' input.txt",
  "sed -i s/a/b/ input.txt",
  "sed --in-place=.bak s/a/b/ input.txt",
  "awk 'BEGIN{system(\"touch out\")}'",
  "awk '{print > \"out\"}' input.txt",
  "awk '{print | \"cat > out\"}' input.txt",
  "find . -maxdepth 1 -name input.txt -exec touch out \\;",
  "find . -maxdepth 1 -name input.txt -delete",
  "find . -maxdepth 0 -fprint out",
  "git branch new-branch",
  "git -c alias.st='!touch out' st",
  "git -C src log -1 --output=../out",
  "uniq input.txt out",
  "sed -ne 'w out' input.txt"
]

/** Options that would run a program or change the system, not run here. */
const REFUSED_UNRUN = [
  "tree -R -H . .",
  "hostname --file=x",
  "git diff --outp=out",
  "git -c core.pager='touch out' -p log",
  "rg --pre ./x a",
  "rg -z a",
  "sort --compress-program=gzip input.txt",
  "date -s 2020-01-01"
]

const ctx: ToolContext = { sessionId: "ro", callId: "c", root, canSeeImages: false, emit: () => Effect.void }
const engineWith = (config: FreecodeConfigData) =>
  PermissionEngine.layer.pipe(
    Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(root)]),
    Layer.provideMerge(nodeLayer)
  )

const decide = (commands: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    return yield* Effect.forEach(commands, (command) =>
      Effect.map(engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx }), (d) => ({
        command,
        behavior: d.behavior,
        reason: d.reason
      }))
    )
  })

const listing = (dir: string): string =>
  execFileSync("/bin/bash", ["-c", "find . -path ./.git -prune -o -type f -exec md5sum {} + | sort; git branch"], {
    cwd: dir,
    encoding: "utf8"
  })

describe("read-only commands", () => {
  it.live("run without asking in default mode, composites included", () =>
    Effect.gen(function* () {
      const decided = yield* decide(READ_ONLY)
      expect(decided.filter((d) => d.behavior !== "allow").map((d) => `${d.command}: ${d.reason}`)).toEqual([])
      expect(decided[0]!.reason).toBe("Allowed by the read-only command list.")
    }).pipe(Effect.provide(engineWith({})))
  )

  it.live("a composite of read-only commands and commands a rule allows is allowed by both", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const d = yield* engine.decide({
        tool: BashTool as unknown as Tool,
        args: { command: "npm test && git branch" },
        ctx
      })
      expect([d.behavior, d.by, d.rule, d.reason]).toEqual([
        "allow",
        "rule",
        "Bash(npm test)",
        "Allowed by Bash(npm test) and the read-only command list."
      ])
      const only = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command: "ls | wc -l" }, ctx })
      expect([only.behavior, only.by, only.rule]).toEqual(["allow", "mode", undefined])
      const mixed = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command: "ls && touch x" }, ctx })
      expect(mixed.behavior).toBe("ask")
      expect(mixed.reason).toContain("No allow rule covers `touch x`")
    }).pipe(Effect.provide(engineWith({ permissions: { allow: ["Bash(npm test)"] } })))
  )

  it.live("run without asking in acceptEdits mode; not in dontAsk, nor when turned off", () =>
    Effect.gen(function* () {
      const accept = yield* decide(["ls", "git branch"]).pipe(
        Effect.provide(engineWith({ permissions: { defaultMode: "acceptEdits" } }))
      )
      expect(accept.map((d) => d.behavior)).toEqual(["allow", "allow"])
      const off = yield* decide(["ls", "git status"]).pipe(
        Effect.provide(engineWith({ permissions: { readOnlyCommands: false } }))
      )
      expect(off.map((d) => d.behavior)).toEqual(["ask", "ask"])
      const dontAsk = yield* decide(["ls"]).pipe(
        Effect.provide(engineWith({ permissions: { defaultMode: "dontAsk" } }))
      )
      expect(dontAsk.map((d) => d.behavior)).toEqual(["deny"])
    })
  )

  it("the stretch class is live: each command writes, deletes or runs something when run", () => {
    const dead = STRETCH.filter((command, i) => {
      const dir = NodePath.join(base, `live-${i}`)
      makeRepo(dir)
      const before = listing(dir)
      try {
        execFileSync("/bin/bash", ["-c", command], { cwd: dir, stdio: "ignore", timeout: 10_000 })
      } catch {
        // What it left behind is what counts.
      }
      return listing(dir) === before
    })
    expect(dead).toEqual([])
  }, 120_000) // one real repository and bash run per command: a bound on a hang, not a clock

  it.live("the stretch class and options that run programs are not read-only", () =>
    Effect.gen(function* () {
      const decided = yield* decide([...STRETCH, ...REFUSED_UNRUN])
      expect(decided.filter((d) => d.behavior === "allow").map((d) => d.command)).toEqual([])
    }).pipe(Effect.provide(engineWith({})))
  )

  it.live("a path outside the project or to a secret asks, as the read tool would", () =>
    Effect.gen(function* () {
      const decided = yield* decide([
        "cat /etc/passwd",
        "cat ../x",
        "cat .env",
        "ls ~",
        "grep -r root /etc",
        "cat < /etc/passwd",
        "git diff --no-index /etc/passwd input.txt",
        "ls $HOME",
        "cat *"
      ])
      expect(decided.filter((d) => d.behavior === "allow").map((d) => d.command)).toEqual([])
    }).pipe(Effect.provide(engineWith({})))
  )

  it("git status runs the repository's core.fsmonitor: the class is live", () => {
    const dir = NodePath.join(base, "fsmonitor")
    makeRepo(dir)
    execFileSync("git", ["config", "core.fsmonitor", "touch fsmonitor-ran; false"], { cwd: dir })
    execFileSync("/bin/bash", ["-c", "git status >/dev/null 2>&1; git ls-files >/dev/null 2>&1; true"], { cwd: dir })
    expect(NodeFs.existsSync(NodePath.join(dir, "fsmonitor-ran"))).toBe(true)
  })

  it.live("git subcommands that run configured programs, and recursive search, ask", () =>
    Effect.gen(function* () {
      const decided = yield* decide(CONFIGURED)
      expect(decided.map((d) => d.behavior)).toEqual(CONFIGURED.map(() => "ask"))
    }).pipe(Effect.provide(engineWith({})))
  )

  it.live("a deny rule still wins over the list", () =>
    Effect.gen(function* () {
      const decided = yield* decide(["git branch", "ls"])
      expect(decided.map((d) => d.behavior)).toEqual(["deny", "allow"])
    }).pipe(Effect.provide(engineWith({ permissions: { deny: ["Bash(git branch:*)"] } })))
  )
})
