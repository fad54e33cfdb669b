/**
 * The placeholders' registry between users and environments: a registry another user made or
 * could change is refused, never read or written; and two processes whose registries differ (two
 * users on one project) never remove a placeholder the other's running sandbox has mounted, nor
 * adopt one that is not their own. Real processes with real bubblewrap, as root and as `nobody`;
 * the project is checked afterwards.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { defaultRegistry } from "../../src/sandbox/placeholder-registry.ts"
import { placeholders, TOP_CONTROL_NAMES } from "../../src/sandbox/placeholders.ts"
import { cleanUp, folder, giveToNobody, runnable } from "./inside.ts"
import { killPeers, NOBODY, nobodyRunsCheckout, peer, sharedTmp, until } from "./registry-peers.ts"

afterAll(cleanUp)

afterEach(killPeers)

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

  it("the default registry is one per user, whatever TMPDIR, XDG_RUNTIME_DIR or HOME say", () => {
    const at = (tmpdir: string) =>
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const { defaultRegistry } = await import(${JSON.stringify(NodePath.resolve("src/sandbox/placeholder-registry.ts"))}); console.log(JSON.stringify(defaultRegistry()))`
        ],
        { encoding: "utf8", env: { ...process.env, TMPDIR: tmpdir, XDG_RUNTIME_DIR: tmpdir, HOME: tmpdir } }
      ).trim()
    expect(at("/var/tmp")).toBe(at("/tmp"))
    expect(at("/var/tmp")).toBe(JSON.stringify(defaultRegistry()))
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
