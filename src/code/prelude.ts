/**
 * The program's side of the bridge, evaluated in the interpreter before the program. It gets the
 * host's functions as arguments (never as globals), keeps its own copies of JSON and String so
 * a program that replaces them changes only what it itself sends, counts its calls against the
 * limit (past it a call is refused at once, with no round trip), and puts `tools`, `console`,
 * `text` and `ToolError` on the program's global object. A value that is not a string is printed
 * as compact JSON: indented JSON costs the model about 1.8× the tokens for the same data.
 *
 * And `update(filePath, change)` when read and write are both reachable: read, change, write, made
 * only of those two calls, so each still takes the one path (a refused call rejects `update` with
 * its ToolError). Written once here because doing it right by hand takes more than a program
 * should spend: a file past 2,000 lines has no `text` in one read, and an unchanged file need not
 * be written. Everything a program can reach is the
 * interpreter's own: results arrive as JSON text and are parsed inside.
 */
export const PRELUDE = `(function (hostCall, hostPrint, hostDone, names, maxCalls) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, hasOwn = Object.hasOwn, S = String;
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
  const pairs = parse(names);
  for (const pair of pairs) { const name = pair[1]; tools[pair[0]] = (args) => call(name, args); }
  const reaches = (tool) => pairs.some((pair) => pair[1] === tool);
  const update = async (filePath, change) => {
    // Own properties only: a text a program put on Object.prototype is not the file's.
    const textOf = (r) => (hasOwn(r, "text") ? r.text : undefined);
    let r = await call("read", { filePath });
    const m = r.metadata || {};
    if (textOf(r) === undefined && m.more === true && typeof m.totalLines === "number") {
      r = await call("read", { filePath, limit: m.totalLines });
    }
    const text = textOf(r);
    if (typeof text !== "string") {
      throw new ToolError({ status: "error", tool: "read", id: r.id, message: "update needs the whole text of " + S(filePath) + ", which read does not give here (a line over 2,000 characters, more than one result holds, bytes that are not UTF-8, or mixed line ends): change it with tools.edit." });
    }
    const next = await change(text);
    if (typeof next !== "string") throw new TypeError("update(filePath, change): change must return the new text, a string");
    return next === text ? undefined : call("write", { filePath, content: next });
  };
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
  if (reaches("read") && reaches("write")) Object.defineProperty(globalThis, "update", { value: update });
  return [deliver, start, () => made];
})`
