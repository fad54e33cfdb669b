/**
 * The program's side of the bridge, evaluated in the interpreter before the program. It gets the
 * host's functions as arguments (never as globals), keeps its own copies of JSON and String so
 * a program that replaces them changes only what it itself sends, counts its calls against the
 * limit (past it a call is refused at once, with no round trip), and puts `tools`, `console`,
 * `text` and `ToolError` on the program's global object. A value that is not a string is printed
 * as compact JSON: indented JSON costs the model about 1.8× the tokens for the same data. Everything a program can reach is the
 * interpreter's own: results arrive as JSON text and are parsed inside.
 */
export const PRELUDE = `(function (hostCall, hostPrint, hostDone, names, maxCalls) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, S = String;
  const pending = new Map();
  let made = 0;
  class ToolError extends Error {
    constructor(e) {
      super(e.message);
      this.name = "ToolError";
      this.status = e.status;
      this.tool = e.tool;
      this.id = e.id;
      this.result = e.result;
    }
  }
  const show = (v) => {
    if (typeof v === "string") return v;
    if (v === undefined) return "undefined";
    try { const s = stringify(v); return s === undefined ? S(v) : s } catch (e) { return S(v) }
  };
  const describe = (e) => {
    if (e instanceof Error) return (e.name || "Error") + ": " + e.message;
    try { return "thrown: " + show(e) } catch (x) { return "thrown: (a value that cannot be shown)" }
  };
  const send = (name, json, search) => {
    const n = hostCall(name, json, search);
    return new Promise((resolve, reject) => pending.set(n, { resolve, reject }));
  };
  const call = (name, args) => {
    let json;
    try { json = stringify(args === undefined ? {} : args) } catch (e) {
      return Promise.reject(new TypeError("the arguments of " + name + " are not JSON: " + e.message));
    }
    if (typeof json !== "string") return Promise.reject(new TypeError("the arguments of " + name + " are not JSON"));
    made += 1;
    if (made > maxCalls) {
      return Promise.reject(new ToolError({ status: "denied", tool: name, id: "", message: "This program made " + maxCalls + " tool calls, its limit; no more are run." }));
    }
    return send(name, json, false);
  };
  const deliver = (n, json) => {
    const p = pending.get(n);
    if (p === undefined) return;
    pending.delete(n);
    const r = parse(json);
    if (r.ok) p.resolve(r.value); else p.reject(new ToolError(r.error));
  };
  const tools = {};
  for (const pair of parse(names)) { const name = pair[1]; tools[pair[0]] = (args) => call(name, args); }
  tools.call = (name, args) => call(S(name), args);
  tools.search = (query) => send("search", stringify(S(query)), true);
  freeze(tools);
  const print = (...xs) => { hostPrint(xs.map(show).join(" ")); };
  const console = freeze({ log: print, info: print, warn: print, error: print, debug: print });
  const start = (fn) => {
    let p;
    try { p = fn() } catch (e) { hostDone(false, describe(e)); return; }
    p.then((v) => hostDone(true, v === undefined ? "" : show(v)), (e) => hostDone(false, describe(e)));
  };
  Object.defineProperties(globalThis, {
    tools: { value: tools }, console: { value: console }, text: { value: print }, ToolError: { value: ToolError }
  });
  return [deliver, start, () => made];
})`
