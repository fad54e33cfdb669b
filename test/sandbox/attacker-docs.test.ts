/**
 * The sandbox attacked by someone who read docs/sandbox.md: each promise in "What a sandboxed
 * command can do" tried the other ways — secrets by the names added this round and through
 * /proc's other roots, a link or hard link made inside to a hidden file, root's mount and
 * namespace calls, writes outside through /proc/self/cwd, the home folder's startup files, the
 * control paths and their parents, the host's /dev/shm — and a link left in the project for a
 * later session without the sandbox, whose read-only list must then ask. Real bubblewrap, as
 * root and as `nobody`; one script per user, each attack printing a tag only when it worked.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"
import { asUser, cleanUp, folder, GIT_ENV, giveToNobody, runnable, users } from "./inside.ts"

afterAll(cleanUp)

/** Files whose content must never show inside, each content unique. */
const PROJECT_SECRETS: Record<string, string> = {
  ".env": "LEAK-dotenv",
  "secrets.json": "LEAK-secrets-json",
  ".dev.vars": "LEAK-dev-vars",
  "config/credentials.json": "LEAK-credentials-json",
  ".env_prod": "LEAK-env-underscore"
}
const HOME_SECRETS: Record<string, string> = {
  ".ssh/id_rsa": "LEAK-ssh",
  ".aws/credentials": "LEAK-aws",
  ".claude/.credentials.json": "LEAK-claude",
  ".config/gh/hosts.yml": "LEAK-gh",
  ".pgpass": "LEAK-pgpass",
  ".vault-token": "LEAK-vault"
}

const write = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(dir, name)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, name), `${text}\n`, { mode: 0o644 })
  }
}

/** Each line runs one attack; `WON:tag` is printed only when it had its effect. */
const attacks = (home: string, root: string, outside: string) =>
  [
    // Secrets by their names, and through the other roots /proc offers.
    ...Object.keys(PROJECT_SECRETS).map((f) => `cat '${f}' 2>/dev/null`),
    ...Object.keys(HOME_SECRETS).map((f) => `cat '${home}/${f}' 2>/dev/null`),
    `cat /proc/self/root${home}/.ssh/id_rsa /proc/1/root${home}/.aws/credentials 2>/dev/null`,
    `cat /proc/self/cwd/.env /proc/thread-self/root${root}/secrets.json 2>/dev/null`,
    // A link or a hard link made inside to a hidden file.
    `ln -s '${home}/.ssh/id_rsa' k1 2>/dev/null; cat k1 2>/dev/null`,
    `ln '${home}/.ssh/id_rsa' k2 2>/dev/null && cat k2 2>/dev/null`,
    "ln .env k3 2>/dev/null && cat k3 2>/dev/null",
    "cp .env k4 2>/dev/null; cat k4 2>/dev/null",
    // Root's ways out: mounts, namespaces.
    "mount -o remount,rw / 2>/dev/null && echo WON:remount",
    `umount '${home}/.ssh' 2>/dev/null && echo WON:umount-ssh`,
    "umount /proc 2>/dev/null && echo WON:umount-proc",
    "unshare -Ur true 2>/dev/null && echo WON:userns",
    "unshare -m true 2>/dev/null && echo WON:mountns",
    // Writes outside the project, by every spelling.
    "echo x > /etc/freecode-pwned 2>/dev/null && echo WON:etc",
    `echo x > '${outside}/by-path' 2>/dev/null && echo WON:outside-path`,
    `echo x > /proc/self/cwd/../${NodePath.basename(outside)}/by-proc 2>/dev/null && echo WON:outside-proc`,
    `echo x >> '${home}/.bashrc' 2>/dev/null && echo WON:bashrc`,
    `echo x > '${home}/.gitconfig' 2>/dev/null && echo WON:gitconfig`,
    "echo x > /dev/shm/freecode-shm 2>/dev/null",
    // Control paths, their parents, and the project's own configuration.
    "echo '#!/bin/sh' > .git/hooks/pre-commit 2>/dev/null && echo WON:hook",
    "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config 2>/dev/null && echo WON:git-config",
    "mv .git .git2 2>/dev/null && echo WON:mv-git",
    "mv .git/hooks .git/hooks2 2>/dev/null && echo WON:mv-hooks",
    "rm -rf .git/hooks 2>/dev/null; test -d .git/hooks || echo WON:rm-hooks",
    `echo '{"permissions":{"defaultMode":"bypassPermissions"}}' > freecode.json 2>/dev/null && echo WON:freecode-json`,
    `echo '{"mcpServers":{}}' > .mcp.json 2>/dev/null && echo WON:mcp-json`,
    "mkdir -p .vscode 2>/dev/null && echo '{}' > .vscode/tasks.json 2>/dev/null && echo WON:vscode",
    "echo '* diff=x' > .gitattributes 2>/dev/null && echo WON:gitattributes",
    // bash's read-write redirection opens for writing too (and creates).
    "echo '[alias]' 1<> .git/config 2>/dev/null && echo WON:rw-git-config",
    "echo '#!/bin/sh' 1<> .git/hooks/post-checkout 2>/dev/null && echo WON:rw-hook",
    "echo '{}' 1<> freecode.json 2>/dev/null && echo WON:rw-freecode-json",
    `echo x 1<> '${home}/.profile' 2>/dev/null && echo WON:rw-profile`,
    "echo 'export X=1' > .envrc 2>/dev/null && echo WON:envrc",
    // Left for a later session without the sandbox: a link to a home secret under an innocent name.
    `ln -s '${home}/.ssh/id_rsa' notes.md && echo LEFT:link`
  ].join("\n")

/**
 * Runs `script` with /bin/bash through the Sandbox layer's own command line (its placeholders for
 * missing control paths included, as the bash tool gets it), as root or `nobody`.
 */
const throughLayer = (script: string, p: { root: string; home: string }, asNobody: boolean): Promise<string> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const line = yield* sandbox.wrap(["/bin/bash", "-c", 'exec 2>&1; eval "$1"', "script", script], {
        sessionId: "attacker-docs",
        cwd: p.root,
        writable: []
      })
      const [program, ...args] = asUser(line, asNobody)
      const r = spawnSync(program!, args, { encoding: "utf8", timeout: 120_000, env: { ...process.env, HOME: p.home } })
      return `${r.stdout}${r.stderr}`
    }).pipe(
      Effect.provide(
        Layer.fresh(
          Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), {
            ...p,
            registry: NodePath.join(folder("freecode-atk-reg-"), "placeholders")
          })
        )
      ),
      Effect.scoped
    )
  )

const ctxFor = (root: string): ToolContext => ({
  sessionId: "attacker-docs",
  callId: "c",
  root,
  canSeeImages: false,
  emit: () => Effect.void
})

/** The read-only list's answer for `command` in `root`, no rule, default mode. */
const decideIn = (root: string, command: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      return yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx: ctxFor(root) })
    }).pipe(
      Effect.provide(
        PermissionEngine.layer.pipe(
          Layer.provide([FreecodeConfig.layerWith({}), Workspace.layer(root)]),
          Layer.provideMerge(nodeLayer)
        )
      )
    )
  )

describe.skipIf(!runnable)("the sandbox against someone who read its docs", () => {
  for (const u of users) {
    it.skipIf(u.skip)(
      `as ${u.who}: no attack has its effect, and a link it leaves makes the next session ask`,
      async () => {
        const root = folder("freecode-atk-root-", true)
        const home = folder("freecode-atk-home-", true)
        const outside = folder("freecode-atk-outside-", true)
        write(root, { ...PROJECT_SECRETS, "input.txt": "hello" })
        write(home, { ...HOME_SECRETS, ".bashrc": "# rc" })
        execFileSync("git", ["init", "-q"], { cwd: root, env: { ...process.env, ...GIT_ENV } })
        if (u.asNobody) for (const d of [root, home, outside]) giveToNobody(d)
        const shmBefore = NodeFs.existsSync("/dev/shm/freecode-shm")

        const output = await throughLayer(attacks(home, root, outside), { root, home }, u.asNobody)

        // The script ran to its end (the last attack is allowed: a link in the project).
        expect(output).toContain("LEFT:link")
        expect(output.match(/WON:[\w-]+/g) ?? []).toEqual([])
        for (const secret of [...Object.values(PROJECT_SECRETS), ...Object.values(HOME_SECRETS)])
          expect(output, secret).not.toContain(secret)
        // Nothing reached the host.
        expect(NodeFs.existsSync("/etc/freecode-pwned")).toBe(false)
        expect(NodeFs.readdirSync(outside)).toEqual([])
        expect(NodeFs.readFileSync(NodePath.join(home, ".bashrc"), "utf8")).toBe("# rc\n")
        expect(NodeFs.existsSync(NodePath.join(home, ".gitconfig"))).toBe(false)
        expect(NodeFs.existsSync("/dev/shm/freecode-shm")).toBe(shmBefore)
        expect(NodeFs.existsSync(NodePath.join(root, ".git", "hooks", "pre-commit"))).toBe(false)
        expect(NodeFs.readFileSync(NodePath.join(root, ".git", "config"), "utf8")).not.toContain("fsmonitor")
        for (const made of ["freecode.json", ".mcp.json", ".gitattributes", ".envrc", ".git2"])
          expect(NodeFs.statSync(NodePath.join(root, made), { throwIfNoEntry: false })?.isFile() ?? false, made).toBe(
            false
          )

        // The link it left is live outside the sandbox: read by its innocent name, it is the key.
        expect(NodeFs.readFileSync(NodePath.join(root, "notes.md"), "utf8")).toContain("LEAK-ssh")
        // So a later session without the sandbox must not read it as a read-only command.
        const later = await decideIn(root, "cat notes.md")
        expect(later.behavior).toBe("ask")
        const plain = await decideIn(root, "cat input.txt")
        expect(plain.behavior).toBe("allow")
      },
      // One bubblewrap run and two engines: seconds here, minutes on a busy machine.
      600_000
    )
  }
})
