/**
 * Runs before any other module of the package is evaluated: on a Node.js older than
 * package.json's `engines.node`, print one line (found, needed, how to get it) and exit 1.
 * Plain JavaScript with no imports but node:fs, so that it runs on any Node a user may have; the
 * modules after it use built-ins (node:sqlite) and syntax an old Node fails on with a stack trace.
 */
import { readFileSync } from "node:fs"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const range = pkg.engines.node
const needed = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(range)
if (needed === null) throw new Error(`package.json engines.node must read ">=MAJOR.MINOR", not ${range}`)
const want = needed.slice(1).map((n) => Number(n ?? 0))
const have = process.versions.node.split(".").map(Number)
const compare = have[0] - want[0] || have[1] - want[1] || have[2] - want[2]
if (compare < 0) {
  process.stderr.write(
    `freecode-tools needs Node.js ${range} but found ${process.versions.node} (${process.execPath}): ` +
      "install Node.js 24 (https://nodejs.org/en/download, or `nvm install 24`), or run it from a clone " +
      "with `npm ci && npx freecode-tools`, which brings its own Node 24.\n"
  )
  process.exit(1)
}
