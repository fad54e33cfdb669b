/**
 * The signed requestState of the 2026 era: accepted once for the call and client it was issued
 * for; tampered, expired, replayed, cross-client and other-call states refused with a sentence;
 * the key kept 0600 in the state dir and refused when others can read it.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  canonicalJson,
  loadStateKey,
  makeRequestStates,
  memoryNonceStore,
  STATE_KEY_FILE
} from "../../src/mcp/request-state.ts"

const stateDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-request-state-"))
const binding = { tool: "bash", args: { command: "rm -rf build", timeout: 5 }, client: "token:abc|client:cli" }
const payload = { approval: "bash rm -rf build", step: 3 }

/** A clock the test moves. */
const clock = () => {
  let t = 1_000_000
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms
    }
  }
}

describe("requestState", () => {
  it("is accepted once for its call and client, with its payload back", () => {
    const states = makeRequestStates(loadStateKey(stateDir()))
    const state = states.sign(binding, payload)
    // Argument key order does not matter: the arguments are compared canonically.
    const reordered = { ...binding, args: { timeout: 5, command: "rm -rf build" } }
    expect(Effect.runSync(states.verify(state, reordered))).toEqual({ ok: true, payload })
  })

  it("tampered: a changed byte in the claims or the signature, or a state signed with another key", () => {
    const dir = stateDir()
    const states = makeRequestStates(loadStateKey(dir))
    const state = states.sign(binding, payload)
    const [body, sig] = state.split(".") as [string, string]
    const claims = JSON.parse(Buffer.from(body, "base64url").toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 1e9 })).toString("base64url")
    const flipped = `${sig.slice(0, -2)}${sig.endsWith("AA") ? "BB" : "AA"}`
    const other = makeRequestStates(loadStateKey(stateDir())).sign(binding, payload)
    for (const bad of [`${forged}.${sig}`, `${body}.${flipped}`, other]) {
      const verdict = Effect.runSync(states.verify(bad, binding))
      expect(verdict.ok).toBe(false)
      if (!verdict.ok) {
        expect(verdict.problem).toBe("tampered")
        expect(verdict.message).toContain("altered or signed by another server")
      }
    }
    for (const bad of ["", "no-dot", "a.b.c", 42 as unknown as string]) {
      const verdict = Effect.runSync(states.verify(bad, binding))
      expect(verdict.ok ? "ok" : verdict.problem).toBe(bad === "a.b.c" ? "malformed" : "malformed")
    }
  })

  it("expired: past its time-to-live it is refused, even unused", () => {
    const c = clock()
    const states = makeRequestStates(loadStateKey(stateDir()), memoryNonceStore(c.now), c.now)
    const state = states.sign(binding, payload, 60_000)
    c.advance(60_001)
    const verdict = Effect.runSync(states.verify(state, binding))
    expect(verdict.ok ? "ok" : verdict.problem).toBe("expired")
    expect(verdict.ok ? "" : verdict.message).toContain("has expired")
  })

  it("replayed: the second use of a state is refused, also by another verifier sharing the nonces", () => {
    const key = loadStateKey(stateDir())
    const nonces = memoryNonceStore()
    const states = makeRequestStates(key, nonces)
    const state = states.sign(binding, payload)
    expect(Effect.runSync(states.verify(state, binding)).ok).toBe(true)
    const again = Effect.runSync(states.verify(state, binding))
    expect(again.ok ? "ok" : again.problem).toBe("replayed")
    expect(Effect.runSync(makeRequestStates(key, nonces).verify(state, binding))).toMatchObject({
      ok: false,
      problem: "replayed"
    })
  })

  it("unavailable: a record of used states that cannot be reached neither accepts nor uses up the state", () => {
    const key = loadStateKey(stateDir())
    let up = false
    const flaky = {
      shared: true,
      claim: () => (up ? Effect.succeed(true) : Effect.fail("the shared state store could not be reached (down)"))
    }
    const states = makeRequestStates(key, flaky)
    const state = states.sign(binding, payload)
    const down = Effect.runSync(states.verify(state, binding))
    expect(down.ok ? "ok" : down.problem).toBe("unavailable")
    expect(down.ok ? "" : down.message).toContain("could not be reached")
    expect(down.ok ? "" : down.message).toContain("Nothing ran")
    up = true
    expect(Effect.runSync(states.verify(state, binding)).ok).toBe(true)
  })

  it("cross-client and other-call: bound to who asked and to the exact call", () => {
    const states = makeRequestStates(loadStateKey(stateDir()))
    const state = states.sign(binding, payload)
    const cross = Effect.runSync(states.verify(state, { ...binding, client: "token:abc|client:other" }))
    expect(cross.ok ? "ok" : cross.problem).toBe("other-client")
    expect(cross.ok ? "" : cross.message).toContain("issued to another client")
    const otherArgs = Effect.runSync(states.verify(state, { ...binding, args: { command: "rm -rf /", timeout: 5 } }))
    expect(otherArgs.ok ? "ok" : otherArgs.problem).toBe("other-call")
    const otherTool = Effect.runSync(states.verify(state, { ...binding, tool: "write" }))
    expect(otherTool.ok ? "ok" : otherTool.problem).toBe("other-call")
    // A refused attempt does not use the state up: the right call still gets it once.
    expect(Effect.runSync(states.verify(state, binding)).ok).toBe(true)
  })

  it("the key: made once with mode 0600, the same for every server on the state dir, refused when others can read it", () => {
    const dir = stateDir()
    const first = loadStateKey(dir)
    const file = NodePath.join(dir, STATE_KEY_FILE)
    expect(NodeFs.statSync(file).mode & 0o777).toBe(0o600)
    expect(loadStateKey(dir).equals(first)).toBe(true)
    // Signed by one server, accepted by another on the same state dir.
    const state = makeRequestStates(first).sign(binding, payload)
    expect(Effect.runSync(makeRequestStates(loadStateKey(dir)).verify(state, binding)).ok).toBe(true)
    NodeFs.chmodSync(file, 0o644)
    expect(() => loadStateKey(dir)).toThrow(/can be read by others .*chmod 600/)
  })

  it("the key: servers starting at once on an empty state dir all read the one key that won", async () => {
    const dir = stateDir()
    const module = NodePath.join(import.meta.dirname, "../../src/mcp/request-state.ts")
    const code = `const { loadStateKey } = await import(${JSON.stringify(module)}); process.stdout.write(loadStateKey(${JSON.stringify(dir)}).toString("hex"))`
    const keys = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ["--input-type=module", "-e", code])
            let out = ""
            let err = ""
            child.stdout.on("data", (b: Buffer) => (out += b.toString()))
            child.stderr.on("data", (b: Buffer) => (err += b.toString()))
            child.on("close", (status) => (status === 0 ? resolve(out) : reject(new Error(err))))
          })
      )
    )
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).toHaveLength(64)
    expect(NodeFs.readdirSync(dir)).toEqual([STATE_KEY_FILE])
  }, 120_000)

  it("canonical JSON sorts keys at every depth and keeps arrays in order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}')
  })
})
