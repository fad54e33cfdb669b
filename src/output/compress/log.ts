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

/**
 * A line that says something failed, as opposed to one that only might (a `file:line`, "not
 * found", "timeout", a summary): a level of ERROR or worse, an exception's name, a traceback, a
 * panic, `error:`, "failed". These outrank every other kept line: in a service's log, thousands
 * of lines naming their source file or a timeout must not crowd out the four ERROR lines.
 */
const STRONG = [
  /\b(ERROR|FATAL|CRITICAL|SEVERE|PANIC|EMERG|ALERT|CRIT)\b|\[(error|fatal|critical|crit|emerg|alert)\]/,
  /\blevel[=:]"?(error|fatal|critical|crit|panic|emerg|alert)\b|"level":\s*"(error|fatal|critical|crit|panic)"/i,
  /\b(error|errors|fatal|panic)\b/i,
  /\w(Error|Exception)\b|\bException\b/,
  /^\s*Traceback\b|^E\s{2,}|^\s*Caused by:/,
  /\b(failed|failure|failures|failing|FAIL|panicked|segmentation fault|core dumped|unhandled|uncaught|ERR!)\b/i,
  /[✗✘✖]/,
  /make(\[\d+\])?: \*\*\*/
]

export const isStrongFailureLine = (line: string): boolean =>
  STRONG.some((r) => r.test(line)) && !(NEGATED.test(line) && !/\w(Error|Exception)\b/.test(line))

/**
 * A line of a stack trace or a traceback: what follows a failure line and carries its where.
 * Any indented line counts while a trace runs (a traceback's code lines, Go's file lines), and
 * Go's function lines (`main.(*T).m(…)`); no part of it can backtrack more than linearly.
 */
const FRAME = /^(\s|at\s|\.\.\. \d+ more|Caused by:|goroutine \d+|#\d+\s|[\w./-]+(\(\*?[\w.]+\)\.\w+)?\()/
/** A trace longer than this is cut like any other run of lines. */
const FRAME_MAX = 100

export const isWarningLine = (line: string): boolean => WARNING.test(line) && !NO_WARNINGS.test(line)

/**
 * The log policy: the first HEAD_LINES lines, the last TAIL_LINES, every failure line with
 * BEFORE line before it and AFTER after it (in the head and the tail too), the stack trace under
 * it, and the diff an assertion prints under it (its `+`/`-` lines). Failure lines come in two
 * ranks: a strong one (isStrongFailureLine) and its trace take the budget first; a line that
 * only might be one (a location, "timeout", a summary) and warnings are `minor`: they get a share
 * of the budget, so a clean run keeps the one warning it printed, and a thousand of them never
 * crowd out an error, wherever in the output it is.
 */
export const logPass = (options: PassOptions): LineSink & { readonly sawFailure: () => boolean } => {
  let keepUntil = -1
  /** Context of a weak failure line: kept as minor. */
  let minorUntil = -1
  /** A diff line up to here belongs to the last failure (an assertion's expected/actual). */
  let diffUntil = -1
  /** No diff line past here belongs to it, however its lines chain. */
  let diffEnd = -1
  /** A trace line up to here belongs to the last strong failure. */
  let traceUntil = -1
  /** The diff under way follows a weak failure line: its lines are minor too. */
  let diffMinor = false
  let saw = false
  const sink = makePass(
    {
      tailLines: TAIL_LINES,
      admit: (line, recent) => {
        const text = line.text
        line.keep = line.index < HEAD_LINES || line.index <= keepUntil
        if (isStrongFailureLine(text)) {
          saw = true
          line.failure = true
          line.keep = true
          keepUntil = Math.max(keepUntil, line.index + AFTER)
          traceUntil = line.index + FRAME_MAX
          diffMinor = false
          diffUntil = line.index + DIFF_REACH
          diffEnd = line.index + DIFF_MAX
          for (let k = 1; k <= BEFORE && recent.length - k >= 0; k++) {
            const before = recent[recent.length - k]!
            before.keep = true
            before.minor = false
          }
        } else if (line.index <= traceUntil && FRAME.test(text)) {
          line.failure = true
          line.keep = true
          keepUntil = Math.max(keepUntil, line.index)
        } else if (line.index <= diffUntil && DIFF_LINE.test(text)) {
          line.failure = !diffMinor
          line.minor = diffMinor
          line.keep = true
          diffUntil = Math.min(diffEnd, line.index + DIFF_REACH)
        } else if (line.keep) {
          // The head, or a strong failure's context.
          traceUntil = -1
        } else if (isFailureLine(text)) {
          traceUntil = -1
          line.keep = true
          line.minor = true
          minorUntil = line.index + AFTER
          diffMinor = true
          diffUntil = line.index + DIFF_REACH
          diffEnd = line.index + DIFF_MAX
          const before = recent[recent.length - 1]
          if (before !== undefined && !before.keep) {
            before.keep = true
            before.minor = true
          }
        } else {
          traceUntil = -1
          if (line.index <= minorUntil || isWarningLine(text)) {
            line.keep = true
            line.minor = true
          }
        }
        return true
      }
    },
    options
  )
  return { ...sink, sawFailure: () => saw }
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
