// A wire child in Node.js, for the benchmark: what users reach for today.
//
// Speaks the same protocol as the wasmwire guest through the process
// backend: one Start read from fd 3, tool calls as framed Requests on
// stdout and Responses on stdin (matched by id), one Result written to fd 4.
// The program runs with node:vm in a fresh context as the body of an async
// function; each binding is a global async function there (a signature's
// parameters become the args object's keys). console goes to stderr.
"use strict";

const fs = require("node:fs");
const vm = require("node:vm");

const VERSION = 1;

function frame(message) {
  const payload = Buffer.from(JSON.stringify(message));
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(payload.length);
  return Buffer.concat([prefix, payload]);
}

function writeAll(fd, bytes) {
  let off = 0;
  while (off < bytes.length) off += fs.writeSync(fd, bytes, off);
}

// Calls each complete frame's JSON to onMessage; onEnd at EOF.
function readFrames(fd, onMessage, onEnd) {
  let pending = Buffer.alloc(0);
  const stream = fs.createReadStream(null, { fd, highWaterMark: 64 * 1024 });
  stream.on("data", (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4) {
      const len = pending.readUInt32BE(0);
      if (pending.length < 4 + len) break;
      const message = JSON.parse(pending.subarray(4, 4 + len).toString());
      pending = pending.subarray(4 + len);
      onMessage(message);
    }
  });
  stream.on("end", onEnd);
  stream.on("error", onEnd);
  return stream;
}

function parameters(signature) {
  const open = signature.indexOf("(");
  const close = signature.lastIndexOf(")");
  if (!signature.trim() || open < 0 || close < open) return null;
  return signature
    .slice(open + 1, close)
    .split(",")
    .map((p) => p.split(/[:=?]/)[0].trim().replace(/^\.\.\./, ""))
    .filter((p) => p);
}

function main() {
  const inFlight = new Map();
  let nextId = 0;
  let calls = 0;
  let bytes = 0;
  let calls_in = null;

  const call = (tool, args) =>
    new Promise((resolve, reject) => {
      const id = String(++nextId);
      calls++;
      inFlight.set(id, { resolve, reject, tool });
      writeAll(1, frame({ v: VERSION, id, tool, args }));
    });

  const onResponse = (r) => {
    const pending = inFlight.get(r.id);
    if (!pending) return;
    inFlight.delete(r.id);
    if (r.ok) {
      const value = r.value || "";
      bytes += Buffer.byteLength(value);
      let parsed;
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = value;
      }
      pending.resolve(parsed);
    } else {
      const e = new Error(r.error || "");
      e.name = "ToolError";
      e.kind = r.kind;
      e.tool = pending.tool;
      pending.reject(e);
    }
  };

  const finish = (result) => {
    writeAll(4, frame({ v: VERSION, calls, bytes, ...result }));
    process.exit(0);
  };

  const startStream = readFrames(
    3,
    (start) => {
      startStream.destroy();
      calls_in = readFrames(0, onResponse, () => {
        for (const [, p] of inFlight) p.reject(new Error("the call channel closed"));
        inFlight.clear();
      });
      run(start);
    },
    () => {},
  );

  function run(start) {
    const id = start.result_id;
    const line = (label) => (...args) =>
      writeAll(2, Buffer.from(label + args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ") + "\n"));
    const sandbox = {
      console: { log: line(""), info: line("info: "), warn: line("warn: "), error: line("error: ") },
    };
    const host = { call: (name, args) => call(name, args === undefined ? "" : typeof args === "string" ? args : JSON.stringify(args)) };
    for (const { name, signature } of start.bindings || []) {
      const params = parameters(signature || "");
      const f = (...values) => {
        if (params) {
          const args = {};
          params.forEach((p, i) => {
            if (values[i] !== undefined) args[p] = values[i];
          });
          return call(name, JSON.stringify(args));
        }
        const v = values[0];
        return call(name, v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));
      };
      host[name] = f;
      sandbox[name] = f;
    }
    sandbox.host = host;
    const context = vm.createContext(sandbox);
    let fn;
    try {
      fn = vm.runInContext("(async function () {" + start.program + "\n})", context, { filename: "<program>" });
    } catch (e) {
      return finish({ result_id: id, ok: false, kind: "invalid", error: String(e) });
    }
    fn().then(
      (value) => finish({ result_id: id, ok: true, value: JSON.stringify(value === undefined ? null : value) }),
      (e) => finish({ result_id: id, ok: false, kind: (e && e.kind) || "invalid", error: String(e) }),
    );
  }
}

main();
