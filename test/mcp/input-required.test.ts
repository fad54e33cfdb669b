/**
 * Approvals for 2026-07-28 clients, on the wire, over HTTP and over stdio: a call that needs the
 * person answers `input_required` with the form and a signed `requestState`; the retry with the
 * answer continues the held call, which runs once. A state altered, expired, used twice, sent by
 * another client or for other arguments is refused with a sentence saying which, and nothing
 * runs. A code-mode program that asks twice is held twice and resumes where it stopped: the
 * calls it made before an approval are not made again.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { serveHttp, serveStdio } from "../../src/mcp/transports.ts"
import { Approval } from "../../src/permission/approval.ts"
import { approvalFromPrompter } from "../../src/permission/approval-prompter.ts"
import { mcpPrompter } from "../../src/prompt/mcp-elicitation.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { approvalTools, COUNT_LOG } from "../fixtures/mcp/approval-tools.ts"

const TTL = 60_000

type Rpc = (method: string, params: Record<string, unknown>, client?: string) => Promise<Record<string, unknown>>

interface Wire {
  readonly rpc: Rpc
  readonly root: string
  /** Moves the servers' clock on. */
  readonly advance: (ms: number) => void
}

const envelope = (client: string, elicitation = true) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: client, version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": elicitation ? { elicitation: { form: {} } } : {}
})

/** A project and a system whose approvals go to the MCP asker (as under `mcp`), with code mode. */
const setUp = (ttlMs: number) =>
  Effect.gen(function* () {
    const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-input-required-")))
    yield* Effect.addFinalizer(() => Effect.sync(() => NodeFs.rmSync(root, { recursive: true, force: true })))
    const system = yield* Layer.build(
      testToolSystem({
        root,
        tools: [ReadTool, ...approvalTools],
        code: { limits: { wallMs: 60_000 } },
        approval: Layer.succeed(Approval, approvalFromPrompter(mcpPrompter(() => undefined)))
      })
    )
    let clock = Date.now()
    const modern = { stateDir: NodePath.join(root, ".state"), stateTtlMs: ttlMs, now: () => clock }
    return {
      root,
      system,
      modern,
      advance: (ms: number) => {
        clock += ms
      }
    }
  })

let ids = 0

/** The JSON-RPC answer to a request, read from an SSE or JSON body. */
const answerIn = async (response: Response, id: number): Promise<Record<string, unknown>> => {
  const text = await response.text()
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text)
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue
    const message = JSON.parse(line.slice(5)) as Record<string, unknown>
    if (message.id === id) return message
  }
  throw new Error(`no answer to ${id} in: ${text.slice(0, 500)}`)
}

const overHttp = (ttlMs = TTL) =>
  Effect.gen(function* () {
    const { root, system, modern, advance } = yield* setUp(ttlMs)
    const serving = yield* serveHttp(system, 0, { modern })
    const token = serving.auth.kind === "token" ? serving.auth.token : ""
    const rpc: Rpc = async (method, params, client = "wire-test") => {
      const id = ++ids
      const response = await fetch(serving.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          ...(typeof params.name === "string" ? { "mcp-name": params.name } : {})
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: envelope(client), ...params } })
      })
      return answerIn(response, id)
    }
    return { rpc, root, advance } satisfies Wire
  })

const overStdio = (ttlMs = TTL) =>
  Effect.gen(function* () {
    const { root, system, modern, advance } = yield* setUp(ttlMs)
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const waiting = new Map<number, (m: Record<string, unknown>) => void>()
    let buffer = ""
    stdout.on("data", (b: Buffer) => {
      buffer += b.toString()
      let nl = buffer.indexOf("\n")
      while (nl !== -1) {
        const message = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>
        buffer = buffer.slice(nl + 1)
        nl = buffer.indexOf("\n")
        if (typeof message.id === "number") waiting.get(message.id)?.(message)
      }
    })
    yield* Effect.forkScoped(serveStdio(system, undefined, undefined, { stdin, stdout, modern }))
    yield* Effect.addFinalizer(() => Effect.sync(() => stdin.end()))
    const rpc: Rpc = (method, params, client = "wire-test") =>
      new Promise((resolve) => {
        const id = ++ids
        waiting.set(id, resolve)
        stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: envelope(client), ...params } })}\n`
        )
      })
    // The opening exchange pins the connection to the 2026 era.
    const discovered = yield* Effect.promise(() => rpc("server/discover", {}))
    expect((discovered.result as { supportedVersions: Array<string> }).supportedVersions).toContain("2026-07-28")
    return { rpc, root, advance } satisfies Wire
  })

const counted = (root: string) => {
  const file = NodePath.join(root, COUNT_LOG)
  return NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""
}

interface Asked {
  readonly key: string
  readonly requestState: string
  readonly message: string
}

/** The input_required of a result: the one question's key, its form's message, and the state. */
const askedIn = (answer: Record<string, unknown>): Asked => {
  const result = answer.result as Record<string, unknown> | undefined
  expect(result?.resultType, JSON.stringify(answer).slice(0, 400)).toBe("input_required")
  const requests = result!.inputRequests as Record<string, { method: string; params: { message: string } }>
  const [key, request] = Object.entries(requests)[0]!
  expect(request.method).toBe("elicitation/create")
  return { key, requestState: result!.requestState as string, message: request.params.message }
}

const yes = (key: string) => ({ [key]: { action: "accept", content: { q1: "Yes, this once" } } })
const textOf = (answer: Record<string, unknown>) =>
  (((answer.result as { content?: Array<{ text?: string }> }).content ?? []) as Array<{ text?: string }>)
    .map((c) => c.text ?? "")
    .join("\n")
const refusal = (answer: Record<string, unknown>) => {
  const error = answer.error as { code: number; message: string; data?: { problem?: string } } | undefined
  expect(error, JSON.stringify(answer).slice(0, 400)).toBeDefined()
  expect(error!.code).toBe(-32602)
  return { message: error!.message, problem: error!.data?.problem }
}

const call = (wire: Wire, args: Record<string, unknown>, extra: Record<string, unknown> = {}, client?: string) =>
  Effect.promise(() => wire.rpc("tools/call", { name: "count", arguments: args, ...extra }, client))

describe.each([
  ["HTTP", overHttp],
  ["stdio", overStdio]
] as const)("2026-era approvals over %s", (_, wireOf) => {
  it.live(
    "input_required, then the retry with the answer runs the call once; the same state again is refused",
    () =>
      Effect.gen(function* () {
        const wire = yield* wireOf()
        const asked = askedIn(yield* call(wire, { n: 1 }))
        expect(asked.message).toContain("count")
        expect(counted(wire.root)).toBe("")
        const done = yield* call(wire, { n: 1 }, { requestState: asked.requestState, inputResponses: yes(asked.key) })
        expect(textOf(done)).toContain("counted 1")
        expect(counted(wire.root)).toBe("1\n")
        const again = refusal(
          yield* call(wire, { n: 1 }, { requestState: asked.requestState, inputResponses: yes(asked.key) })
        )
        expect(again.problem).toBe("replayed")
        expect(again.message).toContain("already used")
        expect(counted(wire.root)).toBe("1\n")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a tampered, a cross-client and an other-arguments state are refused, and the held call still answers the right retry",
    () =>
      Effect.gen(function* () {
        const wire = yield* wireOf()
        const asked = askedIn(yield* call(wire, { n: 2 }))
        const [body, mac] = asked.requestState.split(".") as [string, string]
        const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
        const forged = `${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3_600_000 })).toString("base64url")}.${mac}`
        const tampered = refusal(yield* call(wire, { n: 2 }, { requestState: forged, inputResponses: yes(asked.key) }))
        expect(tampered.problem).toBe("tampered")
        expect(tampered.message).toContain("altered")
        const other = refusal(
          yield* call(
            wire,
            { n: 2 },
            { requestState: asked.requestState, inputResponses: yes(asked.key) },
            "another-client"
          )
        )
        expect(other.problem).toBe("other-client")
        expect(other.message).toContain("another client")
        const otherArgs = refusal(
          yield* call(wire, { n: 99 }, { requestState: asked.requestState, inputResponses: yes(asked.key) })
        )
        expect(otherArgs.problem).toBe("other-call")
        expect(counted(wire.root)).toBe("")
        // None of those used the state up: the right client's retry still continues the call.
        const done = yield* call(wire, { n: 2 }, { requestState: asked.requestState, inputResponses: yes(asked.key) })
        expect(textOf(done)).toContain("counted 2")
        expect(counted(wire.root)).toBe("2\n")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "an expired state is refused; a declined approval refuses the call; a retry with no answer is asked again",
    () =>
      Effect.gen(function* () {
        const wire = yield* wireOf()
        const first = askedIn(yield* call(wire, { n: 3 }))
        wire.advance(TTL + 1)
        const expired = refusal(
          yield* call(wire, { n: 3 }, { requestState: first.requestState, inputResponses: yes(first.key) })
        )
        expect(expired.problem).toBe("expired")
        expect(expired.message).toContain("expired")

        const second = askedIn(yield* call(wire, { n: 4 }))
        const reasked = askedIn(yield* call(wire, { n: 4 }, { requestState: second.requestState }))
        expect(reasked.key).toBe(second.key)
        expect(reasked.requestState).not.toBe(second.requestState)
        const declined = yield* call(
          wire,
          { n: 4 },
          { requestState: reasked.requestState, inputResponses: { [reasked.key]: { action: "decline" } } }
        )
        expect((declined.result as { isError?: boolean }).isError).toBe(true)
        expect(textOf(declined)).toContain("dismissed")
        expect(counted(wire.root)).toBe("")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a held call nobody answers in time is refused and ends; its state, still unexpired, then finds nothing held",
    () =>
      Effect.gen(function* () {
        // The held call's lifetime runs on the real clock; the state's on the frozen test clock.
        const wire = yield* wireOf(300)
        const asked = askedIn(yield* call(wire, { n: 5 }))
        yield* Effect.sleep("3 seconds")
        const late = refusal(
          yield* call(wire, { n: 5 }, { requestState: asked.requestState, inputResponses: yes(asked.key) })
        )
        expect(late.problem).toBe("not-held")
        expect(late.message).toContain("no longer held")
        expect(counted(wire.root)).toBe("")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a code-mode program asking twice is held twice and resumes: what it ran before an approval does not run again",
    () =>
      Effect.gen(function* () {
        const wire = yield* wireOf()
        const program = 'await tools.count({ n: 1 }); await tools.count({ n: 2 }); return "both"'
        const code = (extra: Record<string, unknown> = {}) =>
          Effect.promise(() => wire.rpc("tools/call", { name: "code", arguments: { program }, ...extra }))
        const first = askedIn(yield* code())
        expect(counted(wire.root)).toBe("")
        const second = askedIn(yield* code({ requestState: first.requestState, inputResponses: yes(first.key) }))
        expect(second.key).not.toBe(first.key)
        expect(counted(wire.root)).toBe("1\n")
        const done = yield* code({ requestState: second.requestState, inputResponses: yes(second.key) })
        expect(textOf(done)).toContain("both")
        expect(counted(wire.root)).toBe("1\n2\n")
      }).pipe(Effect.scoped),
    120_000
  )
})
