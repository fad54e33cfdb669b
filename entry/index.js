/** The package's main entry: the Node.js version check, then the library (dist/src/index.js). */
import "./node-check.js"

export * from "../dist/src/index.js"
