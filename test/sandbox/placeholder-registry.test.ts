/**
 * The placeholders' registry between users and environments: a registry another user made or
 * could change is refused, never read or written; and two processes whose registries differ (two
 * users on one project) never remove a placeholder the other's running sandbox has mounted, nor
 * adopt one that is not their own. Real processes with real bubblewrap, as root and as `nobody`;
 * the project is checked afterwards.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { defaultRegistry } from "../../src/sandbox/placeholder-registry.ts"
import { placeholders, TOP_CONTROL_NAMES } from "../../src/sandbox/placeholders.ts"
import { canBeNobody, cleanUp, folder, giveToNobody, runnable } from "./inside.ts"

afterAll(cleanUp)

// A peer a failed test left waiting (its stop file never written) is killed with the test: its
// bubblewrap dies with it (--die-with-parent), and nothing outlives the file.
const peers = new Set<ChildProcess>()
afterEach(() => {
  for (const child of peers) child.kill("SIGKILL")
  peers.clear()
})

const PEER = NodePath.resolve(import.meta.dirname, "sandbox-peer.ts")
const NOBODY = 65534
const asUid = (uid: number, line: ReadonlyArray<string>): Array<string> =>
  uid === 0 ? [...line] : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...line]

/**
 * Whether `nobody` can run this checkout's code (Node and the peer script): a checkout below a
 * private folder (a fresh clone in a folder mkdtemp made, a home of mode 0700) cannot be read by
 * it, and the tests that run a process of `nobody`'s from it are skipped there, saying why.
 */
const nobodyRunsCheckout = ((): boolean => {
  if (!canBeNobody) return false
  const [program, ...args] = asUid(NOBODY, [
    process.execPath,
    "-e",
    `require("fs").accessSync(${JSON.stringify(PEER)}, 4)`
  ])
  return spawnSync(program!, args, { stdio: "ignore" }).status === 0
})()
if (canBeNobody && !nobodyRunsCheckout)
  console.warn(
    `placeholder-registry: nobody cannot read ${PEER} (a private folder on its way): its two-user tests are skipped`
  )

/** A shared folder like /tmp (root's, sticky, writable by all): where each user's registry goes. */
const sharedTmp = () => {
  const dir = folder("freecode-reg-tmp-")
  NodeFs.chmodSync(dir, 0o1777)
  return dir
}

interface Peer {
  readonly done: Promise<{ output: string; notices: ReadonlyArray<string> }>
}

/** A process of user `uid` running `script` in its own Sandbox layer on `root`, with its own home, state and registry. */
const peer = (uid: number, root: string, tmp: string, script: string): Peer => {
  const home = folder(`freecode-reg-home-${uid}-`, true)
  const state = folder(`freecode-reg-state-${uid}-`, true)
  if (uid !== 0) for (const d of [home, state]) execFileSync("chown", ["-R", `${uid}:${uid}`, d])
  const registry = NodePath.join(tmp, `freecode-tools-${uid}`, "placeholders")
  const [program, ...args] = asUid(uid, [process.execPath, PEER, JSON.stringify({ root, home, registry, script })])
  const child = spawn(program!, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, FREECODE_STATE_DIR: state }
  })
  peers.add(child)
  let out = ""
  let err = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (err += d))
  const done = new Promise<{ output: string; notices: ReadonlyArray<string> }>((resolve, reject) =>
    child.on("close", (code) => {
      peers.delete(child)
      try {
        resolve(JSON.parse(out))
      } catch {
        reject(new Error(`peer ${uid} ended ${code}: ${out}${err}`))
      }
    })
  )
  return { done }
}

/** Waits for `p` to exist, or for `running` to end first (its failure is the test's). */
const until = async (p: string, running: Peer) => {
  let ended = false
  running.done.then(
    () => (ended = true),
    () => (ended = true)
  )
  for (let i = 0; i < 400 && !ended && !NodeFs.existsSync(p); i++) await new Promise((r) => setTimeout(r, 50))
  if (!NodeFs.existsSync(p)) expect.fail(`${p} was not made: ${JSON.stringify(ended ? await running.done : "")}`)
}

describe("a registry another user made or could change is refused, never read", () => {
  it("as root: a registry folder of nobody's, or below one, or world-writable, or a link", async () => {
    const tmp = sharedTmp()
    // A project of root's with a dead sandbox's empty folder: what a forged manifest would have removed.
    const root = folder("freecode-reg-victim-")
    const victim = NodePath.join(root, ".git")
    NodeFs.mkdirSync(victim)
    const s = NodeFs.statSync(victim)
    const forged = JSON.stringify({
      pid: 999_999,
      start: "1",
      ns: NodeFs.readlinkSync("/proc/self/ns/pid"),
      created: 0,
      paths: [{ path: victim, dev: s.dev, ino: s.ino }]
    })
    const cases: Array<[string, () => string]> = [
      [
        "nobody made the user folder first",
        () => {
          const top = NodePath.join(tmp, "a-freecode-tools-0")
          NodeFs.mkdirSync(NodePath.join(top, "placeholders"), { recursive: true, mode: 0o700 })
          NodeFs.writeFileSync(NodePath.join(top, "placeholders", "x.json"), forged)
          execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, top])
          return NodePath.join(top, "placeholders")
        }
      ],
      [
        "the user folder is nobody's, the registry root's",
        () => {
          const top = NodePath.join(tmp, "b-freecode-tools-0")
          NodeFs.mkdirSync(top, { mode: 0o777 })
          execFileSync("chown", [`${NOBODY}:${NOBODY}`, top])
          NodeFs.mkdirSync(NodePath.join(top, "placeholders"), { mode: 0o700 })
          NodeFs.writeFileSync(NodePath.join(top, "placeholders", "x.json"), forged)
          return NodePath.join(top, "placeholders")
        }
      ],
      [
        "a world-writable folder on the way, without the sticky bit",
        () => {
          const top = NodePath.join(tmp, "c-freecode-tools-0")
          NodeFs.mkdirSync(NodePath.join(top, "placeholders"), { recursive: true, mode: 0o700 })
          NodeFs.chmodSync(top, 0o777)
          NodeFs.writeFileSync(NodePath.join(top, "placeholders", "x.json"), forged)
          return NodePath.join(top, "placeholders")
        }
      ],
      [
        "the registry is a link to nobody's folder",
        () => {
          const theirs = folder("freecode-reg-theirs-", true)
          NodeFs.writeFileSync(NodePath.join(theirs, "x.json"), forged)
          giveToNobody(theirs)
          const top = NodePath.join(tmp, "d-freecode-tools-0")
          NodeFs.mkdirSync(top, { mode: 0o700 })
          NodeFs.symlinkSync(theirs, NodePath.join(top, "placeholders"))
          return NodePath.join(top, "placeholders")
        }
      ]
    ]
    for (const [what, make] of cases) {
      const registry = make()
      const reg = placeholders(registry)
      await expect(reg.collect(), what).rejects.toThrow(/another user|writable by other users|not a folder/)
      await expect(reg.hold([root]), what).rejects.toThrow(/another user|writable by other users|not a folder/)
      expect(NodeFs.existsSync(victim), what).toBe(true)
      // Nothing of root's was written into it.
      const real = NodeFs.realpathSync(registry)
      expect(NodeFs.readdirSync(real).sort(), what).toEqual(["x.json"])
    }
    // The same folders, root's own and private, are used: the forged manifest is trusted then (it is root's).
    const own = NodePath.join(folder("freecode-reg-own-"), "placeholders")
    NodeFs.mkdirSync(own, { mode: 0o700 })
    NodeFs.writeFileSync(NodePath.join(own, "x.json"), forged)
    await placeholders(own).collect()
    expect(NodeFs.existsSync(victim)).toBe(false)
  })

  it.skipIf(!nobodyRunsCheckout)("as nobody: a registry another user (daemon) made first is refused", () => {
    const tmp = sharedTmp()
    const top = NodePath.join(tmp, `freecode-tools-${NOBODY}`)
    execFileSync("setpriv", [
      "--reuid=1",
      "--regid=1",
      "--clear-groups",
      "mkdir",
      "-m",
      "0777",
      "-p",
      NodePath.join(top, "placeholders")
    ])
    const script = `const { placeholders } = await import(${JSON.stringify(NodePath.resolve("src/sandbox/placeholders.ts"))}); try { await placeholders(${JSON.stringify(NodePath.join(top, "placeholders"))}).collect(); console.log("USED") } catch (e) { console.log("REFUSED", e.message) }`
    const out = execFileSync(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--input-type=module", "-e", script],
      { encoding: "utf8" }
    )
    expect(out).toMatch(/^REFUSED .*another user \(uid 1\)/)
    expect(NodeFs.readdirSync(NodePath.join(top, "placeholders"))).toEqual([])
  })

  it("the default registry is one per user, whatever TMPDIR says", () => {
    const at = (tmpdir: string) =>
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const { defaultRegistry } = await import(${JSON.stringify(NodePath.resolve("src/sandbox/placeholder-registry.ts"))}); console.log(defaultRegistry())`
        ],
        { encoding: "utf8", env: { ...process.env, TMPDIR: tmpdir } }
      ).trim()
    expect(at("/var/tmp")).toBe(at("/tmp"))
    expect(at("/var/tmp")).toBe(defaultRegistry())
  })
})

describe.skipIf(!runnable || !nobodyRunsCheckout)("two users' sandboxes on one project", () => {
  for (const [first, second] of [
    [NOBODY, 0],
    [0, NOBODY]
  ] as const) {
    it(`${first === 0 ? "root" : "nobody"} makes the placeholders, ${second === 0 ? "root" : "nobody"}'s sandbox relies on them: the first one's end keeps them until the second is done`, async () => {
      const tmp = sharedTmp()
      const root = folder("freecode-reg-proj-", true)
      NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
      giveToNobody(root)
      // Writable by both: root inside a sandbox has no capability to write another user's folder.
      NodeFs.chmodSync(root, 0o777)
      const a = peer(first, root, tmp, "touch a-started; while [ ! -e a-stop ]; do sleep 0.05; done; echo A-done")
      await until(NodePath.join(root, "a-started"), a)
      const made = NodeFs.statSync(NodePath.join(root, "freecode.json"))
      expect(made.isDirectory()).toBe(true)
      expect(made.uid).toBe(first)
      const b = peer(
        second,
        root,
        tmp,
        "touch b-started; while [ ! -e b-stop ]; do echo '{}' > freecode.json 2>/dev/null && echo PWN-B-freecode; mkdir .git/x 2>/dev/null && echo PWN-B-git; sleep 0.05; done; echo B-done"
      )
      await until(NodePath.join(root, "b-started"), b)
      NodeFs.writeFileSync(NodePath.join(root, "a-stop"), "")
      const ra = await a.done
      expect(ra.output).toContain("A-done")
      // The first one's layer has ended and collected: the placeholders stay, the second's sandbox has them mounted.
      for (const name of TOP_CONTROL_NAMES) expect(NodeFs.existsSync(NodePath.join(root, name)), name).toBe(true)
      await new Promise((r) => setTimeout(r, 300)) // b keeps trying meanwhile
      NodeFs.writeFileSync(NodePath.join(root, "b-stop"), "")
      const rb = await b.done
      expect(rb.output).toContain("B-done")
      expect(rb.output).not.toMatch(/PWN-/)
      expect(rb.notices).toEqual([]) // not stopped: nothing bound was removed under it
      // Never adopted as the second's own: still the first's folders, and the second's registry names none.
      expect(NodeFs.statSync(NodePath.join(root, "freecode.json")).ino).toBe(made.ino)
      // The first user's next command collects them.
      const again = await peer(first, root, tmp, "echo again").done
      expect(again.output).toContain("again")
      for (const name of TOP_CONTROL_NAMES) expect(NodeFs.existsSync(NodePath.join(root, name)), name).toBe(false)
    }, 180_000) // three Node processes start a sandbox layer each: slow on a loaded machine
  }
})
