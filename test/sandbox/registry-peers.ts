/**
 * Real processes of two users on one project for the placeholder registry's tests: each runs a
 * script in its own Sandbox layer (sandbox-peer.ts) with its own home, state and registry.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { expect } from "vitest"
import type { RegistryChoice } from "../../src/sandbox/placeholder-registry.ts"
import { canBeNobody, folder } from "./inside.ts"

// A peer a failed test left waiting (its stop file never written) is killed with the test: its
// bubblewrap dies with it (--die-with-parent), and nothing outlives the file.
const peers = new Set<ChildProcess>()
/** For afterEach: kills the peers a failed test left. */
export const killPeers = () => {
  for (const child of peers) child.kill("SIGKILL")
  peers.clear()
}

const PEER = NodePath.resolve(import.meta.dirname, "sandbox-peer.ts")
export const NOBODY = 65534
export const asUid = (uid: number, line: ReadonlyArray<string>): Array<string> =>
  uid === 0 ? [...line] : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...line]

/**
 * Whether `nobody` can run this checkout's code (Node and the peer script): a checkout below a
 * private folder (a fresh clone in a folder mkdtemp made, a home of mode 0700) cannot be read by
 * it, and the tests that run a process of `nobody`'s from it are skipped there, saying why.
 */
export const nobodyRunsCheckout = ((): boolean => {
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
export const sharedTmp = () => {
  const dir = folder("freecode-reg-tmp-")
  NodeFs.chmodSync(dir, 0o1777)
  return dir
}

export interface Peer {
  readonly done: Promise<{ output: string; notices: ReadonlyArray<string> }>
}

/**
 * A process of user `uid` running `script` in its own Sandbox layer on `root`, with its own home,
 * state and registry (`registry`, else its folder in `tmp`).
 */
export const peer = (uid: number, root: string, tmp: string, script: string, registry?: RegistryChoice): Peer => {
  const home = folder(`freecode-reg-home-${uid}-`, true)
  const state = folder(`freecode-reg-state-${uid}-`, true)
  if (uid !== 0) for (const d of [home, state]) execFileSync("chown", ["-R", `${uid}:${uid}`, d])
  const choice = registry ?? NodePath.join(tmp, `freecode-tools-${uid}`, "placeholders")
  const [program, ...args] = asUid(uid, [
    process.execPath,
    PEER,
    JSON.stringify({ root, home, registry: choice, script })
  ])
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
export const until = async (p: string, running: Peer) => {
  let ended = false
  running.done.then(
    () => (ended = true),
    () => (ended = true)
  )
  for (let i = 0; i < 400 && !ended && !NodeFs.existsSync(p); i++) await new Promise((r) => setTimeout(r, 50))
  if (!NodeFs.existsSync(p)) expect.fail(`${p} was not made: ${JSON.stringify(ended ? await running.done : "")}`)
}
