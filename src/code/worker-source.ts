/**
 * The interpreter's thread: a worker (evaluated from this text, so the package needs no extra
 * file) that owns the QuickJS module and runs one program at a time, each in a fresh runtime.
 * It talks to the host only by messages: `call` (a nested call: name and JSON arguments),
 * `end` (the outcome). A program stuck in one long native step (a GC storm near the memory
 * limit) cannot answer its interrupt handler; the host then terminates this thread, which is
 * why the interpreter does not run on the host's own thread.
 */
export const WORKER_SOURCE = String.raw`
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const core = require(workerData.core);
const variant = require(workerData.variant);
const PRELUDE = workerData.prelude;
const loading = core.newQuickJSWASMModuleFromVariant(variant.default ?? variant);
let current;

const describe = (vm, handle) => {
  try {
    const v = vm.dump(handle);
    if (v !== null && typeof v === "object" && "message" in v) return String(v.name ?? "Error") + ": " + String(v.message);
    return String(v);
  } catch (e) { return "an error that cannot be shown"; }
};
const endOfError = (m) => /out of memory/i.test(m) ? "memory" : /stack overflow|too much recursion/i.test(m) ? "stack" : "error";

const start = async (m) => {
  const Q = await loading;
  const limits = m.limits;
  const deadline = Date.now() + limits.wallMs;
  const rt = Q.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(limits.stackBytes);
  const vm = rt.newContext();
  const state = { rt, vm, stop: undefined, done: undefined, printed: [], chars: 0, inFlight: 0, held: [], deliver: undefined, ended: false };
  current = state;
  rt.setInterruptHandler(() => {
    if (state.stop !== undefined) return true;
    if (Date.now() > deadline) state.stop = "timeout";
    return state.stop !== undefined;
  });
  const fn = (name, impl) => {
    const h = vm.newFunction(name, (...args) => {
      try { return impl(...args); } catch (e) { state.stop ??= "crashed"; return undefined; }
    });
    state.held.push(h);
    return h;
  };
  let issued = 0;
  const hostCall = fn("call", (name, json, search) => {
    issued += 1;
    state.inFlight += 1;
    parentPort.postMessage({ type: "call", n: issued, name: vm.getString(name), json: vm.getString(json), search: vm.dump(search) === true });
    return vm.newNumber(issued);
  });
  const hostPrint = fn("print", (text) => {
    const s = vm.getString(text);
    state.chars += s.length + 1;
    if (state.chars > limits.outputChars) state.stop ??= "output"; else state.printed.push(s);
    return undefined;
  });
  const hostDone = fn("done", (ok, text) => {
    state.done ??= { ok: vm.dump(ok) === true, text: vm.getString(text) };
    return undefined;
  });
  const names = vm.newString(JSON.stringify(m.names));
  const max = vm.newNumber(limits.maxCalls);
  state.held.push(names, max);
  const prelude = vm.evalCode(PRELUDE, "prelude.js");
  if (prelude.error !== undefined) { prelude.error.dispose(); return finish(state, { end: "crashed" }); }
  state.held.push(prelude.value);
  const pair = vm.callFunction(prelude.value, vm.undefined, hostCall, hostPrint, hostDone, names, max);
  if (pair.error !== undefined) { pair.error.dispose(); return finish(state, { end: "crashed" }); }
  state.held.push(pair.value);
  state.deliver = vm.getProp(pair.value, 0);
  const begin = vm.getProp(pair.value, 1);
  state.made = vm.getProp(pair.value, 2);
  state.held.push(state.deliver, begin, state.made);
  const compiled = vm.evalCode("(async () => {" + m.source + "\n})", "program.js");
  if (compiled.error !== undefined) {
    const message = describe(vm, compiled.error);
    compiled.error.dispose();
    return finish(state, { end: "syntax", message });
  }
  state.held.push(compiled.value);
  const begun = vm.callFunction(begin, vm.undefined, compiled.value);
  if (begun.error !== undefined) begun.error.dispose(); else begun.value.dispose();
  pump(state);
};

const pump = (state) => {
  if (state.ended) return;
  const r = state.rt.executePendingJobs();
  if (r.error !== undefined) r.error.dispose();
  const output = state.printed.join("\n");
  if (state.stop !== undefined) return finish(state, { end: state.stop, output });
  if (state.done !== undefined) {
    const d = state.done;
    if (d.ok) return finish(state, { end: "ok", output, value: d.text, chars: state.chars });
    return finish(state, { end: endOfError(d.text), output, message: d.text });
  }
  if (state.inFlight === 0) return finish(state, { end: "stalled", output });
};

const finish = (state, outcome) => {
  if (state.ended) return;
  state.ended = true;
  if (outcome.output === undefined) outcome.output = state.printed.join("\n");
  try {
    if (state.made !== undefined && state.stop === undefined) {
      const r = state.vm.callFunction(state.made, state.vm.undefined);
      if (r.error !== undefined) r.error.dispose(); else { outcome.made = state.vm.getNumber(r.value); r.value.dispose(); }
    }
  } catch (e) {}
  let healthy = true;
  try {
    for (const h of state.held) if (h.alive) h.dispose();
    state.vm.dispose();
    state.rt.dispose();
  } catch (e) { healthy = false; }
  if (current === state) current = undefined;
  parentPort.postMessage({ type: "end", outcome, healthy });
};

parentPort.on("message", (m) => {
  try {
    if (m.type === "start") {
      start(m).catch(() => current === undefined ? parentPort.postMessage({ type: "end", outcome: { end: "crashed", output: "" }, healthy: false }) : finish(current, { end: "crashed" }));
      return;
    }
    const state = current;
    if (state === undefined || state.ended) return;
    if (m.type === "reply") {
      state.inFlight -= 1;
      const n = state.vm.newNumber(m.n);
      const json = state.vm.newString(m.json);
      const r = state.vm.callFunction(state.deliver, state.vm.undefined, n, json);
      n.dispose(); json.dispose();
      if (r.error !== undefined) {
        const message = describe(state.vm, r.error);
        r.error.dispose();
        const end = endOfError(message);
        state.stop ??= end === "error" ? "crashed" : end;
      } else r.value.dispose();
      pump(state);
    } else if (m.type === "abort") {
      state.stop ??= m.reason;
      finish(state, { end: state.stop });
    }
  } catch (e) {
    if (current !== undefined) finish(current, { end: e instanceof RangeError ? "stack" : "crashed" });
  }
});
`
