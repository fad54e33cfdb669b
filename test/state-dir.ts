/**
 * Vitest global setup: the whole run keeps its persistent state (session databases, spilled
 * outputs, memory files) in a temp folder of its own, never in the user's ~/.local/state. Set
 * before any worker starts, so every test and every CLI child process it spawns inherits it.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { STATE_DIR_NAME } from "../src/session/location.ts"

export default function setup(): () => void {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-test-state-"))
  process.env[STATE_DIR_NAME] = dir
  return () => NodeFs.rmSync(dir, { recursive: true, force: true })
}
