/**
 * McpClients against servers of both eras, started by the test: the same server
 * (test/fixtures/mcp/eras-server.ts) served by SDK 2.x (2026-07-28 beside 2025-11-25, or 2026
 * only) and by SDK 1.32 (2025-11-25), over stdio and streamable HTTP. Each is reached in the era
 * it speaks; list changes come through `subscriptions/listen` from a 2026 server; a tool list's
 * cache hint is honoured across a restart and when it runs out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClients, type McpServerStatus } from "../../src/mcp/clients.ts"
import type { McpServerConfig } from "../../src/mcp/config.ts"
import { callTool, erasStdio, startErasHttp, statusOf, toolIds, until } from "./eras-helpers.ts"
import { systemWithMcp } from "./helpers.ts"

describe("McpClients and the two eras", () => {
  it.live(
    "2.x and 1.32 servers over stdio and HTTP: each in its era, tools listed and called, list changes heard",
    () =>
      Effect.gen(function* () {
        const modernHttp = yield* startErasHttp(["--sdk", "2"])
        const modernOnlyHttp = yield* startErasHttp(["--sdk", "2", "--modern-only"])
        const legacyHttp = yield* startErasHttp(["--sdk", "1"])
        const servers: Record<string, McpServerConfig> = {
          m_stdio: erasStdio(["--sdk", "2"]),
          m_only: erasStdio(["--sdk", "2", "--modern-only"]),
          l_stdio: erasStdio(["--sdk", "1"]),
          pinned: erasStdio(["--sdk", "2"], { protocol: "2025-11-25" }),
          l_exits: erasStdio(["--sdk", "1", "--exit-before-initialize"]),
          m_http: { url: modernHttp.url },
          m_only_http: { url: modernOnlyHttp.url },
          l_http: { url: legacyHttp.url }
        }
        yield* Effect.gen(function* () {
          yield* (yield* McpClients).ready
          const all = yield* (yield* McpClients).status
          const byName = Object.fromEntries(all.map((s) => [s.name, s])) as Record<string, McpServerStatus>
          expect(
            Object.fromEntries(all.map((s) => [s.name, [s.state, s.protocol, s.listening]])),
            JSON.stringify(all.map((s) => [s.name, s.error]))
          ).toEqual({
            m_stdio: ["connected", "2026-07-28", true],
            m_only: ["connected", "2026-07-28", true],
            l_stdio: ["connected", "2025-11-25", false],
            pinned: ["connected", "2025-11-25", false],
            l_exits: ["connected", "2025-11-25", false],
            m_http: ["connected", "2026-07-28", true],
            m_only_http: ["connected", "2026-07-28", true],
            l_http: ["connected", "2025-11-25", false]
          })
          expect(byName.m_stdio?.tools).toContain("mcp__m_stdio__echo")
          for (const name of Object.keys(servers)) {
            const echoed = yield* callTool(`mcp__${name}__echo`, { text: name })
            expect([echoed.status, echoed.modelOutput]).toEqual(["ok", `echo: ${name}`])
          }
          // The server that exits on the probe was started again and greeted the 2025 way.
          expect(byName.l_exits?.stderr).toContain("exiting on server/discover before initialize")

          // A new tool: heard through subscriptions/listen (2026) and list_changed (2025).
          for (const name of ["m_stdio", "m_http", "l_stdio"]) {
            const before = (yield* statusOf(name)).lists
            expect((yield* callTool(`mcp__${name}__add_tool`, {})).modelOutput).toBe("added")
            yield* until(`${name}'s late tool`, toolIds, (ids) => ids.includes(`mcp__${name}__late`))
            expect((yield* statusOf(name)).lists).toBeGreaterThan(before)
            expect((yield* callTool(`mcp__${name}__late`, {})).modelOutput).toBe("late tool works")
          }
        }).pipe(Effect.provide(systemWithMcp({ servers })))
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a list's cache hint: taken again without asking after a restart while fresh; read again when it runs out and nothing would say it changed",
    () =>
      Effect.gen(function* () {
        yield* (yield* McpClients).ready
        const fresh = yield* statusOf("cached")
        expect([fresh.state, fresh.protocol, fresh.lists]).toEqual(["connected", "2026-07-28", 1])
        const crashed = yield* callTool("mcp__cached__crash", {})
        expect(crashed.status).toBe("error")
        const back = yield* until("the restart", statusOf("cached"), (s) => s.state === "connected" && s.restarts === 1)
        // The restarted server's list was not asked for: its hint (a minute) still held.
        expect(back.lists).toBe(1)
        expect(back.tools).toContain("mcp__cached__echo")
        expect((yield* callTool("mcp__cached__echo", { text: "again" })).modelOutput).toBe("echo: again")

        // A server that will not tell of changes: its list is read again when its hint runs out.
        const silent = yield* statusOf("silent")
        expect(silent.listening).toBe(false)
        const reread = yield* until("the hint to run out", statusOf("silent"), (s) => s.lists >= 3)
        expect(reread.state).toBe("connected")
      }).pipe(
        Effect.provide(
          systemWithMcp({
            servers: {
              cached: erasStdio(["--sdk", "2", "--tools-ttl", "60000"]),
              silent: erasStdio(["--sdk", "2", "--tools-ttl", "1000", "--no-list-changed"])
            },
            restart: { initialDelay: "100 millis" }
          })
        )
      ),
    120_000
  )
})
