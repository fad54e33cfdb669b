/**
 * Build and test logs: keep the head, the tail and every failure-looking line (with a line of
 * context after it), and collapse the noise between them into a marker naming the `output`
 * call that retrieves it. Line numbers in the markers are the stored output's.
 */
import type { OmittedRange } from "../truncate.ts"

export const HEAD_LINES = 10
export const TAIL_LINES = 30
/** Lines kept after a failure line: a location or a code frame usually follows. */
const AFTER = 2
const BEFORE = 1

const FAILURE = [
  // errors, failures, panics, crashes, assertions (but not "0 errors", "no failures")
  /\b(error|errors|ERR!|fail|failed|failure|failures|failing|FAIL|panic|panicked|fatal|exception|abort(ed)?|segmentation fault|core dumped|assert(ion)?|unhandled|uncaught|cannot|could not|undefined reference|not found|denied|timed out|timeout)\b/i,
  /\w+(Error|Exception)\b/, // TypeError, AssertionError, NullPointerException
  /^\s*(Traceback|E\s{2,}|>\s{3})/, // python tracebacks, pytest's "E   assert …" and "> code" lines
  /[✗✘×✖❯]/, // test runners' failure marks
  /^\s*-->\s/, // rustc location
  /make(\[\d+\])?: \*\*\*/
]
/** `file:line` and `file(line,col)` locations. */
const LOCATION = /(^|[\s(["'])[\w@~./\\-]*[\w-]+\.[A-Za-z]{1,6}(:\d+(:\d+)?|\(\d+,\d+\))/
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
  if (LOCATION.test(line)) return true
  if (SUMMARY.some((r) => r.test(line))) return true
  if (NEGATED.test(line) && !/\w+(Error|Exception)\b/.test(line)) return false
  return FAILURE.some((r) => r.test(line))
}

export interface Collapsed {
  readonly text: string
  /** Whether anything was collapsed. */
  readonly collapsed: boolean
}

/**
 * `lines` keep their terminators. `marker` names the omitted range (1-based, inclusive) and
 * the `output` call that gets it back.
 */
export const compressLog = (lines: ReadonlyArray<string>, marker: (range: OmittedRange) => string): Collapsed => {
  const n = lines.length
  const keep = new Uint8Array(n)
  for (let i = 0; i < Math.min(HEAD_LINES, n); i++) keep[i] = 1
  for (let i = Math.max(0, n - TAIL_LINES); i < n; i++) keep[i] = 1
  for (let i = 0; i < n; i++) {
    if (keep[i] === 1 && (i < HEAD_LINES || i >= n - TAIL_LINES)) {
      if (!isFailureLine(lines[i]!)) continue
    } else if (!isFailureLine(lines[i]!)) continue
    for (let j = Math.max(0, i - BEFORE); j <= Math.min(n - 1, i + AFTER); j++) keep[j] = 1
  }
  const out: Array<string> = []
  let collapsed = false
  let i = 0
  while (i < n) {
    if (keep[i] === 1) {
      out.push(lines[i]!)
      i++
      continue
    }
    let j = i
    let chars = 0
    while (j < n && keep[j] === 0) chars += lines[j++]!.length
    const text = `${marker({ fromLine: i + 1, toLine: j, totalLines: n, omittedChars: chars })}\n`
    // A marker longer than what it replaces saves nothing: keep the lines.
    if (text.length >= chars) out.push(...lines.slice(i, j))
    else {
      const prev = out[out.length - 1]
      if (prev !== undefined && !prev.endsWith("\n")) out.push("\n")
      out.push(text)
      collapsed = true
    }
    i = j
  }
  return { text: out.join(""), collapsed }
}
