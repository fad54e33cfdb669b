/**
 * A secret committed to git is in `.git/objects`, which the sandbox cannot hide: `git show
 * HEAD:.env` prints it inside, shown live with real bubblewrap. So a git command that names a
 * secret's path asks, sandboxed or not, as `cat .env` asks without a rule; one that names none
 * runs inside as before, and outside the sandbox a rule the person wrote (`Bash(git:*)`) allows
 * both, as `Bash(cat:*)` allows `cat .env`.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"
import { cleanUp, folder, inside, runnable } from "../sandbox/inside.ts"

afterAll(cleanUp)

const SECRET = "TOKEN=committed-secret-77"

const project = () => {
  const root = folder("freecode-gitsecret-")
  const home = folder("freecode-gitsecret-home-")
  NodeFs.mkdirSync(NodePath.join(root, "src"))
  NodeFs.writeFileSync(NodePath.join(root, "src", "a.ts"), "export const a = 1\n")
  NodeFs.writeFileSync(NodePath.join(root, ".env"), `${SECRET}\n`)
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: root, stdio: "ignore" })
  git("init", "-q")
  git("add", ".")
  git("commit", "-qm", "one")
  return { root, home }
}

const p = project()
const ctx: ToolContext = { sessionId: "g", callId: "c", root: p.root, canSeeImages: false, emit: () => Effect.void }

/** A sandbox the engine sees as running (its command lines are not used here). */
const activeSandbox = Layer.succeed(Sandbox, {
  settings: resolveSandboxSettings({ enabled: true }, false),
  status: Effect.succeed({ state: "active", runner: "bubblewrap", network: "off" } as const),
  wrap: (command) => Effect.succeed(command)
})

const decisions = (config: FreecodeConfigData, sandboxed: boolean, commands: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    const out: Record<string, string> = {}
    for (const command of commands)
      out[command] = (yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx })).behavior
    return out
  }).pipe(
    Effect.provide(
      PermissionEngine.layer.pipe(
        Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(p.root)]),
        Layer.provideMerge(nodeLayer),
        Layer.provide(sandboxed ? activeSandbox : Layer.empty)
      )
    )
  )

const NAMING = [
  "git show HEAD:.env",
  "git show 'HEAD:.env'",
  "git --no-pager show :.env",
  "git -C . show HEAD:.env",
  "git -c core.pager=cat show HEAD:.env",
  "git cat-file -p HEAD:config/.env.production",
  "git log -p -- .env",
  "git log -p -- '*.env'",
  "git log -p -- ':(glob)**/.env'",
  "git diff HEAD~1 -- id_rsa",
  "git blame .env",
  "git grep TOKEN HEAD -- '*.pem'",
  "git archive HEAD .env",
  "git show HEAD:.e*",
  "f=.env; git show HEAD:$f",
  "bash -c 'git show HEAD:.env'",
  "echo $(git show HEAD:.env)",
  "/usr/bin/git show HEAD:.ENV"
]
const PLAIN = [
  "git show HEAD",
  "git log -p",
  "git status",
  "git diff",
  "git show HEAD:src/a.ts",
  "git log --oneline -- src",
  "git grep TOKEN",
  "git log --grep=env",
  "git add src/*.ts"
]

describe.skipIf(!runnable)("a secret in git's history, inside the sandbox", () => {
  it("is live: git show HEAD:.env prints it though .env itself is hidden", () => {
    const { output } = inside("cat .env; echo; git show HEAD:.env", {
      root: p.root,
      home: p.home,
      tempDir: folder("freecode-gitsecret-tmp-")
    })
    expect(output).toContain("Permission denied")
    expect(output).toContain(SECRET)
  })
})

describe("git naming a secret's path", () => {
  it.live("asks inside the sandbox; a git command naming none runs there without asking", () =>
    Effect.gen(function* () {
      const named = yield* decisions({}, true, NAMING)
      expect(Object.entries(named).filter(([, b]) => b !== "ask")).toEqual([])
      const plain = yield* decisions({}, true, PLAIN)
      expect(Object.entries(plain).filter(([, b]) => b !== "allow")).toEqual([])
    })
  )

  it.live("outside the sandbox: asks with no rule, runs under the person's rule — as cat .env does", () =>
    Effect.gen(function* () {
      const none = yield* decisions({}, false, ["cat .env", "git show HEAD:.env", "git log -p -- .env"])
      expect(Object.values(none)).toEqual(["ask", "ask", "ask"])
      const ruled = yield* decisions({ permissions: { allow: ["Bash(cat:*)", "Bash(git:*)"] } }, false, [
        "cat .env",
        "git show HEAD:.env"
      ])
      expect(Object.values(ruled)).toEqual(["allow", "allow"])
      // A deny rule on reading the file by its name does not see into git's objects: documented.
    })
  )
})
