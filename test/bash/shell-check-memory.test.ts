import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), "freecode-shell-memory-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const peakMiB = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Peak memory (MiB) of one long-lived `freecode-tools run` that was sent these bash commands
 * (none approved). V8 compiles in the background after the calls returned, so the peak is read
 * from outside while the process waits for more input, once it has stopped rising for 3 s.
 */
const peakOf = async (commands: ReadonlyArray<string>): Promise<number> => {
  const child = spawn(process.execPath, [main, "run", "--root", dir], { stdio: ["pipe", "pipe", "inherit"] })
  try {
    let lines = 0
    const answered = new Promise<void>((resolve) =>
      child.stdout.on("data", (d: Buffer) => {
        lines += d.toString("utf8").split("\n").length - 1
        if (lines >= commands.length) resolve()
      })
    )
    for (const [i, command] of commands.entries())
      child.stdin.write(`${JSON.stringify([{ id: `c${i}`, name: "bash", args: { command } }])}\n`)
    await answered
    let peak = peakMiB(child.pid!)
    for (let still = 0, waited = 0; still < 3_000 && waited < 60_000; waited += 200) {
      await sleep(200)
      const now = peakMiB(child.pid!)
      still = now > peak + 1 ? 0 : still + 200
      peak = Math.max(peak, now)
    }
    return peak
  } finally {
    child.kill("SIGKILL")
  }
}

describe.runIf(process.platform === "linux")("the memory a shell check costs", () => {
  it("commands that run text (trap, eval) are analysed and refused without the process growing by hundreds of MB", async () => {
    const quiet = await peakOf(["echo hi"])
    // Enough parsing that V8 finds the grammar's lexer hot; it used to recompile it in ~700 MB.
    const textual = [
      "trap 'echo hi' EXIT; echo x",
      'eval "echo hi" FOO',
      "trap 'rm -f /tmp/x; echo done' INT TERM EXIT",
      'eval "$(printf %s \\"ls -la\\")"; trap - EXIT'
    ]
    const checked = await peakOf([...textual, ...textual, ...textual])
    // Measured: ~150 MiB for both with the fix; ~650 MiB for the second without it.
    expect(checked - quiet).toBeLessThan(150)
  }, 240_000)
})
