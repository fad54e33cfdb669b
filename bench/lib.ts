/** Timing helpers for the benchmarks: warm up, then take the median of many runs. */
import { performance } from "node:perf_hooks"

export interface Timing {
  readonly name: string
  readonly runs: number
  readonly medianMs: number
  readonly p90Ms: number
}

export const time = async (
  name: string,
  runs: number,
  body: () => Promise<unknown> | unknown,
  /** Untimed calls first; by default a fifth of the runs, at most 20. 0 times a first call. */
  warmup = Math.min(20, Math.ceil(runs / 5))
): Promise<Timing> => {
  for (let i = 0; i < warmup; i++) await body()
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await body()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return {
    name,
    runs,
    medianMs: samples[Math.floor(samples.length / 2)]!,
    p90Ms: samples[Math.floor(samples.length * 0.9)]!
  }
}

/**
 * Times two bodies in alternation, so drift in the machine's speed (other processes, I/O
 * contention) hits both alike, and returns both timings.
 */
export const paired = async (
  runs: number,
  a: readonly [string, () => Promise<unknown> | unknown],
  b: readonly [string, () => Promise<unknown> | unknown],
  warmup = Math.min(50, Math.ceil(runs / 5))
): Promise<readonly [Timing, Timing]> => {
  for (let i = 0; i < warmup; i++) {
    await a[1]()
    await b[1]()
  }
  const samples: [Array<number>, Array<number>] = [[], []]
  for (let i = 0; i < runs; i++) {
    for (const [k, body] of [a[1], b[1]].entries()) {
      const start = performance.now()
      await body()
      samples[k]!.push(performance.now() - start)
    }
  }
  const summarize = (name: string, xs: Array<number>): Timing => {
    xs.sort((x, y) => x - y)
    return { name, runs, medianMs: xs[Math.floor(xs.length / 2)]!, p90Ms: xs[Math.floor(xs.length * 0.9)]! }
  }
  return [summarize(a[0], samples[0]), summarize(b[0], samples[1])]
}

export const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`)

export const row = (t: Timing, baseline?: Timing) =>
  `| ${t.name} | ${t.runs} | ${fmt(t.medianMs)} | ${fmt(t.p90Ms)} | ${baseline === undefined ? "—" : `${(t.medianMs / baseline.medianMs).toFixed(2)}×`} |`

export const header = "| what | runs | median | p90 | vs baseline |\n| --- | --- | --- | --- | --- |"
