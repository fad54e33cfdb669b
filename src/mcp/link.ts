/**
 * A live connection to one MCP server as the rest of the client sees it: the SDK client, the era
 * it speaks, what the server offers, and whether the connection is gone. Requests go out raw
 * (any JSON result is taken, then read tolerantly by our own parsers): the SDK's typed methods
 * reject a whole answer for one malformed entry.
 */
import type { Client } from "@modelcontextprotocol/client"
import { Duration, Effect } from "effect"
import { tailOf } from "../text/cut.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { loginNeededIn } from "./auth/login-needed.ts"
import type { LoginDoor } from "./call-login.ts"
import type { Era, McpSdk } from "./connect.ts"
import type { Desk, Person } from "./questions.ts"

/** The last few KB a server wrote to stderr: what a failure report shows. */
export class StderrTail {
  private text = ""
  private readonly limit: number
  constructor(limit = 4000) {
    this.limit = limit
  }
  add(chunk: string): void {
    this.text = tailOf(this.text + chunk, this.limit)
  }
  get value(): string {
    return this.text.trim()
  }
}

export const withStderr = (message: string, stderr: StderrTail): string =>
  stderr.value === "" ? message : `${message}\nstderr:\n${stderr.value}`

export interface McpLink {
  /** The server's name in the config. */
  readonly server: string
  readonly sdk: McpSdk
  readonly client: Client
  readonly era: Era
  /** It answers resources/list, resources/read and resources/templates/list. */
  readonly resources: boolean
  readonly prompts: boolean
  /** Per-request idle timeout (progress resets it). */
  readonly timeoutMs: number
  readonly stderr: StderrTail
  /** Whether the connection has closed. */
  readonly isClosed: () => boolean
  /** Why it was closed from our side, when it was (a dead HTTP server, an oversized message). */
  readonly lostBecause: () => string | undefined
  /** The calls waiting on it, where the server's questions go (2025 era). */
  readonly desk: Desk
  /** How a call refused for want of a login offers one to its person (HTTP with a saved-login store). */
  readonly login?: LoginDoor
  /** Who answers the server's questions during a request (undefined: nobody can be asked). */
  readonly person?: Person
}

/** Any JSON value: our parsers read the answer, not the SDK's schemas. */
const anyResult = {
  "~standard": { version: 1, vendor: "freecode-tools", validate: (value: unknown) => ({ value }) }
} as const

/** One call may keep going (with progress) at most this long. */
export const MAX_CALL_DURATION_MS = 30 * 60_000

/** Sends one request; the answer as JSON, or the SDK's error. */
export const rawRequest = (
  link: McpLink,
  method: string,
  params: Record<string, unknown>,
  timeoutMs = link.timeoutMs,
  /** An `input_required` answer is returned as it came, for the caller to answer (2026 era). */
  allowInputRequired = false,
  /** Extra HTTP headers for this request (`Mcp-Param-*`); a stdio transport has none to send. */
  headers?: Readonly<Record<string, string>>
): Effect.Effect<unknown, unknown> =>
  Effect.tryPromise({
    try: (signal) =>
      link.client.request({ method, params }, anyResult, {
        signal,
        timeout: timeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: MAX_CALL_DURATION_MS,
        // Asking for progress makes the server's progress notifications reset the timeout.
        onprogress: () => undefined,
        ...(allowInputRequired ? { allowInputRequired } : {}),
        ...(headers === undefined || Object.keys(headers).length === 0 ? {} : { headers })
      }),
    catch: (e) => e
  })

const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** A request's failure as the model reads it: timed out, disconnected, or the server's own error. */
export const requestFailure = (link: McpLink, what: string, e: unknown): ToolFailure => {
  const { sdk, server, stderr } = link
  if (e instanceof sdk.SdkError && e.code === sdk.SdkErrorCode.RequestTimeout) {
    return fail(
      `The ${server} MCP server sent neither an answer nor progress for ${what} within ${Duration.format(Duration.millis(link.timeoutMs))}; the call was abandoned. Try a smaller request, or another way.`
    )
  }
  // Only our side knows the connection closed: a server may send -32000 as its own error too.
  if (link.isClosed()) {
    const lost = link.lostBecause()
    return fail(
      withStderr(
        `The ${server} MCP server disconnected during ${what}${lost === undefined ? "" : ` (${lost})`}; the call's effect is unknown. Its tools are unavailable until it restarts.`,
        stderr
      )
    )
  }
  // Refused before it ran, for want of a login (or of scope): the person is told what to run, typed.
  const login = loginNeededIn(e)
  if (login !== undefined) {
    return fail(`${what} was not run: ${login.message}`, {
      login: {
        server: login.server,
        kind: login.kind,
        ...(login.command === undefined ? {} : { command: login.command }),
        ...(login.scope === undefined ? {} : { scope: login.scope })
      }
    })
  }
  return fail(`The ${server} MCP server refused ${what}: ${describeError(e)}`)
}
