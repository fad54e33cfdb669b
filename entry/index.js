/** The package's main entry: the Node.js version check, then the library (dist/lib/index.js, scripts/bundle.ts). */
import "./node-check.js"

export * from "../dist/lib/index.js"
