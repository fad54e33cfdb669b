/**
 * The OS sandbox, with real bubblewrap: bash commands run through the real tool, and what they
 * did is checked on the host afterwards. Where bubblewrap cannot run (not Linux, not installed),
 * these skip locally; CI installs it, and there they must run.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { probeSandbox } from "../../src/sandbox/availability.ts"
import { bwrapArgs, bwrapLine } from "../../src/sandbox/bwrap.ts"
import { domainAllowed } from "../../src/sandbox/policy.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings, type SandboxConfig } from "../../src/sandbox/settings.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { startServer } from "../web/server.ts"

const availability = await probeSandbox()
// Linux only (macOS's sandbox has its own file, seatbelt.test.ts); CI installs bubblewrap.
const runnable =
  process.platform === "linux" &&
  ((availability.available && availability.runner === "bubblewrap") || process.env.CI !== undefined)

// The sandbox's /tmp is a fresh tmpfs: a folder under the host's /tmp is missing inside rather
// than refused, so "nothing was written there" would prove nothing. The places a command must
// not touch live where the sandbox sees the host's own folder, read-only.
const hostPlaces = NodeFs.existsSync("/var/tmp") ? "/var/tmp" : NodeOs.tmpdir()
const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = (prefix: string, base = NodeOs.tmpdir()) => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(base, prefix)))
  made.push(dir)
  return dir
}

interface Place {
  readonly root: string
  readonly home: string
  readonly outside: string
}

const place = (): Place => {
  const home = tempDir("freecode-sbx-home-", hostPlaces)
  NodeFs.mkdirSync(NodePath.join(home, ".ssh"))
  NodeFs.writeFileSync(NodePath.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n")
  NodeFs.writeFileSync(NodePath.join(home, ".netrc"), "machine example.com password hunter2\n")
  return { root: tempDir("freecode-sbx-root-"), home, outside: tempDir("freecode-sbx-outside-", hostPlaces) }
}

/** The processes whose command line matches `pattern` (pgrep exits 1 when there are none). */
const pgrep = (pattern: string): string => {
  try {
    return execFileSync("pgrep", ["-af", pattern], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return ""
  }
}

const bash = (p: Place, command: string, config: SandboxConfig = {}) =>
  Orchestrator.use((o) => o.execute({ id: "b", name: "bash", args: { command } }, { sessionId: "s" })).pipe(
    Effect.provide(
      testToolSystem({ root: p.root, tools: [BashTool] }).pipe(
        Layer.provide(Sandbox.layer(resolveSandboxSettings({ enabled: true, ...config }, false), p))
      )
    )
  )

describe.skipIf(!runnable)("sandboxed bash (bubblewrap)", () => {
  it("is available where the tests run", () => {
    expect(availability).toMatchObject({ available: true })
  })

  it.effect("writes inside the project; a write outside it or into $HOME fails and leaves nothing", () =>
    Effect.gen(function* () {
      const p = place()
      const tmp = `/tmp/left-behind-${NodePath.basename(p.root)}`
      const r = yield* bash(
        p,
        `echo in > inside.txt; echo out > ${p.outside}/escaped.txt; echo home > ${p.home}/.bashrc-added; echo tmp > ${tmp}; cat inside.txt`
      )
      expect(r.modelOutput).toContain("in")
      // Refused by the kernel, not missing: the folders exist inside, read-only.
      expect(r.modelOutput).toContain(`${p.outside}/escaped.txt: Read-only file system`)
      expect(r.modelOutput).toContain(`${p.home}/.bashrc-added: Read-only file system`)
      expect(NodeFs.readFileSync(NodePath.join(p.root, "inside.txt"), "utf8")).toBe("in\n")
      expect(NodeFs.existsSync(NodePath.join(p.outside, "escaped.txt"))).toBe(false)
      expect(NodeFs.existsSync(NodePath.join(p.home, ".bashrc-added"))).toBe(false)
      expect(NodeFs.existsSync(tmp)).toBe(false)
    })
  )

  it.effect("an allowed program's own writes (sort -o, git diff --output, sed -i) leave nothing outside", () =>
    Effect.gen(function* () {
      const p = place()
      NodeFs.writeFileSync(NodePath.join(p.root, "a.txt"), "b\na\n")
      NodeFs.writeFileSync(NodePath.join(p.outside, "target"), "keep\n")
      NodeFs.writeFileSync(NodePath.join(p.root, "b.txt"), "c\n")
      const tag = NodePath.basename(p.root)
      const tmp = [`/tmp/sorted-${tag}`, `/tmp/diff-${tag}`]
      const r = yield* bash(
        p,
        [
          // The same writes into the project work: the command is not what fails.
          "sort -o sorted a.txt",
          "git diff --no-index --output=diff a.txt b.txt",
          `sort -o ${p.outside}/sorted a.txt`,
          `git diff --no-index --output=${p.outside}/diff a.txt b.txt`,
          `sed -i s/keep/lost/ ${p.outside}/target`,
          `sort -o ${tmp[0]} a.txt`,
          `git diff --no-index --output=${tmp[1]} a.txt b.txt`,
          `cat ${tmp[0]}`
        ].join("; ")
      )
      expect(NodeFs.readFileSync(NodePath.join(p.root, "sorted"), "utf8")).toBe("a\nb\n")
      expect(NodeFs.readFileSync(NodePath.join(p.root, "diff"), "utf8")).toContain("+c")
      expect(r.modelOutput).toContain("Read-only file system")
      expect(NodeFs.readdirSync(p.outside)).toEqual(["target"])
      expect(NodeFs.readFileSync(NodePath.join(p.outside, "target"), "utf8")).toBe("keep\n")
      // /tmp inside is the sandbox's own: the file was written there (cat shows it) and went with it.
      expect(r.modelOutput).toContain("a\nb")
      for (const t of tmp) expect(NodeFs.existsSync(t)).toBe(false)
    })
  )

  it.effect("credential files are not readable inside", () =>
    Effect.gen(function* () {
      const p = place()
      const r = yield* bash(p, `cat ${p.home}/.ssh/id_ed25519; cat ${p.home}/.netrc; ls -A ${p.home}/.ssh | wc -l`)
      expect(r.modelOutput).not.toContain("PRIVATE KEY")
      expect(r.modelOutput).not.toContain("hunter2")
    })
  )

  it.effect("the session's temp dir is TMPDIR and writable", () =>
    Effect.gen(function* () {
      const p = place()
      const r = yield* bash(p, 'echo x > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR"')
      expect(r.status).toBe("ok")
      expect(r.modelOutput).toMatch(/^x\n\/.*freecode-sandbox-/)
    })
  )

  // Live clock: the wait below is real time (the kernel ends the namespace's processes just after
  // bubblewrap exits); on the test clock a first look that still saw them slept forever.
  it.live("setsid, nohup and double-forked children are gone when the call returns", () =>
    Effect.gen(function* () {
      const p = place()
      const tag = `${process.pid}${Date.now()}`.slice(-9)
      const r = yield* bash(
        p,
        `setsid sleep 3${tag}1 & nohup sleep 3${tag}2 >/dev/null 2>&1 & ( (sleep 3${tag}3 &) & ); echo started`
      )
      expect(r.modelOutput).toContain("started")
      let left = ""
      for (let i = 0; i < 30; i++) {
        left = pgrep(`sleep 3${tag}`)
        if (left === "") break
        yield* Effect.sleep("100 millis")
      }
      expect(left).toBe("")
    })
  )

  it.effect("a loopback server is unreachable without an allowed domain and reachable with one", () =>
    Effect.gen(function* () {
      const p = place()
      const base = yield* startServer((_req, res) => res.end("hello from the host\n"))
      const curl = `curl -sS --max-time 5 ${base}/`
      const blocked = yield* bash(p, curl)
      expect(blocked.modelOutput).not.toContain("hello from the host")
      const other = yield* bash(p, curl, { network: { allowedDomains: ["example.invalid"] } })
      expect(other.modelOutput).not.toContain("hello from the host")
      expect(other.modelOutput).toContain("sandbox.network.allowedDomains")
      const allowed = yield* bash(p, curl, { network: { allowedDomains: ["127.0.0.1"] } })
      expect(allowed.modelOutput).toContain("hello from the host")
    }).pipe(Effect.scoped)
  )

  it("a bridge that never listens still lets the command run (after its wait), adding nothing to its output", () => {
    if (!availability.available || availability.runner !== "bubblewrap") throw new Error("bubblewrap is needed here")
    const root = tempDir("freecode-sbx-bridge-")
    const socket = NodePath.join(root, "proxy.sock")
    NodeFs.writeFileSync(socket, "")
    const policy = {
      writable: [root],
      readDenied: [],
      writeDenied: [],
      pinned: [],
      placeholders: [],
      controlPaths: [],
      controlParents: [],
      allowedDomains: ["example.com"]
    }
    // `false` in socat's place: nothing ever listens on the bridge's port.
    const [program, ...args] = bwrapLine(
      availability.bwrap,
      policy,
      { cwd: root, writable: [], tempDir: root, hardening: { seccompFile: undefined, disableUserns: false } },
      ["echo", "ran"],
      {
        socket,
        socat: "/bin/false"
      }
    )
    const out = execFileSync(program, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 10_000 })
    expect(out).toBe("ran\n")
  })

  it.effect("failIfUnavailable with no bubblewrap fails the call, naming the setting", () =>
    Effect.gen(function* () {
      const p = place()
      // A sandbox that looks for bubblewrap where there is none.
      const r = yield* Orchestrator.use((o) =>
        o.execute({ id: "b", name: "bash", args: { command: "echo hi" } }, { sessionId: "s" })
      ).pipe(
        Effect.provide(
          testToolSystem({ root: p.root, tools: [BashTool] }).pipe(
            Layer.provide(
              Sandbox.layer(resolveSandboxSettings({ enabled: true, failIfUnavailable: true }, false), {
                ...p,
                path: "/nonexistent"
              })
            )
          )
        )
      )
      expect(r.status).toBe("error")
      expect(r.modelOutput).toContain("failIfUnavailable")
    })
  )
})

describe("sandbox policy", () => {
  it("domain patterns: exact names and *. subdomains, never a suffix of another name", () => {
    expect(domainAllowed(["example.com"], "example.com")).toBe(true)
    expect(domainAllowed(["example.com"], "EXAMPLE.com.")).toBe(true)
    expect(domainAllowed(["example.com"], "api.example.com")).toBe(false)
    expect(domainAllowed(["*.example.com"], "api.example.com")).toBe(true)
    expect(domainAllowed(["*.example.com"], "example.com")).toBe(false)
    expect(domainAllowed(["*.example.com"], "badexample.com")).toBe(false)
  })

  it("bubblewrap arguments: writable places after the read-only root, denials after them", () => {
    const args = bwrapArgs(
      {
        writable: ["/p/root/sub", "/p/root"],
        readDenied: [
          { path: "/h/.ssh", directory: true },
          { path: "/h/.netrc", directory: false }
        ],
        writeDenied: ["/p/root/.git/hooks"],
        pinned: ["/p/root/.git"],
        placeholders: [
          { path: "/p/root/.git/modules", directory: true },
          { path: "/p/root/.git/config.worktree", directory: false }
        ],
        controlPaths: [],
        controlParents: [],
        allowedDomains: []
      },
      {
        cwd: "/p/root",
        writable: ["/store"],
        tempDir: "/t",
        hardening: { seccompFile: "/f.bpf", disableUserns: true }
      }
    ).join(" ")
    expect(args.indexOf("--ro-bind / /")).toBeLessThan(args.indexOf("--bind /p/root /p/root"))
    expect(args.indexOf("--bind /p/root /p/root")).toBeLessThan(args.indexOf("--bind /p/root/sub /p/root/sub"))
    expect(args.indexOf("--bind /p/root/sub")).toBeLessThan(args.indexOf("--bind /p/root/.git /p/root/.git"))
    expect(args.indexOf("--bind /p/root/.git /p/root/.git")).toBeLessThan(args.indexOf("--ro-bind /p/root/.git/hooks"))
    expect(args).toContain("--tmpfs /p/root/.git/modules --remount-ro /p/root/.git/modules")
    expect(args).toContain("--ro-bind /dev/null /p/root/.git/config.worktree")
    expect(args).toContain("--unshare-user --cap-drop ALL")
    expect(args).toContain("--unshare-ipc")
    expect(args).toContain("--disable-userns")
    expect(args).toContain("--seccomp 3")
    expect(args).toContain("--tmpfs /h/.ssh --remount-ro /h/.ssh")
    expect(args).toContain("--ro-bind /dev/null /h/.netrc")
    expect(args).toContain("--unshare-net")
    expect(args).toContain("--unshare-pid")
    expect(args).toContain("--die-with-parent")
  })
})
