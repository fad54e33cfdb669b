/**
 * The end of the CLI's start-up: its first answer is going out (an MCP server's first message, a
 * command's first output) or, for `mcp --http`, it is listening. An installed CLI has V8 compile
 * every function of what it loads until then, so Node's compile cache holds them all for the next
 * start (entry/bundle-start.js; docs/benchmarks.md, "Start-up"); from here on it compiles lazily
 * again, as V8 does by default, so what a later call loads (a built-in such as node:http, a worker
 * thread) is not compiled whole, nor without Node's own code cache.
 *
 * Said as a process event, not a call into the entry: the entry is plain JavaScript outside the
 * bundle, and a clone's CLI, the tests and an embedder have no listener, so nothing happens there.
 * Emitting again costs an event with no listener.
 *
 * A leaf: it imports nothing of ours, so any folder may use it.
 */

/** The event's name; entry/bundle-start.js listens once. */
export const START_UP_OVER = "freecode-tools:start-up-over"

export const startUpOver = (): void => {
  process.emit(START_UP_OVER as never)
}
