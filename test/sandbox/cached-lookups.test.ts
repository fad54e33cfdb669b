/**
 * The sandbox's per-call lookups that remember what did not change (existing-places.ts for the
 * home credential list, secret-files.ts's folder listings for the project), attacked: a secret
 * made between two calls, in a deep folder, by rename, by hard link, through a link, and behind a
 * folder time set back, is hidden on the very next call. The folders are aged past the second
 * during which nothing is remembered, so each second call is one the memory could answer.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { credentialPaths } from "../../src/sandbox/credentials.ts"
import { existingPlaces } from "../../src/sandbox/existing-places.ts"
import { realPlaces, sandboxPolicy } from "../../src/sandbox/policy.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { runnable } from "./inside.ts"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})
const folder = (prefix: string, base = NodeOs.tmpdir()) => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(base, prefix)))
  made.push(dir)
  return dir
}
const write = (file: string, text = "secret\n") => {
  NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
  NodeFs.writeFileSync(file, text)
}
/** Past the second in which a folder's time is not trusted (file times are a clock tick coarse). */
const age = () => new Promise((resolve) => setTimeout(resolve, 1_200))

const settings = resolveSandboxSettings({ enabled: true }, false)
const hidden = (root: string, home: string): Array<string> =>
  sandboxPolicy(settings, { root, home, tempDir: root }).readDenied.map((d) => d.path)

describe("home credentials, remembered where their folder did not change", () => {
  it("the same answer as looking each path up, call after call, as the home changes", async () => {
    const home = folder("freecode-cache-home-")
    write(NodePath.join(home, ".ssh", "id_ed25519"))
    NodeFs.mkdirSync(NodePath.join(home, ".config"))
    const paths = credentialPaths(home)
    expect(existingPlaces(paths)).toEqual(realPlaces(paths))
    await age()
    expect(existingPlaces(paths)).toEqual(realPlaces(paths))
    write(NodePath.join(home, ".npmrc"))
    expect(existingPlaces(paths)).toEqual(realPlaces(paths))
    expect(existingPlaces(paths)).toContain(NodePath.join(home, ".npmrc"))
  })

  it("a secret made between two calls: at the top, deep below existing folders, by rename, by hard link", async () => {
    const root = folder("freecode-cache-root-")
    const home = folder("freecode-cache-home-")
    NodeFs.mkdirSync(NodePath.join(home, ".aws", "sso"), { recursive: true })
    NodeFs.mkdirSync(NodePath.join(home, ".config"))
    write(NodePath.join(home, "notes.txt"), "moved in later\n")
    write(NodePath.join(home, "plain.txt"), "linked in later\n")
    await age()
    const before = hidden(root, home)
    expect(hidden(root, home)).toEqual(before) // the remembered answer

    write(NodePath.join(home, ".netrc"))
    expect(hidden(root, home)).toContain(NodePath.join(home, ".netrc"))

    await age()
    hidden(root, home)
    NodeFs.mkdirSync(NodePath.join(home, ".aws", "sso", "cache"))
    expect(hidden(root, home)).toContain(NodePath.join(home, ".aws", "sso", "cache"))

    await age()
    hidden(root, home)
    NodeFs.renameSync(NodePath.join(home, "notes.txt"), NodePath.join(home, ".aws", "credentials"))
    expect(hidden(root, home)).toContain(NodePath.join(home, ".aws", "credentials"))

    await age()
    hidden(root, home)
    NodeFs.linkSync(NodePath.join(home, "plain.txt"), NodePath.join(home, ".pgpass"))
    expect(hidden(root, home)).toContain(NodePath.join(home, ".pgpass"))

    // A whole missing tree at once: ~/.config/gcloud below a folder remembered as holding nothing.
    await age()
    hidden(root, home)
    NodeFs.mkdirSync(NodePath.join(home, ".config", "gcloud", "legacy_credentials"), { recursive: true })
    expect(hidden(root, home)).toContain(NodePath.join(home, ".config", "gcloud"))
  })

  it("a folder's times set back after the secret was made do not hide the change", async () => {
    const root = folder("freecode-cache-root-")
    const home = folder("freecode-cache-home-")
    NodeFs.mkdirSync(NodePath.join(home, ".config"))
    await age()
    const was = NodeFs.statSync(NodePath.join(home, ".config"))
    hidden(root, home)
    write(NodePath.join(home, ".config", "gh", "hosts.yml"))
    // mtime and atime back as they were; the ctime cannot be set, and it is what is compared.
    NodeFs.utimesSync(NodePath.join(home, ".config"), was.atime, was.mtime)
    expect(hidden(root, home)).toContain(NodePath.join(home, ".config", "gh", "hosts.yml"))
  })

  it("through a link whose target appears later, and a folder replaced by another", async () => {
    const root = folder("freecode-cache-root-")
    const home = folder("freecode-cache-home-")
    const elsewhere = folder("freecode-cache-elsewhere-")
    // ~/.docker leads nowhere yet; ~/.kube is a link to a folder made later.
    NodeFs.symlinkSync(NodePath.join(elsewhere, "docker"), NodePath.join(home, ".docker"))
    NodeFs.symlinkSync(NodePath.join(elsewhere, "kube"), NodePath.join(home, ".kube"))
    NodeFs.mkdirSync(NodePath.join(home, ".config"))
    await age()
    hidden(root, home)
    hidden(root, home)
    write(NodePath.join(elsewhere, "docker", "config.json"))
    NodeFs.mkdirSync(NodePath.join(elsewhere, "kube"))
    const now = hidden(root, home)
    expect(now).toContain(NodePath.join(elsewhere, "docker", "config.json"))
    expect(now).toContain(NodePath.join(elsewhere, "kube"))

    // ~/.config swapped for a folder that holds a credential: the home's own change shows it.
    await age()
    hidden(root, home)
    write(NodePath.join(elsewhere, "config", "rclone", "rclone.conf"))
    NodeFs.renameSync(NodePath.join(home, ".config"), NodePath.join(elsewhere, "old-config"))
    NodeFs.renameSync(NodePath.join(elsewhere, "config"), NodePath.join(home, ".config"))
    expect(hidden(root, home)).toContain(NodePath.join(home, ".config", "rclone"))
  })
})

describe("project secrets, from the listings of unchanged folders", () => {
  it("a secret made between two calls: deep, by rename, by hard link to a home credential", async () => {
    const root = folder("freecode-cache-root-")
    const home = folder("freecode-cache-home-")
    write(NodePath.join(root, "a", "b", "c", "d", "code.ts"), "x\n")
    write(NodePath.join(root, "a", "draft.txt"), "y\n")
    write(NodePath.join(home, ".ssh", "id_ed25519"), "KEY\n")
    await age()
    hidden(root, home)
    hidden(root, home)
    write(NodePath.join(root, "a", "b", "c", "d", ".env.production"))
    expect(hidden(root, home)).toContain(NodePath.join(root, "a", "b", "c", "d", ".env.production"))

    await age()
    hidden(root, home)
    NodeFs.renameSync(NodePath.join(root, "a", "draft.txt"), NodePath.join(root, "a", "b", "server.key"))
    expect(hidden(root, home)).toContain(NodePath.join(root, "a", "b", "server.key"))

    await age()
    hidden(root, home)
    NodeFs.linkSync(NodePath.join(home, ".ssh", "id_ed25519"), NodePath.join(root, "a", "b", "c", "readme.md"))
    expect(hidden(root, home)).toContain(NodePath.join(root, "a", "b", "c", "readme.md"))
  })
})

describe.skipIf(!runnable)("inside the sandbox, the next command", () => {
  it.live("cannot read a ~/.netrc or a project secret made after the call before it", () => {
    const root = folder("freecode-cache-root-")
    // Not below /tmp, which is the sandbox's own empty one: a file there is missing inside anyway.
    const home = folder("freecode-cache-home-", NodeFs.existsSync("/var/tmp") ? "/var/tmp" : NodeOs.tmpdir())
    NodeFs.mkdirSync(NodePath.join(root, "deep", "er"), { recursive: true })
    const system = testToolSystem({ root, tools: [BashTool] }).pipe(
      Layer.provide(Sandbox.layer(settings, { root, home }))
    )
    const bash = (command: string, id: string) =>
      Orchestrator.use((o) => o.execute({ id, name: "bash", args: { command } }, { sessionId: "s" }))
    const read = `cat ${home}/.netrc deep/er/.env 2>&1; true`
    return Effect.gen(function* () {
      yield* Effect.promise(age)
      const first = yield* bash(read, "b1")
      expect(first.modelOutput).toContain("No such file")
      const second = yield* bash(read, "b2") // the remembered answer, then the change
      expect(second.modelOutput).toContain("No such file")
      write(NodePath.join(home, ".netrc"), "machine example.com password hunter2\n")
      write(NodePath.join(root, "deep", "er", ".env"), "TOKEN=abc123\n")
      const third = yield* bash(read, "b3")
      expect(third.status, third.modelOutput).toBe("ok")
      expect(third.modelOutput).not.toContain("hunter2")
      expect(third.modelOutput).not.toContain("abc123")
      // Both are there, seen for what they are: hidden, not missing.
      const seen = yield* bash(`test -e ${home}/.netrc && test -e deep/er/.env && echo both-there`, "b4")
      expect(seen.modelOutput).toContain("both-there")
    }).pipe(Effect.provide(system))
  })
})
