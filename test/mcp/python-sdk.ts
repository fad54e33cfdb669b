/**
 * A Python with the MCP SDK (`mcp` 2.x from PyPI) for the tests that use it as a client:
 * `FREECODE_TEST_PYTHON` when set (a Python that has `mcp` 2.x), else a virtual environment made
 * once under node_modules/.cache with pip (from whatever index pip is configured for) and kept
 * for later runs. Made in a temporary folder and renamed into place, so two runs at once never
 * share a half-made one.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { REPO } from "./helpers.ts"

/** The SDK release the tests were written against. */
export const PYTHON_MCP = "mcp==2.3.0"

const VENV = NodePath.join(REPO, "node_modules/.cache", `freecode-python-${PYTHON_MCP.replace("==", "-")}`)

const hasMcp = (python: string) =>
  spawnSync(python, ["-c", "import mcp.client, mcp_types"], { stdio: "ignore", timeout: 60_000 }).status === 0

const withoutTestXdg = (): NodeJS.ProcessEnv => {
  const { XDG_CONFIG_HOME: _config, ...rest } = process.env
  return rest
}

/** Whether pip's configured index offers the SDK release (one quick look, no retries). */
const indexOffersMcp = (): boolean => {
  const [name, version] = PYTHON_MCP.split("==") as [string, string]
  const look = spawnSync(
    "python3",
    ["-m", "pip", "index", "versions", name, "--retries", "0", "--timeout", "15", "--disable-pip-version-check"],
    { encoding: "utf8", timeout: 60_000, env: withoutTestXdg() }
  )
  return look.status === 0 && look.stdout.includes(version)
}

/**
 * Whether the SDK can be had here: given, already installed, or offered by pip's index to a
 * `python3` that can make a virtual environment. A machine whose pip reaches no index that has
 * it skips these tests, and says so; one whose index has it and then fails, fails.
 */
export const pythonAvailable = (): boolean => {
  if (process.env.FREECODE_TEST_PYTHON !== undefined) return true
  if (NodeFs.existsSync(NodePath.join(VENV, "bin/python"))) return true
  const canVenv =
    spawnSync("python3", ["-c", "import venv, ensurepip"], { stdio: "ignore", timeout: 30_000 }).status === 0
  if (canVenv && indexOffersMcp()) return true
  console.warn(
    `skipping the Python SDK client tests: no python3 with venv, or pip's index does not offer ${PYTHON_MCP}`
  )
  return false
}

/**
 * The Python to run the SDK's client with. Throws, with pip's own words, when the SDK cannot be
 * installed (no index reachable): the test then fails saying so, it does not pass unseen.
 */
export const pythonWithMcp = (): string => {
  const given = process.env.FREECODE_TEST_PYTHON
  if (given !== undefined) {
    if (!hasMcp(given)) throw new Error(`FREECODE_TEST_PYTHON=${given} has no \`mcp\` package`)
    return given
  }
  const python = NodePath.join(VENV, "bin/python")
  if (NodeFs.existsSync(python) && hasMcp(python)) return python
  const building = `${VENV}.${process.pid}.tmp`
  NodeFs.rmSync(building, { recursive: true, force: true })
  NodeFs.mkdirSync(NodePath.dirname(VENV), { recursive: true })
  try {
    execFileSync("python3", ["-m", "venv", building], { stdio: "pipe", timeout: 120_000 })
    // Moved after: bin/python finds its environment next to itself (pip's own scripts would
    // still name this folder, and are not used).
    execFileSync(
      NodePath.join(building, "bin/pip"),
      ["install", "--disable-pip-version-check", "--quiet", PYTHON_MCP],
      // The tests point XDG_CONFIG_HOME at an empty folder; pip's own settings (its index) are
      // the person's, under the real one.
      { stdio: "pipe", timeout: 300_000, env: withoutTestXdg() }
    )
  } catch (e) {
    NodeFs.rmSync(building, { recursive: true, force: true })
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim().split("\n").slice(-3).join("\n")
    throw new Error(`could not install the Python MCP SDK (${PYTHON_MCP}) with pip: ${stderr ?? String(e)}`)
  }
  try {
    NodeFs.renameSync(building, VENV)
  } catch {
    // Another run got there first: use its.
    NodeFs.rmSync(building, { recursive: true, force: true })
  }
  return python
}
