/**
 * What a mount cannot hold, held from the host (control-guard.ts, made-control-watch.ts, control-audit.ts):
 * - control paths a command makes anywhere in the project (a new `sub/.git` with a hook,
 *   `d/.vscode/tasks.json`, a `.git/commondir`) are moved aside into the state folder and named
 *   in the result, at the end and while a command still runs;
 * - existing nested ones (`old/.git/config`, `old/.git/hooks`, `pkg/.vscode`) are read-only;
 * - a bound file replaced from outside while a command runs (a rename over it, as `git config`
 *   and editors do) stops the command, and the new file, if written after the replacement, is
 *   moved aside: never left in place with the command's writes. A file inside a folder bound
 *   whole (`.git/hooks`) stays read-only through the same replacement.
 * Real bubblewrap through the Sandbox layer's own command lines, as root and as `nobody`; the
 * host is checked after.
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { type CommandLine, Sandbox, type SandboxShape } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import { asUser, cleanUp, folder, GIT_ENV, giveToNobody, runnable, users } from "./inside.ts"

afterAll(cleanUp)

const state = folder("freecode-cg-state-")
process.env.FREECODE_STATE_DIR = state

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "safe.directory=*", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...GIT_ENV },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** A project with a repository, a nested one (`old`, with a hook), `pkg/.vscode`, and a freecode.json. */
const project = (asNobody: boolean) => {
  const root = folder("freecode-cg-root-", true)
  const home = folder("freecode-cg-home-", true)
  // The state folder is read once a process (its Config): one for the file, its quarantine emptied per test.
  NodeFs.rmSync(NodePath.join(state, "quarantine"), { recursive: true, force: true })
  git(root, "init", "-q")
  NodeFs.writeFileSync(NodePath.join(root, "freecode.json"), "{}\n")
  NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
  NodeFs.mkdirSync(NodePath.join(root, "old"))
  git(NodePath.join(root, "old"), "init", "-q")
  NodeFs.writeFileSync(NodePath.join(root, "old", ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", {
    mode: 0o755
  })
  NodeFs.mkdirSync(NodePath.join(root, "pkg", ".vscode"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(root, "pkg", ".vscode", "settings.json"), "{}\n")
  if (asNobody) for (const d of [root, home]) giveToNobody(d)
  const registry = NodePath.join(folder("freecode-cg-reg-"), "placeholders")
  return { root, home, state, registry }
}

type Project = ReturnType<typeof project>

/** `body` with the Sandbox layer of `p` (its state folder `p.state`), alive while it runs. */
const withSandbox = <A>(p: Project, body: (sandbox: SandboxShape) => Promise<A>): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      return yield* Effect.promise(() => body(sandbox))
    }).pipe(
      Effect.provide(Layer.fresh(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), p))),
      Effect.scoped
    )
  )

const lineOf = (sandbox: SandboxShape, p: Project, script: string) =>
  Effect.runPromise(
    sandbox.wrap(["/bin/bash", "-c", 'exec 2>&1; eval "$1"', "script", script], {
      sessionId: "cg",
      cwd: p.root,
      writable: []
    })
  )

/** Starts `line`; `done` resolves with its output and exit once it has ended (bounded: killed after 60 s). */
const start = (line: CommandLine, asNobody: boolean) => {
  const [program, ...args] = asUser(line, asNobody)
  const child = spawn(program!, args, { stdio: ["ignore", "pipe", "pipe"], detached: true })
  let output = ""
  child.stdout.on("data", (d) => (output += d))
  child.stderr.on("data", (d) => (output += d))
  const bound = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 60_000)
  const done = new Promise<{ output: string; code: number | null; signal: string | null }>((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(bound)
      resolve({ output, code, signal })
    })
  )
  return { done, stop: () => process.kill(-child.pid!, "SIGKILL") }
}

/** Waits for `ok` (bounded; the answer is checked by the caller, never the time it took). */
const until = async (ok: () => boolean, tries = 400) => {
  for (let i = 0; i < tries && !ok(); i++) await new Promise((r) => setTimeout(r, 25))
  return ok()
}

const exists = (p: string) => NodeFs.existsSync(p)
const quarantined = (state: string): Array<string> => {
  const q = NodePath.join(state, "quarantine")
  if (!exists(q)) return []
  return NodeFs.readdirSync(q, { recursive: true, encoding: "utf8" }).map((f) =>
    f.split(NodePath.sep).slice(1).join("/")
  )
}

describe.skipIf(!runnable)("the host guards what a mount cannot hold", () => {
  for (const u of users) {
    it.skipIf(u.skip)(`as ${u.who}: control paths a command makes anywhere are moved aside and named`, async () => {
      const p = project(u.asNobody)
      const oldConfig = NodeFs.readFileSync(NodePath.join(p.root, "old", ".git", "config"), "utf8")
      const { output, notices } = await withSandbox(p, async (sandbox) => {
        const line = await lineOf(
          sandbox,
          p,
          [
            // Made: a repository with a hook, editor tasks, a commondir, a nested project config.
            "mkdir sub && git init -q sub && printf '#!/bin/sh\\ntouch /tmp/x\\n' > sub/.git/hooks/pre-commit && echo MADE-sub",
            "mkdir -p d/.vscode && echo '{}' > d/.vscode/tasks.json && echo MADE-vscode",
            'mkdir common && echo "$PWD/common" > .git/commondir && echo MADE-commondir',
            'mkdir -p e && echo \'{"permissions":{"defaultMode":"bypassPermissions"}}\' > e/freecode.json && echo MADE-freecode',
            // Made in a folder that cannot be listed, only entered: still reachable by name.
            "mkdir -p h && git init -q h && chmod 311 h && echo MADE-hidden",
            // Existing nested ones are read-only.
            "echo '[core] fsmonitor = x' >> old/.git/config && echo PWN-old-config",
            "echo x > old/.git/hooks/post-checkout && echo PWN-old-hook",
            "mv old/.git old/g2 && echo PWN-old-mv",
            "echo '{}' > pkg/.vscode/tasks.json && echo PWN-pkg-vscode",
            "echo b > b.txt && echo WROTE",
            "echo done"
          ].join("\n")
        )
        const r = await start(line, u.asNobody).done
        return { output: r.output, notices: await Effect.runPromise(sandbox.audit!(line)) }
      })
      expect(output).toContain("done")
      expect(output).toContain("WROTE")
      expect(output).not.toMatch(/PWN-/)
      for (const m of ["MADE-sub", "MADE-vscode", "MADE-commondir", "MADE-freecode", "MADE-hidden"])
        expect(output).toContain(m)
      // Gone from the project, kept in the state folder, named in the result.
      for (const rel of ["sub/.git", "d/.vscode", ".git/commondir", "e/freecode.json", "h/.git"]) {
        expect(exists(NodePath.join(p.root, rel)), rel).toBe(false)
        expect(quarantined(p.state), rel).toContain(rel)
        expect(notices.join("\n"), rel).toContain(`moved ${rel} aside`)
      }
      expect(notices).toHaveLength(5)
      // What the command may make stays; what was there stays as it was; git works outside.
      expect(exists(NodePath.join(p.root, "sub"))).toBe(true)
      expect(exists(NodePath.join(p.root, "b.txt"))).toBe(true)
      expect(NodeFs.readFileSync(NodePath.join(p.root, "old", ".git", "config"), "utf8")).toBe(oldConfig)
      expect(NodeFs.readdirSync(NodePath.join(p.root, "pkg", ".vscode"))).toEqual(["settings.json"])
      expect(git(p.root, "rev-parse", "--git-common-dir").trim()).toBe(".git")
    })

    it.skipIf(u.skip)(`as ${u.who}: while a command still runs, what it made is moved aside`, async () => {
      const p = project(u.asNobody)
      const hook = NodePath.join(p.root, "sub", ".git", "hooks", "pre-commit")
      const { movedWhileRunning, notices } = await withSandbox(p, async (sandbox) => {
        const line = await lineOf(
          sandbox,
          p,
          "mkdir sub && git init -q sub && echo x > sub/.git/hooks/pre-commit; sleep 30"
        )
        const run = start(line, u.asNobody)
        const made = await until(() => exists(hook))
        const moved = made && (await until(() => !exists(NodePath.join(p.root, "sub", ".git"))))
        run.stop()
        await run.done
        return { movedWhileRunning: made && moved, notices: await Effect.runPromise(sandbox.audit!(line)) }
      })
      expect(movedWhileRunning).toBe(true)
      expect(quarantined(p.state)).toContain("sub/.git/hooks/pre-commit")
      expect(notices.join("\n")).toContain("moved sub/.git aside")
    })

    it.skipIf(u.skip)(
      `as ${u.who}: what a running command makes again after a move is moved again, in a folder made since it started too`,
      async () => {
        const p = project(u.asNobody)
        const { output, notices } = await withSandbox(p, async (sandbox) => {
          // Each round makes a repository's config in a new folder, then waits (bounded) for it to go.
          const round = (n: number, dir: string) =>
            `mkdir -p ${dir}/.git && echo '[core] fsmonitor = EVIL${n}' > ${dir}/.git/config; for i in $(seq 400); do [ -e ${dir}/.git ] || break; sleep 0.05; done; [ -e ${dir}/.git ] || echo GONE-${n}`
          const line = await lineOf(
            sandbox,
            p,
            [round(1, "x/y"), round(2, "x/y"), round(3, "x/z/w"), "echo done"].join("\n")
          )
          const r = await start(line, u.asNobody).done
          return { output: r.output, notices: await Effect.runPromise(sandbox.audit!(line)) }
        })
        expect(output).toContain("done")
        for (const n of [1, 2, 3]) expect(output).toContain(`GONE-${n}`)
        for (const rel of ["x/y/.git", "x/z/w/.git"]) {
          expect(exists(NodePath.join(p.root, rel)), rel).toBe(false)
          expect(notices.join("\n"), rel).toContain(`moved ${rel} aside`)
        }
        // Both of x/y's configs are kept, each in a quarantine folder of its own.
        expect(quarantined(p.state).filter((f) => f === "x/y/.git/config")).toHaveLength(2)
      }
    )

    it.skipIf(u.skip)(
      `as ${u.who}: a bound file replaced from outside stops the command; its writes are never left in place`,
      async () => {
        const p = project(u.asNobody)
        const result = await withSandbox(p, async (sandbox) => {
          // Writes both files as fast as it can, from before the replacement to after it.
          const line = await lineOf(
            sandbox,
            p,
            "touch started; while :; do { echo EVIL >> freecode.json; } 2>/dev/null; { echo '[core] fsmonitor = EVIL' >> .git/config; } 2>/dev/null; done"
          )
          const run = start(line, u.asNobody)
          const started = await until(() => exists(NodePath.join(p.root, "started")))
          // As an editor saves: a new file renamed over the old one. And as git config does.
          NodeFs.writeFileSync(NodePath.join(p.root, "freecode.json.tmp"), '{ "new": 1 }\n')
          NodeFs.renameSync(NodePath.join(p.root, "freecode.json.tmp"), NodePath.join(p.root, "freecode.json"))
          git(p.root, "config", "user.name", "person")
          const r = await run.done
          return { started, r, notices: await Effect.runPromise(sandbox.audit!(line)) }
        })
        expect(result.started).toBe(true)
        // Stopped by the guard (the loop never ends by itself).
        expect(result.notices.join("\n")).toMatch(/(freecode\.json|\.git\/config) was replaced or removed from outside/)
        // Each file is the person's (no EVIL), or moved aside whole: never in place with the command's writes.
        for (const rel of ["freecode.json", ".git/config"]) {
          const f = NodePath.join(p.root, rel)
          if (exists(f)) expect(NodeFs.readFileSync(f, "utf8"), rel).not.toContain("EVIL")
          else expect(quarantined(p.state), rel).toContain(rel)
        }
      }
    )

    it.skipIf(u.skip)(
      `as ${u.who}: a hidden secret file replaced from outside stops the command and stays the person's`,
      async () => {
        const p = project(u.asNobody)
        const env = NodePath.join(p.root, ".env")
        NodeFs.writeFileSync(env, "OLD=1\n")
        if (u.asNobody) giveToNobody(p.root)
        const result = await withSandbox(p, async (sandbox) => {
          const line = await lineOf(sandbox, p, "touch started; while :; do cat .env >/dev/null 2>&1; done")
          const run = start(line, u.asNobody)
          const started = await until(() => exists(NodePath.join(p.root, "started")))
          NodeFs.writeFileSync(`${env}.tmp`, "NEW=2\n")
          NodeFs.renameSync(`${env}.tmp`, env)
          await run.done
          return { started, notices: await Effect.runPromise(sandbox.audit!(line)) }
        })
        expect(result.started).toBe(true)
        expect(result.notices.join("\n")).toContain("lifts its hiding inside, so the command was stopped")
        expect(NodeFs.readFileSync(env, "utf8")).toBe("NEW=2\n")
        expect(quarantined(state)).toEqual([])
      }
    )

    it.skipIf(u.skip)(`as ${u.who}: a file replaced inside a folder bound whole stays read-only`, async () => {
      const p = project(u.asNobody)
      const hook = NodePath.join(p.root, ".git", "hooks", "pre-commit")
      NodeFs.writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 })
      if (u.asNobody) giveToNobody(p.root)
      const { output, notices } = await withSandbox(p, async (sandbox) => {
        const line = await lineOf(
          sandbox,
          p,
          "touch started; while [ ! -e go ]; do sleep 0.05; done; echo EVIL >> .git/hooks/pre-commit && echo PWN-hook; echo EVIL > .git/info/attributes && echo PWN-attributes; echo done"
        )
        const run = start(line, u.asNobody)
        await until(() => exists(NodePath.join(p.root, "started")))
        NodeFs.writeFileSync(`${hook}.tmp`, "#!/bin/sh\necho new\n", { mode: 0o755 })
        NodeFs.renameSync(`${hook}.tmp`, hook)
        NodeFs.writeFileSync(NodePath.join(p.root, "go"), "")
        const r = await run.done
        return { output: r.output, notices: await Effect.runPromise(sandbox.audit!(line)) }
      })
      expect(output).toContain("done")
      expect(output).not.toMatch(/PWN-/)
      expect(notices).toEqual([])
      expect(NodeFs.readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho new\n")
    })
  }
})
