/**
 * Control paths inside a writable root stay read-only inside the sandbox, and cannot be swapped
 * out: renaming, removing or replacing the folder that holds them fails, a missing one inside
 * `.git` cannot be made, and the state folder is never writable. git's daily work (add, commit,
 * branch) still runs. Real bubblewrap, as root and as `nobody`; the host is checked afterwards.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { CONTROL_PATHS } from "../../src/sandbox/control-paths.ts"
import { guardedPlaces, nestedBases } from "../../src/sandbox/guarded.ts"
import { secretFilesIn } from "../../src/sandbox/secret-files.ts"
import { cleanUp, folder, GIT_ENV, giveToNobody, inside, runnable, users } from "./inside.ts"

afterAll(cleanUp)

/** A project with a git repository (a hook, a config), a freecode.json, and one commit. */
const project = (asNobody: boolean) => {
  const root = folder("freecode-ctl-root-", true)
  const home = folder("freecode-ctl-home-", true)
  const tempDir = folder("freecode-ctl-tmp-", true)
  const git = (...args: Array<string>) =>
    execFileSync("git", args, { cwd: root, env: { ...process.env, ...GIT_ENV, HOME: home }, stdio: "ignore" })
  git("init", "-q")
  NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
  NodeFs.writeFileSync(NodePath.join(root, "freecode.json"), '{ "permissions": {} }\n')
  NodeFs.writeFileSync(NodePath.join(root, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", { mode: 0o755 })
  git("add", "a.txt")
  git("commit", "-qm", "one")
  NodeFs.mkdirSync(NodePath.join(root, ".state"))
  if (asNobody) for (const d of [root, home, tempDir]) giveToNobody(d)
  return { root, home, tempDir }
}

/** What the host holds of the things an attack would change. */
const snapshot = (root: string) => ({
  config: NodeFs.readFileSync(NodePath.join(root, ".git", "config"), "utf8"),
  hook: NodeFs.readFileSync(NodePath.join(root, ".git", "hooks", "pre-commit"), "utf8"),
  hooks: NodeFs.readdirSync(NodePath.join(root, ".git", "hooks")).sort(),
  freecode: NodeFs.readFileSync(NodePath.join(root, "freecode.json"), "utf8"),
  top: NodeFs.readdirSync(root).sort(),
  gitIsFolder: NodeFs.lstatSync(NodePath.join(root, ".git")).isDirectory()
})

describe.skipIf(!runnable)("control paths inside the sandbox", () => {
  for (const u of users) {
    it.skipIf(u.skip)(`as ${u.who}: read-only, not swappable, git still commits`, () => {
      const p = project(u.asNobody)
      const before = snapshot(p.root)
      const { output } = inside(
        [
          "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config && echo PWN-config",
          "git config core.hooksPath evil && echo PWN-git-config",
          "echo 'touch pwned' > .git/hooks/pre-commit && echo PWN-hook",
          "echo x > .git/hooks/post-checkout && echo PWN-new-hook",
          "rm -rf .git/hooks; rm -f .git/hooks/pre-commit; [ -e .git/hooks/pre-commit ] || echo PWN-rm-hook",
          "mv .git/hooks .git/hooks2 && echo PWN-mv-hooks",
          "mv .git .git2 && echo PWN-mv-git",
          "mkdir -p .git2 && mv -T .git2 .git && echo PWN-replace-git; rmdir .git2",
          "ln -sfn /tmp .git 2>/dev/null; [ -L .git ] && echo PWN-symlink-git",
          "echo x > .git/config.worktree && echo PWN-config-worktree",
          "mkdir -p .git/info && echo '* diff=evil' > .git/info/attributes && echo PWN-attributes",
          "mkdir -p .git/modules/x && echo PWN-modules",
          'echo \'{"permissions":{"defaultMode":"bypassPermissions"}}\' > freecode.json && echo PWN-freecode',
          "mv freecode.json f2 && echo PWN-mv-freecode",
          "rm -f freecode.json; [ -e freecode.json ] || echo PWN-rm-freecode",
          "echo x > .state/db && echo PWN-state",
          // What keeps working: the work tree, the index, objects and refs.
          "echo b > b.txt && git add b.txt && git commit -qm two && echo COMMITTED",
          "git checkout -qb side && echo BRANCHED",
          "git log --oneline | wc -l",
          "echo done"
        ].join("\n"),
        {
          ...p,
          asNobody: u.asNobody,
          env: GIT_ENV,
          neverWritable: [NodePath.join(p.root, ".state")]
        }
      )
      expect(output).toContain("done")
      expect(output).not.toMatch(/PWN-/)
      expect(output).toContain("COMMITTED")
      expect(output).toContain("BRANCHED")
      const after = snapshot(p.root)
      // b.txt is the one new entry at the top; every control file as it was.
      expect(after).toEqual({ ...before, top: [...before.top, "b.txt"].sort() })
      expect(NodeFs.existsSync(NodePath.join(p.root, ".state", "db"))).toBe(false)
      // The placeholders left inside .git are empty, and git reads them as nothing.
      expect(NodeFs.readFileSync(NodePath.join(p.root, ".git", "config.worktree"), "utf8")).toBe("")
      expect(
        execFileSync("git", ["-c", "safe.directory=*", "log", "--oneline"], {
          cwd: p.root,
          encoding: "utf8",
          env: { ...process.env, ...GIT_ENV }
        })
          .trim()
          .split("\n")
      ).toHaveLength(2)
      // Emptying .git takes the repository's data (as rm -rf takes any file in the project),
      // never its hooks and config, and .git stays the folder it was.
      const wiped = inside("rm -rf .git .git/* .git/.[!.]* 2>/dev/null; ls .git; echo done", {
        ...p,
        asNobody: u.asNobody
      })
      expect(wiped.output).toContain("done")
      const left = snapshot(p.root)
      expect([left.config, left.hook, left.freecode, left.gitIsFolder]).toEqual([
        before.config,
        before.hook,
        before.freecode,
        true
      ])
    })
  }

  it.skipIf(users[0]!.skip)("a missing control path at the top of the root leaves no file behind", () => {
    const p = project(false)
    NodeFs.rmSync(NodePath.join(p.root, "freecode.json"))
    const { output } = inside("echo done", p)
    expect(output).toContain("done")
    for (const c of CONTROL_PATHS.filter((c) => !c.path.includes("/") && c.path !== ".git"))
      expect(NodeFs.existsSync(NodePath.join(p.root, c.path)), c.path).toBe(false)
  })
})

describe("guarded places", () => {
  it("pins the folders on the way, keeps what exists read-only, holds what is missing inside .git", () => {
    const root = folder("freecode-guard-")
    NodeFs.mkdirSync(NodePath.join(root, ".git", "hooks"), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, ".git", "config"), "")
    NodeFs.writeFileSync(NodePath.join(root, ".mcp.json"), "{}")
    const g = guardedPlaces([root], [NodePath.join(root, ".git", "config"), "/nonexistent-state"])
    expect(g.pinned).toEqual([NodePath.join(root, ".git")])
    expect(g.readOnly).toContain(NodePath.join(root, ".git", "hooks"))
    expect(g.readOnly).toContain(NodePath.join(root, ".git", "config"))
    expect(g.readOnly).toContain(NodePath.join(root, ".mcp.json"))
    expect(g.placeholders).toContainEqual({ path: NodePath.join(root, ".git", "modules"), directory: true })
    expect(g.placeholders).toContainEqual({ path: NodePath.join(root, ".git", "config.worktree"), directory: false })
    // .git/info is missing: the folder itself is held, not a file below it.
    expect(g.placeholders).toContainEqual({ path: NodePath.join(root, ".git", "info"), directory: true })
    // An empty commondir would break git: it is never held by a placeholder.
    expect(g.placeholders.map((p) => p.path)).not.toContain(NodePath.join(root, ".git", "commondir"))
    // Nothing is made at the top of the root.
    expect(g.placeholders.filter((p) => NodePath.dirname(p.path) === root)).toEqual([])
    expect(g.all).toContain(NodePath.join(root, "freecode.json"))
    expect(g.parents).toContain(NodePath.join(root, ".git"))
  })

  it("a nested repository's and folder's control paths are guarded too, with nothing held that is missing", () => {
    const root = folder("freecode-guard-nested-")
    NodeFs.mkdirSync(NodePath.join(root, "sub", ".git", "hooks"), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, "sub", ".git", "config"), "")
    NodeFs.mkdirSync(NodePath.join(root, "pkg", ".vscode"), { recursive: true })
    const sub = NodePath.join(root, "sub")
    const pkg = NodePath.join(root, "pkg")
    const g = guardedPlaces([root], [], [], [sub, pkg])
    expect(g.pinned).toContain(NodePath.join(sub, ".git"))
    expect(g.readOnly).toEqual(
      expect.arrayContaining([
        NodePath.join(sub, ".git", "hooks"),
        NodePath.join(sub, ".git", "config"),
        NodePath.join(pkg, ".vscode")
      ])
    )
    // No placeholder below a nested folder: the audit answers for what is made there.
    expect(g.placeholders.filter((p) => p.path.startsWith(`${sub}/`) || p.path.startsWith(`${pkg}/`))).toEqual([])
    // The walk finds them (secret-files.ts), whatever the case, and the bases are their folders.
    const found = secretFilesIn([root]).controls
    expect(found).toEqual(expect.arrayContaining([NodePath.join(sub, ".git"), NodePath.join(pkg, ".vscode")]))
    expect(nestedBases([root], found).sort()).toEqual([pkg, sub])
  })

  it("a worktree's .git file is read-only itself; a root inside the state folder is read-only whole", () => {
    const root = folder("freecode-guard-wt-")
    NodeFs.writeFileSync(NodePath.join(root, ".git"), "gitdir: /elsewhere\n")
    expect(guardedPlaces([root], []).readOnly).toContain(NodePath.join(root, ".git"))
    const state = folder("freecode-guard-state-")
    const inner = NodePath.join(state, "projects")
    NodeFs.mkdirSync(inner)
    expect(guardedPlaces([inner], [state]).readOnly).toContain(inner)
  })
})
