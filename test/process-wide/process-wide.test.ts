/**
 * src/process-wide: each entry made once per process, on first use; a second declaration of a
 * name shares the first's value; a reset makes every entry again on its next use. And the
 * process's entries are the documented ones, each declared by the module that uses it.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import "../../src/edit/file-lock.ts"
import "../../src/edit/write-native.ts"
import "../../src/fs/bind-mounts.ts"
import "../../src/jobs/jobs.ts"
import "../../src/read-state/read-state.ts"
import "../../src/sandbox/availability.ts"
import "../../src/sandbox/existing-places.ts"
import "../../src/sandbox/placeholders.ts"
import "../../src/sandbox/secret-files.ts"
import { processWide, processWideNames, resetProcessWide } from "../../src/process-wide/process-wide.ts"

describe("process-wide state", () => {
  it("is made once, shared by a second declaration, and made again after a reset", () => {
    let made = 0
    const first = processWide("test counter", () => ({ n: ++made }))
    expect(made).toBe(0)
    const value = first.get()
    expect(first.get()).toBe(value)
    expect(processWide("test counter", () => ({ n: -1 })).get()).toBe(value)
    expect(made).toBe(1)
    resetProcessWide()
    const again = first.get()
    expect(again).not.toBe(value)
    expect(again.n).toBe(2)
  })

  it("holds exactly the documented entries", () => {
    expect(
      processWideNames()
        .filter((n) => !n.startsWith("test "))
        .sort()
    ).toEqual([
      "bind-mount table",
      "live job hosts",
      "lock folder",
      "missing places",
      "path locks",
      "recovered staging folders",
      "sandbox probes",
      "secret twins",
      "secret-file listings",
      "this process"
    ])
  })

  it("is the only module-level state in src/ and layers/: what else a module keeps at its top is a memo of a pure answer", () => {
    // Each of these is the same whatever the system or test: a module loaded on first use, or
    // what a pure function made of a constant key. Anything else a module kept would be state
    // two systems or two tests share without resetProcessWide reaching it.
    const memos = new Set([
      "src/code/worker-source.ts: let current", // source text of the code worker, run in its own thread
      "src/config/load.ts: const decoders", // a section's compiled decoder, keyed by the section
      "src/mcp/validate.ts: let draft07", // the JSON Schema validators, made on first use
      "src/mcp/validate.ts: let draft2020",
      "src/permission/shell/parser.ts: let parser", // the bash grammar, loaded on first use
      "src/surface/tokens.ts: let encoder", // the tokenizer, loaded on first use
      "src/tools/search/file-types.ts: const compiled", // a file type's compiled matcher
      "src/tools/webfetch.ts: const askedFor", // keyed by a call's own context: gone with the call
      "src/web/address.ts: let v4", // the SSRF guard's address ranges, built on the first check
      "src/web/address.ts: let v6",
      "src/web/network.ts: let undici" // the HTTP client, loaded on first use
    ])
    const REPO = NodePath.resolve(import.meta.dirname, "../..")
    const kept: Array<string> = []
    const files = ["src", "layers"].flatMap((top) =>
      NodeFs.readdirSync(NodePath.join(REPO, top), { recursive: true, encoding: "utf8" }).map((f) => `${top}/${f}`)
    )
    expect(files).toContain("layers/live.ts")
    for (const file of files) {
      if (!file.endsWith(".ts")) continue
      const text = NodeFs.readFileSync(NodePath.join(REPO, file), "utf8")
      for (const m of text.matchAll(
        /^(?:export )?(?:(let|var) (\w+)|const (\w+)(?:: [^=]+)? = new (?:Map|Set|WeakMap|WeakSet)(?:<.*>)?\(\))/gm
      )) {
        kept.push(`${file}: ${m[1] === undefined ? `const ${m[3]}` : `let ${m[2]}`}`)
      }
    }
    expect(kept.filter((k) => !memos.has(k.replace(": var ", ": let ")))).toEqual([])
  })
})
