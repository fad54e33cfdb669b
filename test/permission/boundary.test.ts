/**
 * The boundary's pieces outside the sandbox itself: credential files ask wherever they are, an
 * approval over MCP goes to the person through the Prompter (or names the rule to add), and a
 * root taken from the current folder is never the whole machine or the home folder.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ApprovalQuestion } from "../../src/permission/approval.ts"
import { approvalFromPrompter } from "../../src/permission/approval-prompter.ts"
import { isSensitive } from "../../src/permission/containment.ts"
import type { PromptOutcome, Question } from "../../src/prompt/prompter.ts"
import { HOME_CREDENTIALS, isCredentialPath } from "../../src/sandbox/credentials.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")

describe("credential files", () => {
  const home = NodeOs.homedir()
  it("every listed credential path, and anything inside a listed folder, is sensitive", () => {
    for (const p of HOME_CREDENTIALS) {
      expect(isSensitive(NodePath.join(home, p)), p).toBe(true)
      expect(isCredentialPath(NodePath.join(home, p, "inside"), home), p).toBe(true)
    }
    expect(isSensitive(NodePath.join(home, ".ssh", "config"))).toBe(true)
    expect(isSensitive(NodePath.join(home, ".aws", "credentials"))).toBe(true)
  })
  it("ordinary files below the home folder are not", () => {
    expect(isSensitive(NodePath.join(home, "project", "src", "a.ts"))).toBe(false)
    expect(isSensitive(NodePath.join(home, ".sshd_notes"))).toBe(false)
    expect(isSensitive(NodePath.join(home, ".config", "gh", "other.yml"))).toBe(false)
    expect(isCredentialPath("/elsewhere/.ssh/id_rsa", home)).toBe(false)
  })
})

describe("approval through a Prompter (MCP elicitation)", () => {
  const question: ApprovalQuestion = {
    sessionId: "s",
    callId: "c",
    tool: "bash",
    args: { command: "curl https://example.com" },
    reason: "Running it needs approval.",
    always: "Bash(curl https://example.com)"
  }
  const answering = (outcome: PromptOutcome, seen: Array<ReadonlyArray<Question>> = []) =>
    approvalFromPrompter({
      ask: (qs) =>
        Effect.sync(() => {
          seen.push(qs)
          return outcome
        })
    })

  it.effect("the person's pick is the answer; the question shows the call and the reason", () =>
    Effect.gen(function* () {
      const seen: Array<ReadonlyArray<Question>> = []
      const once = yield* answering(
        { _tag: "Answered", answers: [{ question: "", selected: ["Yes, this once"] }] },
        seen
      ).ask(question)
      expect(once).toEqual({ answer: "once" })
      expect(seen[0]?.[0]?.question).toContain("curl https://example.com")
      expect(seen[0]?.[0]?.question).toContain("needs approval")
      const always = yield* answering({
        _tag: "Answered",
        answers: [{ question: "", selected: ["Yes, and don't ask again this session"] }]
      }).ask(question)
      expect(always).toEqual({ answer: "always" })
      const no = yield* answering({
        _tag: "Answered",
        answers: [{ question: "", selected: ["No"], custom: "use the cached copy" }]
      }).ask(question)
      expect(no).toEqual({ answer: "deny", message: "use the cached copy" })
    })
  )

  it.effect("nobody to ask: refused, naming the rule that would allow it", () =>
    Effect.gen(function* () {
      const a = yield* answering({ _tag: "Unavailable", reason: "the MCP client does not support elicitation" }).ask(
        question
      )
      expect(a.answer).toBe("deny")
      expect(a.answer === "deny" && a.unattended).toBe(true)
      expect(a.answer === "deny" ? a.message : "").toContain('"Bash(curl https://example.com)" to permissions.allow')
    })
  )
})

describe("a root taken from the current folder", () => {
  const cli = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [MAIN, ...args], {
      cwd,
      encoding: "utf8",
      env: { ...process.env, ...env },
      timeout: 60_000
    })

  it("is refused when it is / or the home folder, and accepted with an explicit --root", () => {
    const home = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-home-")))
    const slash = cli("/", ["tools"])
    expect(slash.status).toBe(2)
    expect(slash.stderr).toContain("too broad a project root")
    const inHome = cli(home, ["tools"], { HOME: home })
    expect(inHome.status).toBe(2)
    expect(inHome.stderr).toContain("your home folder")
    const explicit = cli(home, ["tools", "--root", home], { HOME: home })
    expect(explicit.status).toBe(0)
    NodeFs.rmSync(home, { recursive: true, force: true })
  })
})
