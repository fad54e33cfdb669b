/** The package version, read from the package.json above this file (src/cli or dist/src/cli). */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const PACKAGE = "freecode-tools"

export const packageVersion = (from: string = import.meta.dirname): string => {
  let dir = from
  while (true) {
    try {
      const pkg = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, "package.json"), "utf8")) as {
        readonly name?: unknown
        readonly version?: unknown
      }
      if (pkg.name === PACKAGE && typeof pkg.version === "string") return pkg.version
    } catch {
      // no package.json here: keep walking up
    }
    const parent = NodePath.dirname(dir)
    if (parent === dir) return "unknown"
    dir = parent
  }
}
