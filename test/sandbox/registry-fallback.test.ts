/**
 * A registry folder in /tmp that another user made first no longer keeps this user's sandboxed
 * commands from running: every process of the user falls back, in the same order, to a place
 * other users cannot make (the login manager's /run/user/UID, else the home's state folder) and
 * agrees on it, and nothing is written in the other user's folder. Real processes as root and as
 * `nobody`, each blocked by another user (nobody blocks root; uid 1 blocks nobody), and a real
 * sandboxed command run through the fallback registry.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { registryPlaces } from "../../src/sandbox/placeholder-registry.ts"
import { TOP_CONTROL_NAMES } from "../../src/sandbox/placeholders.ts"
import { cleanUp, folder, giveToNobody, runnable } from "./inside.ts"
import { asUid, killPeers, NOBODY, nobodyRunsCheckout, peer, sharedTmp } from "./registry-peers.ts"

afterAll(cleanUp)
afterEach(killPeers)

const MODULE = NodePath.resolve("src/sandbox/placeholder-registry.ts")

/** The places of `uid` below test folders standing for /tmp, /run/user and the home. */
const placesOf = (uid: number, tmp: string, runtime: string, home: string) =>
  registryPlaces(uid, { tmp, runtime, home })

/** The registry a fresh process of `uid` chooses among `places` (or why it refuses). */
const chosenBy = (uid: number, places: unknown): string => {
  const script = `const { chooseRegistry } = await import(${JSON.stringify(MODULE)}); try { console.log(chooseRegistry(${JSON.stringify(places)})) } catch (e) { console.log("REFUSED " + e.message) }`
  const [program, ...args] = asUid(uid, [process.execPath, "--input-type=module", "-e", script])
  return execFileSync(program!, args, { encoding: "utf8" }).trim()
}

/** /tmp, /run/user (root's, 0755, with the user's own 0700 folder in it) and a home of `uid`'s. */
const machine = (uid: number) => {
  const tmp = sharedTmp()
  const runtime = folder("freecode-reg-run-")
  NodeFs.chmodSync(runtime, 0o755)
  const mine = NodePath.join(runtime, String(uid))
  NodeFs.mkdirSync(mine, { mode: 0o700 })
  const home = folder("freecode-reg-home-", true)
  NodeFs.chmodSync(home, 0o700)
  if (uid !== 0) execFileSync("chown", [`${uid}:${uid}`, mine, home])
  return { tmp, runtime, home, mine }
}

/** `other` makes `tmp/freecode-tools-<uid>` first, open to all: the folder `uid` would have used. */
const blockedBy = (other: number, uid: number, tmp: string): string => {
  const taken = NodePath.join(tmp, `freecode-tools-${uid}`)
  const [program, ...args] = asUid(other, ["mkdir", "-m", "0777", taken])
  execFileSync(program!, args)
  return taken
}

const cases = [
  { who: "root", uid: 0, other: NOBODY, skip: process.getuid?.() !== 0 },
  { who: "nobody", uid: NOBODY, other: 1, skip: !nobodyRunsCheckout }
]

describe("a registry folder another user made first in /tmp", () => {
  for (const { who, uid, other, skip } of cases) {
    it.skipIf(skip)(
      `${who}'s processes agree on the next place, in order, and write nothing in the other user's folder`,
      () => {
        const { tmp, runtime, home, mine } = machine(uid)
        const places = placesOf(uid, tmp, runtime, home)
        // Free: the /tmp folder, as before.
        expect(chosenBy(uid, places)).toBe(places[0]!.path)
        NodeFs.rmSync(NodePath.join(tmp, `freecode-tools-${uid}`), { recursive: true })
        const taken = blockedBy(other, uid, tmp)
        // Two processes, one after the other: the same place, the runtime folder.
        expect(chosenBy(uid, places)).toBe(places[1]!.path)
        expect(chosenBy(uid, places)).toBe(places[1]!.path)
        expect(NodeFs.readdirSync(taken)).toEqual([])
        // The runtime folder's registry replaced by a link to the other's folder: not followed, the home is next.
        NodeFs.rmSync(NodePath.join(mine, "freecode-tools"), { recursive: true })
        NodeFs.symlinkSync(taken, NodePath.join(mine, "freecode-tools"))
        expect(chosenBy(uid, places)).toBe(places[2]!.path)
        expect(NodeFs.readdirSync(taken)).toEqual([])
        // No runtime folder at all (no login session): the home, made 0700.
        NodeFs.rmSync(mine, { recursive: true })
        expect(chosenBy(uid, places)).toBe(places[2]!.path)
        expect(NodeFs.statSync(places[2]!.path).mode & 0o777).toBe(0o700)
        // A home another user can write: refused too, and the refusal names every place.
        NodeFs.chmodSync(home, 0o777)
        expect(chosenBy(uid, places)).toMatch(
          /^REFUSED no placeholder registry .*freecode-tools-.*writable by other users/
        )
        expect(NodeFs.readdirSync(taken)).toEqual([])
      }
    )
  }
})

describe.skipIf(!runnable || !nobodyRunsCheckout)("a sandboxed command with /tmp's registry folder taken", () => {
  for (const { who, uid, other } of cases) {
    it(`runs as ${who}, through the fallback registry, and its placeholders are collected`, async () => {
      const { tmp, runtime, home } = machine(uid)
      const places = placesOf(uid, tmp, runtime, home)
      const taken = blockedBy(other, uid, tmp)
      const root = folder("freecode-reg-fb-proj-", true)
      if (uid !== 0) giveToNobody(root)
      const r = await peer(
        uid,
        root,
        tmp,
        "echo ran > out.txt; cat out.txt; mkdir .git/x 2>/dev/null && echo PWN",
        places
      ).done
      expect(r.output).toContain("ran")
      expect(r.output).not.toContain("PWN")
      expect(NodeFs.readFileSync(NodePath.join(root, "out.txt"), "utf8")).toBe("ran\n")
      // The registry used was the runtime place; its manifests are gone, and so are the placeholders.
      expect(NodeFs.readdirSync(places[1]!.path).filter((n) => n.endsWith(".json"))).toEqual([])
      for (const name of TOP_CONTROL_NAMES) expect(NodeFs.existsSync(NodePath.join(root, name)), name).toBe(false)
      expect(NodeFs.readdirSync(taken)).toEqual([])
    }, 120_000)
  }
})
