/**
 * The folder of this package (the package.json named freecode-tools above a module). Files the
 * package ships beside its code (the bash grammar, package.json itself) are found from here, not
 * from a module's own position, which differs between src/, dist/src/ and the CLI bundle.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const PACKAGE = "freecode-tools"

export interface PackageRoot {
  readonly dir: string
  readonly version: string
}

export const packageRoot = (from: string = import.meta.dirname): PackageRoot | undefined => {
  let dir = from
  while (true) {
    try {
      const pkg = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, "package.json"), "utf8")) as {
        readonly name?: unknown
        readonly version?: unknown
      }
      if (pkg.name === PACKAGE && typeof pkg.version === "string") return { dir, version: pkg.version }
    } catch {
      // no package.json here: keep walking up
    }
    const parent = NodePath.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}
