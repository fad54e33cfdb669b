/**
 * Secret files inside the project are hidden inside the sandbox however they are named or
 * reached: by their own name in any case, `.envrc`, keys and certificates, and a hard link under
 * an innocent name (to a project secret or to a home credential file). What stays readable is
 * said in docs/sandbox.md (git's history, secrets outside the writable places). Real
 * bubblewrap, as root and as `nobody`.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { HOME_CREDENTIALS } from "../../src/sandbox/credentials.ts"
import { credentialFilesOf, secretFilesIn } from "../../src/sandbox/secret-files.ts"
import { cleanUp, folder, giveToNobody, inside, runnable, users } from "./inside.ts"

afterAll(cleanUp)

/** Name → content; each content is unique, so the output shows which one leaked. */
const SECRETS: Record<string, string> = {
  ".env": "SECRET-dotenv",
  ".env.local": "SECRET-local",
  ".ENV": "SECRET-upper",
  ".Env.Production": "SECRET-mixed",
  "config/.env.production": "SECRET-nested",
  ".envrc": "SECRET-envrc",
  "tls/server.key": "SECRET-key",
  "tls/cert.PEM": "SECRET-pem",
  "deploy/id_ed25519": "SECRET-ssh",
  ".npmrc": "SECRET-npmrc"
}
const PLAIN: Record<string, string> = { ".env.example": "PLAIN-example", "src/key.ts": "PLAIN-ts" }

const write = (root: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, name)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, name), `${text}\n`, { mode: 0o644 })
  }
}

describe.skipIf(!runnable)("secret files inside the sandbox", () => {
  for (const u of users) {
    it.skipIf(u.skip)(`as ${u.who}: hidden by name in any case, and through a hard link`, () => {
      const root = folder("freecode-sec-root-", true)
      const home = folder("freecode-sec-home-", true)
      const tempDir = folder("freecode-sec-tmp-", true)
      write(root, { ...SECRETS, ...PLAIN })
      // Same file system as the project (both under the host's /var/tmp), so links can be made.
      NodeFs.mkdirSync(NodePath.join(home, ".ssh"))
      NodeFs.writeFileSync(NodePath.join(home, ".ssh", "id_rsa"), "SECRET-home-key\n", { mode: 0o644 })
      NodeFs.linkSync(NodePath.join(root, ".env"), NodePath.join(root, "notes.txt"))
      NodeFs.mkdirSync(NodePath.join(root, "docs"))
      NodeFs.linkSync(NodePath.join(home, ".ssh", "id_rsa"), NodePath.join(root, "docs", "readme.md"))
      // A secret's name on a link to a file elsewhere: that file is hidden.
      const vault = folder("freecode-sec-vault-", true)
      NodeFs.writeFileSync(NodePath.join(vault, "prod.txt"), "SECRET-linked-away\n", { mode: 0o644 })
      NodeFs.symlinkSync(NodePath.join(vault, "prod.txt"), NodePath.join(root, "config", ".env.prod"))
      if (u.asNobody) for (const d of [root, home, tempDir]) giveToNobody(d)
      const { output } = inside(
        [
          ...[...Object.keys(SECRETS), ...Object.keys(PLAIN), "notes.txt", "docs/readme.md", "config/.env.prod"].map(
            (f) => `cat '${f}'`
          ),
          `cat ${home}/.ssh/id_rsa`,
          // Other ways to the same bytes: a new link, a copy, a read through /proc.
          "ln .env again.txt; cat again.txt",
          "cp .env copy.txt; cat copy.txt",
          "exec 3<.env; cat /proc/self/fd/3",
          "echo done"
        ].join("\n"),
        { root, home, tempDir, asNobody: u.asNobody }
      )
      expect(output).toContain("done")
      expect(output).not.toMatch(/SECRET-/)
      for (const text of Object.values(PLAIN)) expect(output).toContain(text)
      // Hidden, not gone: every secret is still on the host, unchanged.
      expect(NodeFs.readFileSync(NodePath.join(root, ".env"), "utf8")).toBe("SECRET-dotenv\n")
    })
  }
})

describe("finding secret files", () => {
  it("by name in any case, and the other names of a linked secret; not in .git or node_modules", () => {
    const root = folder("freecode-sec-find-")
    const home = folder("freecode-sec-find-home-")
    write(root, { ...SECRETS, ...PLAIN, "node_modules/pkg/test/key.pem": "fixture", ".git/x.key": "git" })
    NodeFs.linkSync(NodePath.join(root, ".env.local"), NodePath.join(root, "src", "innocent.ts"))
    NodeFs.mkdirSync(NodePath.join(home, ".ssh"))
    NodeFs.writeFileSync(NodePath.join(home, ".ssh", "id_rsa"), "k")
    NodeFs.linkSync(NodePath.join(home, ".ssh", "id_rsa"), NodePath.join(root, "src", "also.txt"))
    const credentials = credentialFilesOf(HOME_CREDENTIALS.map((p) => NodePath.join(home, p)))
    expect(credentials).toEqual([NodePath.join(home, ".ssh", "id_rsa")])
    const found = secretFilesIn([root], credentials)
    expect(found.complete).toBe(true)
    expect([...found.paths].sort()).toEqual(
      [...Object.keys(SECRETS), "src/innocent.ts", "src/also.txt"].map((f) => NodePath.join(root, f)).sort()
    )
  })

  it("a walk after a change finds what the change added, the unchanged folders taken from the last walk", async () => {
    const root = folder("freecode-sec-again-")
    write(root, { "a/b/c.txt": "x", "d/e.txt": "y" })
    // Folders whose ctime is over a second old are the ones the next walk may take as they were.
    await new Promise((r) => setTimeout(r, 1_200))
    expect(secretFilesIn([root]).paths).toEqual([])
    expect(secretFilesIn([root]).paths).toEqual([])
    write(root, { "a/b/.env": "new" })
    NodeFs.linkSync(NodePath.join(root, "a", "b", ".env"), NodePath.join(root, "d", "plain.txt"))
    expect([...secretFilesIn([root]).paths].sort()).toEqual(
      [NodePath.join(root, "a/b/.env"), NodePath.join(root, "d/plain.txt")].sort()
    )
    NodeFs.rmSync(NodePath.join(root, "a", "b", ".env"))
    NodeFs.renameSync(NodePath.join(root, "d", "e.txt"), NodePath.join(root, "d", "id_rsa"))
    expect([...secretFilesIn([root]).paths].sort()).toEqual([NodePath.join(root, "d/id_rsa")])
  })
})
