/**
 * The CLI as the surface tests drive it (test/cli/surface.test.ts, test/code/cli.test.ts): one
 * command as a child process, and an MCP client talking to `freecode-tools mcp` over stdio,
 * closed with the test's scope.
 */
import * as NodePath from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { REPO, runProcess } from "../cli/helpers.ts"

/** One CLI command (`args` after the executable), with `input` on its stdin. */
export const cli = (args: ReadonlyArray<string>, input = "") => Effect.promise(() => runProcess(args, input))

/**
 * An MCP client connected to `freecode-tools mcp ...args`. `before` runs before it connects
 * (to set notification handlers or read the server's stderr).
 */
export const mcpClient = (
  args: ReadonlyArray<string>,
  before: (client: Client, transport: StdioClientTransport) => void = () => {}
) =>
  Effect.gen(function* () {
    const client = new Client({ name: "test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [NodePath.join(REPO, "src/cli/main.ts"), "mcp", ...args],
      stderr: "pipe"
    })
    before(client, transport)
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    return client
  })
