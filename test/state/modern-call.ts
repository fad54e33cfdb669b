/**
 * One 2026-07-28 `tools/call` over HTTP as a stateless client sends it (the standard headers,
 * the revision and client in `_meta`, form elicitation declared), and its answer read from a JSON
 * or an event-stream body: the replica tests' way to reach a server without an SDK in between.
 */
export type Answer = Record<string, unknown>

let ids = 0

export const modernToolCall = async (
  url: string,
  token: string,
  client: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): Promise<Answer> => {
  const id = ++ids
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: client, version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } }
        },
        name,
        arguments: args,
        ...extra
      }
    })
  })
  const text = await response.text()
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text) as Answer
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue
    const message = JSON.parse(line.slice(5)) as Answer
    if (message.id === id) return message
  }
  throw new Error(`no answer to ${id} in: ${text.slice(0, 500)}`)
}
