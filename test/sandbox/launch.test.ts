/**
 * The sandbox's descriptors handed to spawn (launch.ts): bubblewrap gets its system-call filter on
 * fd 3 and writes its info to fd 4 with no `/bin/sh` run to open them (the launch's line is
 * bubblewrap's own), for a foreground call and a background job alike; `wrap`'s single command
 * line (the shell) still does the same.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { asCommandLine, openDescriptors } from "../../src/sandbox/launch.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { JobTool } from "../../src/tools/job.ts"
import { bubblewrap, runnable } from "./inside.ts"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = (prefix: string) => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix)))
  made.push(dir)
  return dir
}

const openFds = () => NodeFs.readdirSync("/proc/self/fd").length

describe("descriptors for spawn", () => {
  it("a shell line opens files whose names are shell text literally, on the numbers asked", () => {
    const dir = tempDir("freecode-launch-")
    const input = NodePath.join(dir, 'in "$(touch pwned)"; x')
    const output = NodePath.join(dir, "out `touch pwned2`")
    NodeFs.writeFileSync(input, "from fd 3\n")
    const line = asCommandLine({
      line: ["/bin/sh", "-c", "cat <&3; echo written >&4"],
      descriptors: [
        { fd: 3, path: input, mode: "read" },
        { fd: 4, path: output, mode: "write" }
      ]
    })
    const r = spawnSync(line[0], line.slice(1), { cwd: dir, encoding: "utf8" })
    expect(r.stdout).toBe("from fd 3\n")
    expect(NodeFs.readFileSync(output, "utf8")).toBe("written\n")
    expect(NodeFs.readdirSync(dir).sort()).toEqual([NodePath.basename(input), NodePath.basename(output)].sort())
  })

  it("a file that cannot be opened fails before anything starts, and leaves no descriptor open", () => {
    const dir = tempDir("freecode-launch-")
    const before = openFds()
    expect(() =>
      openDescriptors([
        { fd: 3, path: "/etc/hostname", mode: "read" },
        { fd: 4, path: NodePath.join(dir, "missing", "info"), mode: "write" }
      ])
    ).toThrow(/ENOENT/)
    expect(openFds()).toBe(before)
    const fds = openDescriptors([{ fd: 4, path: NodePath.join(dir, "info"), mode: "write" }])
    // fd 3 left unset: bubblewrap without a filter (another architecture) still gets its info on 4.
    expect(fds.extra).toEqual(["ignore", expect.any(Number)])
    fds.close()
    expect(openFds()).toBe(before)
  })
})

/** This process's children now: their pid and program name (comm). */
const children = (): Array<{ readonly pid: number; readonly comm: string }> =>
  NodeFs.readdirSync("/proc").flatMap((name) => {
    if (!/^\d+$/.test(name)) return []
    try {
      const stat = NodeFs.readFileSync(`/proc/${name}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[1]) !== process.pid) return []
      return [{ pid: Number(name), comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) }]
    } catch {
      return []
    }
  })

describe.skipIf(!runnable)("bubblewrap started with its descriptors handed over", () => {
  const root = tempDir("freecode-launch-root-")
  const system = testToolSystem({ root, tools: [BashTool, JobTool] }).pipe(
    Layer.provide(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), { root }))
  )
  const call = (name: string, args: Record<string, unknown>, id: string) =>
    Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" }))
  const filtered = "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"

  it.live("a foreground call and a background job run under the filter read from the descriptor spawn was handed", () =>
    Effect.gen(function* () {
      const fg = yield* call("bash", { command: filtered }, "b1")
      expect(fg.status, fg.modelOutput).toBe("ok")
      // 2: a filter is loaded (fd 3 was read); NoNewPrivs 1 (bubblewrap sets it with one).
      expect(fg.modelOutput).toMatch(bubblewrap?.seccomp === true ? /Seccomp:\s+2/ : /Seccomp:\s+0/)
      expect(fg.modelOutput).toMatch(/NoNewPrivs:\s+1/)

      const tag = `${process.pid}${Date.now()}`.slice(-8)
      const bg = yield* call("bash", { command: `${filtered}; exec sleep 6${tag}`, run_in_background: true }, "b2")
      expect(bg.status, bg.modelOutput).toBe("ok")
      let seen = bg.modelOutput
      for (let i = 0; i < 50 && !seen.includes("NoNewPrivs"); i++) {
        yield* Effect.sleep("100 millis")
        seen += (yield* call("job", { id: "job-1" }, `j${i}`)).modelOutput
      }
      expect(seen).toMatch(bubblewrap?.seccomp === true ? /Seccomp:\s+2/ : /Seccomp:\s+0/)
      // The job runs in bubblewrap: with fd 3 not handed over it would have refused to start.
      expect(children().map((k) => k.comm)).toContain("bwrap")
      const stopped = yield* call("job", { id: "job-1", stop: true }, "j-stop")
      expect(stopped.status, stopped.modelOutput).toBe("ok")
    }).pipe(Effect.provide(system))
  )

  it.effect("wrap's single command line (a shell opens the descriptors) runs under the filter too", () =>
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const launch = yield* sandbox.launch!(["/bin/sh", "-c", filtered], { sessionId: "s", cwd: root, writable: [] })
      expect(launch.line[0]).toBe(bubblewrap?.bwrap)
      const line = yield* sandbox.wrap(["/bin/sh", "-c", filtered], { sessionId: "s", cwd: root, writable: [] })
      expect(line[0]).toBe("/bin/sh")
      const r = spawnSync(line[0], line.slice(1), { encoding: "utf8", timeout: 30_000 })
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).toMatch(bubblewrap?.seccomp === true ? /Seccomp:\s+2/ : /Seccomp:\s+0/)
      // The shell's arguments: the files in the descriptors' order, then bubblewrap's line.
      expect(line.slice(4, 4 + launch.descriptors.length + 1)).toEqual([
        ...launch.descriptors.map((d) => expect.stringContaining(NodePath.extname(d.path))),
        bubblewrap?.bwrap
      ])
      const info = line[4 + launch.descriptors.findIndex((d) => d.fd === 4)]
      expect(NodeFs.readFileSync(info!, "utf8")).toMatch(/"child-pid"/)
    }).pipe(
      Effect.provide(Layer.fresh(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), { root }))),
      Effect.scoped
    )
  )
})
