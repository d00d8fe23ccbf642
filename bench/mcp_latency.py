"""The latency `wasmwire mcp` adds to an upstream tool call.

    target/venv/bin/python bench/mcp_latency.py [N]

Against the same upstream server (tests/mcp/upstream.py over stdio, its
`add` tool), it measures:

- direct: the official Python MCP client calling `add` N times in a row;
- in a program: one run_javascript whose program calls `test_add` N times
  in a row, less the same program making no call, per call: the round trip
  JS -> wire -> wasmwire -> rmcp client -> upstream and back;
- one run_javascript with one call, against one direct call: what a model's
  single step costs through wasmwire.

Needs target/release/wasmwire (cargo build --release) and the venv
(scripts/setup-python).
"""

import statistics
import sys
import time
from pathlib import Path

import anyio

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "tests" / "mcp" / "upstream.py"
WASMWIRE = ROOT / "target" / "release" / "wasmwire"


async def direct(n):
    params = StdioServerParameters(command=sys.executable, args=[str(UPSTREAM)])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        for _ in range(20):
            await s.call_tool("add", {"a": 1, "b": 2})
        times = []
        for i in range(n):
            t = time.perf_counter()
            await s.call_tool("add", {"a": i, "b": 2})
            times.append(time.perf_counter() - t)
        return times


async def through_wasmwire(n, config):
    params = StdioServerParameters(command=str(WASMWIRE), args=["mcp", "--config", str(config)])
    with open("/dev/null", "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as s:
            await s.initialize()

            async def run(code):
                t = time.perf_counter()
                result = await s.call_tool("run_javascript", {"code": code})
                wall = time.perf_counter() - t
                assert result.structured_content["ok"], result
                return wall, result.structured_content["elapsed_ms"] / 1000

            loop = f"for (let i = 0; i < {n}; i++) await test_add({{ a: i, b: 2 }}); 0"
            empty = f"for (let i = 0; i < {n}; i++) await Promise.resolve(i); 0"
            for _ in range(3):
                await run(loop)
            runs, empties = [], []
            for _ in range(5):
                runs.append((await run(loop))[1])
                empties.append((await run(empty))[1])
            per_call = (statistics.median(runs) - statistics.median(empties)) / n
            singles = [(await run("await test_add({ a: 1, b: 2 })"))[0] for _ in range(n)]
            return per_call, singles


async def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    config = Path("/tmp/wasmwire-mcp-bench.json")
    config.write_text(
        '{"mcpServers": {"test": {"command": "%s", "args": ["%s"]}}}' % (sys.executable, UPSTREAM)
    )
    direct_times = await direct(n)
    per_call, singles = await through_wasmwire(n, config)
    d = statistics.median(direct_times)
    s = statistics.median(singles)
    print(f"upstream: tests/mcp/upstream.py `add` over stdio, {n} calls each")
    print(f"direct call (Python client -> upstream), median:        {d * 1e3:8.3f} ms")
    print(f"call from a program (in one run_javascript), per call:  {per_call * 1e3:8.3f} ms"
          f"  (added: {(per_call - d) * 1e3:+.3f} ms)")
    print(f"run_javascript with one call (client round trip), median: {s * 1e3:6.3f} ms"
          f"  (added: {(s - d) * 1e3:+.3f} ms)")


anyio.run(main)
