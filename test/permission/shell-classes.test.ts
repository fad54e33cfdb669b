// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the cases are bash text, which holds ${…}
/**
 * Each class of command that once got past the analyzer, by class: first shown live (bash with
 * no check leaves the marker), then refused by the engine under allow rules that name the
 * programs involved, and, for deny rules, refused by `Bash(touch:*)` even in bypassPermissions.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeShellWorld } from "./shell-world.ts"

const world = makeShellWorld()
afterAll(world.cleanup)

/** Allow rules naming every builtin and program the cases use, so only the analysis can refuse. */
const ALLOW = ["echo", "printf", "read", "declare", "typeset", "local", "export", "test", "[", "let", "mapfile"]
  .concat(["getopts", "ls", "cat", "env", "command", "xargs", "find", "script", "flock", "setarch", "prlimit"])
  .map((p) => `Bash(${p}:*)`)

const CLASSES: Readonly<Record<string, ReadonlyArray<string>>> = {
  "parameter expansions that evaluate text": [
    "x='$(touch {M})'; echo ${x@P}",
    "x='$(touch {M})'; echo \"${x@P}\"",
    "x='a[$(touch {M})]'; echo ${!x}",
    "x='a[$(touch {M})]'; echo \"${!x}\""
  ],
  "builtins that assign variables or evaluate subscripts": [
    "printf -v 'a[$(touch {M})]' x",
    "read 'a[$(touch {M})]' <<< x",
    "declare 'a[$(touch {M})]=1'",
    "typeset 'a[$(touch {M})]=1'",
    "export PATH={D}/evil; ls {M}",
    "declare -n r='a[$(touch {M})]'; r=1",
    "test -v 'a[$(touch {M})]'",
    "[ -v 'a[$(touch {M})]' ]",
    "[[ -v 'a[$(touch {M})]' ]]",
    "let 'a[$(touch {M})]=1'",
    "(( a[$(touch {M})] ))",
    "read PATH <<< {D}/evil; ls {M}",
    "printf -v PATH %s {D}/evil; ls {M}"
  ],
  "a backslash-newline that splits a construct": [
    "echo $\\\n(touch {M})",
    'echo "$\\\n(touch {M})"',
    "cat <<< $\\\n(touch {M})",
    "cat < $\\\n(touch {M})",
    "LANG=$\\\n(touch {M}) ls",
    "cat <<EOF\n$\\\n(touch {M})\nEOF"
  ],
  "characters bash reads as word characters, the grammar as blanks": [
    "echo a\v# x ; touch {M}",
    "echo a\r# x ; touch {M}",
    "echo a\f# x ; touch {M}",
    "echo a\\\r\ntouch {M}"
  ]
}

/** The rest of the class, refused by construction (these builtins are not proven inert), live or not. */
const BUILTINS_REFUSED = [
  "mapfile -t lines < input.txt",
  "readarray lines < input.txt",
  "getopts a opt",
  "local x=1",
  "let x=1",
  "declare x",
  "typeset -i x=1",
  "export X=1",
  "read x",
  "printf -v x %s y",
  "printf -vx %s y",
  "test -R x",
  "command ls",
  "cd .",
  "alias ls=touch",
  "set -o posix",
  "shopt -s expand_aliases",
  "enable -n echo",
  "hash -p ./evil ls"
]

const DENY_BYPASSES = [
  "env bash -c 'touch {M}'",
  "command bash -c 'touch {M}'",
  "echo x | xargs sh -c 'touch {M}'",
  "find . -maxdepth 0 -exec sh -c 'touch {M}' \\;",
  "find . -maxdepth 0 -exec env touch {M} \\;",
  "$'touch' {M}",
  "$'\\x74ouch' {M}",
  "script -qc 'touch {M}' /dev/null",
  "flock {D}/input.txt -c 'touch {M}'",
  "setarch $(uname -m) touch {M}",
  "prlimit --nofile=100 touch {M}",
  "setpriv touch {M}",
  "x=touch; $x {M}",
  "python3 -c 'import os; os.system(\"touch {M}\")'",
  "/usr/bin/touch {M}",
  "nice -n 1 nohup timeout 5 env -i bash -c 'eval \"touch {M}\"'",
  "echo 'touch {M}' | bash",
  "bash <<< 'touch {M}'"
]

const ctx: ToolContext = { sessionId: "c", callId: "c", root: world.dir, canSeeImages: false, emit: () => Effect.void }
const engineWith = (config: FreecodeConfigData) =>
  PermissionEngine.layer.pipe(
    Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(world.dir)]),
    Layer.provideMerge(nodeLayer)
  )

const live = (commands: ReadonlyArray<string>) => {
  const bare = makeShellWorld()
  try {
    const dead = commands.filter((c, i) => {
      const command = bare.fill({ id: i, command: c, expect: "refuse", why: "" })
      try {
        execFileSync("/bin/bash", ["-c", command], { cwd: bare.dir, env: bare.env, timeout: 10_000, stdio: "ignore" })
      } catch {
        // Failing afterwards is fine: the marker is what counts.
      }
      return !NodeFs.existsSync(bare.marker(i))
    })
    return dead
  } finally {
    bare.cleanup()
  }
}

const decideAll = (commands: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    return yield* Effect.forEach(commands, (c, i) =>
      Effect.map(
        engine.decide({
          tool: BashTool as unknown as Tool,
          args: { command: world.fill({ id: i, command: c, expect: "refuse", why: "" }) },
          ctx
        }),
        (d) => ({ command: c, decision: d })
      )
    )
  })

describe("classes that got through an allow rule", () => {
  for (const [name, commands] of Object.entries(CLASSES)) {
    it(`${name}: each case is live (bash runs its touch)`, () => {
      expect(live(commands)).toEqual([])
    })
    it.live(`${name}: refused under allow rules for every program named`, () =>
      Effect.gen(function* () {
        const decided = yield* decideAll(commands)
        const allowed = decided.filter((d) => d.decision.behavior === "allow")
        expect(allowed.map((d) => d.command)).toEqual([])
        for (const d of decided) expect(d.decision.reason).toMatch(/needs approval: |This command is refused: /)
      }).pipe(Effect.provide(engineWith({ permissions: { allow: ALLOW } })))
    )
  }
})

it.live("every builtin that is not proven inert asks, under allow rules naming it", () =>
  Effect.gen(function* () {
    const decided = yield* decideAll(BUILTINS_REFUSED)
    expect(decided.filter((d) => d.decision.behavior === "allow").map((d) => d.command)).toEqual([])
    // The inert ones still pass.
    const inert = yield* decideAll(["echo a", "printf '%s' a", "test -f input.txt", "[ -d . ]", "command -v ls"])
    expect(inert.map((d) => d.decision.behavior)).toEqual(["allow", "allow", "allow", "allow", "allow"])
  }).pipe(
    Effect.provide(
      engineWith({
        permissions: {
          allow: [
            ...ALLOW,
            ...["readarray", "typeset", "cd", "alias", "set", "shopt", "enable", "hash"].map((p) => `Bash(${p}:*)`)
          ]
        }
      })
    )
  )
)

describe("deny rules see through wrappers, quoting and -c strings", () => {
  it("each case is live", () => {
    expect(live(DENY_BYPASSES)).toEqual([])
  })

  it.live("Bash(touch:*) denies each one in bypassPermissions mode", () =>
    Effect.gen(function* () {
      const decided = yield* decideAll(DENY_BYPASSES)
      const through = decided.filter((d) => d.decision.behavior !== "deny")
      expect(through.map((d) => `${d.command}: ${d.decision.reason}`)).toEqual([])
      for (const d of decided) expect(d.decision.rule).toBe("Bash(touch:*)")
    }).pipe(Effect.provide(engineWith({ permissions: { deny: ["Bash(touch:*)"], defaultMode: "bypassPermissions" } })))
  )

  it.live("a rule naming its program by path matches it by any path", () =>
    Effect.gen(function* () {
      const decided = yield* decideAll(["rm x", "/usr/bin/rm x", "/bin/rm x", "\\rm x", "ls x"])
      expect(decided.map((d) => d.decision.behavior)).toEqual(["deny", "deny", "deny", "deny", "allow"])
    }).pipe(
      Effect.provide(engineWith({ permissions: { deny: ["Bash(/bin/rm:*)"], defaultMode: "bypassPermissions" } }))
    )
  )

  it.live("without a deny rule, an opaque command is asked about, not denied; plain commands still run", () =>
    Effect.gen(function* () {
      const decided = yield* decideAll(["x=touch; $x y", "python3 -c 'print(1)'", "ls"])
      expect(decided.map((d) => d.decision.behavior)).toEqual(["ask", "allow", "allow"])
    }).pipe(Effect.provide(engineWith({ permissions: { allow: ["Bash(python3:*)", "Bash(ls:*)"] } })))
  )

  it.live("with a deny rule, what cannot be known is refused, and the reason says why", () =>
    Effect.gen(function* () {
      const decided = yield* decideAll(["python3 -c 'print(1)'", "x=ls; $x", "ls"])
      expect(decided.map((d) => d.decision.behavior)).toEqual(["deny", "deny", "allow"])
      expect(decided[0]!.decision.reason).toContain("python3 -c runs code this check cannot read")
      expect(decided[1]!.decision.reason).toContain("it sets x, which can make a program run other code")
    }).pipe(
      Effect.provide(engineWith({ permissions: { allow: ["Bash(python3:*)", "Bash(ls:*)"], deny: ["Bash(curl:*)"] } }))
    )
  )
})
