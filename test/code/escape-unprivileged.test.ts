/**
 * The escape corpus (escape.test.ts) once more, as `nobody`: CI runs as root, and a program must
 * end the same way for a user without privileges (the interpreter thread, the limits, the nested
 * calls' rules and sandbox). A child vitest runs the corpus under setpriv, with a config and
 * caches in a temporary folder `nobody` may write (the project's own are root's), and reports
 * as JSON. Skipped, with the reason, where `nobody` cannot be switched to or cannot read the tree.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { findProgram } from "../../src/sandbox/availability.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const NOBODY = 65534
const AS_NOBODY = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"]

const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-escape-nobody-"))
afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))

const asNobody = (args: ReadonlyArray<string>, timeout: number) =>
  spawnSync(AS_NOBODY[0]!, [...AS_NOBODY.slice(1), ...args], {
    cwd: REPO,
    encoding: "utf8",
    timeout,
    env: {
      PATH: `${NodePath.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: dir,
      FREECODE_ESCAPE_EXPECT_UID: String(NOBODY)
    }
  })

/** Why the corpus cannot run as nobody here, or undefined when it can. */
const unavailable = ((): string | undefined => {
  if (process.getuid?.() !== 0) return "not root: cannot switch to nobody"
  if (findProgram("setpriv") === undefined) return "setpriv is not installed"
  NodeFs.chmodSync(dir, 0o777)
  const probe = asNobody(
    [process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(REPO)} + "/package.json")`],
    30_000
  )
  return probe.status === 0 ? undefined : `nobody cannot read ${REPO}`
})()

describe("code: the escape corpus as nobody", () => {
  it.skipIf(unavailable !== undefined)(
    `every program ends as it does for root${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
    () => {
      const config = NodePath.join(dir, "vitest.config.mjs")
      const report = NodePath.join(dir, "report.json")
      NodeFs.writeFileSync(
        config,
        `export default ${JSON.stringify({
          root: REPO,
          cacheDir: NodePath.join(dir, "cache"),
          test: {
            include: ["test/code/escape.test.ts"],
            testTimeout: 30_000,
            env: { XDG_CONFIG_HOME: NodePath.join(dir, "config"), XDG_STATE_HOME: NodePath.join(dir, "state") }
          }
        })}\n`
      )
      const vitest = NodePath.join(REPO, "node_modules/vitest/vitest.mjs")
      const run = asNobody(
        [process.execPath, vitest, "run", "--config", config, "--reporter=json", `--outputFile=${report}`],
        280_000
      )
      expect(NodeFs.existsSync(report), `${run.stdout}\n${run.stderr}`).toBe(true)
      const result = JSON.parse(NodeFs.readFileSync(report, "utf8")) as {
        numPassedTests: number
        numFailedTests: number
        testResults: ReadonlyArray<{ assertionResults: ReadonlyArray<{ title: string; status: string }> }>
      }
      const failed = result.testResults
        .flatMap((f) => f.assertionResults)
        .filter((a) => a.status !== "passed")
        .map((a) => a.title)
      expect(failed).toEqual([])
      // The corpus (at least 40 programs), and the check that it ran as nobody, all passed.
      expect(result.numPassedTests).toBeGreaterThanOrEqual(42)
      expect(run.status).toBe(0)
    },
    300_000
  )
})
