// quickjs-emscripten as a peer in wasmwire's benchmark: QuickJS compiled to
// wasm by Emscripten, run by Node's V8 (see common.js for the figures).
//
// Two isolations, chosen by the `isolation` argument:
//   "runtime"  one wasm module per process (the shared module of
//              getQuickJS()), a fresh QuickJS runtime and context per
//              execution, disposed after it
//   "module"   a fresh instance of the wasm module per execution (its own
//              linear memory), from a module compiled once per process (as
//              wasmwire instantiates a compiled component per execution),
//              with one runtime and context in it
//
// Either way each execution gets a memory cap (runtime.setMemoryLimit, the
// 256 MiB wasmwire's contender gets), an interrupt handler with a deadline
// (shouldInterruptAfterDeadline, the 120 s wall clock) for code that runs,
// and a host timer with the same deadline for code that waits.
//
// The program runs as the body of an async function, as in wasmwire. A tool
// is a global function made with context.newFunction: an async tool returns
// a promise (context.newPromise) that the host resolves when its own
// promise settles, then runs the runtime's pending jobs; a synchronous tool
// returns its value directly.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const common = require("./common.js");
const qjs = require("quickjs-emscripten");

function toHandle(ctx, value) {
  switch (typeof value) {
    case "number":
      return ctx.newNumber(value);
    case "string":
      return ctx.newString(value);
    case "boolean":
      return value ? ctx.true : ctx.false;
    case "undefined":
      return ctx.undefined;
    default:
      if (value === null) return ctx.null;
      return ctx.unwrapResult(ctx.evalCode(`(${JSON.stringify(value)})`));
  }
}

function disposeJobs(result) {
  // executePendingJobs answers a result that holds an error handle when a job threw.
  if (result && result.error) result.error.dispose();
}

/// Runs `program` in a fresh runtime of `module`; resolves to its answer as
/// JSON text.
async function runIn(module, program, tools) {
  const deadline = Date.now() + common.WALL_CLOCK_MS;
  const rt = module.newRuntime();
  rt.setMemoryLimit(common.MEMORY_LIMIT_BYTES);
  rt.setInterruptHandler(qjs.shouldInterruptAfterDeadline(deadline));
  const ctx = rt.newContext();
  let timer;
  try {
    for (const [name, tool] of Object.entries(tools)) {
      const f = ctx.newFunction(name, (arg) => {
        const value = arg === undefined ? undefined : ctx.dump(arg);
        if (tool.sync) return toHandle(ctx, tool.fn(value));
        const deferred = ctx.newPromise();
        Promise.resolve(tool.fn(value)).then(
          (answer) => {
            if (!ctx.alive) return;
            const handle = toHandle(ctx, answer);
            deferred.resolve(handle);
            handle.dispose();
            disposeJobs(rt.executePendingJobs());
          },
          (e) => {
            if (!ctx.alive) return;
            const handle = ctx.newError(String(e));
            deferred.reject(handle);
            handle.dispose();
            disposeJobs(rt.executePendingJobs());
          },
        );
        return deferred.handle;
      });
      ctx.setProp(ctx.global, name, f);
      f.dispose();
    }
    const started = succeeded(ctx, ctx.evalCode(`(async function () {${program}\n})()`, "program.js"));
    const settled = ctx.resolvePromise(started);
    started.dispose();
    disposeJobs(rt.executePendingJobs());
    const expired = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("wall clock")), common.WALL_CLOCK_MS);
    });
    const outcome = succeeded(ctx, await Promise.race([settled, expired]));
    const value = ctx.dump(outcome);
    outcome.dispose();
    return JSON.stringify(value === undefined ? null : value);
  } finally {
    clearTimeout(timer);
    ctx.dispose();
    rt.dispose();
  }
}

const peer = {
  name: "quickjs-emscripten",
  version() {
    const file = path.join(path.dirname(require.resolve("quickjs-emscripten")), "..", "package.json");
    return JSON.parse(fs.readFileSync(file, "utf8")).version;
  },
  isolation(args) {
    return args.isolation === "module"
      ? "fresh wasm module instance per execution, memory cap, interrupt deadline"
      : "fresh QuickJS runtime in a shared wasm module, memory cap, interrupt deadline";
  },
  async create(args) {
    if (args.isolation === "module") {
      // Compile once; instantiate per execution (a new linear memory each).
      const variant = qjs.RELEASE_SYNC;
      const wasmFile = require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
      const compiled = new WebAssembly.Module(fs.readFileSync(wasmFile));
      const fresh = qjs.newVariant(variant, { wasmModule: compiled });
      return {
        async run(program, tools) {
          const module = await qjs.newQuickJSWASMModuleFromVariant(fresh);
          return runIn(module, program, tools);
        },
      };
    }
    if (args.isolation !== "runtime") throw new Error(`unknown isolation ${args.isolation}`);
    const module = await qjs.getQuickJS();
    return { run: (program, tools) => runIn(module, program, tools) };
  },
};

common.main(peer, __filename);

/** The value of a quickjs-emscripten result, or its error thrown (disposed). */
function succeeded(ctx, result) {
  if (result.error) {
    const error = ctx.dump(result.error);
    result.error.dispose();
    throw new Error(`the program failed: ${JSON.stringify(error)}`);
  }
  return result.value;
}
