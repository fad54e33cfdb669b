/**
 * The escape corpus: programs that try to get out of the interpreter, around the rules, or take
 * the host down. Each must end typed (a ToolResult with a known `end`), within its limit, with
 * the host alive and nothing done that the rules do not allow. Limits are small so each program
 * is bounded; the test's own timeout only guards against a hang.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ToolResult } from "../../src/tool/result.ts"
import { type CodeSystemOptions, codeSystem, makeProject, runCode } from "./system.ts"

const SECRET = "s3cr3t-canary-7d1f"
process.env.FREECODE_CODE_TEST_SECRET = SECRET
const REPO = NodePath.resolve(import.meta.dirname, "../..")

const LONG = `${"x".repeat(2500)}\n`
const root = makeProject({ "a.txt": "alpha\nbeta\n", ".env": "SECRET=hunter2\n", "long.txt": LONG })
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
const exists = (name: string) => NodeFs.existsSync(NodePath.join(root, name))

const BASE: CodeSystemOptions = {
  config: { permissions: { deny: ["Read(./.env)"] } },
  limits: { wallMs: 3_000, memoryBytes: 16 * 1024 * 1024, maxCalls: 50, outputChars: 100_000 },
  hooks: [
    {
      event: "PreToolUse",
      name: "no-touch",
      matcher: "bash",
      run: (input) =>
        Effect.succeed(
          String((input.tool_input as { command?: string }).command).includes("touch")
            ? { decision: "deny" as const, reason: "no touching" }
            : {}
        )
    }
  ]
}

type Check = (r: ToolResult) => void
interface Case {
  readonly name: string
  readonly program: string
  readonly check: Check
  readonly profile?: string
  readonly options?: CodeSystemOptions
}

const first = (r: ToolResult) => r.modelOutput.split("\n")[0]
const returns =
  (value: string): Check =>
  (r) => {
    expect(r.status, r.modelOutput).toBe("ok")
    expect(first(r)).toBe(value)
  }
const ends =
  (...endings: ReadonlyArray<string>): Check =>
  (r) => {
    expect(r.status, r.modelOutput).toBe("error")
    expect(endings).toContain(r.metadata.end)
  }
const threw =
  (pattern: RegExp): Check =>
  (r) => {
    ends("error")(r)
    expect(r.modelOutput).toMatch(pattern)
  }

const GLOBALS_OK = new Set(
  "Object Function Array Number parseFloat parseInt Infinity NaN undefined decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape isFinite isNaN globalThis Symbol Error EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError AggregateError Iterator Math JSON Reflect Proxy Date RegExp String Boolean BigInt Map Set WeakMap WeakSet WeakRef FinalizationRegistry Promise ArrayBuffer SharedArrayBuffer Uint8ClampedArray Int8Array Uint8Array Int16Array Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array Float16Array Float32Array Float64Array DataView Atomics eval queueMicrotask performance navigator DOMException structuredClone Error tools console text ToolError update".split(
    " "
  )
)

const cases: ReadonlyArray<Case> = [
  // Reaching the host
  { name: "process", program: "return typeof process", check: returns("undefined") },
  { name: "require", program: "return typeof require", check: returns("undefined") },
  {
    name: "module and exports",
    program: "return [typeof module, typeof exports, typeof __dirname].join()",
    check: returns("undefined,undefined,undefined")
  },
  {
    name: "import()",
    program: 'const fs = await import("node:fs"); return typeof fs.readFileSync',
    check: ends("error")
  },
  { name: "import() of a relative file", program: 'await import("./a.txt"); return "imported"', check: ends("error") },
  {
    name: "no timers, fetch or Buffer",
    program: "return [typeof setTimeout, typeof fetch, typeof Buffer, typeof WebAssembly].join()",
    check: returns("undefined,undefined,undefined,undefined")
  },
  {
    name: "globalThis holds nothing of the host",
    program: "return Object.getOwnPropertyNames(globalThis).join(' ')",
    check: (r) => {
      expect(r.status).toBe("ok")
      for (const name of first(r)!.split(" ")) expect(GLOBALS_OK, name).toContain(name)
    }
  },
  {
    name: "constructor chain of update",
    program: 'return update.constructor("return typeof process")()',
    check: returns("undefined")
  },
  {
    name: "a polluted prototype does not give update a file's text",
    // long.txt has a line read cuts, so its read has no text of its own; the write would be approved.
    program:
      'Object.defineProperty(Object.prototype, "text", { value: "pwned", configurable: true }); return await update("long.txt", (t) => t + "!").then(() => "written", (e) => e.status + " " + e.tool)',
    options: { ...BASE, answer: { answer: "once" } },
    check: (r) => {
      expect(first(r)).toBe("error read")
      expect(NodeFs.readFileSync(NodePath.join(root, "long.txt"), "utf8")).toBe(LONG)
    }
  },
  { name: "Function constructor", program: 'return Function("return typeof process")()', check: returns("undefined") },
  {
    name: "Function('return this')",
    program: 'return typeof Function("return this")().require',
    check: returns("undefined")
  },
  {
    name: "constructor chain of a function",
    program: 'return (() => 0).constructor.constructor("return typeof process")()',
    check: returns("undefined")
  },
  {
    name: "constructor chain of a tool",
    program: 'return tools.read.constructor("return typeof process")()',
    check: returns("undefined")
  },
  {
    name: "prototype of tools",
    program: 'return Object.getPrototypeOf(tools).constructor.constructor("return typeof require")()',
    check: returns("undefined")
  },
  {
    name: "prototype of a returned value",
    program:
      'const r = await tools.read({ filePath: "a.txt" }); return [Object.getPrototypeOf(r) === Object.prototype, r.constructor.constructor("return typeof process")()].join()',
    check: returns("true,undefined")
  },
  {
    name: "prototype of a ToolError",
    program:
      'try { await tools.call("nope", {}) } catch (e) { return [e instanceof ToolError, e.constructor.constructor("return typeof process")()].join() }',
    check: returns("true,undefined")
  },
  { name: "eval", program: 'return eval("typeof process + typeof require")', check: returns("undefinedundefined") },
  {
    name: "tools is frozen",
    program:
      "try { tools.read = () => 1 } catch {} ; try { delete tools.read } catch {} ; return typeof tools.read + Object.isFrozen(tools)",
    check: returns("functiontrue")
  },
  {
    name: "globalThis.tools cannot be replaced",
    program: "try { globalThis.tools = 1 } catch {} ; return typeof tools",
    check: returns("object")
  },
  {
    name: "polluting Object.prototype stays in the program",
    program:
      'Object.prototype.polluted = "yes"; Array.prototype.push = null; const r = await tools.read({ filePath: "a.txt" }); return r.status',
    check: (r) => {
      returns("ok")(r)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    }
  },
  {
    name: "replacing JSON changes nothing the host reads",
    program:
      'JSON.stringify = () => "{\\"filePath\\":\\".env\\"}"; JSON.parse = () => ({ status: "forged" }); const r = await tools.read({ filePath: "a.txt" }); return r.status',
    check: returns("ok")
  },
  // Changing a call after it was authorized
  {
    name: "arguments changed after the call are not the ones that ran",
    program:
      'const args = { filePath: "a.txt" }; const p = tools.read(args); args.filePath = ".env"; const r = await p; return r.output.includes("alpha") && !r.output.includes("hunter2")',
    check: returns("true")
  },
  {
    name: "a getter is read once, when the call is made",
    program:
      'let n = 0; const args = { get filePath() { n += 1; return n === 1 ? "a.txt" : ".env" } }; const r = await tools.read(args); return [r.output.includes("alpha"), n].join()',
    check: returns("true,1")
  },
  {
    name: "toJSON: what was authorized is what runs (and .env is denied)",
    program:
      'try { await tools.read({ toJSON() { return { filePath: ".env" } } }); return "read" } catch (e) { return e.status }',
    check: returns("denied")
  },
  {
    name: "a Proxy as arguments",
    program:
      'try { await tools.read(new Proxy({}, { get() { throw new Error("trap") }, ownKeys() { return ["filePath"] } })) ; return "ran" } catch (e) { return e.name }',
    check: (r) => expect(r.status).toBe("ok")
  },
  {
    name: "arguments that are not JSON (BigInt)",
    program: "try { await tools.read({ filePath: 1n }) } catch (e) { return e.name }",
    check: returns("TypeError")
  },
  {
    name: "cyclic arguments",
    program: "const a = {}; a.a = a; try { await tools.read(a) } catch (e) { return e.name }",
    check: returns("TypeError")
  },
  // Runaways
  { name: "infinite loop", program: "while (true) {}", check: ends("timeout") },
  {
    name: "catching the interrupt",
    program: "for (;;) { try { while (true) {} } catch (e) {} }",
    check: ends("timeout")
  },
  {
    name: "microtask flood",
    program: "const loop = () => Promise.resolve().then(loop); loop(); await new Promise(() => {})",
    // The flood never yields to the interrupt check: the worker is ended as stalled, or at the wall time.
    check: ends("timeout", "stalled")
  },
  { name: "deep recursion", program: "function f(n) { return f(n + 1) + 1 } return f(0)", check: ends("stack") },
  {
    name: "async recursion",
    program: "async function f() { await f() } await f()",
    check: ends("stack", "memory", "timeout")
  },
  {
    name: "deep object through JSON.stringify",
    program:
      "let o = {}; const top = o; for (let i = 0; i < 200000; i++) { o.a = {}; o = o.a } return JSON.stringify(top).length",
    check: ends("stack", "memory", "crashed")
  },
  { name: "deep JSON.parse", program: 'return JSON.parse("[".repeat(200000)).length', check: ends("stack", "error") },
  {
    name: "memory bomb",
    program: "const a = []; while (true) a.push(new Array(100000).fill(1))",
    check: ends("memory", "timeout")
  },
  { name: "string bomb", program: 'let s = "x"; while (true) s += s', check: ends("memory", "error") },
  { name: "huge repeat", program: 'return "x".repeat(2 ** 30).length', check: ends("memory", "error") },
  { name: "huge ArrayBuffer", program: "return new ArrayBuffer(2 ** 31).byteLength", check: ends("memory", "error") },
  { name: "output bomb", program: 'while (true) console.log("x".repeat(1000))', check: ends("output") },
  { name: "returning too much", program: 'return "y".repeat(200000)', check: ends("output") },
  { name: "a promise nothing settles", program: "await new Promise(() => {})", check: ends("stalled") },
  {
    name: "a thrown Proxy",
    program: "throw new Proxy({}, { get() { while (true) {} } })",
    check: ends("timeout", "error")
  },
  {
    name: "100,000 nested calls",
    program:
      'let refused = 0; for (let i = 0; i < 100000; i++) { try { await tools.read({ filePath: "a.txt" }) } catch (e) { refused += 1 } } return refused',
    options: { ...BASE, limits: { ...BASE.limits, wallMs: 20_000 } },
    check: (r) => {
      // Only 50 ran; the rest were refused in the interpreter. On a slow machine the wall time may end it first.
      expect((r.metadata.calls as ReadonlyArray<unknown>).length).toBe(50)
      if (r.status === "ok") {
        expect(first(r)).toBe("99950")
        expect(r.metadata.refusedOverLimit).toBe(99950)
      } else expect(r.metadata.end).toBe("timeout")
    }
  },
  // Around the rules
  {
    name: "a program calling the program tool",
    program:
      'try { await tools.call("code", { program: "return 1" }) } catch (e) { return e.status + " " + typeof tools.code }',
    check: returns("denied undefined")
  },
  {
    name: "a denied file (deny rule)",
    program: 'try { await tools.read({ filePath: ".env" }) } catch (e) { return e.status }',
    check: (r) => {
      returns("denied")(r)
      expect(r.modelOutput).not.toContain("hunter2")
    }
  },
  {
    name: "a denied file through bash is the shell's rule, still asked",
    program:
      'try { await tools.bash({ command: "cat .env", description: "x" }); return "ran" } catch (e) { return e.status }',
    check: (r) => {
      returns("denied")(r)
      expect(r.modelOutput).not.toContain("hunter2")
    }
  },
  {
    name: "a deny hook on a nested call",
    program:
      'try { await tools.bash({ command: "touch hooked.txt", description: "x" }) } catch (e) { return e.status }',
    check: (r) => {
      returns("denied")(r)
      expect(exists("hooked.txt")).toBe(false)
    }
  },
  {
    name: "read-only: bash is absent and refused by name",
    profile: "read-only",
    program:
      'let s; try { await tools.call("bash", { command: "touch ro.txt", description: "x" }) } catch (e) { s = e.status } return typeof tools.bash + " " + s',
    check: (r) => {
      returns("undefined denied")(r)
      expect(exists("ro.txt")).toBe(false)
    }
  },
  {
    name: "read-only: search does not find hidden tools",
    profile: "read-only",
    program:
      'return (await tools.search("write file edit bash")).map((t) => t.name).filter((n) => ["write", "edit", "bash", "apply_patch"].includes(n)).length',
    check: returns("0")
  },
  {
    name: "a tool denied by a rule is hidden",
    options: { ...BASE, config: { permissions: { deny: ["Bash"] } } },
    program:
      'let s; try { await tools.call("bash", { command: "touch denied.txt", description: "x" }) } catch (e) { s = e.status } return typeof tools.bash + " " + s + " " + (await tools.search("bash")).filter((t) => t.name === "bash").length',
    check: (r) => {
      returns("undefined denied 0")(r)
      expect(exists("denied.txt")).toBe(false)
    }
  },
  // What leaks in messages
  {
    name: "errors carry no host paths or secrets",
    program:
      'const out = []; try { null.x } catch (e) { out.push(e.stack) } try { await tools.call("nope", {}) } catch (e) { out.push(e.message) } out.push(String(new Error("x").stack)); return out.join("|")',
    check: (r) => {
      expect(r.status).toBe("ok")
      expect(r.modelOutput).not.toContain(REPO)
      expect(r.modelOutput).not.toContain("node_modules")
    }
  },
  {
    name: "a syntax error names no host path",
    program: "this is not a program (",
    check: (r) => {
      threw(/parse/)(r)
      expect(r.modelOutput).not.toContain(REPO)
    }
  }
]

describe("code: the escape corpus", () => {
  it("has at least 40 programs", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40)
  })
  // escape-unprivileged.test.ts runs this file as nobody and says so: the corpus then proves it.
  it.runIf(process.env.FREECODE_ESCAPE_EXPECT_UID !== undefined)("runs as the user it was started as", () => {
    expect(process.getuid?.()).toBe(Number(process.env.FREECODE_ESCAPE_EXPECT_UID))
  })
  for (const c of cases) {
    it.live(
      c.name,
      () =>
        Effect.gen(function* () {
          const ctx = yield* codeSystem(root, c.options ?? BASE)
          const r = yield* runCode(ctx, c.program, c.profile)
          c.check(r)
          expect(r.modelOutput).not.toContain(SECRET)
          // The host is alive and the next program runs.
          const after = yield* runCode(ctx, "return 6 * 7")
          expect(first(after)).toBe("42")
        }),
      30_000
    )
  }
})
