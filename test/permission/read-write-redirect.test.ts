/**
 * bash's read-write redirection `[n]<>word` (src/permission/shell/read-write.ts): bash parses it
 * and opens the file for writing (creating it), so the rules must parse it too and judge it as
 * the write it is — as `>` would be, in every mode and under every rule — never as unparsable,
 * nor as a read. Shown first with real bash; the spellings bash rejects are refused, and the
 * grammar agrees with `bash -n` on every case here. And a word right after a closed descriptor
 * (`3>&-.env`), which the grammar takes for the redirection's target and bash for an argument.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { bashDecisions } from "./bash-decisions.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-rw-redirect-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))
const root = NodePath.join(base, "project")
NodeFs.mkdirSync(NodePath.join(root, ".git"), { recursive: true })
NodeFs.writeFileSync(NodePath.join(root, "f"), "hello\n")
NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
NodeFs.writeFileSync(NodePath.join(root, ".git", "config"), "[core]\n")
NodeFs.writeFileSync(NodePath.join(root, ".env"), "TOKEN=x\n")

const { ctx, engineWith } = bashDecisions(root, "rw")

/** Each command's decision under `config` (one engine for all of them). */
const decideAll = (config: FreecodeConfigData, commands: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    return yield* Effect.forEach(commands, (command) =>
      engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx })
    )
  }).pipe(Effect.provide(engineWith(config)))

const decide = (config: FreecodeConfigData, command: string) => Effect.map(decideAll(config, [command]), (ds) => ds[0]!)

const bashParses = (command: string) => spawnSync("/bin/bash", ["-n", "-c", command]).status === 0

describe("the read-write redirection <>", () => {
  it("writes with real bash: it creates a missing file and overwrites an existing one in place", () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(base, "live-"))
    NodeFs.writeFileSync(NodePath.join(dir, "f"), "hello\n")
    const r = spawnSync("/bin/bash", ["-c", "true <> made; echo HE 1<> f"], { cwd: dir, encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(NodeFs.existsSync(NodePath.join(dir, "made"))).toBe(true)
    expect(NodeFs.readFileSync(NodePath.join(dir, "f"), "utf8")).toBe("HE\nlo\n")
  })

  const targets = ["f", "new.txt", ".git/config", ".env", "../outside.txt", "/etc/hosts", "/dev/null"]
  const spellings = (t: string) => [`cat <> ${t}`, `cat <>${t}`, `cat 0<> ${t}`, `exec 3<>${t}`, `cat {fd}<> ${t}`]
  const configs: ReadonlyArray<[string, FreecodeConfigData]> = [
    ["default", { permissions: { defaultMode: "default" } }],
    ["acceptEdits", { permissions: { defaultMode: "acceptEdits" } }],
    ["a prefix rule", { permissions: { defaultMode: "default", allow: ["Bash(cat:*)", "Bash(exec:*)"] } }],
    ["dontAsk", { permissions: { defaultMode: "dontAsk", allow: ["Bash(cat:*)"] } }],
    ["a deny rule", { permissions: { defaultMode: "bypassPermissions", deny: ["Bash(cat:*)"] } }],
    ["bypassPermissions", { permissions: { defaultMode: "bypassPermissions" } }]
  ]

  it.live("parses, and is decided as the write `>` to the same file is, in every mode and under every rule", () =>
    Effect.gen(function* () {
      const commands = targets.flatMap(spellings)
      for (const command of commands) expect(bashParses(command), command).toBe(true)
      const differ: Array<string> = []
      for (const [name, config] of configs) {
        const rw = yield* decideAll(config, commands)
        const out = yield* decideAll(
          config,
          commands.map((c) => c.replace("<>", ">"))
        )
        for (const [i, command] of commands.entries()) {
          if (/does not parse/.test(rw[i]!.reason)) differ.push(`${name}: ${command} → unparsable`)
          else if (rw[i]!.behavior !== out[i]!.behavior)
            differ.push(`${name}: ${command} → ${rw[i]!.behavior}, > → ${out[i]!.behavior}`)
        }
      }
      expect(differ).toEqual([])
    })
  )

  it.live("asks as a write, saying so; /dev/null is as inert as for >", () =>
    Effect.gen(function* () {
      const config = { permissions: { defaultMode: "acceptEdits" as const, allow: ["Bash(cat:*)"] } }
      for (const t of ["f", ".git/config", ".env", "/etc/hosts"]) {
        const d = yield* decide(config, `cat <> ${t}`)
        expect(d.behavior, t).toBe("ask")
        expect(d.reason).toContain(`it opens a file for reading and writing (<>${t})`)
      }
      expect((yield* decide(config, "cat <>/dev/null")).behavior).toBe("allow")
    })
  )

  it.live("a network target or one only known when it runs is refused, as for any redirection", () =>
    Effect.gen(function* () {
      const bypass = { permissions: { defaultMode: "bypassPermissions" as const } }
      for (const command of ["cat <> /dev/tcp/127.0.0.1/80", "exec 3<>/dev/udp/127.0.0.1/53", 'cat <> "$f"'])
        expect((yield* decide(bypass, command)).behavior, command).toBe("deny")
    })
  )

  it.live(
    "only where bash lexes the operator: quoted, in a heredoc or a comment it is text; spellings bash rejects are refused",
    () =>
      Effect.gen(function* () {
        const config = { permissions: { defaultMode: "default" as const, allow: ["Bash(cat:*)", "Bash(echo:*)"] } }
        const text = ["echo '<>' x", 'echo "a<>b"', "cat <<'EOF'\n<>\nEOF", "echo x # <> f", "echo \\<> f"]
        const rejected = ["cat <<> f", "cat ><> f", "cat <>| f", "cat <> ", "cat <>> f"]
        for (const command of [...text, ...rejected]) {
          const d = yield* decide(config, command)
          const unparsable = d.behavior === "deny" && /does not parse/.test(d.reason)
          expect(unparsable, `${command}: ${d.reason}`).toBe(!bashParses(command))
          if (text.includes(command) && command !== "echo \\<> f") expect(d.behavior, command).toBe("allow")
        }
      })
  )
})

describe("a word after a closed descriptor (>&-, <&-)", () => {
  it("is, to real bash, a word of the command: `cat 3>&-.env` prints .env", () => {
    const r = spawnSync("/bin/bash", ["-c", "cat 3>&-.env; echo x 3<&- y"], { cwd: root, encoding: "utf8" })
    expect(r.stdout).toBe("TOKEN=x\nx y\n")
  })

  it.live("asks, and a deny rule that could match refuses; closing alone stays inert", () =>
    Effect.gen(function* () {
      const spelled = ["cat 3>&-.env", "cat 3<&-/etc/shadow", "cat 0<&- .env", "cat 3>&-'.env'"]
      for (const d of yield* decideAll({ permissions: { defaultMode: "default" } }, spelled))
        expect(d.behavior, d.reason).toBe("ask")
      const denied = yield* decideAll(
        { permissions: { defaultMode: "bypassPermissions", deny: ["Bash(cat .env:*)"] } },
        spelled
      )
      expect(denied.map((d) => d.behavior)).toEqual(["deny", "deny", "deny", "deny"])
      const inert = yield* decideAll({ permissions: { defaultMode: "default" } }, [
        "cat a.txt >&-",
        "cat 0<&-",
        "cat <&3-"
      ])
      expect(inert.map((d) => d.behavior)).toEqual(["allow", "allow", "allow"])
    })
  )
})
