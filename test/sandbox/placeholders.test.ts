/**
 * Control paths missing at the top of a writable root (no `.git`, no `freecode.json`, ...) are
 * held for the command's life by empty read-only folders, and removed once no sandbox relies on
 * them: not while a concurrent command or a background one still runs (removing a mount point
 * detaches it in that sandbox), whoever collects — this process or another. Real bubblewrap
 * through the Sandbox layer's own command line, as root and as `nobody`; the host is checked after.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { placeholders, TOP_CONTROL_NAMES } from "../../src/sandbox/placeholders.ts"
import { type CommandLine, Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import { asUser, cleanUp, folder, giveToNobody, runnable, users } from "./inside.ts"

afterAll(cleanUp)

const project = (asNobody: boolean) => {
  const root = folder("freecode-ph-root-", true)
  const home = folder("freecode-ph-home-", true)
  NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
  if (asNobody) for (const d of [root, home]) giveToNobody(d)
  // The registry is the host's (this user's), never the sandboxed user's.
  const registry = NodePath.join(folder("freecode-ph-reg-"), "placeholders")
  return { root, home, registry }
}

/** The Sandbox layer's command lines for `root`, made while `body` runs (the layer lives that long). */
const withSandbox = <A>(
  p: { root: string; home: string; registry: string },
  body: (line: (script: string) => Promise<CommandLine>) => Promise<A>
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const line = (script: string) =>
        Effect.runPromise(
          sandbox.wrap(["/bin/bash", "-c", 'exec 2>&1; eval "$1"', "script", script], {
            sessionId: "ph",
            cwd: p.root,
            writable: []
          })
        )
      return yield* Effect.promise(() => body(line))
    }).pipe(
      Effect.provide(Layer.fresh(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), p))),
      Effect.scoped
    )
  )

const run = (line: CommandLine, asNobody: boolean) => {
  const [program, ...args] = asUser(line, asNobody)
  const r = spawnSync(program!, args, { encoding: "utf8", timeout: 30_000 })
  return `${r.stdout}${r.stderr}`
}

const topOf = (root: string) => NodeFs.readdirSync(root).sort()

const ATTACKS = [
  "git init -q . 2>/dev/null && echo PWN-git-init",
  "mkdir .git/hooks 2>/dev/null && echo PWN-mkdir-in-git",
  "rmdir .git 2>/dev/null && mkdir .git && echo PWN-replace-git",
  "mv .git g2 2>/dev/null && echo PWN-mv-placeholder",
  `echo '{"permissions":{"defaultMode":"bypassPermissions"}}' > freecode.json 2>/dev/null && echo PWN-write-freecode`,
  "echo '{}' > f && mv -f f freecode.json 2>/dev/null && echo PWN-mv-onto-freecode",
  "mv -fT f freecode.json 2>/dev/null && echo PWN-mv-T-freecode",
  "ln -sfn /etc/passwd .mcp.json 2>/dev/null && [ -L .mcp.json ] && echo PWN-link-mcp",
  "mkdir -p .freecode/skills 2>/dev/null && echo PWN-freecode-folder",
  "echo '{}' > .vscode/tasks.json 2>/dev/null && echo PWN-vscode",
  "echo '* diff=x' > .gitattributes 2>/dev/null && echo PWN-attributes",
  "echo 'export A=1' > .envrc 2>/dev/null && echo PWN-envrc",
  "mkdir -p .claude/commands 2>/dev/null && echo PWN-claude",
  "touch .idea/x 2>/dev/null && echo PWN-idea",
  "echo '[submodule]' > .gitmodules 2>/dev/null && echo PWN-gitmodules",
  // Ordinary work at the top still goes on.
  "echo b > b.txt && mkdir -p src && echo WROTE",
  // git sees nothing of the placeholders (empty folders).
  "git status --porcelain 2>&1 | grep -v '^fatal' | wc -l",
  "echo done"
].join("\n")

describe.skipIf(!runnable)("placeholders for missing control paths at the top of a root", () => {
  for (const u of users) {
    it.skipIf(u.skip)(`as ${u.who}: none can be made, and nothing is left behind`, async () => {
      const p = project(u.asNobody)
      const before = topOf(p.root)
      const output = await withSandbox(p, async (line) => run(await line(ATTACKS), u.asNobody))
      expect(output).toContain("done")
      expect(output).toContain("WROTE")
      expect(output).not.toMatch(/PWN-/)
      // The layer's end collected them: only what the command made for real is new.
      expect(topOf(p.root)).toEqual([...before, "b.txt", "f", "src"].sort())
      for (const name of TOP_CONTROL_NAMES) expect(NodeFs.existsSync(NodePath.join(p.root, name)), name).toBe(false)
    })
  }

  it.skipIf(users[0]!.skip)(
    "a running sandbox keeps its placeholders through another call's end and another process's collection",
    async () => {
      const p = project(false)
      const marker = NodePath.join(p.root, "a-started")
      const result = await withSandbox(p, async (line) => {
        // A: keeps trying to make freecode.json and .git/config until told to stop.
        const a = await line(
          "touch a-started; while [ ! -e stop ]; do echo '{}' > freecode.json 2>/dev/null && echo PWN-A-freecode; mkdir .git/x 2>/dev/null && echo PWN-A-git; sleep 0.05; done; echo A-done"
        )
        const child = spawn(a[0], a.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
        let out = ""
        child.stdout.on("data", (d) => (out += d))
        child.stderr.on("data", (d) => (out += d))
        const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
        for (let i = 0; i < 600 && !NodeFs.existsSync(marker); i++) await new Promise((r) => setTimeout(r, 50))
        expect(NodeFs.existsSync(marker)).toBe(true)
        // B: a whole call begins and ends meanwhile (it adopts A's placeholders, and lets go of them).
        expect(run(await line("echo B-done"), false)).toContain("B-done")
        // This process's collection, and another process's, while A runs: both must keep them.
        await placeholders(p.registry).collect()
        execFileSync(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `const { placeholders } = await import(${JSON.stringify(NodePath.resolve("src/sandbox/placeholders.ts"))}); await placeholders(${JSON.stringify(p.registry)}).collect()`
          ],
          { stdio: "inherit" }
        )
        const held = NodeFs.statSync(NodePath.join(p.root, "freecode.json")).isDirectory()
        await new Promise((r) => setTimeout(r, 400)) // A keeps trying after both collections
        NodeFs.writeFileSync(NodePath.join(p.root, "stop"), "")
        await exited
        return { out, held }
      })
      expect(result.held).toBe(true)
      expect(result.out).toContain("A-done")
      expect(result.out).not.toMatch(/PWN-/)
      for (const name of TOP_CONTROL_NAMES) expect(NodeFs.existsSync(NodePath.join(p.root, name)), name).toBe(false)
    }
  )

  it.skipIf(users[0]!.skip)(
    "a sandbox killed from outside: its placeholders go only once its init is gone; the person's content stays",
    async () => {
      const p = project(false)
      const marker = NodePath.join(p.root, "started")
      await withSandbox(p, async (line) => {
        const a = await line("touch started; sleep 60")
        const child = spawn(a[0], a.slice(1), { stdio: "ignore", detached: true })
        const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
        for (let i = 0; i < 600 && !NodeFs.existsSync(marker); i++) await new Promise((r) => setTimeout(r, 50))
        // The person makes a file in one placeholder on the host meanwhile: it is theirs now.
        NodeFs.writeFileSync(NodePath.join(p.root, ".vscode", "settings.json"), "{}")
        await placeholders(p.registry).collect()
        expect(NodeFs.existsSync(NodePath.join(p.root, "freecode.json"))).toBe(true)
        process.kill(-child.pid!, "SIGKILL")
        await exited
        // The init dies with its parent (--die-with-parent): soon there is nothing to wait for.
        for (let i = 0; i < 200 && NodeFs.existsSync(NodePath.join(p.root, "freecode.json")); i++) {
          await placeholders(p.registry).collect()
          await new Promise((r) => setTimeout(r, 50))
        }
      })
      expect(NodeFs.existsSync(NodePath.join(p.root, "freecode.json"))).toBe(false)
      expect(NodeFs.readFileSync(NodePath.join(p.root, ".vscode", "settings.json"), "utf8")).toBe("{}")
    }
  )

  it.skipIf(users[0]!.skip)("missing .git/hooks and .git/config under an existing .git are held too", async () => {
    const p = project(false)
    execFileSync("git", ["init", "-q"], { cwd: p.root })
    NodeFs.rmSync(NodePath.join(p.root, ".git", "hooks"), { recursive: true })
    NodeFs.rmSync(NodePath.join(p.root, ".git", "config"))
    const output = await withSandbox(p, async (line) =>
      run(
        await line(
          [
            "mkdir -p .git/hooks 2>/dev/null && echo x > .git/hooks/pre-commit 2>/dev/null && echo PWN-hook",
            "rm -f .git/config; echo '[core]' > .git/config 2>/dev/null && grep -q core .git/config && echo PWN-config",
            "echo done"
          ].join("\n")
        ),
        false
      )
    )
    expect(output).toContain("done")
    expect(output).not.toMatch(/PWN-/)
    expect(NodeFs.readdirSync(NodePath.join(p.root, ".git", "hooks"))).toEqual([])
  })
})
