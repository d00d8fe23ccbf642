// The figures of wasmwire's benchmark for a peer that runs in Node.js, shared
// by the peer drivers (qjs-emscripten.js, isolated-vm.js).
//
// `target/release/wasmwire-bench` runs a driver as a child process, once per
// figure:
//
//   node --expose-gc bench/peers/<driver>.js <figure> '<json arguments>'
//
// and reads one line of JSON from its stdout. The programs, their expected
// answers and the run counts come from the Rust side (bench/src/workload.rs,
// bench/src/figures.rs), so every contender runs the same programs; the
// figures derived from these medians (overhead subtracted, per call, calls/s)
// are computed there too, by the same code as for the other contenders.
//
// Figures:
//   probe       runs `return 1` once; answers the package's version and the
//               isolation each execution gets
//   timed       {program, expected, runs, warm_up, warm_program, tools}:
//               median seconds from the start of an execution to its result
//   throughput  {program, expected, threads, per_thread, rounds, per_round,
//               warm_up}: median executions per second with `threads`
//               worker threads (one per core), each keeping `per_thread`
//               executions in flight
//   memory      {program, expected, at_once, rounds, warm_up}: median of
//               (RSS while `at_once` executions wait in `hold()`, less the
//               RSS before) / at_once, in bytes, Node's heap collected
//               before each reading (the bench asks for one round per
//               process: memory freed by a round is not always returned to
//               the system, and the next round would reuse it); `pss`, the
//               same of PSS (/proc/self/smaps_rollup: a page mapped by many
//               counted once)
//
// The tools are host functions, as the host of each peer would write them:
//   echo(x)        answers x with a promise the host resolves at once (the
//                  closest equivalent of wasmwire's `echo`, an async tool
//                  ready at once); with tools "sync", a synchronous host
//                  function that returns x (the peer's synchronous path)
//   echo_later(x)  answers x after awaiting one turn of Node's event loop
//                  (setImmediate), as wasmwire's `echo_later` yields once to
//                  tokio's scheduler
//   hold()         answers 1 once the benchmark opens its gate
//
// A peer driver calls `main(peer)` with
//   peer.name, peer.version(), peer.isolation(options),
//   peer.create(options) -> { run(program, tools) -> Promise<JSON text> }
// where each tool is { sync: boolean, fn(arg) -> value | Promise<value> }.
"use strict";

const { Worker, isMainThread, parentPort, workerData } = require("node:worker_threads");

/// How long one execution may take before the host abandons it (the wall
/// clock wasmwire's contenders get: bench/src/contender.rs).
const WALL_CLOCK_MS = 120_000;
/// The memory cap of one execution (wasmwire's contender: 256 MiB).
const MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;

function median(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function seconds(since) {
  return Number(process.hrtime.bigint() - since) / 1e9;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// A gate for `hold()`: counts arrivals, and lets everyone through once opened.
function newGate() {
  let open;
  const opened = new Promise((resolve) => {
    open = resolve;
  });
  const gate = {
    arrived: 0,
    open: () => open(),
    hold: () => {
      gate.arrived++;
      return opened.then(() => 1);
    },
  };
  return gate;
}

function tools(flavor, gate) {
  const echo =
    flavor === "sync"
      ? { sync: true, fn: (x) => x }
      : { sync: false, fn: (x) => Promise.resolve(x) };
  return {
    echo,
    echo_later: {
      sync: false,
      fn: (x) => new Promise((resolve) => setImmediate(() => resolve(x))),
    },
    hold: { sync: false, fn: () => gate.hold() },
  };
}

async function runChecked(runner, program, expected, toolset) {
  const value = await runner.run(program, toolset);
  if (value !== expected) {
    throw new Error(`expected ${expected}, got ${value} from ${JSON.stringify(program.slice(0, 60))}`);
  }
}

async function warmUp(runner, args, toolset) {
  for (let i = 0; i < (args.warm_up || 0); i++) {
    await runChecked(runner, "return 1", "1", toolset);
  }
  if (args.warm_program) {
    await runChecked(runner, args.warm_program, args.warm_expected, toolset);
  }
}

async function timed(peer, args) {
  const runner = await peer.create(args);
  const toolset = tools(args.tools, newGate());
  await warmUp(runner, args, toolset);
  const samples = [];
  for (let i = 0; i < args.runs; i++) {
    const started = process.hrtime.bigint();
    await runChecked(runner, args.program, args.expected, toolset);
    samples.push(seconds(started));
  }
  return { median: median(samples), runs: samples.length };
}

// Throughput: the main thread starts `threads` workers, each with its own
// runner; per round it hands them a shared counter and the round's total,
// and times from "go" to the last worker's "done".
async function throughput(peer, args, script) {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const workers = [];
  for (let t = 0; t < args.threads; t++) {
    const worker = new Worker(script, { workerData: { args, counter } });
    workers.push(worker);
  }
  const next = (worker) =>
    new Promise((resolve, reject) => {
      const onMessage = (m) => {
        cleanup();
        if (m && m.error) reject(new Error(m.error));
        else resolve(m);
      };
      const onError = (e) => {
        cleanup();
        reject(e);
      };
      const onExit = (code) => {
        cleanup();
        reject(new Error(`a worker exited with ${code}`));
      };
      const cleanup = () => {
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
      };
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
    });
  try {
    await Promise.all(workers.map(next)); // each has warmed up
    const rates = [];
    for (let round = 0; round < args.rounds; round++) {
      Atomics.store(counter, 0, 0);
      const done = workers.map(next);
      const started = process.hrtime.bigint();
      for (const worker of workers) worker.postMessage({ total: args.per_round });
      await Promise.all(done);
      rates.push(args.per_round / seconds(started));
    }
    return { median: median(rates), rounds: rates.length, threads: workers.length };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

async function throughputWorker(peer) {
  const { args, counter } = workerData;
  try {
    const runner = await peer.create(args);
    const toolset = tools("async", newGate());
    await warmUp(runner, args, toolset);
    parentPort.postMessage({ ready: true });
    parentPort.on("message", async ({ total }) => {
      try {
        const loop = async () => {
          while (Atomics.add(counter, 0, 1) < total) {
            await runChecked(runner, args.program, args.expected, toolset);
          }
        };
        await Promise.all(Array.from({ length: args.per_thread }, loop));
        parentPort.postMessage({ done: true });
      } catch (e) {
        parentPort.postMessage({ error: String((e && e.stack) || e) });
      }
    });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.stack) || e) });
  }
}

// Node's own heap is collected before each reading (the drivers run with
// --expose-gc), so that garbage of earlier executions (a disposed wasm
// module instance is freed only by a collection) is not counted for or
// against the executions in flight.
function collect() {
  if (typeof global.gc === "function") global.gc();
}

/// The process's proportional set size in bytes (Linux; 0 elsewhere).
function pss() {
  try {
    const rollup = require("node:fs").readFileSync("/proc/self/smaps_rollup", "utf8");
    const line = rollup.split("\n").find((l) => l.startsWith("Pss:"));
    return line ? parseInt(line.slice(4), 10) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function memory(peer, args) {
  const runner = await peer.create(args);
  await warmUp(runner, args, tools("async", newGate()));
  const n = args.at_once;
  const perExecution = [];
  const pssPerExecution = [];
  for (let round = 0; round < args.rounds; round++) {
    const gate = newGate();
    const toolset = tools("async", gate);
    await sleep(200);
    collect();
    const before = process.memoryUsage.rss();
    const pssBefore = pss();
    const running = [];
    for (let i = 0; i < n; i++) running.push(runChecked(runner, args.program, args.expected, toolset));
    // An execution that fails before it reaches hold() ends the wait.
    let failed = null;
    const watch = Promise.all(running).catch((e) => {
      failed = e;
    });
    const waiting = Date.now();
    while (gate.arrived < n && !failed) {
      if (Date.now() - waiting > 300_000) {
        gate.open();
        throw new Error(`only ${gate.arrived} of ${n} executions got in flight`);
      }
      await sleep(20);
    }
    if (failed) throw failed;
    await sleep(200);
    collect();
    const during = process.memoryUsage.rss();
    const pssDuring = pss();
    gate.open();
    await watch;
    if (failed) throw failed;
    perExecution.push(Math.max(0, during - before) / n);
    pssPerExecution.push(Math.max(0, pssDuring - pssBefore) / n);
  }
  return {
    median: median(perExecution),
    pss: median(pssPerExecution),
    at_once: n,
    rounds: perExecution.length,
  };
}

async function probe(peer, args) {
  const runner = await peer.create(args);
  await runChecked(runner, "return 1", "1", tools("async", newGate()));
  return { version: peer.version(), isolation: peer.isolation(args), node: process.version };
}

/// Runs the figure named on the command line and prints its JSON answer; in
/// a worker thread, serves the throughput figure.
function main(peer, script) {
  if (!isMainThread) {
    throughputWorker(peer);
    return;
  }
  const [figure, text] = process.argv.slice(2);
  const args = JSON.parse(text || "{}");
  const figures = { probe, timed, throughput, memory };
  const measure = figures[figure];
  if (!measure) {
    process.stderr.write(`${peer.name}: unknown figure ${JSON.stringify(figure)}\n`);
    process.exit(2);
  }
  measure(peer, args, script).then(
    (answer) => {
      process.stdout.write(JSON.stringify(answer) + "\n");
      process.exit(0);
    },
    (e) => {
      process.stderr.write(`${peer.name}: ${figure}: ${(e && e.stack) || e}\n`);
      process.exit(1);
    },
  );
}

module.exports = { main, WALL_CLOCK_MS, MEMORY_LIMIT_BYTES };
