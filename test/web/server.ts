/** A real HTTP server on 127.0.0.1 (port 0) for the web tests, closed with the test's scope. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void

/** Starts a server; returns its base URL ("http://127.0.0.1:PORT"). */
export const startServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly base: string; readonly close: () => void }>((resume) => {
      const server = createServer((req, res) => handler(req, res, new URL(req.url ?? "/", "http://127.0.0.1")))
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            base: `http://127.0.0.1:${port}`,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    (s) => Effect.sync(s.close)
  ).pipe(Effect.map((s) => s.base))
