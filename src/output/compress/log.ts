/**
 * Build and test logs: keep the head, the tail and every failure-looking line (with a line of
 * context before and two after), and collapse the noise between them into a marker naming the
 * `output` call that retrieves it. Line numbers in the markers are the stored output's. It is a
 * streaming pass (pass.ts), so a log spilled to disk is compressed without being held whole.
 */
import { type LineSink, makePass, type PassOptions } from "./pass.ts"

export const HEAD_LINES = 10
export const TAIL_LINES = 30
/** Lines kept after a failure line: a location or a code frame usually follows. */
const AFTER = 2
const BEFORE = 1

const FAILURE = [
  // errors, failures, panics, crashes, assertions (but not "0 errors", "no failures")
  /\b(error|errors|ERR!|fail|failed|failure|failures|failing|FAIL|panic|panicked|fatal|exception|abort(ed)?|segmentation fault|core dumped|assert(ion)?|unhandled|uncaught|cannot|could not|undefined reference|not found|denied|timed out|timeout)\b/i,
  /\w(Error|Exception)\b/, // TypeError, AssertionError, NullPointerException (one \w: no backtracking)
  /^\s*(Traceback|E\s{2,}|>\s{3})/, // python tracebacks, pytest's "E   assert …" and "> code" lines
  /[✗✘×✖❯]/, // test runners' failure marks
  /^\s*-->\s/, // rustc location
  /make(\[\d+\])?: \*\*\*/
]
/** `file:line` and `file(line,col)` locations, `file://` URLs too (the stack frame naming a test file). */
const LOCATION = /(^|[\s(["'])(file:\/\/)?[\w@~./\\-]*[\w-]+\.[A-Za-z]{1,6}(:\d+(:\d+)?|\(\d+,\d+\))/
/** What every location has; testing for it first spares LOCATION's backtracking on most lines. */
const LOCATION_HINT = /[:(]\d/
/** Summary lines: counts of tests, suites, errors; totals and durations. */
const SUMMARY = [
  /\b\d+\s+(passed|failed|passing|failing|pending|skipped|errors?|warnings?|tests?|suites?|todo|broken|xfailed|xpassed)\b/i,
  /^\s*(Tests?|Test Files|Test Suites|Suites?|Snapshots|Duration|Time|Ran|Summary|Result|test result|ok|FAILED|PASSED|BUILD \w+)\b/i,
  /^=+ .* =+$/, // pytest section rules
  /^#\s*(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b/, // node --test summary
  /\bexit (code|status)\b|\[exit code \d+\]/i,
  /^(npm|yarn|pnpm) (ERR|error)/i
]
/** "0 errors", "no failures", "Failures: 0" say nothing failed: they are summary, not failure. */
const NEGATED = /\b(0|no|zero) (errors?|failures?|failed)\b|(errors?|failures?|failed):?\s*0\b/i

/** Warnings and deprecations: a successful run's whole diagnostic content, often. */
const WARNING = /\b(warn|warning|warnings|deprecated|deprecation)\b/i
const NO_WARNINGS = /\b(0|no|zero) warnings?\b|warnings?:?\s*0\b/i

/** A line of an assertion's diff: `+ 'expected'`, `- actual`, `+ Received`, `-     3,`. */
const DIFF_LINE = /^\s*[+-](\s|$)/
/**
 * How far a diff line may be from the failure line or the diff line before it (unchanged
 * context sits between them), and how far from the failure line a diff may run at all.
 */
const DIFF_REACH = 40
const DIFF_MAX = 400

export const isFailureLine = (line: string): boolean => {
  if (LOCATION_HINT.test(line) && LOCATION.test(line)) return true
  if (SUMMARY.some((r) => r.test(line))) return true
  if (NEGATED.test(line) && !/\w(Error|Exception)\b/.test(line)) return false
  return FAILURE.some((r) => r.test(line))
}

export const isWarningLine = (line: string): boolean => WARNING.test(line) && !NO_WARNINGS.test(line)

/**
 * The log policy: the first HEAD_LINES lines, the last TAIL_LINES, every failure-looking line
 * with BEFORE line before it and AFTER after it (in the head and the tail too), the diff an
 * assertion prints under it (its `+`/`-` lines), and warnings. Warnings are `minor`: they get
 * a share of the budget, so a clean run keeps the one warning it printed, and a thousand
 * deprecations never crowd out an error.
 */
export const logPass = (options: PassOptions): LineSink => {
  let keepUntil = -1
  /** A diff line up to here belongs to the last failure (an assertion's expected/actual). */
  let diffUntil = -1
  /** No diff line past here belongs to it, however its lines chain. */
  let diffEnd = -1
  return makePass(
    {
      tailLines: TAIL_LINES,
      admit: (line, recent) => {
        line.keep = line.index < HEAD_LINES || line.index <= keepUntil
        if (isFailureLine(line.text)) {
          line.failure = true
          line.keep = true
          keepUntil = line.index + AFTER
          diffUntil = line.index + DIFF_REACH
          diffEnd = line.index + DIFF_MAX
          for (let k = 1; k <= BEFORE && recent.length - k >= 0; k++) recent[recent.length - k]!.keep = true
        } else if (line.index <= diffUntil && DIFF_LINE.test(line.text)) {
          line.failure = true
          line.keep = true
          diffUntil = Math.min(diffEnd, line.index + DIFF_REACH)
        } else if (!line.keep && isWarningLine(line.text)) {
          line.keep = true
          line.minor = true
        }
        return true
      }
    },
    options
  )
}

/** A timestamp at a line's start (ISO, syslog, clock time, after a bracket or two). */
const TIMESTAMP = /^\W{0,3}(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}|\d{2}:\d{2}:\d{2})/
/** A level: `INFO`, `[warn]`, `level=error`, `"level":"info"`. */
const LEVEL =
  /\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b|\[(trace|debug|info|notice|warn|warning|error|fatal)\]|\blevel[=:]"?\w|"level":\s*"?\w/
/** syslog and journalctl: `Dec  1 20:11:08 host sshd[812]: …`, whose lines carry no level word. */
const SYSLOG = /^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [\w./-]+(\[\d+\])?:/
/** Lines sampled from each end: enough to tell, cheap on a huge output. */
const SAMPLE = 200

/**
 * Whether an output reads as a log from lines at its two ends: a service's output, `cat
 * app.log`, `docker logs`, `journalctl`. Two in five of its non-blank lines must carry a
 * timestamp or a level (stack frames under an error carry neither), and levels or syslog's
 * shape must be there: timestamps alone are a CSV or a table, which keeps its plain cut.
 */
export const looksLikeLog = (head: string, tail: string): boolean => {
  const sample = [...head.split("\n", SAMPLE), ...tail.split("\n").slice(-SAMPLE)].filter((l) => l.trim() !== "")
  if (sample.length < 5) return false
  let marked = 0
  let levels = 0
  for (const l of sample) {
    const level = LEVEL.test(l) || SYSLOG.test(l)
    if (level) levels++
    if (level || TIMESTAMP.test(l)) marked++
  }
  return marked >= 0.4 * sample.length && levels >= 0.1 * sample.length
}
