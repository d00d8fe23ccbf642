"""An agent host in Python: a model's program calls two Python tools.

The program fans out over hosts (``Promise.all``), calls a sync tool and
an async one, branches on a tool's failure class, logs as it goes and ends
in an expression whose value is the answer. The host runs it under a
budget and reads the value, the console and the counts.

    python python/examples/agent.py
"""

import asyncio

import wasmwire

LOADS = {"db1": 0.91, "db2": 0.42, "web1": 0.17}

# The model's program: the body of an async function.
PROGRAM = """
const hosts = ["db1", "db2", "web1", "nope"];
const results = await Promise.all(hosts.map(async (h) => {
  try {
    const { load } = await get_load(h);
    const logs = load > 0.5 ? await get_logs(h, 2) : [];
    return { host: h, load, logs };
  } catch (e) {
    // A ToolError carries the failure class; not_found is not worth a retry.
    console.warn(`${h}: ${e.kind}${e.retryable ? " (retryable)" : ""}`);
    return { host: h, error: e.kind };
  }
}));
const busiest = results.filter((r) => r.load !== undefined).sort((a, b) => b.load - a.load)[0];
({ busiest: busiest.host, results })
"""


def get_load(host: str) -> dict[str, object]:
    """The current load of one host."""
    if host not in LOADS:
        raise wasmwire.ToolError("not_found", f"no host {host}")
    return {"host": host, "load": LOADS[host]}


async def get_logs(host: str, count: int) -> list[str]:
    """The newest log lines of one host."""
    await asyncio.sleep(0.01)  # a real tool would await a service here
    return [f"{host}: line {i}" for i in range(count)]


TOOLS = wasmwire.Tools(
    [
        wasmwire.Tool(
            get_load,
            signature="get_load(host)",
            params={
                "type": "object",
                "properties": {"host": {"type": "string"}},
                "required": ["host"],
            },
            timeout=1.0,
        ),
        wasmwire.Tool(get_logs, signature="get_logs(host, count)"),
    ]
)


async def main() -> None:
    sandbox = wasmwire.Sandbox()  # built once: share it
    outcome = await sandbox.run_async(
        PROGRAM,
        tools=TOOLS,
        budget=wasmwire.Budget(wall_clock=5.0, max_calls=20, max_bytes=64 * 1024),
    )
    print("value:", outcome.unwrap())
    print("console:", outcome.console.strip())
    print(f"calls {outcome.calls} bytes {outcome.bytes} in {outcome.elapsed * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
