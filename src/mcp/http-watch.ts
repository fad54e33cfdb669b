/**
 * A `fetch` for the streamable HTTP client transport that notices an upstream dying mid-call.
 *
 * Over stdio a dead server closes the pipe and the SDK fails every pending request at once. Over
 * HTTP nothing closes: a POST whose event stream breaks (or ends) before the answer leaves the
 * request pending until its timeout — a minute by default — and a model is then told to "try a
 * smaller request". This wrapper watches the body of every POST that carries a request: when it
 * errors, or an event stream ends with a request unanswered and no event id to resume from, the
 * connection is reported dead (the session closes the client, which fails the pending calls
 * with the same "disconnected" error stdio gives). A refused connection counts too.
 */
import { isRecord } from "../schema/json-schema.ts"

type Fetch = typeof fetch

/** The ids of the JSON-RPC requests (not notifications or responses) in a POST body. */
const requestIds = (init: RequestInit | undefined): ReadonlySet<unknown> => {
  if (init?.method !== "POST" || typeof init.body !== "string") return new Set()
  try {
    const parsed: unknown = JSON.parse(init.body)
    const messages = Array.isArray(parsed) ? parsed : [parsed]
    return new Set(messages.filter((m) => isRecord(m) && typeof m.method === "string" && "id" in m).map((m) => m.id))
  } catch {
    return new Set()
  }
}

/** Follows an event stream's lines: which answers went by, and whether an event id did. */
class EventScan {
  private rest = ""
  private data: Array<string> = []
  private readonly decoder = new TextDecoder()
  resumable = false
  readonly answered = new Set<unknown>()

  push(bytes: Uint8Array): void {
    const lines = (this.rest + this.decoder.decode(bytes, { stream: true })).split(/\r\n|\r|\n/)
    this.rest = lines.pop() ?? ""
    for (const line of lines) this.line(line)
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.event(this.data.join("\n"))
      this.data = []
    } else if (line.startsWith("data:")) this.data.push(line.slice(line[5] === " " ? 6 : 5))
    else if (line.startsWith("id:") && line.slice(3).trim() !== "") this.resumable = true
  }

  private event(data: string): void {
    try {
      const message: unknown = JSON.parse(data)
      if (isRecord(message) && ("result" in message || "error" in message)) this.answered.add(message.id)
    } catch {
      // Not JSON: the SDK reports it.
    }
  }
}

/** The body, passed through unchanged, with its end and its failure watched. */
const watchBody = (
  body: ReadableStream<Uint8Array>,
  ids: ReadonlySet<unknown>,
  eventStream: boolean,
  signal: AbortSignal | null | undefined,
  onDead: (reason: string) => void
): ReadableStream<Uint8Array> => {
  const reader = body.getReader()
  const scan = new EventScan()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch (e) {
        if (signal?.aborted !== true) onDead(`the connection broke during the call (${String(e)})`)
        controller.error(e)
        return
      }
      if (chunk.done) {
        const unanswered = [...ids].some((id) => !scan.answered.has(id))
        if (eventStream && unanswered && !scan.resumable && signal?.aborted !== true) {
          onDead("the server closed the call's event stream without an answer")
        }
        controller.close()
        return
      }
      if (eventStream) scan.push(chunk.value)
      controller.enqueue(chunk.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    }
  })
}

/** `base` with every request-carrying POST watched; `onDead` is told why the server is gone. */
export const watchedFetch =
  (onDead: (reason: string) => void, base: Fetch = fetch): Fetch =>
  async (input, init) => {
    const ids = requestIds(init)
    if (ids.size === 0) return base(input, init)
    let response: Response
    try {
      response = await base(input, init)
    } catch (e) {
      if (init?.signal?.aborted !== true) onDead(`the server could not be reached (${String(e)})`)
      throw e
    }
    if (!response.ok || response.body === null) return response
    const eventStream = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    return new Response(watchBody(response.body, ids, eventStream, init?.signal, onDead), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }
