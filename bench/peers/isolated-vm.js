// isolated-vm as a peer in wasmwire's benchmark: V8 isolates inside Node.js
// (see common.js for the figures).
//
// Each execution gets a fresh isolate with a memory limit
// (`new ivm.Isolate({ memoryLimit })`, the 256 MiB wasmwire's contender
// gets) and a fresh context in it, disposed after; the program runs with
// `context.eval(..., { promise: true, copy: true, timeout })` (the timeout
// bounds the script's own run) and a host timer disposes the isolate at the
// 120 s wall clock (for a program that waits).
//
// The program runs as the body of an async function, as in wasmwire. A tool
// is a global `ivm.Callback`: an async tool is `{ async: true }` (the isolate
// gets a promise that settles when the host function's promise does); a
// synchronous tool is the default Callback (the isolate's thread waits for
// the host function's value).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const common = require("./common.js");
const ivm = require("isolated-vm");

const peer = {
  name: "isolated-vm",
  version() {
    const file = path.join(path.dirname(require.resolve("isolated-vm")), "package.json");
    return JSON.parse(fs.readFileSync(file, "utf8")).version;
  },
  isolation() {
    return "fresh V8 isolate per execution, memory cap, timeout and wall clock";
  },
  async create() {
    return {
      async run(program, tools) {
        const isolate = new ivm.Isolate({
          memoryLimit: common.MEMORY_LIMIT_BYTES / (1024 * 1024),
        });
        let timer;
        try {
          const context = isolate.createContextSync();
          const global = context.global;
          const references = [];
          let shim = "";
          for (const [name, tool] of Object.entries(tools)) {
            if (tool.sync) {
              global.setSync(name, new ivm.Callback(tool.fn));
            } else {
              shim += `globalThis[${JSON.stringify(name)}] = (x) => $${references.length}.apply(undefined, [x], ASYNC);\n`;
              references.push(new ivm.Reference(tool.fn));
            }
          }
          // In the isolate, each async tool calls its Reference and gets a
          // promise of the host promise's value (copied).
          context.evalClosureSync(
            `const ASYNC = { arguments: { copy: true }, result: { promise: true, copy: true } };\n${shim}`,
            references,
          );
          const expired = new Promise((_, reject) => {
            timer = setTimeout(() => {
              reject(new Error("wall clock"));
              if (!isolate.isDisposed) isolate.dispose();
            }, common.WALL_CLOCK_MS);
          });
          const value = await Promise.race([
            context.eval(`(async function () {${program}\n})()`, {
              promise: true,
              copy: true,
              timeout: common.WALL_CLOCK_MS,
              filename: "program.js",
            }),
            expired,
          ]);
          return JSON.stringify(value === undefined ? null : value);
        } finally {
          clearTimeout(timer);
          if (!isolate.isDisposed) isolate.dispose();
        }
      },
    };
  },
};

common.main(peer, __filename);
