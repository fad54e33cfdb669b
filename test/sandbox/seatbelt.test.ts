/**
 * macOS's sandbox: the Seatbelt profile generated from a policy (checked as text, so it runs
 * everywhere), the sandbox on a system with no OS sandbox (by naming that platform), and, on
 * macOS only, real commands under real `sandbox-exec`.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { probeSandbox } from "../../src/sandbox/availability.ts"
import type { SandboxPolicy } from "../../src/sandbox/policy.ts"
import { describeSandbox, Sandbox } from "../../src/sandbox/sandbox.ts"
import { seatbeltLine, seatbeltProfile } from "../../src/sandbox/seatbelt.ts"
import { resolveSandboxSettings, type SandboxConfig } from "../../src/sandbox/settings.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { startServer } from "../web/server.ts"

const policy: SandboxPolicy = {
  writable: ["/p/root", "/p/root/sub"],
  readDenied: [
    { path: "/h/.ssh", directory: true },
    { path: "/h/.netrc", directory: false }
  ],
  writeDenied: ["/p/root/.git/hooks"],
  pinned: ["/p/root/.git"],
  placeholders: [],
  controlPaths: ["/p/root/.git/hooks", "/p/root/freecode.json"],
  controlParents: ["/p/root/.git"],
  allowedDomains: []
}

/** A policy with no control paths. */
const bare = { pinned: [], placeholders: [], controlPaths: [], controlParents: [] }

/** The value a profile's `(param "NAME")` takes. */
const param = (params: ReadonlyArray<readonly [string, string]>, name: string) => params.find(([n]) => n === name)?.[1]

describe("Seatbelt profile", () => {
  it("refuses by default, reads all but the denied paths, writes only in the writable ones", () => {
    const { profile, params } = seatbeltProfile(policy, { cwd: "/p/root", writable: ["/out"], tempDir: "/t" })
    expect(profile.startsWith("(version 1)\n(deny default)\n")).toBe(true)
    expect(profile).toContain(
      '(allow file-read*\n  (require-all (require-not (subpath (param "DENY_READ_0"))) (require-not (subpath (param "DENY_READ_1")))))'
    )
    expect(profile).toContain(
      '(allow file-write*\n  (require-all (require-any (subpath (param "WRITABLE_0")) (subpath (param "WRITABLE_1")) (subpath (param "WRITABLE_2")))'
    )
    // A write-denied place and a read-denied one are both excluded from the writable ones.
    const writeRule = profile.split("\n(allow file-write*\n")[1] ?? ""
    expect(writeRule).toContain('(require-not (subpath (param "DENY_WRITE_0")))')
    expect(writeRule).toContain('(require-not (subpath (param "DENY_READ_0")))')
    expect(param(params, "WRITABLE_0")).toBe("/p/root")
    expect(param(params, "WRITABLE_2")).toBe("/out")
    expect(param(params, "DENY_READ_0")).toBe("/h/.ssh")
    expect(param(params, "DENY_READ_1")).toBe("/h/.netrc")
    expect(param(params, "DENY_WRITE_0")).toBe("/p/root/.git/hooks")
    // Control paths are refused by path, existing or not (a new freecode.json cannot be made);
    // the folders leading to them cannot be renamed, removed or replaced (a literal, so writing
    // inside .git goes on).
    expect(param(params, "DENY_WRITE_1")).toBe("/p/root/freecode.json")
    expect(writeRule).toContain('(require-not (subpath (param "DENY_WRITE_1")))')
    expect(param(params, "PINNED_0")).toBe("/p/root/.git")
    expect(writeRule).toContain('(require-not (literal (param "PINNED_0")))')
    // No network rule without a proxy; Launch Services (which starts applications outside) is never reachable.
    expect(profile).not.toContain("network")
    expect(profile).not.toContain("launchservices")
  })

  it("no path is written into the profile's text, however it is spelled", () => {
    const hostile = '/p/x") (allow default) ("'
    const { profile, params } = seatbeltProfile(
      {
        writable: [hostile],
        readDenied: [{ path: `${hostile}/k`, directory: false }],
        writeDenied: [],
        ...bare,
        allowedDomains: []
      },
      { cwd: "/", writable: [], tempDir: "/t" }
    )
    expect(profile).not.toContain(hostile)
    expect(profile).not.toContain("(allow default)")
    expect(param(params, "WRITABLE_0")).toBe(hostile)
  })

  it("with a proxy, the one connection allowed is to its loopback port", () => {
    const { profile } = seatbeltProfile(policy, { cwd: "/", writable: [], tempDir: "/t", proxyPort: 40123 })
    const network = profile.split("\n").filter((l) => l.includes("network"))
    expect(network).toEqual(['(allow network-outbound (remote ip "localhost:40123"))'])
  })

  it("without denials the rules carry no exceptions", () => {
    const { profile } = seatbeltProfile(
      { writable: ["/r"], readDenied: [], writeDenied: [], ...bare, allowedDomains: [] },
      { cwd: "/r", writable: [], tempDir: "/r" }
    )
    expect(profile).toContain("(allow file-read*)\n")
    expect(profile).toContain('(allow file-write* (subpath (param "WRITABLE_0")))')
  })

  it("the command line: sandbox-exec, the profile and its parameters, then the command in its folder", () => {
    const line = seatbeltLine(
      "/usr/bin/sandbox-exec",
      policy,
      { cwd: "/p/root", writable: [], tempDir: "/t", proxyPort: 9 },
      ["/bin/bash", "-c", "echo hi"]
    )
    expect(line.slice(0, 2)).toEqual(["/usr/bin/sandbox-exec", "-p"])
    expect(line).toContain("WRITABLE_0=/p/root")
    const rest = line.slice(line.indexOf("--") + 1)
    expect(rest[0]).toBe("/bin/sh")
    // $1 the folder, $2 TMPDIR, $3 the proxy; then the command, unchanged.
    expect(rest.slice(3)).toEqual(["sandbox", "/p/root", "/t", "http://127.0.0.1:9", "/bin/bash", "-c", "echo hi"])
    expect(rest[2]).toContain('export HTTP_PROXY="$3"')
    expect(rest[2]).toContain("unset NO_PROXY no_proxy")
  })
})

describe("where there is no OS sandbox", () => {
  it.skipIf(process.platform === "darwin")(
    "macOS is looked for as Seatbelt: without sandbox-exec, unavailable",
    async () => {
      expect(await probeSandbox("darwin", "/nonexistent")).toEqual({
        available: false,
        reason: "sandbox-exec is not on this Mac"
      })
    }
  )

  it.effect("the sandbox reports itself unavailable, and bash runs under the permission rules", () =>
    Effect.gen(function* () {
      expect(yield* Effect.promise(() => probeSandbox("win32"))).toMatchObject({
        available: false,
        reason: expect.stringContaining("no OS sandbox on win32")
      })
      const root = NodeFs.realpathSync(NodeOs.tmpdir())
      const sandbox = yield* Sandbox.pipe(
        Effect.provide(
          Layer.fresh(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), { root, platform: "win32" }))
        )
      )
      const status = yield* sandbox.status
      expect(status).toMatchObject({ state: "unavailable" })
      expect(describeSandbox(status)).toContain("run under the permission rules")
      const line = ["/bin/bash", "-c", "true"] as const
      expect(yield* sandbox.wrap(line, { sessionId: "s", cwd: root, writable: [] })).toBe(line)
    }).pipe(Effect.scoped)
  )

  it.effect("with failIfUnavailable, a command fails instead, naming the setting", () =>
    Effect.gen(function* () {
      const root = NodeFs.realpathSync(NodeOs.tmpdir())
      const sandbox = yield* Sandbox.pipe(
        Effect.provide(
          Layer.fresh(
            Sandbox.layer(resolveSandboxSettings({ enabled: true, failIfUnavailable: true }, false), {
              root,
              platform: "freebsd"
            })
          )
        )
      )
      const error = yield* Effect.flip(sandbox.wrap(["/bin/true"], { sessionId: "s", cwd: root, writable: [] }))
      expect(error.message).toContain("no OS sandbox on freebsd")
      expect(error.message).toContain("failIfUnavailable")
    }).pipe(Effect.scoped)
  )
})

// The real thing needs macOS; elsewhere sandbox-exec does not exist.
const onMac = process.platform === "darwin"
const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = (prefix: string) => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix)))
  made.push(dir)
  return dir
}

describe.skipIf(!onMac)("sandboxed bash (Seatbelt; macOS only: sandbox-exec exists nowhere else)", () => {
  const place = () => {
    const home = tempDir("freecode-sbx-home-")
    NodeFs.mkdirSync(NodePath.join(home, ".ssh"))
    NodeFs.writeFileSync(NodePath.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n")
    return { root: tempDir("freecode-sbx-root-"), home, outside: tempDir("freecode-sbx-outside-") }
  }
  const bash = (p: ReturnType<typeof place>, command: string, config: SandboxConfig = {}) =>
    Orchestrator.use((o) => o.execute({ id: "b", name: "bash", args: { command } }, { sessionId: "s" })).pipe(
      Effect.provide(
        testToolSystem({ root: p.root, tools: [BashTool] }).pipe(
          Layer.provide(Sandbox.layer(resolveSandboxSettings({ enabled: true, ...config }, false), p))
        )
      )
    )

  it("is available", async () => {
    expect(await probeSandbox()).toMatchObject({ available: true, runner: "seatbelt" })
  })

  it.live("writes inside the project and TMPDIR; outside, $HOME and the credentials stay untouched", () =>
    Effect.gen(function* () {
      const p = place()
      NodeFs.writeFileSync(NodePath.join(p.root, "a.txt"), "b\na\n")
      const r = yield* bash(
        p,
        `echo in > inside.txt; echo tmp-ok > "$TMPDIR/t" && cat "$TMPDIR/t"; echo out > ${p.outside}/escaped; echo h > ${p.home}/added; sort -o ${p.outside}/sorted a.txt; cat ${p.home}/.ssh/id_ed25519; pwd`
      )
      expect(NodeFs.readFileSync(NodePath.join(p.root, "inside.txt"), "utf8")).toBe("in\n")
      expect(r.modelOutput).toContain("tmp-ok")
      expect(r.modelOutput).toContain(p.root)
      expect(r.modelOutput).not.toContain("PRIVATE KEY")
      expect(NodeFs.readdirSync(p.outside)).toEqual([])
      expect(NodeFs.existsSync(NodePath.join(p.home, "added"))).toBe(false)
    })
  )

  it.live("a loopback server is unreachable without an allowed domain and reachable with one", () =>
    Effect.gen(function* () {
      const p = place()
      const base = yield* startServer((_req, res) => res.end("hello from the host\n"))
      const curl = `curl -sS --max-time 5 ${base}/`
      expect((yield* bash(p, curl)).modelOutput).not.toContain("hello from the host")
      const other = yield* bash(p, curl, { network: { allowedDomains: ["example.invalid"] } })
      expect(other.modelOutput).toContain("sandbox.network.allowedDomains")
      const allowed = yield* bash(p, curl, { network: { allowedDomains: ["127.0.0.1"] } })
      expect(allowed.modelOutput).toContain("hello from the host")
    }).pipe(Effect.scoped)
  )
})
