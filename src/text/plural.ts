/** A count and its noun, agreeing: "1 file", "2 files", "0 files"; `many` for irregular plurals. */
export const plural = (count: number, one: string, many: string = `${one}s`): string =>
  `${count} ${count === 1 ? one : many}`
