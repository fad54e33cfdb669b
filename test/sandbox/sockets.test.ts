/**
 * Unix sockets: a host daemon's socket in the usual places (the host's /tmp and /run, a Docker
 * socket below the home folder) is not there inside, and an abstract socket belongs to the
 * host's network namespace, out of reach. What stays reachable is what docs/sandbox.md says: a
 * socket inside the project (or another place the sandbox sees) connects. Real bubblewrap and
 * socat on both sides, as root and as `nobody`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { findProgram } from "../../src/sandbox/availability.ts"
import { cleanUp, folder, giveToNobody, inside, runnable, users } from "./inside.ts"

const servers: Array<ChildProcess> = []
afterAll(() => {
  for (const s of servers) s.kill("SIGKILL")
  cleanUp()
})

const socat = findProgram("socat")
/** A host server on `address` (socat's form) that answers every connection with `HELLO-<name>`. */
const serve = async (address: string, name: string, ready: () => boolean) => {
  const s = spawn(socat!, [`${address},fork,mode=777`, `SYSTEM:echo HELLO-${name}`], { stdio: "ignore" })
  servers.push(s)
  for (let i = 0; i < 100 && !ready(); i++) await new Promise((r) => setTimeout(r, 50))
}

const listening = (path: string) => () => NodeFs.existsSync(path)
const abstractListening = (name: string) => () => NodeFs.readFileSync("/proc/net/unix", "utf8").includes(`@${name}`)

describe.skipIf(!runnable || socat === undefined)("Unix sockets inside the sandbox", () => {
  for (const u of users) {
    it.skipIf(u.skip)(
      `as ${u.who}: the host's sockets in /tmp, /run, the home folder and abstract ones are out of reach`,
      async () => {
        const root = folder("freecode-sock-root-", true)
        const home = folder("freecode-sock-home-", true)
        const tempDir = folder("freecode-sock-tmp-", true)
        const tag = NodePath.basename(root).slice(-6)
        const inTmp = NodePath.join(folder("freecode-sock-", true, NodeOs.tmpdir()), "s.sock")
        const inRun = `/run/freecode-test-${tag}.sock`
        NodeFs.mkdirSync(NodePath.join(home, ".docker", "run"), { recursive: true })
        const docker = NodePath.join(home, ".docker", "run", "docker.sock")
        const inProject = NodePath.join(root, "dev.sock")
        const abstract = `freecode-test-${tag}`
        await serve(`UNIX-LISTEN:${inTmp}`, "tmp", listening(inTmp))
        await serve(`UNIX-LISTEN:${inRun}`, "run", listening(inRun))
        await serve(`UNIX-LISTEN:${docker}`, "docker", listening(docker))
        await serve(`UNIX-LISTEN:${inProject}`, "project", listening(inProject))
        await serve(`ABSTRACT-LISTEN:${abstract}`, "abstract", abstractListening(abstract))
        if (u.asNobody) for (const d of [root, home, tempDir]) giveToNobody(d)
        try {
          const connect = (address: string) => `${socat} -T 3 - ${address} </dev/null`
          const { output } = inside(
            [
              connect(`UNIX-CONNECT:${inTmp}`),
              connect(`UNIX-CONNECT:${inRun}`),
              connect(`UNIX-CONNECT:/var/run/freecode-test-${tag}.sock`),
              connect(`UNIX-CONNECT:${docker}`),
              connect(`ABSTRACT-CONNECT:${abstract}`),
              connect(`UNIX-CONNECT:${inProject}`),
              "echo done"
            ].join("\n"),
            { root, home, tempDir, asNobody: u.asNobody }
          )
          expect(output).toContain("done")
          for (const name of ["tmp", "run", "docker", "abstract"]) expect(output).not.toContain(`HELLO-${name}`)
          // The one that connects, as documented: a socket inside the project.
          expect(output).toContain("HELLO-project")
        } finally {
          NodeFs.rmSync(inRun, { force: true })
        }
      }
    )
  }
})
