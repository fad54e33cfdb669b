/** The terminal Prompter in a real process (test/fixtures/prompter.ts), driven key by key. */
import { spawn } from "node:child_process"
import * as NodePath from "node:path"
import { Effect } from "effect"

/** A key, or a key that moves to the next prompt and the text that prompt shows when it is drawn. */
export type Step = string | { readonly key: string; readonly until: string }

export const DOWN = "\x1b[B"
export const ENTER = "\r"
export const SPACE = " "

/**
 * Runs the fixture on `input` (questions, or `{form}` for an upstream server's question) and
 * types `keys` once `first` is on the screen; the outcome it printed.
 */
export const driveTerminal = <A>(input: unknown, first: string, keys: ReadonlyArray<Step>) =>
  Effect.promise(
    () =>
      new Promise<A>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [NodePath.resolve(import.meta.dirname, "../fixtures/prompter.ts"), JSON.stringify(input)],
          { stdio: ["pipe", "pipe", "pipe"] }
        )
        let stderr = ""
        // Paced by the prompt itself, as a person types after seeing the screen: the first key
        // once the first prompt is drawn, each next key once the prompt has answered the last
        // (its redraw or echo), and after a key that moves on, once the next prompt is drawn (a
        // key before a prompt is drawn would be lost).
        let awaiting: string | undefined = first
        let seen = ""
        let i = 0
        const next = () => {
          const step = keys[i++]
          if (step === undefined) return
          awaiting = typeof step === "string" ? "" : step.until
          seen = ""
          child.stdin.write(typeof step === "string" ? step : step.key)
        }
        child.stdout.on("data", (b: Buffer) => {
          if (awaiting === undefined) return
          seen += b.toString()
          if (!seen.includes(awaiting)) return
          awaiting = undefined
          // After the chunk that answered the key is handled, not in the middle of its redraw.
          setImmediate(next)
        })
        child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
        child.on("error", reject)
        child.on("close", () => {
          try {
            resolve(JSON.parse(stderr.trim().split("\n").at(-1)!) as A)
          } catch {
            reject(new Error(`no outcome; stderr: ${stderr}`))
          }
        })
      })
  )
