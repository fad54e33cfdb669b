// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the cases are bash text, which holds ${…}
/**
 * The rules without a sandbox, attacked by class (read-only list, /dev/tcp, what a prefix rule
 * launches, what a deny rule cannot see, lines bash cannot parse, over-refusals). Every case
 * asserts the exact decision; the classes are first shown live with real bash (the attack
 * writes, runs, prints a secret or connects), and the harmless commands the list allows are run
 * by bash and change nothing.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { bashDecisions } from "./bash-decisions.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-attacks-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

const SECRET = "TOKEN=s3cret-value"

/** A project with input, a secret, a git repository and an archive. */
const makeProject = (dir: string) => {
  const write = (rel: string, text: string) => {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(dir, rel)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, rel), text)
  }
  write("input.txt", "hello /usr world\nb\na\n")
  write("data.json", '{"a":1}\n')
  write("src/a.ts", "export const a = 1\n")
  write(".env", `${SECRET}\n`)
  write(".env.local", `${SECRET}\n`)
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir, stdio: "ignore" })
  git("init", "-q")
  git("add", "input.txt", "src")
  git("commit", "-qm", "one")
  execFileSync("tar", ["-cf", "a.tar", "input.txt"], { cwd: dir })
}
const root = NodePath.join(base, "project")
makeProject(root)

const { ctx, engineWith, wrong } = bashDecisions(root, "attacks")

/** Runs `command` with bash in a fresh copy of the project; returns the output and the files it left. */
const runLive = (command: string) => {
  const dir = NodeFs.mkdtempSync(NodePath.join(base, "live-"))
  makeProject(dir)
  const before = new Set(NodeFs.readdirSync(dir))
  const r = spawnSync("/bin/bash", ["-c", command], { cwd: dir, encoding: "utf8", timeout: 15_000 })
  const created = NodeFs.readdirSync(dir).filter((n) => !before.has(n))
  return { output: `${r.stdout}${r.stderr}`, status: r.status, created, dir }
}

// 1. The read-only list: each of these writes, runs, or reads a secret or a file outside.
const NOT_READ_ONLY = [
  "uniq input.txt out",
  "uniq input.txt .git/config",
  "sed -n -e 'tx e touch out' -e :x input.txt",
  "sed -n 'tx e touch out' input.txt",
  "sed 's/hello/touch out/e' input.txt",
  "sed -n 'w out' input.txt",
  "sed -n 'W out' input.txt",
  "sed 's/a/b/w out' input.txt",
  "sed -i s/a/b/ input.txt",
  "sed --in-place s/a/b/ input.txt",
  "sed -f script.sed input.txt",
  "sed -n '1r .env' input.txt",
  "awk 'BEGIN{ARGV[1]=\".env\";ARGC=2}{print}'",
  "awk '{while ((getline l < \".env\") > 0) print l}' input.txt",
  "awk 'BEGIN{system(\"touch out\")}'",
  "awk '{print > \"out\"}' input.txt",
  "awk '{print | \"sh\"}' input.txt",
  "awk -f prog.awk input.txt",
  "date --file=.env",
  "date -f /etc/passwd",
  "file -f list.txt",
  "jq -L /tmp . data.json",
  "jq --rawfile a .env -n '$a'",
  "jq --slurpfile a /etc/passwd -n '$a'",
  "jq --from-file f.jq data.json",
  "jq -n env",
  "jq -n '$ENV'",
  "jq --arg a b env data.json",
  "jq --arg a b '$ENV' data.json",
  "hexdump -f fmt input.txt",
  "rg -f pats.txt input.txt",
  "rg --pre ./x a",
  "rg TOKEN",
  "grep -f /etc/passwd input.txt",
  "grep -r TOKEN .",
  "grep -R TOKEN .",
  "grep --recursive TOKEN .",
  "grep -rn a src",
  "sort -o out input.txt",
  "sort --compress-program=sh input.txt",
  "sort -T /tmp input.txt",
  "wc --files0-from=list.txt",
  "diff -r src src",
  "tree -o out",
  "tee out",
  "cat .en?",
  "cat .e[n]v.local",
  "cat .{e,}nv",
  "tail .e*",
  "cat *",
  "head id_*",
  "cat src/*",
  "cat x/*.pem",
  "cat src/*.key",
  "cat .env",
  "cat config/.env.production",
  "cat server.key",
  "cat /etc/passwd",
  "find . -exec cat {} \\;",
  "find . -delete",
  "find . -fprint out",
  "find / -name passwd",
  "find . -newer /etc/passwd",
  "git status",
  "git diff",
  "git log -p",
  "git show HEAD",
  "git ls-files",
  "git -c core.pager=x branch",
  "ls --no-such-option",
  "cat -Z input.txt",
  "ls $HOME",
  "cat < .env"
]

/** Each is live: run by bash, it writes a file, runs a command or prints the secret. */
const LIVE_READ_ONLY: ReadonlyArray<readonly [string, "created" | "secret"]> = [
  ["uniq input.txt out", "created"],
  ["sed -n -e 'tx e touch out' -e :x input.txt", "created"],
  ["sed 's/hello/touch out/e' input.txt", "created"],
  ["sed 's/a/b/w out' input.txt", "created"],
  ["awk 'BEGIN{ARGV[1]=\".env\";ARGC=2}{print}'", "secret"],
  ["awk '{while ((getline l < \".env\") > 0) print l}' input.txt", "secret"],
  ["date --file=.env", "secret"],
  ["jq --rawfile a .env -n '$a'", "secret"],
  ["grep -r TOKEN .", "secret"],
  ["cat .en?", "secret"],
  ["cat .e[n]v.local", "secret"],
  ["cat .{e,}nv", "secret"],
  ["tail .e*", "secret"],
  ["sort -o out input.txt", "created"]
]

/** Patterns are not paths; these are read-only and run without asking. */
const READ_ONLY = [
  "sed -n -e '/hello/p' input.txt",
  "sed -n '/usr/p' input.txt",
  "sed -n '/hello/Ip' input.txt",
  "sed -e 's/a/b/g' -e '/x/d' input.txt",
  "awk '/hello/ {print $1}' input.txt",
  "awk -F: '{print $1}' input.txt",
  "grep -n '/usr' input.txt",
  "grep -e /usr input.txt",
  "grep -c a input.txt",
  "grep -in hello input.txt src/a.ts",
  "find . -name '*.ts'",
  "find src -type f -name '/x'",
  "ls src/*.ts",
  "wc -l src/*.ts",
  "cat input.txt",
  "head -n 2 input.txt",
  "head -2 input.txt",
  "tail -n +2 input.txt",
  "jq . data.json",
  "jq -r '.a' data.json",
  "date +%s",
  "date -d 2020-01-01 +%s",
  "file input.txt",
  "cut -d: -f1 input.txt",
  "sort -k2 -t, input.txt",
  "sort --reverse input.txt",
  "uniq -c input.txt",
  "diff input.txt input.txt",
  "git rev-parse HEAD",
  "git branch -a",
  "echo .e*",
  "ls -la src",
  "du -sh src",
  "tr a-z A-Z < input.txt",
  "od -c input.txt",
  "stat -c %s input.txt"
]

// 3. A prefix rule allows a program, not what its options launch or write.
const PREFIX_RULES = [
  "sed:*",
  "tar -tf:*",
  "tar:*",
  "git grep:*",
  "git log:*",
  "sqlite3:*",
  "npm test:*",
  "sort:*",
  "make:*",
  "npx:*",
  "rsync:*",
  "zip:*",
  "vim:*",
  "gdb:*",
  "man:*",
  "less:*",
  "ssh:*",
  "awk:*",
  "git:*"
].map((r) => `Bash(${r})`)
const LAUNCHES = [
  "sed '1e touch out' input.txt",
  "sed -e 'tx e touch out' input.txt",
  "sed 's/a/touch out/e' input.txt",
  "sed 'w out' input.txt",
  "sed -f s.sed input.txt",
  "sed --expr='1e touch out' input.txt",
  "sed --e '1e touch out' input.txt",
  "sed --no-such-option '1e touch out' input.txt",
  "sort --compress-program=sh input.txt",
  "sort --compress=sh input.txt",
  "sort -o out input.txt",
  "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='touch out'",
  "tar -tf a.tar --use-compress-program='sh x'",
  "tar -tf a.tar -I 'sh x'",
  "tar -tf a.tar --to-command=sh",
  "tar -tf a.tar -F x.sh",
  "tar -tf a.tar --info-script=x.sh",
  "tar -tf host:a.tar",
  "tar tIf 'sh x' a.tar",
  "git grep -O a",
  "git grep --open-files-in-pager=sh a",
  "git -c core.pager=sh grep a",
  "git -C . -c core.pager=sh grep a",
  "git log --output=out",
  "git log --ext-diff",
  "sqlite3 db '.shell touch out'",
  "sqlite3 db '.system touch out'",
  "sqlite3 db '.output out'",
  "sqlite3 db '.once out'",
  "sqlite3 db \"select load_extension('x')\"",
  "sqlite3 -cmd '.shell x' db 'select 1'",
  "sqlite3 db <<< '.shell touch out'",
  "npm test --prefix=/tmp/x",
  "npm test --userconfig=x",
  "npm test --script-shell=sh",
  "npm test --script_shell=sh",
  "less input.txt",
  "man -P 'sh -c x' ls",
  "rsync -e 'sh -c x' a b",
  "zip -TT 'sh -c x' a.zip input.txt",
  "vim -c '!touch out'",
  "gdb -ex '!touch out'",
  "make -f -",
  "make --eval='x:;touch out'",
  "make 'CC=touch out'",
  "npx -c 'touch out'",
  "awk 'BEGIN{system(\"touch out\")}'",
  "awk --source='BEGIN{system(\"touch out\")}'",
  "awk 'BEGIN{getline < \"/inet/tcp/0/127.0.0.1/80\"}'",
  "ssh -o ProxyCommand='touch out' host"
]
const LAUNCHES_LIVE = [
  "sed --expr='1e touch out' input.txt",
  "sed -e 'tx e touch out' -e :x input.txt",
  "seq 3000 | sort -r -S 8K --compress-program=./mk >/dev/null",
  "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='touch out'",
  "tar -xf a.tar --to-command='touch out'",
  "sqlite3 db '.shell touch out'",
  "sqlite3 db '.output out' 'select 1'",
  "git grep -O'touch out;:' hello"
]
const PREFIX_ALLOWED = [
  "sed 's/a/b/g' input.txt",
  "sed -n '/x/p' input.txt",
  "sort -u input.txt",
  "tar -tf a.tar",
  "git grep -n a",
  "git log --grep=/fix/",
  "sqlite3 db 'select 1'",
  "npm test",
  "npm test -- --watch",
  "make test",
  "npx tsc",
  "awk '{print $1}' input.txt",
  "ssh host ls"
]

// 4. Deny rules and code they cannot see: refused even in bypassPermissions mode.
const DENY_CONFIG: FreecodeConfigData = {
  permissions: { deny: ["Bash(rm:*)", "Bash(curl:*)"], defaultMode: "bypassPermissions" }
}
const OPAQUE = [
  "python3 -c 'import os'",
  "python3 -m timeit -s 'import os; os.system(\"rm x\")' pass",
  "python3 /dev/stdin <<< 'print(1)'",
  "python3 - <<< 'print(1)'",
  "python3",
  "python3 -I -c x",
  "perl -e 'system q(rm x)'",
  "perl -M'POSIX;system q(rm x)' -e1",
  "perl -MPOSIX script.pl",
  "node -e x",
  "node --eval x",
  "node -p x",
  "node --import 'data:text/javascript,x' app.js",
  "node -r ./x.js app.js",
  "ruby -e x",
  "tclsh <<< 'exec rm x'",
  'bash -c "$X"',
  "sh <<< 'rm x'",
  "git difftool -x 'rm' HEAD",
  "ssh -o ProxyCommand='rm x' h",
  "compgen -C 'rm x' w",
  "mapfile -C 'rm x' a",
  "zip -TT 'rm x' a.zip f",
  "vim -c '!rm x'",
  "gdb -ex '!rm x'",
  "make -f - <<< x",
  "npx -c 'rm x'",
  "sed 's/x/rm y/e' input.txt",
  "sort --compress-program=rm input.txt",
  "BASH_ENV=x bash s.sh",
  "ENV=x sh s.sh",
  "GIT_SSH_COMMAND='rm x' git fetch",
  "GIT_EXTERNAL_DIFF=x git diff",
  "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm x' git log",
  "GIT_CONFIG_PARAMETERS=\"'core.pager'='rm x'\" git log",
  "LESSOPEN='|rm %s' less f",
  "GIT_ALLOW_PROTOCOL=ext git clone 'ext::rm x'",
  "PAGER='rm x' git log",
  "EDITOR='rm x' git commit",
  "LD_PRELOAD=x.so ls",
  "PROMPT_COMMAND='rm x' bash -i",
  "env GIT_SSH_COMMAND='rm x' git fetch",
  "export GIT_SSH_COMMAND='rm x'; git fetch",
  "GIT_SSH_COMMAND='rm x'; git fetch",
  "awk 'BEGIN{system(\"rm x\")}'",
  "git -c alias.x='!rm y' x",
  "sqlite3 db '.shell rm x'",
  "tar -xf a.tar --to-command='rm x'"
]
const OPAQUE_LIVE = [
  "python3 -m timeit -n 1 -s 'import os; os.system(\"touch out\")' pass",
  "perl -M'POSIX;system q(touch out)' -e1",
  'node --import \'data:text/javascript,import fs from "fs";fs.writeFileSync("out","")\' -e 0',
  'python3 /dev/stdin <<< \'open("out","w")\'',
  "tclsh <<< 'exec touch out'",
  "BASH_ENV=./mk bash -c :",
  "compgen -C 'touch out' w",
  "mapfile -C 'touch out' -c 1 a <<< x",
  "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!touch out' git x",
  "make -f - <<< $'x:\\n\\ttouch out'"
]
/** Where the line is: a script file named by its path is not seen into, so these run. */
const SEEN_AS_PLAIN = [
  "python3 x.py",
  "python3 -u x.py",
  "python3 -m pytest",
  "node app.js",
  "perl -w script.pl",
  "NODE_ENV=test node app.js",
  "ls",
  "sed 's/a/b/' input.txt"
]

// 2 and 5: refused whatever the rules and mode say.
const BYPASS: FreecodeConfigData = {
  permissions: { allow: ["Bash(cat:*)", "Bash(ls:*)", "Bash(echo:*)"], defaultMode: "bypassPermissions" }
}
const NETWORK = [
  "cat < /dev/tcp/127.0.0.1/9 >&0",
  "ls 0</dev/tcp/127.0.0.1/9",
  "cat 3</dev/tcp/127.0.0.1/9 <&3",
  "exec 3<>/dev/tcp/127.0.0.1/9",
  "cat <> /dev/tcp/127.0.0.1/9",
  "cat < /dev/./tcp/127.0.0.1/9",
  "cat < //dev/tcp/127.0.0.1/9",
  "cat < /dev/../dev/tcp/127.0.0.1/9",
  'cat < "/dev/tcp/127.0.0.1/9"',
  "cat < $'/dev/tcp/127.0.0.1/9'",
  "cat < /dev/tc''p/127.0.0.1/9",
  "h=/dev/tcp/127.0.0.1/9; cat < $h",
  "cat < ${h}",
  "echo x > /dev/udp/127.0.0.1/9",
  "{ cat; } < /dev/tcp/127.0.0.1/9",
  "bash -c 'cat </dev/tcp/127.0.0.1/9'",
  "echo $(cat </dev/tcp/127.0.0.1/9)"
]
const UNPARSEABLE = ["ls ;; pwd", "echo 'a", "ls )", "fi", "done", "ls; }", "ls ;& pwd", "then ls", "ls | | pwd"]
const PARSEABLE = ["case x in a) ls ;; esac", "echo fi", "ls; pwd", "echo 'a;;b'"]

describe("the read-only list knows each program's options and operands", () => {
  it("each attack is live with real bash", () => {
    const dead = LIVE_READ_ONLY.filter(([command, effect]) => {
      const r = runLive(command)
      return effect === "created" ? r.created.length === 0 : !r.output.includes(SECRET)
    })
    expect(dead).toEqual([])
  })

  it.live("what writes, runs, recurses, globs toward a secret or reads outside asks", () =>
    Effect.map(wrong({}, "ask", NOT_READ_ONLY), (w) => expect(w).toEqual([]))
  )

  it.live("patterns, scripts and values are not paths: these run without asking", () =>
    Effect.map(wrong({}, "allow", READ_ONLY), (w) => expect(w).toEqual([]))
  )

  it("what the list allows runs with bash, succeeds and changes nothing", () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(base, "plain-"))
    makeProject(dir)
    const listing = () =>
      execFileSync("/bin/bash", ["-c", "find . -type f -exec md5sum {} + | sort"], { cwd: dir, encoding: "utf8" })
    const before = listing()
    const failed = READ_ONLY.flatMap((command) => {
      const r = spawnSync("/bin/bash", ["-c", command], { cwd: dir, encoding: "utf8", timeout: 15_000 })
      return r.status === 0 ? [] : [`${command}: ${r.status} ${r.stderr}`]
    })
    expect(failed).toEqual([])
    expect(listing()).toBe(before)
  })
})

describe("a prefix rule allows a program, not the programs it launches", () => {
  it("each launch is live with real bash", () => {
    const dead = LAUNCHES_LIVE.filter((command) => {
      const dir = NodeFs.mkdtempSync(NodePath.join(base, "launch-"))
      makeProject(dir)
      NodeFs.writeFileSync(NodePath.join(dir, "mk"), "#!/bin/sh\ntouch out\nexec cat\n", { mode: 0o755 })
      spawnSync("/bin/bash", ["-c", command], { cwd: dir, timeout: 60_000, stdio: "ignore" })
      return !NodeFs.existsSync(NodePath.join(dir, "out"))
    })
    expect(dead).toEqual([])
  })

  it.live("options that run a command or write elsewhere ask under the rule", () =>
    Effect.map(wrong({ permissions: { allow: PREFIX_RULES } }, "ask", LAUNCHES), (w) => expect(w).toEqual([]))
  )

  it.live("the program's plain use is still allowed by its rule", () =>
    Effect.map(wrong({ permissions: { allow: PREFIX_RULES } }, "allow", PREFIX_ALLOWED), (w) => expect(w).toEqual([]))
  )
})

describe("deny rules refuse code carried in the command that they cannot see into", () => {
  it("each carrier is live with real bash", () => {
    const dead = OPAQUE_LIVE.filter((command) => {
      const dir = NodeFs.mkdtempSync(NodePath.join(base, "opaque-"))
      makeProject(dir)
      NodeFs.writeFileSync(NodePath.join(dir, "mk"), "touch out\n")
      spawnSync("/bin/bash", ["-c", command], { cwd: dir, timeout: 15_000, stdio: "ignore" })
      return !NodeFs.existsSync(NodePath.join(dir, "out"))
    })
    expect(dead).toEqual([])
  })

  it.live("under Bash(rm:*) and Bash(curl:*), in bypassPermissions mode, each is refused", () =>
    Effect.map(wrong(DENY_CONFIG, "deny", OPAQUE), (w) => expect(w).toEqual([]))
  )

  it.live("a script file by path, and commands with no hidden code, still run", () =>
    Effect.map(wrong(DENY_CONFIG, "allow", SEEN_AS_PLAIN), (w) => expect(w).toEqual([]))
  )

  it.live("the refusal names the rule and what could not be read", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const d = yield* engine.decide({
        tool: BashTool as unknown as Tool,
        args: { command: "python3 -m timeit -s 'x' pass" },
        ctx
      })
      expect(d.reason).toContain("The rule Bash(rm:*) may apply and cannot be checked: python3 -m runs code")
    }).pipe(Effect.provide(engineWith(DENY_CONFIG)))
  )
})

describe("refused whatever the rules say", () => {
  it("a /dev/tcp redirection is live: bash connects", async () => {
    const server = NodeNet.createServer((s) => s.end())
    const connected = new Promise<boolean>((resolve) => server.once("connection", () => resolve(true)))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as NodeNet.AddressInfo).port
      spawnSync("/bin/bash", ["-c", `: < /dev/./tcp/127.0.0.1/${port}`], { timeout: 10_000, stdio: "ignore" })
      const r = spawnSync("/bin/bash", ["-c", `: < /dev/tcp/127.0.0.1/${port}`], { timeout: 10_000 })
      expect(r.status).toBe(0)
      expect(await connected).toBe(true)
    } finally {
      server.close()
    }
  })

  it.live("/dev/tcp and /dev/udp redirections, however spelled, are denied in bypassPermissions mode", () =>
    Effect.map(wrong(BYPASS, "deny", NETWORK), (w) => expect(w).toEqual([]))
  )

  it("bash itself refuses each unparseable line", () => {
    const parsed = UNPARSEABLE.filter((c) => spawnSync("/bin/bash", ["-n", "-c", c]).status === 0)
    expect(parsed).toEqual([])
    const refused = PARSEABLE.filter((c) => spawnSync("/bin/bash", ["-n", "-c", c]).status !== 0)
    expect(refused).toEqual([])
  })

  it.live("a line bash cannot parse is denied, saying so; one it can parse is not", () =>
    Effect.gen(function* () {
      expect(yield* wrong(BYPASS, "deny", UNPARSEABLE)).toEqual([])
      expect(yield* wrong(BYPASS, "allow", PARSEABLE)).toEqual([])
      const engine = yield* PermissionEngine
      const d = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command: "ls ;; pwd" }, ctx })
      expect(d.reason).toBe(
        "This command is refused: bash cannot parse it: ;; outside a case statement. Check the quoting and the operators (;; belongs inside case), and send a command bash can parse."
      )
    }).pipe(Effect.provide(engineWith(BYPASS)))
  )
})
