/**
 * Which kind of output a shell command prints, from the command text alone: the class
 * compression shapes by (metadata.outputKind). A guess that is wrong costs only a blunter cut:
 * "other" is plain head+tail truncation.
 */
import type { OutputKind } from "../../tool/tool.ts"

/** Stages that pass their input through (or a window of it): the class is the stage before. */
const FILTERS = new Set(["head", "tail", "less", "more", "tee", "cat", "sort", "uniq", "wc", "tr", "cut", "column"])
/** Words that wrap a command without changing what it prints. */
const WRAPPERS = new Set(["time", "sudo", "nice", "nohup", "env", "command", "exec", "stdbuf", "xargs"])

const LOG_PROGRAMS = new Set([
  "tsc",
  "vitest",
  "jest",
  "mocha",
  "ava",
  "eslint",
  "biome",
  "prettier",
  "webpack",
  "vite",
  "rollup",
  "esbuild",
  "make",
  "cmake",
  "ninja",
  "gcc",
  "g++",
  "cc",
  "c++",
  "clang",
  "clang++",
  "ld",
  "cargo",
  "rustc",
  "go",
  "pytest",
  "tox",
  "nox",
  "mypy",
  "ruff",
  "pylint",
  "flake8",
  "pip",
  "pip3",
  "poetry",
  "uv",
  "mvn",
  "gradle",
  "gradlew",
  "./gradlew",
  "dotnet",
  "docker",
  "podman",
  "bazel",
  "swift",
  "xcodebuild",
  "deno",
  "bun",
  "ctest",
  "meson",
  "terraform",
  "ansible-playbook",
  "rspec",
  "bundle",
  "rake",
  "mix",
  "stack",
  "cabal",
  "zig",
  "javac"
])
const PACKAGE_MANAGERS = new Set(["npm", "pnpm", "yarn", "npx", "pnpx", "bunx"])
const SEARCH_PROGRAMS = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "locate"])
const CAT_PROGRAMS = new Set([
  "cat",
  "bat",
  "batcat",
  "nl",
  "head",
  "tail",
  "less",
  "more",
  "sed",
  "awk",
  "jq",
  "yq",
  "xxd",
  "od",
  "hexdump"
])

/** Splits on unquoted `;`, `&&`, `||`, newlines; keeps pipelines together. Quotes are respected. */
const splitOn = (command: string, separators: RegExp): Array<string> => {
  const parts: Array<string> = []
  let quote = ""
  let start = 0
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!
    if (quote !== "") {
      if (c === "\\" && quote === '"') i++
      else if (c === quote) quote = ""
      continue
    }
    if (c === "\\") {
      i++
      continue
    }
    if (c === "'" || c === '"' || c === "`") {
      quote = c
      continue
    }
    const m = separators.exec(command.slice(i, i + 2))
    if (m !== null && m.index === 0) {
      parts.push(command.slice(start, i))
      i += m[0].length - 1
      start = i + 1
    }
  }
  parts.push(command.slice(start))
  return parts.map((p) => p.trim()).filter((p) => p !== "")
}

const words = (stage: string): Array<string> => {
  const out = stage
    .replace(/\d?>&?\d?\s*\S+/g, " ") // redirections
    .split(/\s+/)
    .filter((w) => w !== "")
  let i = 0
  while (i < out.length && (/^\w+=/.test(out[i]!) || WRAPPERS.has(out[i]!) || /^-/.test(out[i]!))) i++
  // `timeout 60 cmd`
  if (out[i] === "timeout") i += 2
  return out.slice(i).map((w) => w.replace(/^["']|["']$/g, ""))
}

const classifyStage = (stage: string): OutputKind | "filter" => {
  const w = words(stage)
  const program = (w[0] ?? "").split("/").pop() ?? ""
  const sub = w[1] ?? ""
  if (program === "git") {
    if (["diff", "show", "format-patch"].includes(sub) || (sub === "log" && w.includes("-p")) || sub === "stash")
      return "diff"
    if (sub === "grep") return "search"
    if (["status", "log", "branch", "blame", "ls-files"].includes(sub)) return "other"
    return "log" // clone, fetch, pull, push, commit, rebase, merge: progress and errors
  }
  if (program === "diff" || program === "colordiff") return "diff"
  if (SEARCH_PROGRAMS.has(program)) return "search"
  if (FILTERS.has(program) && w.slice(1).every((a) => a.startsWith("-") || /^\d+$/.test(a))) return "filter"
  if (CAT_PROGRAMS.has(program)) return "cat"
  if (PACKAGE_MANAGERS.has(program) || LOG_PROGRAMS.has(program)) return "log"
  if ((program === "node" || program === "deno") && w.includes("--test")) return "log"
  if (
    /^python[\d.]*$/.test(program) &&
    w[1] === "-m" &&
    ["pytest", "unittest", "pip", "mypy", "tox"].includes(w[2] ?? "")
  )
    return "log"
  if (/^(\.\/)?(configure|build|test|gradlew)(\.sh)?$/.test(w[0] ?? "")) return "log"
  return "other"
}

export const classifyCommand = (command: string): OutputKind => {
  const segments = splitOn(command, /^(&&|\|\||;|\n)/)
  const last = segments[segments.length - 1]
  if (last === undefined) return "other"
  const stages = splitOn(last, /^\|(?!\|)/)
  for (let i = stages.length - 1; i >= 0; i--) {
    const kind = classifyStage(stages[i]!)
    if (kind !== "filter") return kind
  }
  // Only filters (`cat file`, `head -5 x` without a file are filters of nothing): it prints a file.
  return "cat"
}
