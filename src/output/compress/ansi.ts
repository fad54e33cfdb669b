/** ANSI escape sequences (colours, cursor moves, OSC titles and links): never for a model. */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])|\u009b[0-?]*[ -/]*[@-~]/g

export const stripAnsi = (text: string): string =>
  text.includes("\u001b") || text.includes("\u009b") ? text.replace(ANSI, "") : text
