/** Did-you-mean suggestions for a file name that does not exist. */
import * as NodePath from "node:path"

/** Edit distance where swapping two neighbours counts as one edit (optimal string alignment). */
const editDistance = (a: string, b: string): number => {
  if (a === b) return 0
  const rows: Array<Array<number>> = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      row.push(d)
    }
    rows.push(row)
  }
  return rows[a.length]![b.length]!
}

const stem = (name: string): string => {
  const ext = NodePath.extname(name)
  return (ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name).toLowerCase()
}

/**
 * Up to `max` names in `names` that look like `wanted`: same name in another case, same stem
 * with another extension, one containing the other, or a small edit distance. Best first.
 */
export const similarNames = (wanted: string, names: ReadonlyArray<string>, max = 3): Array<string> => {
  const w = wanted.toLowerCase()
  const ws = stem(wanted)
  const scored: Array<{ name: string; score: number }> = []
  for (const name of names) {
    if (name === wanted) continue
    const n = name.toLowerCase()
    const ns = stem(name)
    let score: number
    if (n === w) score = 0
    else if (ns === ws) score = 1
    else if (ws.length >= 3 && ns.length >= 3 && (ns.includes(ws) || ws.includes(ns))) score = 2
    else {
      const d = editDistance(w, n)
      if (d > Math.max(1, Math.floor(Math.max(w.length, n.length) / 3))) continue
      score = 3 + d
    }
    scored.push({ name, score })
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return scored.slice(0, max).map((s) => s.name)
}
