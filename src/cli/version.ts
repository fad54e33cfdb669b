/** The package version, read from the package.json above this file (src/cli, dist/src/cli or the bundle). */
import { packageRoot } from "../load/package-root.ts"

export const packageVersion = (from: string = import.meta.dirname): string => packageRoot(from)?.version ?? "unknown"
