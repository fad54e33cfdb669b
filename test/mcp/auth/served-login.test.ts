/**
 * A login an upstream server asks for while we serve: the real `freecode-tools mcp` (over stdio)
 * has a remote server behind a real protected-resource gate (gate.ts, oidc-provider as its
 * authorization server) configured, whose calls need a token. A client of ours of each era calls
 * the upstream tool with no login saved: it is asked by URL (a 2025 client by URL-mode
 * elicitation, a 2026 client inside our `input_required`), follows the URL as the person's
 * browser would, and the held call is sent again once and answers. A declined question gives the
 * refusal naming the command, as without a person. And `logout` of a client registered by hand
 * revokes with its secret.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client as ModernClient } from "@modelcontextprotocol/client"
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Scope } from "effect"
import { oauthSettingsOf } from "../../../src/mcp/auth/client-secret.ts"
import { login, logout } from "../../../src/mcp/auth/login.ts"
import { loginFile, readLogin } from "../../../src/mcp/auth/token-store.ts"
import { REPO, runProcess } from "../../cli/helpers.ts"
import {
  type AuthorizationServer,
  HANDMADE,
  handmadeClient,
  logIn,
  SCOPE,
  startAuthorizationServer
} from "./authorization-server.ts"
import { type Gate, startGatedLs } from "./gate.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const tmp = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-served-login-")))
const root = NodePath.join(tmp, "project")
NodeFs.mkdirSync(root)
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\n")

let as: AuthorizationServer
let gate: Gate
let scope: Scope.Closeable
/** The upstream calls that reached the gate, refused or not. */
let calls = 0
/** Revocation requests the authorization server received: how the client authenticated. */
const revocations: Array<{ readonly basic: boolean; readonly status: number }> = []

beforeAll(async () => {
  as = await startAuthorizationServer({ clients: [handmadeClient] })
  as.provider.use(async (ctx, next) => {
    await next()
    if (ctx.path.endsWith("/revocation")) {
      revocations.push({ basic: ctx.headers.authorization?.startsWith("Basic ") === true, status: ctx.status })
    }
  })
  scope = Effect.runSync(Scope.make())
  gate = await startGatedLs(root, as.issuer, scope)
  gate.rule = (method) => {
    if (method !== "tools/call") return undefined
    calls++
    return [SCOPE]
  }
  NodeFs.writeFileSync(NodePath.join(root, ".mcp.json"), JSON.stringify({ mcpServers: { team: { url: gate.url } } }))
}, 60_000)
afterAll(async () => {
  await gate?.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Effect.void as never))
  await as?.close()
})

/** `freecode-tools mcp` over stdio, keeping its logins in `stateDir`. */
const serving = (stateDir: string) => ({
  command: process.execPath,
  args: [MAIN, "mcp", "--root", root, "--trust"],
  env: { ...(process.env as Record<string, string>), FREECODE_STATE_DIR: stateDir },
  stderr: "pipe" as const
})

interface Params {
  readonly mode?: string
  readonly url?: string
  readonly message: string
}

/** The person at the client: follows a URL in the browser (or declines it); yes to any approval. */
const person = (asked: Array<Params>, decline: boolean) => async (params: Params) => {
  asked.push(params)
  if (params.mode !== "url") return { action: "accept" as const, content: { q1: "Yes, this once" } }
  if (decline) return { action: "decline" as const }
  const back = await logIn(params.url!)
  await (await fetch(back)).text()
  return { action: "accept" as const }
}

const untilListed = async (list: () => Promise<{ tools: Array<{ name: string }> }>) => {
  for (let i = 0; i < 600; i++) {
    if ((await list()).tools.some((t) => t.name === "mcp__team__ls")) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("mcp__team__ls never listed")
}

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text

/** A 2025-era client (SDK 1.32) calls the upstream `ls` through us. */
const call2025 = (stateDir: string, asked: Array<Params>, decline = false) =>
  Effect.gen(function* () {
    const client = new Client(
      { name: "old", version: "1.0.0" },
      { capabilities: { elicitation: { form: {}, url: {} } } }
    )
    client.setRequestHandler(ElicitRequestSchema, (request) => person(asked, decline)(request.params as Params))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(new StdioClientTransport(serving(stateDir)))),
      () => Effect.promise(() => client.close())
    )
    yield* Effect.promise(() => untilListed(() => client.listTools()))
    return yield* Effect.promise(() =>
      client.callTool({ name: "mcp__team__ls", arguments: {} }, undefined, { timeout: 120_000 })
    )
  }).pipe(Effect.scoped)

/** A 2026-era client (SDK 2.x, pinned) calls the upstream `ls` through us. */
const call2026 = (stateDir: string, asked: Array<Params>, decline = false) =>
  Effect.gen(function* () {
    const client = new ModernClient(
      { name: "new", version: "1.0.0" },
      { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
    )
    client.setRequestHandler("elicitation/create", (request) => person(asked, decline)(request.params as Params))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(new ModernStdio(serving(stateDir)))),
      () => Effect.promise(() => client.close())
    )
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
    yield* Effect.promise(() => untilListed(() => client.listTools(undefined, { cacheMode: "refresh" })))
    return yield* Effect.promise(() => client.callTool({ name: "mcp__team__ls", arguments: {} }, { timeout: 120_000 }))
  }).pipe(Effect.scoped)

const expectLoggedIn = (stateDir: string) => {
  expect(readLogin(stateDir, gate.url)?.tokens?.refresh_token).toBeDefined()
  expect(NodeFs.statSync(loginFile(stateDir, gate.url)).mode & 0o777).toBe(0o600)
}

describe("an upstream login asked of our client's person by URL", () => {
  it.live(
    "a 2025-era client gets URL-mode elicitation; after the login the call is sent again once and answers",
    () =>
      Effect.gen(function* () {
        const dir = NodePath.join(tmp, "state-2025")
        const asked: Array<Params> = []
        const before = calls
        const result = yield* call2025(dir, asked)
        expect(textOf(result)).toContain("notes.txt")
        const urls = asked.filter((a) => a.mode === "url")
        expect(urls).toHaveLength(1)
        expect(new URL(urls[0]!.url!).origin).toBe(as.issuer)
        expect(new URL(urls[0]!.url!).searchParams.get("code_challenge_method")).toBe("S256")
        expect(urls[0]!.message).toContain("asks for a login before it runs")
        // Refused once (it never ran), then run once.
        expect(calls - before).toBe(2)
        expect(gate.refusals.at(-1)).toEqual({ status: 401, method: "tools/call" })
        expectLoggedIn(dir)
      }),
    180_000
  )

  it.live(
    "a 2026-era client gets the URL inside our input_required; its retry resumes the held call, which answers",
    () =>
      Effect.gen(function* () {
        const dir = NodePath.join(tmp, "state-2026")
        const asked: Array<Params> = []
        const before = calls
        const result = yield* call2026(dir, asked)
        expect(textOf(result)).toContain("notes.txt")
        const urls = asked.filter((a) => a.mode === "url")
        expect(urls).toHaveLength(1)
        expect(new URL(urls[0]!.url!).origin).toBe(as.issuer)
        expect(calls - before).toBe(2)
        expectLoggedIn(dir)
      }),
    180_000
  )

  it.live(
    "a declined login leaves the refusal naming the command, in both eras, and saves nothing",
    () =>
      Effect.gen(function* () {
        for (const [era, call] of [
          ["2025", call2025],
          ["2026", call2026]
        ] as const) {
          const dir = NodePath.join(tmp, `state-declined-${era}`)
          const asked: Array<Params> = []
          const before = calls
          const result = yield* call(dir, asked, true)
          expect((result as { isError?: boolean }).isError).toBe(true)
          const text = textOf(result)
          expect(text).toContain("team needs a login")
          expect(text).toContain("run `freecode-tools mcp-auth login team`")
          expect(text).toContain("the person was asked to log in and declined")
          expect(asked.filter((a) => a.mode === "url")).toHaveLength(1)
          expect(calls - before).toBe(1)
          expect(readLogin(dir, gate.url)?.tokens).toBeUndefined()
        }
      }),
    240_000
  )
})

const handmadeSettings = oauthSettingsOf(
  { clientId: HANDMADE.id, clientSecretEnv: "HANDMADE_SECRET", scope: SCOPE },
  root,
  { HANDMADE_SECRET: HANDMADE.secret }
)

/** Logs in as the hand-registered client, the person's browser played; the refresh token saved. */
const logInto = async (dir: string) => {
  let done: Promise<void> | undefined
  await login({
    stateDir: dir,
    serverUrl: gate.url,
    name: "team",
    ...(handmadeSettings === undefined ? {} : { settings: handmadeSettings }),
    open: (url) => {
      done = logIn(url.href).then(async (back) => void (await (await fetch(back)).text()))
    }
  })
  await done
  return readLogin(dir, gate.url)!.tokens!.refresh_token!
}

describe("logout of a client registered by hand", () => {
  it("revokes with the client's secret, as the login authenticated; without it the server refuses", async () => {
    const without = NodePath.join(tmp, "state-logout-plain")
    await logInto(without)
    const plain = await logout(without, gate.url)
    expect(plain).toMatchObject({ had: true, revoked: false })
    // Only the client id, as before: the authorization server refuses an unauthenticated confidential client.
    expect(revocations.at(-1)?.basic).toBe(false)
    expect(revocations.at(-1)?.status).toBeGreaterThanOrEqual(400)

    const dir = NodePath.join(tmp, "state-logout-secret")
    const refresh = await logInto(dir)
    const out = await logout(dir, gate.url, () => handmadeSettings)
    expect(out).toEqual({ had: true, revoked: true })
    expect(revocations.at(-1)).toEqual({ basic: true, status: 200 })
    expect(NodeFs.existsSync(loginFile(dir, gate.url))).toBe(false)
    // Revoked there: the refresh token no longer works, even with the secret.
    const reuse = await fetch(`${as.issuer}/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${HANDMADE.id}:${HANDMADE.secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh })
    })
    expect(((await reuse.json()) as { error?: string }).error).toBe("invalid_grant")
    // The secret never appears in what logout said.
    expect(JSON.stringify(plain) + JSON.stringify(out)).not.toContain(HANDMADE.secret)
  }, 90_000)

  it("the CLI: mcp-auth logout sends the secret the config names; a secret that is not set is named, never shown", async () => {
    const project = NodePath.join(tmp, "handmade-project")
    NodeFs.mkdirSync(project, { recursive: true })
    NodeFs.writeFileSync(
      NodePath.join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          team: { url: gate.url, oauth: { clientId: HANDMADE.id, clientSecretEnv: "HANDMADE_SECRET", scope: SCOPE } }
        }
      })
    )
    const dir = NodePath.join(tmp, "state-cli-logout")
    const saved = process.env.FREECODE_STATE_DIR
    process.env.FREECODE_STATE_DIR = dir
    try {
      await logInto(dir)
      delete process.env.HANDMADE_SECRET
      const unset = await runProcess(["mcp-auth", "logout", "team", "--root", project])
      expect(unset.code, unset.stderr).toBe(0)
      expect(unset.stdout).toContain(
        "did not confirm the revocation (oauth.clientSecretEnv names HANDMADE_SECRET, which is not set)"
      )

      await logInto(dir)
      process.env.HANDMADE_SECRET = HANDMADE.secret
      const run = await runProcess(["mcp-auth", "logout", "team", "--root", project])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toBe(
        "Logged out of team: the saved login is gone and the authorization server revoked the token.\n"
      )
      expect(revocations.at(-1)).toEqual({ basic: true, status: 200 })
      expect(run.stdout + run.stderr + unset.stdout + unset.stderr).not.toContain(HANDMADE.secret)
    } finally {
      delete process.env.HANDMADE_SECRET
      if (saved === undefined) delete process.env.FREECODE_STATE_DIR
      else process.env.FREECODE_STATE_DIR = saved
    }
  }, 120_000)
})
