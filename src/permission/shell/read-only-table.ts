/**
 * The read-only list as data: per program, every option known to only change what it prints,
 * with what each option's value is, and what its operands are. An option not in a program's
 * table is not known to be read-only, so the command asks (Codex's safe-command check is built
 * the same way). Recursive reading (`grep -r`, `diff -r`), options that read a list of names
 * from a file (`--files0-from`, `file -f`), write (`sort -o`, `tree -o`), run a program
 * (`sort --compress-program`, `rg --pre`) or load code (`jq -L`) are absent on purpose, and so
 * are those that follow links while walking a folder (`find -L`, `ls -L`, `du -L`, `tree -l`):
 * a link in the project would lead the walk outside it.
 * docs/permissions.md shows this table.
 */

import type { Look } from "./read-only-look.ts"

/** What a word is to the program: a file it opens (`path`) or text it never opens (`text`). */
export type Kind = "path" | "text"
/** A long option: no value, a value of this kind, an optional `=value`, or two values (`--arg n v`). */
export type Long = "flag" | Kind | "optional" | "two"

export interface Spec {
  /** Short options that take no value. */
  readonly flags?: string
  /** Short options that take a value, and its kind. */
  readonly values?: Readonly<Record<string, Kind>>
  /** Short options whose value is optional and only attached (`date -Iseconds`). */
  readonly attached?: string
  /** Long options. */
  readonly long?: Readonly<Record<string, Long>>
  /** `-5` is a number, not an option (head, tail, grep's context). */
  readonly digits?: boolean
  /** What operands are (default `path`). */
  readonly operands?: Kind
  /** The first operand is text (a pattern, a script) unless one of these options supplied it. */
  readonly pattern?: ReadonlyArray<string>
  /** Options are judged elsewhere (builtins) or not at all: every word starting with `-` is accepted. */
  readonly anyOption?: boolean
  /** Why the first operand's text (a filter, a pattern) is not read-only, if it is not. */
  readonly patternCheck?: (text: string) => string | undefined
  /** What the tables cannot say: why not, or undefined. `args` are the operands. */
  readonly operandCheck?: (operands: ReadonlyArray<string>, look: Look) => string | undefined
}

const flags = (names: string): Record<string, Long> => Object.fromEntries(names.split(" ").map((n) => [n, "flag"]))
const STD = flags("help version")

const HEAD: Spec = {
  flags: "qvz",
  values: { c: "text", n: "text" },
  digits: true,
  long: { ...STD, ...flags("quiet silent verbose zero-terminated"), bytes: "text", lines: "text" }
}

const GREP: Spec = {
  flags: "EFGPiyvwxcLloqsbHhnTZzUaI",
  values: { e: "text", f: "path", m: "text", A: "text", B: "text", C: "text" },
  digits: true,
  pattern: ["e", "f", "regexp", "file"],
  long: {
    ...STD,
    ...flags(
      "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp line-regexp " +
        "null-data no-messages invert-match byte-offset line-number line-buffered with-filename no-filename " +
        "only-matching quiet silent text initial-tab null count files-with-matches files-without-match"
    ),
    regexp: "text",
    file: "path",
    "max-count": "text",
    label: "text",
    "binary-files": "text",
    color: "optional",
    colour: "optional",
    "after-context": "text",
    "before-context": "text",
    context: "text"
  }
}

const SUM: Spec = { flags: "btz", long: { ...STD, ...flags("binary text zero tag") } }

export const TABLE: Readonly<Record<string, Spec>> = {
  ls: {
    flags: "aAbBcCdfFgGhHiklmnNopqQrRsStuUvxXZ1",
    values: { w: "text", T: "text", I: "text" },
    long: {
      ...STD,
      ...flags(
        "all almost-all author escape ignore-backups directory dired classify file-type full-time " +
          "group-directories-first no-group human-readable si dereference-command-line " +
          "dereference-command-line-symlink-to-dir inode kibibytes literal numeric-uid-gid " +
          "hide-control-chars show-control-chars quote-name reverse recursive size context zero"
      ),
      "block-size": "text",
      color: "optional",
      format: "text",
      hide: "text",
      hyperlink: "optional",
      "indicator-style": "text",
      ignore: "text",
      "quoting-style": "text",
      sort: "text",
      time: "text",
      "time-style": "text",
      tabsize: "text",
      width: "text"
    }
  },
  cat: {
    flags: "AbeEnstTuv",
    long: {
      ...STD,
      ...flags("show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting")
    }
  },
  head: HEAD,
  tail: { ...HEAD, values: { c: "text", n: "text", s: "text" } },
  wc: { flags: "cmlLw", long: { ...STD, ...flags("bytes chars lines max-line-length words"), total: "text" } },
  nl: {
    flags: "p",
    values: {
      b: "text",
      d: "text",
      f: "text",
      h: "text",
      i: "text",
      l: "text",
      n: "text",
      s: "text",
      v: "text",
      w: "text"
    },
    long: { ...STD, "body-numbering": "text", "number-format": "text", "number-width": "text", "no-renumber": "flag" }
  },
  cut: {
    flags: "nsz",
    values: { b: "text", c: "text", d: "text", f: "text" },
    long: {
      ...STD,
      ...flags("complement only-delimited zero-terminated"),
      bytes: "text",
      characters: "text",
      delimiter: "text",
      fields: "text",
      "output-delimiter": "text"
    }
  },
  tr: {
    flags: "cCdst",
    operands: "text",
    long: { ...STD, ...flags("complement delete squeeze-repeats truncate-set1") }
  },
  uniq: {
    flags: "cdDiuz",
    values: { f: "text", s: "text", w: "text" },
    long: {
      ...STD,
      ...flags("count repeated ignore-case unique zero-terminated"),
      "all-repeated": "optional",
      group: "optional",
      "skip-fields": "text",
      "skip-chars": "text",
      "check-chars": "text"
    },
    // The second operand is the file uniq writes.
    operandCheck: (ops) => (ops.length > 1 ? "uniq with a second operand (the file it writes)" : undefined)
  },
  sort: {
    flags: "bdfgiMhnRrVcCmsuz",
    values: { k: "text", t: "text", S: "text" },
    long: {
      ...STD,
      ...flags(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort " +
          "human-numeric-sort numeric-sort random-sort reverse version-sort debug merge stable unique zero-terminated"
      ),
      "random-source": "path",
      sort: "text",
      "batch-size": "text",
      check: "optional",
      key: "text",
      "field-separator": "text",
      "buffer-size": "text",
      parallel: "text"
    }
  },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  diff: {
    flags: "abBdEiNqpstTuwy",
    values: { U: "text", C: "text", I: "text", W: "text", F: "text" },
    digits: true,
    long: {
      ...STD,
      ...flags(
        "brief report-identical-files side-by-side ignore-case ignore-all-space ignore-space-change " +
          "ignore-blank-lines ignore-tab-expansion ignore-trailing-space text normal new-file show-c-function " +
          "expand-tabs initial-tab strip-trailing-cr suppress-common-lines minimal speed-large-files no-dereference"
      ),
      unified: "optional",
      context: "optional",
      color: "optional",
      label: "text",
      width: "text",
      "ignore-matching-lines": "text",
      "show-function-line": "text"
    },
    // A folder operand makes diff compare every file in it with its namesake (with -N, print
    // each one missing on the other side whole): files no word names, `.env` among them.
    operandCheck: (ops, look) => {
      const folder = ops.find((o) => o !== "-" && look.directory?.(o) === true)
      return folder === undefined ? undefined : `diff with a folder operand (${folder}: it reads every file in it)`
    }
  },
  cmp: {
    flags: "bls",
    values: { i: "text", n: "text" },
    long: { ...STD, ...flags("print-bytes verbose quiet silent"), "ignore-initial": "text", bytes: "text" }
  },
  comm: {
    flags: "123z",
    long: { ...STD, ...flags("check-order nocheck-order total zero-terminated"), "output-delimiter": "text" }
  },
  stat: {
    flags: "LfSt",
    values: { c: "text" },
    long: { ...STD, ...flags("dereference file-system terse"), format: "text", printf: "text", cached: "text" }
  },
  file: {
    flags: "bcEhiIkLlNnprsSv0",
    values: { F: "text", P: "text", m: "path" },
    long: {
      ...STD,
      ...flags(
        "brief mime mime-type mime-encoding keep-going dereference no-dereference no-pad preserve-date raw special-files extension apple print0"
      ),
      separator: "text",
      parameter: "text",
      "magic-file": "path"
    }
  },
  du: {
    flags: "0abcDhHklmPsSx",
    values: { d: "text", B: "text", t: "text" },
    long: {
      ...STD,
      ...flags(
        "all apparent-size bytes total dereference-args human-readable inodes count-links null separate-dirs si summarize one-file-system"
      ),
      "block-size": "text",
      "max-depth": "text",
      threshold: "text",
      time: "optional",
      "time-style": "text",
      exclude: "text"
    }
  },
  df: {
    flags: "ahHiklPTv",
    values: { B: "text", t: "text", x: "text" },
    long: {
      ...STD,
      ...flags("all human-readable si inodes local no-sync sync portability print-type total"),
      "block-size": "text",
      output: "optional",
      type: "text",
      "exclude-type": "text"
    }
  },
  tree: {
    flags: "adfxiqNQpugshDFvtUrcCSnJ",
    values: { L: "text", P: "text", I: "text" },
    long: {
      ...STD,
      ...flags("noreport dirsfirst prune matchdirs du si inodes device"),
      filelimit: "text",
      charset: "text",
      timefmt: "text",
      sort: "text"
    }
  },
  basename: {
    flags: "az",
    values: { s: "text" },
    operands: "text",
    long: { ...STD, ...flags("multiple zero"), suffix: "text" }
  },
  dirname: { flags: "z", operands: "text", long: { ...STD, zero: "flag" } },
  realpath: {
    flags: "eLmPqsz",
    long: {
      ...STD,
      ...flags("canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero"),
      "relative-to": "path",
      "relative-base": "path"
    }
  },
  readlink: {
    flags: "efmnqsvz",
    long: {
      ...STD,
      ...flags("canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero")
    }
  },
  which: { flags: "as", operands: "text" },
  whoami: { operands: "text", long: STD },
  id: { flags: "aZgGnruz", operands: "text", long: { ...STD, ...flags("context group groups name real user zero") } },
  uname: {
    flags: "asnrvmpio",
    operands: "text",
    long: {
      ...STD,
      ...flags(
        "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform operating-system"
      )
    }
  },
  hostname: {
    flags: "aAdfiIsy",
    operands: "text",
    long: { ...STD, ...flags("alias fqdn long all-fqdns domain ip-address all-ip-addresses short yp nis") },
    operandCheck: (ops) => (ops.length > 0 ? "hostname with an operand (it sets the name)" : undefined)
  },
  date: {
    flags: "uR",
    values: { d: "text", r: "path" },
    attached: "I",
    operands: "text",
    long: {
      ...STD,
      ...flags("rfc-email utc universal debug resolution"),
      date: "text",
      "iso-8601": "optional",
      "rfc-3339": "text",
      reference: "path"
    },
    operandCheck: (ops) =>
      ops.some((o) => !o.startsWith("+")) ? "date with an operand that is not +FORMAT (it sets the clock)" : undefined
  },
  md5sum: SUM,
  sha1sum: SUM,
  sha224sum: SUM,
  sha256sum: SUM,
  sha384sum: SUM,
  sha512sum: SUM,
  b2sum: SUM,
  od: {
    flags: "bcdfilosvx",
    values: { A: "text", j: "text", N: "text", S: "text", t: "text" },
    attached: "w",
    long: {
      ...STD,
      "address-radix": "text",
      "skip-bytes": "text",
      "read-bytes": "text",
      strings: "optional",
      format: "text",
      "output-duplicates": "flag",
      width: "optional",
      traditional: "flag",
      endian: "text"
    }
  },
  hexdump: {
    flags: "bcCdoxv",
    values: { n: "text", s: "text", e: "text" },
    long: {
      ...STD,
      ...flags(
        "canonical no-squeezing one-byte-octal one-byte-char one-byte-hex two-bytes-decimal two-bytes-octal two-bytes-hex"
      ),
      length: "text",
      skip: "text",
      format: "text"
    }
  },
  seq: {
    flags: "w",
    values: { f: "text", s: "text" },
    digits: true,
    operands: "text",
    long: { ...STD, format: "text", separator: "text", "equal-width": "flag" }
  },
  // Builtins: their options are judged by the builtin check (printf -v, test -v ask there).
  echo: { anyOption: true, operands: "text" },
  printf: { anyOption: true, operands: "text" },
  pwd: { anyOption: true, operands: "text" },
  true: { anyOption: true, operands: "text" },
  false: { anyOption: true, operands: "text" },
  type: { anyOption: true, operands: "text" },
  command: { anyOption: true, operands: "text" },
  test: { anyOption: true },
  "[": { anyOption: true }
}
