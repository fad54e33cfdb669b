/** `freecode-tools call`, run as a real child process on a temp project. */
import * as NodeFs from "node:fs"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeProject, REPO, runProcess } from "./helpers.ts"

const project = makeProject()
afterAll(project.cleanup)
const cli = (...args: Array<string>) => Effect.promise(() => runProcess(args))
const version = (JSON.parse(NodeFs.readFileSync(`${REPO}/package.json`, "utf8")) as { version: string }).version

describe.concurrent("call", () => {
  it.live("--json: the whole ToolResult as one line; a non-ok status exits 1", () =>
    Effect.gen(function* () {
      const r = yield* cli("call", "output", '{"id":"nope"}', "--json", "--root", project.root)
      expect(r.code).toBe(1)
      const lines = r.stdout.split("\n").filter((l) => l !== "")
      expect(lines).toHaveLength(1)
      const result = JSON.parse(lines[0]!)
      expect(result).toMatchObject({ tool: "output", status: "error", error: { tag: "ToolFailure" } })
      expect(result.modelOutput).toContain('No stored output with id "nope"')
      expect(r.stderr).toBe("")
    })
  )

  it.live("a real read: modelOutput on stdout, exit 0, nothing on stderr", () =>
    Effect.gen(function* () {
      const r = yield* cli("call", "read", '{"filePath":"README.md"}', "--root", project.root)
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("1\t# Demo")
      expect(r.stdout).toContain("3\tA small project.")
    })
  )

  it.live("an unknown tool exits 1; modelOutput suggests the closest name; status on stderr", () =>
    Effect.gen(function* () {
      const r = yield* cli("call", "outptu", "--root", project.root)
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('No tool named "outptu". Did you mean "output"?\n')
      expect(r.stderr).toBe("status: error\n")
    })
  )

  it.live("JSON_ARGS that is not JSON is misuse: exit 2, a short error on stderr, nothing on stdout", () =>
    Effect.gen(function* () {
      const r = yield* cli("call", "read", "{filePath: README.md}", "--root", project.root)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toMatch(/^freecode-tools: JSON_ARGS is not valid JSON \(/)
    })
  )

  const misuse: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp]> = [
    ["an unknown flag", ["call", "read", "--bogus"], /Unrecognized flag: --bogus/],
    ["a missing TOOL", ["call"], /Missing required argument: tool/],
    ["a bad --surface", ["call", "read", "--surface", "most"], /Invalid value for flag --surface: "most"/],
    [
      "a --root that does not exist",
      ["call", "read", "--root", "/no/such/dir"],
      /--root \/no\/such\/dir does not exist/
    ],
    ["a --root that is a file", ["tools", "--root", `${REPO}/package.json`], /is not a directory/],
    [
      "an unreadable --config",
      ["call", "read", "--config", "/no/such/freecode.json"],
      /--config \/no\/such\/freecode\.json cannot be read/
    ],
    ["an unknown subcommand", ["frobnicate"], /Unknown subcommand "frobnicate"/],
    ["no subcommand", [], /USAGE/]
  ]

  it.live.each(misuse)("misuse exits 2: %s", ([, args, message]) =>
    Effect.gen(function* () {
      const r = yield* cli(...args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toMatch(message)
      if (args.length > 0) expect(r.stderr.split("\n").filter((l) => l !== "").length).toBeLessThanOrEqual(2)
    })
  )

  it.live("--config must hold a JSON object; one that does is accepted", () =>
    Effect.gen(function* () {
      const arrayConfig = makeProject({ "freecode.json": "[1, 2]", "broken.json": "{" })
      try {
        const notObject = yield* cli("call", "output", '{"id":"x"}', "--config", `${arrayConfig.root}/freecode.json`)
        expect(notObject.code).toBe(2)
        expect(notObject.stderr).toContain(`--config ${arrayConfig.root}/freecode.json must hold a JSON object`)
        const broken = yield* cli("tools", "--config", `${arrayConfig.root}/broken.json`)
        expect(broken.code).toBe(2)
        expect(broken.stderr).toContain("is not valid JSON")
      } finally {
        arrayConfig.cleanup()
      }
      const ok = makeProject({ "freecode.json": '{"permissions": {}}' })
      try {
        const r = yield* cli(
          "call",
          "read",
          '{"filePath":"README.md"}',
          "--root",
          ok.root,
          "--config",
          `${ok.root}/freecode.json`
        )
        expect(r.code).toBe(0)
      } finally {
        ok.cleanup()
      }
    })
  )

  it.live("--version prints the package version; --help describes every command", () =>
    Effect.gen(function* () {
      const v = yield* cli("--version")
      expect(v).toMatchObject({ code: 0, stdout: `${version}\n` })
      const help = yield* cli("--help")
      expect(help.code).toBe(0)
      for (const command of ["tools", "call", "run"]) expect(help.stdout).toContain(command)
      const callHelp = yield* cli("call", "--help")
      expect(callHelp.code).toBe(0)
      for (const flag of ["--root", "--config", "--session", "--surface", "--yes", "--images", "--json"]) {
        expect(callHelp.stdout).toContain(flag)
      }
      expect(callHelp.stdout).toContain("a bad file is misuse")
    })
  )
})
