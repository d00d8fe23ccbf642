"""Figures of the Python package, measured the way bench/ measures the
library's (bench/src/figures.rs): medians over many runs after a warm-up,
call figures net of the per-execution overhead.

    target/venv/bin/python python/bench.py            # after scripts/test-python
    target/venv/bin/python python/bench.py --quick

- per-execution overhead: ``return 1``, from the Python call to its
  Outcome (sync ``run``; and ``await run_async`` on one loop);
- tool round trip into a Python callable: ``for 1000 sequential calls
  await echo(i)``, net of the overhead, per call: a sync tool (worker
  thread) and an async one (on the caller's loop).

The library's own figures for the same programs (Rust handlers) are in
bench/RESULTS.md, or measured in the same run with
``target/release/wasmwire-bench --only wasm --figures overhead,round-trip,round-trip-awaiting``.
"""

import asyncio
import statistics
import sys
import time

import wasmwire

CALLS = 1000
TRIVIAL = "return 1"
SEQUENTIAL = f"for (let i = 0; i < {CALLS}; i++) await echo(i); return 1"


def echo(x):
    return x


async def echo_async(x):
    return x


SYNC_TOOLS = wasmwire.Tools([wasmwire.Tool(echo, signature="echo(x)")])
ASYNC_TOOLS = wasmwire.Tools([wasmwire.Tool(echo_async, name="echo", signature="echo(x)")])


def timed_sync(sandbox, program, tools, runs):
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        outcome = sandbox.run(program, tools=tools)
        samples.append(time.perf_counter() - started)
        assert outcome.value == 1, outcome
    return statistics.median(samples)


async def timed_async(sandbox, program, tools, runs):
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        outcome = await sandbox.run_async(program, tools=tools)
        samples.append(time.perf_counter() - started)
        assert outcome.value == 1, outcome
    return statistics.median(samples)


def main() -> None:
    quick = "--quick" in sys.argv
    scale = 10 if quick else 1
    sandbox = wasmwire.Sandbox()
    timed_sync(sandbox, TRIVIAL, None, 50)
    timed_sync(sandbox, SEQUENTIAL, SYNC_TOOLS, 1)

    overhead = timed_sync(sandbox, TRIVIAL, None, 3000 // scale)
    sync_call = (timed_sync(sandbox, SEQUENTIAL, SYNC_TOOLS, 30 // scale) - overhead) / CALLS

    async def on_a_loop():
        await timed_async(sandbox, TRIVIAL, None, 50)
        overhead_async = await timed_async(sandbox, TRIVIAL, None, 3000 // scale)
        total = await timed_async(sandbox, SEQUENTIAL, ASYNC_TOOLS, 30 // scale)
        return overhead_async, (total - overhead_async) / CALLS

    overhead_async, async_call = asyncio.run(on_a_loop())
    print("| figure (median) | wasmwire from Python |")
    print("|---|---:|")
    print(f"| per-execution overhead, `return 1`, sync `run` | {overhead * 1e6:.0f} µs |")
    print(f"| per-execution overhead, `return 1`, `await run_async` | {overhead_async * 1e6:.0f} µs |")
    print(f"| tool round trip, sync Python callable (worker thread) | {sync_call * 1e6:.1f} µs |")
    print(f"| tool round trip, async Python callable (caller's loop) | {async_call * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
