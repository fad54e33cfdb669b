/**
 * The rules without a sandbox, attacked by someone who read docs/permissions.md: each promise
 * ("read-only only when every operand is shown to be", "a prefix rule allows a program, not what
 * it launches", "deny rules refuse what they cannot check") and the ways around it found this
 * round — a link or a hard link in the project, a glob that matches one, diff given a folder,
 * walks that follow links, sqlite3's dot-commands by prefix, gdb's one-dash options, git clone -c,
 * shells and runners the lists did not know, python -i, fc. Each class is first shown live with
 * real bash (it prints the secret or the outside file, or runs its `touch`), then decided.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { findProgram } from "../../src/sandbox/availability.ts"
import { bashDecisions } from "./bash-decisions.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-docs-attacker-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

/** The live runs start bash and git many times: on a busy machine they take minutes, not seconds. */
const LIVE_TIMEOUT = 600_000

const SECRET = "TOKEN=s3cret-dotenv"
const NESTED = "TOKEN=s3cret-nested"
const OUTSIDE = "OUTSIDE-the-project"

/** Outside every project: a file and a folder the links below lead to. */
const away = NodePath.join(base, "away")
NodeFs.mkdirSync(NodePath.join(away, "dir"), { recursive: true })
NodeFs.writeFileSync(NodePath.join(away, "file.txt"), `${OUTSIDE}\n`)
NodeFs.writeFileSync(NodePath.join(away, "dir", "notes"), `${OUTSIDE}\n`)

/** A project with secrets, and links in it that a cloned repository (or an earlier sandboxed command) can hold. */
const makeProject = (dir: string) => {
  const write = (rel: string, text: string) => {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(dir, rel)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, rel), text)
  }
  write("input.txt", "hello\n")
  write("notes", "plain\n")
  write(".env", `${SECRET}\n`)
  write("cfg/.env", `${NESTED}\n`)
  write("lib/a.ts", "export const a = 1\n")
  write("lib/b.ts", "export const b = 2\n")
  NodeFs.mkdirSync(NodePath.join(dir, "empty"))
  NodeFs.linkSync(NodePath.join(dir, ".env"), NodePath.join(dir, "notes.txt"))
  NodeFs.symlinkSync(".env", NodePath.join(dir, "envlink"))
  NodeFs.symlinkSync(NodePath.join(away, "file.txt"), NodePath.join(dir, "readme.txt"))
  NodeFs.symlinkSync(NodePath.join(away, "dir"), NodePath.join(dir, "docs"))
  write("src/a.ts", "export const a = 1\n")
  NodeFs.symlinkSync(NodePath.join(away, "file.txt"), NodePath.join(dir, "src", "z.ts"))
  execFileSync("git", ["init", "-q"], { cwd: dir })
}
const root = NodePath.join(base, "project")
makeProject(root)

const { wrong } = bashDecisions(root, "docs-attacker")

/** Runs `command` with bash in a fresh copy of the project. */
const runLive = (command: string, prepare?: (dir: string) => void) => {
  const dir = NodeFs.mkdtempSync(NodePath.join(base, "live-"))
  makeProject(dir)
  prepare?.(dir)
  const r = spawnSync("/bin/bash", ["-c", command], { cwd: dir, encoding: "utf8", timeout: 120_000 })
  return { output: `${r.stdout}${r.stderr}`, dir }
}

// 1. The read-only list, no rule at all: each printed a secret or a file outside, allowed.
const LEAKS: ReadonlyArray<readonly [string, string]> = [
  ["cat notes.txt", SECRET], // a hard link to .env
  ["cat envlink", SECRET], // a link to .env under another name
  ["cat readme.txt", OUTSIDE], // a link to a file outside
  ["cat docs/notes", OUTSIDE], // a folder link out
  ["head -n 5 docs/notes", OUTSIDE],
  ["cat src/*.ts", OUTSIDE], // a glob whose match is a link out
  ["grep -h . src/*.ts", OUTSIDE],
  ["wc -c < readme.txt && cat < envlink", SECRET], // a redirection's source
  ["diff -N . empty", SECRET], // a folder operand: every file in it, whole
  ["diff . cfg", NESTED], // two folders: each namesake's content
  ["diff notes docs", OUTSIDE], // a folder operand: the namesake of notes in it
  ["find -L . -name notes", "docs/notes"], // a walk that follows a link out
  ["ls -L docs", "notes"],
  ["du -aL docs", "docs/notes"]
]
/** The same programs on plain files still run without asking. */
const PLAIN = [
  "cat input.txt",
  "cat lib/*.ts",
  "grep -c export lib/*.ts",
  "diff lib/a.ts lib/b.ts",
  "diff -u input.txt lib/a.ts",
  "find . -name '*.ts'",
  "ls -la lib",
  "du -sh lib",
  "cat < input.txt"
]

describe("the read-only list judges a path as it really is", () => {
  it(
    "each attack is live with real bash: it prints the secret or the outside file",
    () => {
      const dead = LEAKS.filter(([command, shows]) => !runLive(command).output.includes(shows))
      expect(dead).toEqual([])
    },
    LIVE_TIMEOUT
  )

  it.live("each asks, with no rule and in default mode", () =>
    Effect.map(
      wrong(
        {},
        "ask",
        LEAKS.map(([c]) => c)
      ),
      (w) => expect(w).toEqual([])
    )
  )

  it.live("the same programs on plain files run without asking", () =>
    Effect.map(wrong({}, "allow", PLAIN), (w) => expect(w).toEqual([]))
  )
})

// 2. Prefix rules: the program is allowed, not what these options make it run or write.
const gdb = findProgram("gdb") !== undefined
const sqlite = findProgram("sqlite3") !== undefined
const RULES: FreecodeConfigData = {
  permissions: {
    allow: ["sqlite3", "gdb", "git", "make", "vim", "emacs", "npm", "man", "tar", "ed", "uv", "ssh"].map(
      (p) => `Bash(${p}:*)`
    )
  }
}
const LAUNCHES = [
  "sqlite3 db '.sh touch out'",
  "sqlite3 db '.she touch out'",
  "sqlite3 db '.sys touch out'",
  "sqlite3 db '.tab' '.sh touch out'",
  "sqlite3 -A db",
  "gdb -batch -eval-command='!touch out'",
  "gdb -batch --ex='!touch out'",
  "gdb -batch -eval='!touch out'",
  "git clone -c core.hooksPath=h src dst",
  "git clone --config=core.hooksPath=h src dst",
  "git config core.fsmonitor 'touch out'",
  "git config alias.x '!touch out'",
  "git config -e",
  "git diff-tree -p --ext-diff HEAD",
  "git stash show -p --textconv",
  "git grep --textconv TOKEN",
  "git whatchanged --output=../x",
  "git apply --unsafe-paths p.patch",
  "git send-email --sendmail-cmd='touch out' a.patch",
  "make -f /dev/stdin",
  "make --file=/dev/fd/0",
  "make -f/proc/self/fd/0",
  "vim -es -s /dev/stdin",
  "emacs -batch -eval '(shell-command \"touch out\")'",
  "emacs --batch -l x.el",
  "npm test -C ../x",
  "npm install --git=./x",
  "npm test --shell=./x",
  "man -C evil.conf ls",
  "tar -xPf a.tar",
  "tar -x --absolute-names -f a.tar",
  "ed input.txt"
]
const LAUNCHES_LIVE: ReadonlyArray<readonly [string, boolean]> = [
  ["sqlite3 :memory: '.sh touch out'", sqlite],
  [
    'git init -q src && git -C src -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && mkdir h && printf \'#!/bin/sh\\ntouch "$PWD/../out"\\n\' > h/post-checkout && chmod +x h/post-checkout && git clone -q -c core.hooksPath="$PWD/h" src dst',
    true
  ],
  ["gdb -batch -eval-command='!touch out'", gdb],
  ["make -f /dev/stdin made <<< $'made:\\n\\ttouch out'", true],
  ["echo '!touch out' | ed -s /dev/null", findProgram("ed") !== undefined]
]
const RULES_PLAIN = [
  "sqlite3 db '.tables'",
  "sqlite3 db '.h on' 'select 1'",
  "sqlite3 db 'select 1'",
  "git clone src dst",
  "git config --get user.name",
  "git config user.name",
  "git diff-tree -p HEAD",
  "git apply p.patch",
  "make test",
  "vim file",
  "npm test",
  "tar -xf a.tar",
  "uv run pytest",
  "ssh host ls"
]

describe("a prefix rule allows a program, not what these options launch or write", () => {
  it(
    "each launch is live with real bash",
    () => {
      const dead = LAUNCHES_LIVE.filter(([, present]) => present).filter(([command]) => {
        const { dir } = runLive(command)
        return !NodeFs.existsSync(NodePath.join(dir, "out"))
      })
      expect(dead).toEqual([])
    },
    LIVE_TIMEOUT
  )

  it.live("each asks under a rule naming the program", () =>
    Effect.map(wrong(RULES, "ask", LAUNCHES), (w) => expect(w).toEqual([]))
  )

  it.live("the program's plain use is still allowed by its rule", () =>
    Effect.map(wrong(RULES, "allow", RULES_PLAIN), (w) => expect(w).toEqual([]))
  )
})

// 3. Deny rules: code carried on the line through programs the lists did not know.
const DENY: FreecodeConfigData = {
  permissions: { deny: ["Bash(rm:*)", "Bash(curl:*)"], defaultMode: "bypassPermissions" }
}
const CARRIERS = [
  "tcsh -c 'rm x'",
  "csh -c 'rm x'",
  "yash -c 'rm x'",
  "pwsh -Command 'rm x'",
  "python3 -i /dev/null <<< 'import os; os.system(\"rm x\")'",
  "python3 -i input.txt",
  "history -s 'rm x'; fc -s",
  "fc -e - rm",
  "dc -e '!rm x'",
  "ed input.txt <<< '!rm x'",
  "at now <<< 'rm x'",
  "crontab - <<< '* * * * * rm x'",
  "emacs -batch -eval '(shell-command \"rm x\")'",
  "vim -es -s /dev/stdin <<< ':!rm x'",
  "make -f /dev/stdin <<< $'x:\\n\\trm y'",
  "gdb -batch -eval-command='!rm x'",
  "sqlite3 :memory: '.sh rm x'",
  "uv run rm x",
  "poetry run rm x",
  "npm exec -- rm x",
  "npx rm x",
  "pnpm exec rm x",
  "bundle exec rm x",
  "nix-shell --run 'rm x'",
  "direnv exec . rm x",
  "ssh localhost rm x",
  "ssh localhost 'rm x'",
  "rlwrap rm x",
  "tmux new-session -d 'rm x'",
  "screen -dm rm x",
  "entr rm x < input.txt",
  "uvx curl x",
  "psql -c '\\! rm x'",
  "psql db <<< '\\! rm x'",
  "psql -c \"copy t to program 'rm x'\"",
  "mysql -e 'system rm x'",
  "socat - EXEC:'rm x'",
  "ncat --sh-exec 'rm x' host 1"
]
const CARRIERS_LIVE: ReadonlyArray<readonly [string, boolean]> = [
  ['python3 -i /dev/null <<< \'open("out", "w")\'', findProgram("python3") !== undefined],
  ["history -s 'touch out'; fc -s", true],
  ["sqlite3 :memory: '.sh touch out'", sqlite],
  ["echo '!touch out' | ed -s /dev/null", findProgram("ed") !== undefined],
  ["make -f /dev/stdin made <<< $'made:\\n\\ttouch out'", true]
]
const STILL_PLAIN = [
  "psql -c 'select 1'",
  "socat - TCP:host:80",
  "nc host 80",
  "uv run pytest",
  "npm exec -- tsc",
  "ssh host ls",
  "fc -l",
  "crontab -l",
  "python3 x.py",
  "ls"
]

describe("deny rules refuse code carried on the line", () => {
  it(
    "each carrier is live with real bash",
    () => {
      const dead = CARRIERS_LIVE.filter(([, present]) => present).filter(([command]) => {
        const { dir } = runLive(command)
        return !NodeFs.existsSync(NodePath.join(dir, "out"))
      })
      expect(dead).toEqual([])
    },
    LIVE_TIMEOUT
  )

  it.live("under Bash(rm:*) and Bash(curl:*), in bypassPermissions mode, each is refused", () =>
    Effect.map(wrong(DENY, "deny", CARRIERS), (w) => expect(w).toEqual([]))
  )

  it.live("commands that carry nothing denied still run", () =>
    Effect.map(wrong(DENY, "allow", STILL_PLAIN), (w) => expect(w).toEqual([]))
  )
})
