/** Running tool calls in real child processes (test/fixtures/edits/tool-child.ts), for the cross-process tests. */
import { type ChildProcess, spawn } from "node:child_process"
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const CHILD = fileURLToPath(new URL("../fixtures/edits/tool-child.ts", import.meta.url))

export interface ChildResult {
  readonly ok: number
  readonly failed: number
  readonly messages: ReadonlyArray<string>
}

export const startChild = (
  input: unknown
): { child: ChildProcess; ready: Promise<void>; result: Promise<ChildResult | undefined> } => {
  // Through a file: a call's arguments can be larger than a command line may be.
  const file = NodePath.join(NFS.mkdtempSync(NodePath.join(OS.tmpdir(), "freecode-child-")), "input.json")
  NFS.writeFileSync(file, JSON.stringify(input))
  const child = spawn(process.execPath, [CHILD, file], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  let onReady = () => {}
  const ready = new Promise<void>((r) => {
    onReady = r
  })
  child.stdout!.on("data", (d) => {
    out += String(d)
    if (out.startsWith("ready\n")) onReady()
  })
  child.stderr!.on("data", (d) => {
    err += String(d)
  })
  const result = new Promise<ChildResult | undefined>((resolve, reject) => {
    child.on("exit", (code, signal) => {
      NFS.rmSync(NodePath.dirname(file), { recursive: true, force: true })
      if (signal !== null) resolve(undefined)
      else if (code !== 0) reject(new Error(`child exited with ${code}: ${err.slice(-2000)}`))
      else resolve(JSON.parse(out.trim().split("\n").at(-1)!) as ChildResult)
    })
  })
  return { child, ready, result }
}

/** Resolves once `check` holds (polled every few ms), or false after `ms`. */
export const waitFor = (check: () => boolean, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const until = Date.now() + ms
    const timer = setInterval(() => {
      let ok = false
      try {
        ok = check()
      } catch {
        ok = false
      }
      if (ok || Date.now() > until) {
        clearInterval(timer)
        resolve(ok)
      }
    }, 1)
  })
