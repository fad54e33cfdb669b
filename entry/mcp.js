/** The `freecode-tools/mcp` entry: the Node.js version check, then serving over MCP. */
import "./node-check.js"

export * from "../dist/lib/mcp.js"
