/** The `freecode-tools/layers` entry: the Node.js version check, then the live layers. */
import "./node-check.js"

export * from "../dist/lib/layers.js"
