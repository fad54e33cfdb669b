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
/** `file:line` and `file(line,col)` locations. */
const LOCATION = /(^|[\s(["'])[\w@~./\\-]*[\w-]+\.[A-Za-z]{1,6}(:\d+(:\d+)?|\(\d+,\d+\))/
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

export const isFailureLine = (line: string): boolean => {
  if (LOCATION_HINT.test(line) && LOCATION.test(line)) return true
  if (SUMMARY.some((r) => r.test(line))) return true
  if (NEGATED.test(line) && !/\w(Error|Exception)\b/.test(line)) return false
  return FAILURE.some((r) => r.test(line))
}

/**
 * The log policy: the first HEAD_LINES lines, the last TAIL_LINES, and every failure-looking
 * line with BEFORE line before it and AFTER after it (in the head and the tail too).
 */
export const logPass = (options: PassOptions): LineSink => {
  let keepUntil = -1
  return makePass(
    {
      tailLines: TAIL_LINES,
      admit: (line, recent) => {
        line.keep = line.index < HEAD_LINES || line.index <= keepUntil
        if (isFailureLine(line.text)) {
          line.failure = true
          line.keep = true
          keepUntil = line.index + AFTER
          for (let k = 1; k <= BEFORE && recent.length - k >= 0; k++) recent[recent.length - k]!.keep = true
        }
        return true
      }
    },
    options
  )
}
