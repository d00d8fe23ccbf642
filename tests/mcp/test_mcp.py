"""End-to-end tests of `wasmwire mcp`, with real parts only: the official
Python MCP SDK as the client, `wasmwire mcp` (target/release/wasmwire) as
the server, and two real upstream servers, this folder's upstream.py
(MCPServer, the SDK's FastMCP) and @modelcontextprotocol/server-everything
from npm (installed into node_modules/ by scripts/test-mcp).

Nothing waits on time: a test that needs something to have happened waits
for a fact (a file an upstream tool writes, a line on stderr), with a
deadline that only turns a hang into a failure.
"""

import concurrent.futures
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WASMWIRE = Path(os.environ.get("WASMWIRE_BIN", ROOT / "target" / "release" / "wasmwire"))
EVERYTHING = HERE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

# A deadline that only turns a hang into a failure.
HANG = 60

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def write_config(tmp_path, servers=None, **extra):
    if servers is None:
        servers = {
            "test": {
                "command": sys.executable,
                "args": [str(HERE / "upstream.py")],
                "env": {"UPSTREAM_MARKS": str(tmp_path)},
            },
            "everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]},
        }
    config = {"mcpServers": servers, **extra}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


@asynccontextmanager
async def connect(tmp_path, config):
    """A client session with `wasmwire mcp --config CONFIG` over stdio; its
    stderr goes to tmp_path/stderr."""
    params = StdioServerParameters(command=str(WASMWIRE), args=["mcp", "--config", str(config)])
    with open(tmp_path / "stderr", "w") as errlog:
        with anyio.fail_after(HANG):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session


async def run(session, code, **args):
    with anyio.fail_after(HANG):
        result = await session.call_tool("run_javascript", {"code": code, **args})
    return result


async def wait_for(predicate, what):
    with anyio.fail_after(HANG):
        while not predicate():
            await anyio.sleep(0.02)


async def test_it_serves_two_tools_that_name_the_upstream_tools(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        listed = (await session.list_tools()).tools
        assert sorted(t.name for t in listed) == ["describe_tools", "run_javascript"]
        run_js = next(t for t in listed if t.name == "run_javascript")
        # A short summary, the way to the declarations, and the limits.
        for needle in ["describe_tools", "test_add", "test_get_user", "everything_echo", "- wall clock: 10s"]:
            assert needle in run_js.description, needle
        assert run_js.input_schema["required"] == ["code"]
        # `delete` is a reserved word alone, not once prefixed by its server.
        assert "test_delete" in run_js.description


async def test_describe_tools_gives_the_generated_declarations(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        everything = (await session.call_tool("describe_tools", {})).content[0].text
        assert "declare function test_add(args: {" in everything
        assert "a: number;" in everything
        assert "Promise<{\n  sum: number;\n}>" in everything
        assert "declare function everything_echo(" in everything
        assert "declare class ToolError extends Error" in everything
        some = (await session.call_tool("describe_tools", {"tools": ["test.get-user", "everything_ec*"]})).content[0].text
        assert "declare function test_get_user(" in some
        assert "declare function everything_echo(" in some
        assert "declare function test_add(" not in some
        missing = (await session.call_tool("describe_tools", {"tools": ["nope"]})).content[0].text
        assert "No tool matched: nope" in missing


async def test_a_tool_whose_schema_has_a_backtracking_pattern_is_bound_with_the_rest_of_its_schema(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        declared = (await session.call_tool("describe_tools", {"tools": ["test.greet"]})).content[0].text
        assert "declare function test_greet(args: {" in declared
        assert "times: number;" in declared
        ok = await run(session, "return await test_greet({user: 'ada', times: 2})")
        assert '"hi ada hi ada"' in ok.content[0].text, ok
        # The schema's other rules are checked by wasmwire, before the call.
        bad = await run(
            session,
            "try { await test_greet({user: 'ada', times: 'x'}) } catch (e) { return [e.kind, e.message] }",
        )
        assert '"invalid"' in bad.content[0].text and "args.times" in bad.content[0].text, bad
    said = (tmp_path / "stderr").read_text()
    assert "test.greet: 1 pattern(s) of its params schema need a backtracking" in said, said


async def test_a_program_calls_both_servers_at_once(tmp_path):
    lines = []

    async def progress(progress, total, message):
        lines.append(message)

    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = """
            console.log("fanning out");
            const [sum, echo, sums] = await Promise.all([
              test_add({ a: 2, b: 3 }),
              everything_echo({ message: "hi" }),
              Promise.all([1, 2, 3].map((n) => everything_get_sum({ a: n, b: 10 }))),
            ]);
            ({ sum, echo, sums })
        """
        with anyio.fail_after(HANG):
            result = await session.call_tool("run_javascript", {"code": code}, progress_callback=progress)
        assert not result.is_error, result
        out = result.structured_content
        assert out["ok"] is True
        assert out["value"]["sum"] == {"sum": 5}  # structuredContent, as declared
        assert "hi" in out["value"]["echo"]  # one text block: a string
        assert len(out["value"]["sums"]) == 3
        assert out["calls"] == 5
        assert out["console"] == "fanning out\n"
        # The console line also went out as a progress notification, before the answer.
        assert lines == ["fanning out"]


async def test_typescript_programs_run(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = "const r: { sum: number } = await test_add({ a: 40, b: 2 });\nr.sum"
        result = await run(session, code, language="ts")
        assert result.structured_content["value"] == 42, result


async def test_values_javascript_makes_arrive_and_one_too_deep_is_no_success(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        # Half of a surrogate pair reads as U+FFFD; 120 levels arrive whole.
        code = "let v = 1; for (let i = 0; i < 120; i++) v = [v];\n({cut: 'ok \\u{1F600}'.slice(0, 4), v})"
        result = await run(session, code)
        content = result.structured_content
        assert content["ok"] is True and content["value"]["cut"] == "ok \ufffd", content
        depth, level = 0, content["value"]["v"]
        while isinstance(level, list):
            depth, level = depth + 1, level[0]
        assert (depth, level) == (120, 1)
        # Deeper than an MCP answer carries (the SDK itself refuses a
        # message past 201 levels): not ok, and the kind says why, where
        # the client would otherwise wait for an answer it cannot read.
        for levels in (300, 3000):
            code = f"let v = 1; for (let i = 0; i < {levels}; i++) v = [v]; v"
            result = await run(session, code)
            content = result.structured_content
            assert content["ok"] is False and content["kind"] == "invalid", content
            assert f"{levels} levels deep" in content["error"]
            assert result.is_error
        # Arguments that deep are refused before they go upstream.
        code = "let v = 1; for (let i = 0; i < 300; i++) v = [v]; await test_pid({x: v})"
        result = await run(session, code)
        content = result.structured_content
        assert content["ok"] is False and "301 levels deep" in content["error"], content


async def test_a_message_nested_past_what_rmcp_reads_is_answered_not_lost(tmp_path):
    # rmcp drops a line serde_json cannot read (128 levels). An upstream's
    # answer that deep left the program's call waiting for the wall clock;
    # a client's request that deep was never answered.
    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = (
            "let r; try { await test_deep({levels: 150}); r = 'answered' }\n"
            "catch (e) { r = {kind: e.kind, error: e.message} }\nr"
        )
        # Before, the call waited until the 10 s wall clock ended the run (`limit`).
        result = await run(session, code)
        value = result.structured_content.get("value")
        assert value and value["kind"] == "unknown" and "levels deep" in value["error"], result
        # Under the line, the same tool answers.
        result = await run(session, "(await test_deep({levels: 3})).v")
        assert result.structured_content["value"] == [[[1]]]

        nested = 1
        for _ in range(130):
            nested = [nested]
        with anyio.fail_after(15):
            with pytest.raises(MCPError, match="levels deep"):
                await session.call_tool("run_javascript", {"code": "1", "limits": nested})
        assert (await run(session, "2")).structured_content["value"] == 2


async def test_a_message_longer_than_rmcp_reads_is_answered_not_lost(tmp_path):
    # rmcp drops a line past 16 MiB without a word: an upstream's answer
    # that long left the program's call waiting for the wall clock, a
    # client's request that long was never answered, and a value past 8 MiB
    # made an answer (the value goes twice) no client reads.
    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = (
            "let r; try { await test_huge({n: 17000000}); r = 'answered' }\n"
            "catch (e) { r = {kind: e.kind, error: e.message} }\nr"
        )
        result = await run(session, code)
        # The call failed (before, the run ended at its wall clock).
        value = result.structured_content.get("value")
        assert value and value["kind"] == "limit", result
        assert "longer than the 16777216 bytes an answer may be" in value["error"], value

        with anyio.fail_after(HANG):
            with pytest.raises(MCPError, match="bytes long; this server reads messages of at most"):
                await session.call_tool("run_javascript", {"code": "1//" + "x" * (17 << 20)})

        result = await run(session, "'y'.repeat(9000000)")
        content = result.structured_content
        assert content["ok"] is False and content["kind"] == "limit", content
        assert "an MCP answer may be" in content["error"] and "value" not in content
        # The log says how the run was answered (it said "ended ok").
        ended = [line for line in (tmp_path / "stderr").read_text().splitlines() if "run_javascript ended" in line]
        assert ended[-1].split()[4] == "limit", ended
        assert (await run(session, "'y'.repeat(1000).length")).structured_content["value"] == 1000


async def test_a_value_or_arguments_whose_tree_would_not_fit_what_the_server_holds_are_refused(tmp_path):
    # 3.5 MB of `[{"":0},...]` is a tree of over 200 MB: before, the server
    # built it, cloned it and wrote it out; a program could make it hold
    # fifty times its own memory cap, and more with every client.
    async with connect(tmp_path, write_config(tmp_path)) as session:
        result = await run(session, "new Array(500000).fill({'': 0})")
        content = result.structured_content
        assert content["ok"] is False and content["kind"] == "limit", content
        assert "as an answer's structured content" in content["error"], content
        assert "JSON.stringify(value)" in content["error"] and "value" not in content
        assert result.is_error
        # As text, the same value is one string, and arrives.
        result = await run(session, "JSON.stringify(new Array(500000).fill({'': 0})).length")
        assert result.structured_content["value"] == 3500001, result
        # Arguments of that shape are refused before they are read (to be
        # checked against the tool's input schema, and sent upstream).
        code = (
            "let r; try { await test_pid({items: new Array(500000).fill({'': 0})}); r = 'called' }\n"
            "catch (e) { r = [e.kind, e.message] }\nr"
        )
        kind, message = (await run(session, code)).structured_content["value"]
        assert kind == "limit" and "would take about" in message, message


async def test_an_upstreams_http_status_is_the_calls_class(tmp_path):
    # Every failed POST read `transient`, "the connection closed (the server
    # exited?)", so a model retried a 401 as if the server had restarted.
    async with http_upstream("status_upstream.py") as url:
        config = write_config(tmp_path, {"web": {"url": url}})
        async with connect(tmp_path, config) as session:
            code = """
                const got = {};
                for (const code of [401, 403, 429, 503, 418, 200]) {
                  try { got[code] = await web_status({ code }); }
                  catch (e) { got[code] = [e.kind, e.message]; }
                }
                got
            """
            result = await run(session, code)
            value = result.structured_content["value"]
            assert value["401"][0] == "denied", value
            assert 'Auth required (HTTP 401, WWW-Authenticate: Bearer realm="upstream"' in value["401"][1], value
            assert value["403"][0] == "denied", value
            assert value["429"][0] == "rate_limited", value
            assert "Retry-After: 7" in value["429"][1], value
            assert value["503"][0] == "transient", value
            assert value["418"][0] == "unknown", value
            assert "HTTP 418" in value["418"][1], value
            # And the connection still serves the next call.
            assert value["200"] == "fine", value


async def test_upstream_errors_reach_the_program_as_tool_errors_with_their_kind(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = """
            const caught = async (p) => {
              try { await p; return null; }
              catch (e) { return { name: e.name, kind: e.kind, retryable: e.retryable, tool: e.tool, message: e.message }; }
            };
            ({
              named: await caught(test_get_user({ user_id: "nobody" })),
              plain: await caught(test_fail_plain()),
              badArgs: await caught(test_add({ a: "two", b: 3 })),
              unknownTool: await caught(host.call("test_nope", {})),
              found: await test_get_user({ user_id: "u1" }),
            })
        """
        result = await run(session, code)
        value = result.structured_content["value"]
        assert value["named"]["name"] == "ToolError"
        assert value["named"]["kind"] == "not_found"
        assert value["named"]["tool"] == "test_get_user"
        assert value["named"]["retryable"] is False
        assert "no user nobody" in value["named"]["message"]
        assert value["plain"]["kind"] == "unknown"
        assert "it broke" in value["plain"]["message"]
        # Checked against the upstream inputSchema before anything goes upstream.
        assert value["badArgs"]["kind"] == "invalid"
        assert "args.a" in value["badArgs"]["message"]
        assert value["unknownTool"]["kind"] == "not_found"
        assert value["found"] == {"result": "Ada"}
        # Every call counts against max_calls, the refused ones too.
        assert result.structured_content["calls"] == 5


async def test_limits_hold_and_cannot_be_raised(tmp_path):
    config = write_config(tmp_path, budget={"wall_clock": "5s", "max_calls": 3})
    async with connect(tmp_path, config) as session:
        spin = await run(session, "while (true) {}", limits={"wall_clock_ms": 300})
        assert spin.is_error
        assert spin.structured_content["kind"] == "limit"
        assert "wall clock" in spin.structured_content["error"]
        assert spin.structured_content["elapsed_ms"] < 5000

        calls = await run(session, """
            const r = [];
            for (let i = 0; i < 4; i++) {
              try { r.push((await test_add({ a: i, b: 0 })).sum); } catch (e) { r.push(e.kind); }
            }
            r
        """)
        assert calls.structured_content["value"] == [0, 1, 2, "limit"]

        higher = await run(session, "1", limits={"wall_clock_ms": 60000})
        assert higher.is_error
        assert higher.structured_content["kind"] == "invalid"
        assert "more than this server allows (5000ms)" in higher.structured_content["error"]

        failing = await run(session, "null.boom")
        assert failing.is_error and failing.structured_content["kind"] == "invalid"
        assert "line 1" in failing.structured_content["error"]


async def test_past_max_running_a_run_waits_its_turn(tmp_path):
    # Every request started an execution at once: a client could make the
    # server hold the pool's thousand slots times the memory cap.
    async with connect(tmp_path, write_config(tmp_path, max_running=1)) as session:
        results = {}
        async with anyio.create_task_group() as group:

            async def first():
                results["first"] = await run(session, "await test_wait_forever()", limits={"wall_clock_ms": 1000})

            group.start_soon(first)
            await wait_for(lambda: (tmp_path / "started").exists(), "the first run's call")
            results["second"] = await run(session, "2")
        assert results["first"].structured_content["kind"] == "limit", results
        assert results["second"].structured_content["value"] == 2, results
        # The second ran once the first had ended (the server logs each end).
        ended = [line for line in (tmp_path / "stderr").read_text().splitlines() if "run_javascript ended" in line]
        assert [line.split()[4] for line in ended] == ["limit", "ok"], ended


async def test_a_cancellation_from_the_client_cancels_the_execution_and_its_upstream_call(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        async with anyio.create_task_group() as group:

            async def call():
                await session.call_tool("run_javascript", {"code": "await test_wait_forever()"})
                raise AssertionError("a cancelled call got an answer")

            group.start_soon(call)
            await wait_for(lambda: (tmp_path / "started").exists(), "the upstream call")
            # Abandoning the request sends notifications/cancelled.
            group.cancel_scope.cancel()
        # The upstream call was cancelled upstream, and the execution ended `cancelled`.
        await wait_for(lambda: (tmp_path / "cancelled").exists(), "the upstream cancellation")
        stderr = tmp_path / "stderr"
        await wait_for(lambda: "cancelled by the client" in stderr.read_text(), "the execution's end")
        assert "run_javascript ended cancelled" in stderr.read_text()
        # The server goes on.
        result = await run(session, "(await test_add({ a: 1, b: 1 })).sum")
        assert result.structured_content["value"] == 2


async def test_an_upstream_server_that_exits_mid_call_fails_the_call_and_is_started_again(tmp_path):
    async with connect(tmp_path, write_config(tmp_path)) as session:
        code = """
            const before = (await test_pid()).result;
            let crash;
            try { await test_crash(); crash = "answered"; } catch (e) { crash = { kind: e.kind, message: e.message }; }
            const after = (await test_pid()).result;
            ({ before, crash, after })
        """
        result = await run(session, code)
        value = result.structured_content["value"]
        assert value["crash"]["kind"] == "transient", value
        assert "test" in value["crash"]["message"]
        assert value["before"] != value["after"]  # a new process
        # The next execution finds it running, and the other server was never touched.
        again = await run(session, "[(await test_add({a: 1, b: 2})).sum, await everything_echo({message: 'x'})]")
        assert again.structured_content["value"][0] == 3


async def test_a_start_cut_short_by_the_wall_clock_still_holds_off_the_next_calls(tmp_path):
    # A server that hangs when started a second time: the start that the
    # first run's wall clock cut short left no mark, so every later call
    # started it again and waited out its own wall clock (`limit`); within
    # the restart backoff (2 s) it now fails at once, `transient`.
    switch = tmp_path / "once"
    script = (
        f"import os, runpy, sys, time; p = {str(switch)!r}\n"
        "if os.path.exists(p): time.sleep(600)\n"
        "open(p, 'w').close()\n"
        f"sys.argv = ['upstream.py']; runpy.run_path({str(HERE / 'upstream.py')!r}, run_name='__main__')\n"
    )
    servers = {"test": {"command": sys.executable, "args": ["-c", script]}}
    async with connect(tmp_path, write_config(tmp_path, servers)) as session:
        crashed = await run(session, "try { await test_crash() } catch (e) { return e.kind }")
        assert crashed.structured_content["value"] == "transient", crashed
        cut = await run(session, "await test_pid()", limits={"wall_clock_ms": 500})
        assert cut.structured_content["kind"] == "limit", cut
        code = "try { await test_pid(); return 'answered' } catch (e) { return [e.kind, e.message] }"
        held_off = (await run(session, code)).structured_content["value"]
        assert held_off[0] == "transient", held_off
        assert "did not finish before the call that started it ended" in held_off[1]


async def test_a_server_that_cannot_start_again_is_reported_not_waited_for(tmp_path):
    # A server that answers once then exits for good: its command works the
    # first time only (the marker file is the switch).
    switch = tmp_path / "once"
    script = (
        f"import os, runpy, sys; p = {str(switch)!r}\n"
        "if os.path.exists(p): sys.exit('refusing to start twice')\n"
        "open(p, 'w').close()\n"
        f"sys.argv = ['upstream.py']; runpy.run_path({str(HERE / 'upstream.py')!r}, run_name='__main__')\n"
    )
    servers = {"test": {"command": sys.executable, "args": ["-c", script]}}
    async with connect(tmp_path, write_config(tmp_path, servers)) as session:
        code = """
            const r = [];
            for (const f of [test_crash, test_pid, test_pid]) {
              try { r.push(await f()); } catch (e) { r.push(e.kind + ": " + e.message); }
            }
            r
        """
        result = await run(session, code)
        value = result.structured_content["value"]
        assert value[0].startswith("transient"), value
        assert value[1].startswith("transient") and "is down" in value[1], value
        assert value[2].startswith("transient"), value


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def http_upstream(script, *args):
    """An upstream MCP server, `script ARGS PORT` of this directory, serving
    streamable HTTP on a free port: its URL, once it accepts connections."""
    port = free_port()
    upstream = subprocess.Popen([sys.executable, str(HERE / script), *args, str(port)],
                                stderr=subprocess.DEVNULL)
    try:
        def accepting():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        await wait_for(accepting, "the upstream HTTP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        upstream.terminate()
        upstream.wait(timeout=HANG)


@asynccontextmanager
async def listening(config, **popen):
    """`wasmwire mcp --listen 127.0.0.1:0` with `config`: its URL, once it
    listens, and its process."""
    server = subprocess.Popen([str(WASMWIRE), "mcp", "--config", str(config), "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True, **popen)
    try:
        # Lines about the upstream tools (a schema bound in part) may come first.
        said = []
        with anyio.fail_after(HANG):
            while "listening on " not in (line := await anyio.to_thread.run_sync(server.stderr.readline)):
                said.append(line)
                assert line, said
        assert "listening on http://127.0.0.1:" in line, said + [line]
        yield line.split("listening on ")[1].strip(), server
    finally:
        server.terminate()
        server.wait(timeout=HANG)


async def test_streamable_http_both_ways(tmp_path):
    # The upstream over streamable HTTP too.
    async with http_upstream("upstream.py", "http") as upstream_url:
        config = write_config(tmp_path, {"web": {"url": upstream_url}})
        async with listening(config) as (url, _):
            with anyio.fail_after(HANG):
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        result = await session.call_tool(
                            "run_javascript",
                            {"code": "(await Promise.all([1, 2].map(b => web_add({a: 1, b})))).map(r => r.sum)"})
                        assert result.structured_content["value"] == [2, 3], result


async def test_over_streamable_http_sessions_past_max_sessions_are_refused_until_one_closes(tmp_path):
    # Unbounded, a client opening sessions in a loop grew the server by
    # 1 GiB in 7 s (each idle session held ~53 KiB for 5 minutes).
    async with listening(write_config(tmp_path, {}, max_sessions=2)) as (url, _):
        address = url.split("//")[1].split("/")[0]
        host, port = address.rsplit(":", 1)

        def third_initialize():
            connection = http.client.HTTPConnection(host, int(port), timeout=HANG)
            try:
                answers = []
                # Twice on one connection: a refusal leaves it usable.
                for id in ("third", 7):
                    connection.request("POST", "/mcp", json.dumps({**INITIALIZE, "id": id}),
                                       {"Content-Type": "application/json",
                                        "Accept": "application/json, text/event-stream"})
                    response = connection.getresponse()
                    answers.append((response.status, json.loads(response.read())))
                return answers
            finally:
                connection.close()

        async def open_session(stack):
            read, write = await stack.enter_async_context(streamable_http_client(url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            return session

        # A client that sends an initialize's headers and never its body
        # holds up no other client's session.
        stalled = socket.create_connection((host, int(port)), timeout=HANG)
        stalled.sendall(f"POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n"
                        "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n".encode())
        try:
            with anyio.fail_after(HANG):
                async with AsyncExitStack() as kept:
                    await open_session(kept)
                    async with AsyncExitStack() as closed:
                        await open_session(closed)
                        refused = await anyio.to_thread.run_sync(third_initialize)
                        for (status, answer), id in zip(refused, ("third", 7)):
                            assert status == 503, answer
                            assert answer["id"] == id, answer
                            assert "at most 2 streamable-HTTP sessions open (max_sessions)" in answer["error"]["message"]
                    # The SDK ends its session (DELETE) as it closes: room again.
                    async with AsyncExitStack() as again:
                        session = await open_session(again)
                        result = await session.call_tool("run_javascript", {"code": "return 6 * 7"})
                        assert result.structured_content["value"] == 42, result
        finally:
            stalled.close()


async def assert_served(url):
    """An SDK client over streamable HTTP at `url` is served a run."""
    with anyio.fail_after(HANG):
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("run_javascript", {"code": "return 'served'"})
                assert result.structured_content["value"] == "served", result


async def test_over_streamable_http_connections_past_the_file_limit_do_not_spin_the_server(tmp_path):
    # Past `ulimit -n`, accept fails at once and the listener stays ready:
    # the server spun a whole core (2.99 s of CPU in 3 s) until a
    # connection closed.
    import resource

    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    async with listening(write_config(tmp_path, {}), preexec_fn=few_files) as (url, server):
        host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
        # More than the server has descriptors for; the rest wait in the
        # listen backlog.
        held = [socket.create_connection((host, int(port)), timeout=HANG) for _ in range(80)]
        try:
            def cpu_seconds():
                fields = (Path("/proc") / str(server.pid) / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

            await anyio.sleep(0.5)
            before, started = cpu_seconds(), time.monotonic()
            await anyio.sleep(2)
            used, elapsed = cpu_seconds() - before, time.monotonic() - started
            assert used < elapsed / 4, f"the server used {used:.2f} s of CPU in {elapsed:.2f} s holding connections"
        finally:
            for connection in held:
                connection.close()
        await assert_served(url)


async def test_over_streamable_http_connections_are_bounded_and_unfinished_requests_cut_off(tmp_path):
    # With no bound and no header timeout, 10,000 connections that sent
    # half a request's headers held 10,000 descriptors and 157 MiB for ever.
    config = write_config(tmp_path, {}, max_connections=4, header_timeout="1s")
    async with listening(config) as (url, server):
        address = url.split("//")[1].split("/")[0]
        host, port = address.rsplit(":", 1)

        def open_files():
            return len(os.listdir(f"/proc/{server.pid}/fd"))

        def cut_off_all(connections):
            """Waits until the server has closed each of `connections`,
            reading what it sends; the most descriptors it held meanwhile,
            and the bytes each connection got."""
            got = {c: b"" for c in connections}
            open_now, most = set(connections), open_files()
            deadline = time.monotonic() + HANG
            while open_now:
                assert time.monotonic() < deadline, f"{len(open_now)} connections never cut off"
                readable, _, _ = select.select(list(open_now), [], [], 0.02)
                for c in readable:
                    try:
                        data = c.recv(65536)
                    except ConnectionResetError:
                        data = b""
                    got[c] += data
                    if not data:
                        open_now.discard(c)
                most = max(most, open_files())
            return most, got

        before = open_files()
        # More than max_connections, each half a request's headers: four
        # are taken, the rest wait in the listen backlog until the first
        # are cut off.
        stalled = [socket.create_connection((host, int(port)), timeout=HANG) for _ in range(10)]
        try:
            for c in stalled:
                c.sendall(f"POST /mcp HTTP/1.1\r\nHost: {address}\r\n".encode())
            most, _ = await anyio.to_thread.run_sync(cut_off_all, stalled)
            assert most - before <= 4, f"{most - before} connections held at once past max_connections 4"
        finally:
            for c in stalled:
                c.close()

        # An initialize whose body never comes is answered 408 in time.
        slow = socket.create_connection((host, int(port)), timeout=HANG)
        try:
            slow.sendall(f"POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n"
                         "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n".encode())
            slow.sendall(b'{"jsonrpc": "2.0"')
            reader = slow.makefile("rb")
            status = reader.readline()
            assert status.startswith(b"HTTP/1.1 408"), status
        finally:
            slow.close()

        # The places came back: a client is served.
        await assert_served(url)


async def test_the_allow_and_deny_lists_choose_the_bound_tools(tmp_path):
    config = write_config(tmp_path, tools={"allow": ["test.*"], "deny": ["test.crash", "test.wait_*"]})
    async with connect(tmp_path, config) as session:
        declarations = (await session.call_tool("describe_tools", {})).content[0].text
        assert "test_add(" in declarations
        assert "test_crash" not in declarations and "test_wait_forever" not in declarations
        assert "everything_" not in declarations
        result = await run(session, "let kind; try { await host.call('test_crash', {}) } catch (e) { kind = e.kind } kind")
        assert result.structured_content["value"] == "not_found"


def test_a_bad_config_is_refused_with_the_reason(tmp_path):
    cases = [
        ({"mcpServers": {"a": {"cmd": "x"}}}, "each server is"),
        ({"mcpServers": {}, "budget": {"wall_clock": "ten"}}, "budget.wall_clock"),
        ({"mcpServers": {"gone": {"command": str(tmp_path / "no-such-program")}}}, 'upstream server "gone"'),
        # Over the backend's ceiling: it started, then failed every call.
        ({"mcpServers": {}, "budget": {"max_memory": "100GiB"}}, "holds `max_memory` only up to"),
        # Under what the guest's memory starts at: it started, then failed every call.
        ({"mcpServers": {}, "budget": {"max_memory": "2MiB"}}, "a trivial program cannot run under it"),
    ]
    for config, why in cases:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(config))
        done = subprocess.run([str(WASMWIRE), "mcp", "--config", str(path)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=HANG)
        assert done.returncode == 2, (config, done)
        assert why in done.stderr, (config, done.stderr)


def raw_answers(tmp_path, lines):
    """What `wasmwire mcp` (no upstream servers) answers to `lines`, each
    sent as a line of JSON after an initialize, in order. stdin stays open
    until every request is answered: closing it ends the session, and
    cancels what still runs."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    lines = [{**INITIALIZE, "id": 0}, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *lines]
    # Every message with an id that is no answer is answered, one without a
    # method too (counting only those with one closed stdin with an answer
    # still due, which the server then dropped: item 117).
    requests = sum(1 for line in lines for m in (line if isinstance(line, list) else [line])
                   if "id" in m and "result" not in m and "error" not in m)
    server = RawServer(tmp_path, path)
    try:
        for line in lines:
            server.send(line)
        answers = [server.read() for _ in range(requests)]
        server.process.stdin.close()
        assert server.process.wait(timeout=HANG) == 0
        rest = bytes(server.pending) + server.process.stdout.read()
        return answers + [json.loads(line) for line in rest.splitlines()]
    finally:
        server.close()


def test_a_request_serde_json_does_not_read_into_values_is_answered_under_its_id(tmp_path):
    # rmcp dropped such a line without a word, and the client waited for
    # ever: what JSON.stringify writes of a string cut through an emoji, a
    # NaN as Python writes it.
    answers = raw_answers(tmp_path, [
        run_request(1, "return 'caf\ud83d'"),
        {**run_request(2, "return 2"), "params": {"name": "run_javascript", "arguments": {
            "code": "return 2", "limits": {"wall_clock_ms": float("nan")}}}},
        run_request(3, "return 'caf\ud83d\ude00'"),
    ])
    by_id = {a["id"]: a for a in answers}
    for id, why in [(1, "surrogate"), (2, "expected value")]:
        error = by_id[id]["error"]
        assert error["code"] == -32700 and why in error["message"], by_id[id]
    assert "caf\U0001F600" in by_id[3]["result"]["content"][0]["text"], by_id[3]


async def test_an_upstream_answer_serde_json_does_not_read_fails_its_call_at_once(tmp_path):
    # The call waited out the whole wall clock ("1 tool call still
    # running"), or for ever without one, though the upstream had answered.
    servers = {"raw": {"command": sys.executable, "args": [str(HERE / "raw_upstream.py")]}}
    config = write_config(tmp_path, servers, budget={"wall_clock": "0"})
    program = """
        const seen = {};
        for (const mode of ["lone_surrogate", "nan", "past_a_double", "error_not_an_error", "fine"]) {
            try { seen[mode] = await raw_odd({mode}) } catch (e) { seen[mode] = e.kind + ": " + e.message }
        }
        return seen
    """
    async with connect(tmp_path, config) as session:
        seen = json.loads((await run(session, program)).content[0].text)["value"]
    for mode in ["lone_surrogate", "nan", "past_a_double", "error_not_an_error"]:
        assert "cannot be read" in seen[mode], (mode, seen[mode])
    assert "number out of range" in seen["past_a_double"], seen
    assert seen["fine"] == "caf\U0001F600", seen


async def test_an_upstream_that_dies_while_answering_fails_the_call_transient_and_starts_again(tmp_path):
    # An answer cut short by the server's death was read as JSON that
    # cannot be read (`unknown`, not worth a retry), and the next call,
    # sent on the dying connection, failed too. A whole last answer
    # without its newline still reaches its call.
    servers = {"raw": {"command": sys.executable, "args": [str(HERE / "raw_upstream.py")]}}
    program = """
        const seen = [];
        for (const mode of ["cut_then_exit", "fine", "whole_then_exit", "fine"]) {
            try { seen.push(await raw_odd({mode})) } catch (e) { seen.push(e.kind + ": " + e.message) }
        }
        return seen
    """
    async with connect(tmp_path, write_config(tmp_path, servers)) as session:
        for _ in range(3):
            seen = (await run(session, program)).structured_content["value"]
            assert seen[0].startswith("transient: ") and "cannot be read" not in seen[0], seen
            assert seen[1:] == ["caf\U0001F600", "last", "caf\U0001F600"], seen


def test_a_tools_call_whose_params_do_not_fit_is_answered_invalid_params(tmp_path):
    # rmcp reads a `tools/call` without a string `name`, or with `arguments`
    # that are no object, as a request of its own and answered it "method
    # not found" (-32601, message "tools/call"): a client looked for the
    # wrong mistake. Raw lines, since the SDK's own client cannot send them.
    answers = raw_answers(tmp_path, [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "run_javascript", "arguments": "1 + 1"}},
        {"jsonrpc": "2.0", "id": 5, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "run_javascript", "arguments": {"code": "1 + 1"}}},
    ])
    answers = {a["id"]: a for a in answers if "id" in a}
    for id, why in [(1, "missing field `name`"), (2, "expected a string"), (3, "no params"),
                    (4, "expected a map")]:
        error = answers[id]["error"]
        assert error["code"] == -32602, answers[id]
        assert why in error["message"] and "tools/call" in error["message"], error
    assert answers[5]["error"]["code"] == -32601, answers[5]
    assert "no/such/method" in answers[5]["error"]["message"], answers[5]
    # A request that fits, after them, still runs.
    assert answers[6]["result"]["structuredContent"]["value"] == 2, answers[6]


def test_a_batch_or_a_request_of_another_jsonrpc_version_is_answered_under_its_ids(tmp_path):
    # rmcp answers such a line "Invalid request" with no id, which no client
    # can match to its call: the call waited for ever. Raw lines, since the
    # SDK's own client cannot send them.
    answers = raw_answers(tmp_path, [
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": "two", "method": "tools/list"}],
        {"jsonrpc": "1.0", "id": 3, "method": "tools/list"},
        {"id": 4, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
    ])
    by_id = {a["id"]: a for a in answers if "id" in a}
    for id, why in [(1, "batch"), ("two", "batch"), (3, 'got "1.0"'), (4, "got none")]:
        error = by_id[id]["error"]
        assert error["code"] == -32600 and why in error["message"], by_id[id]
    # Nothing answered under no id, and what follows is served.
    assert all("id" in a for a in answers), answers
    assert [t["name"] for t in by_id[5]["result"]["tools"]] == ["run_javascript", "describe_tools"]


class Watched:
    """`wasmwire mcp` as a process whose memory, CPU time and stderr a test
    reads; its stderr goes to tmp_path/stderr."""

    def __init__(self, tmp_path, args, **popen):
        self.stderr = tmp_path / "stderr"
        with open(self.stderr, "w") as errlog:
            self.process = subprocess.Popen([str(WASMWIRE), "mcp", *args], stderr=errlog, **popen)

    def status(self, key):
        """A /proc/PID/status figure, in kB."""
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        raise KeyError(key)

    def cpu_ticks(self):
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    def ended(self):
        """How many executions the server has logged as ended."""
        return self.stderr.read_text().count("run_javascript ended")

    def wait_ended(self, runs):
        """Waits until the server has logged `runs` executions as ended."""
        deadline = time.monotonic() + HANG
        while self.ended() < runs:
            assert time.monotonic() < deadline and self.process.poll() is None, f"{runs} runs did not end"
            time.sleep(0.02)

    def settle(self, all_runs):
        """Waits until the server does nothing more, or has ended `all_runs`
        runs: its CPU time and the runs it logged as ended unchanged, and
        its RSS not risen, across 20 reads 50 ms apart. (That nothing more
        happens is no fact to wait for; a server stalled a second while it
        has work can only make a test of the old behaviour pass, so it is
        called once what must happen has.)"""
        deadline = time.monotonic() + HANG
        seen, still = None, 0
        while still < 20 and self.ended() < all_runs:
            assert time.monotonic() < deadline, "the server did not settle"
            now = (self.cpu_ticks(), self.ended())
            rss = self.status("VmRSS")
            if seen is not None and now == seen[:2] and rss <= seen[2]:
                still += 1
            else:
                seen, still = (*now, rss), 0
            time.sleep(0.05)

    def close(self):
        self.process.kill()
        self.process.wait(timeout=HANG)


class RawServer(Watched):
    """`wasmwire mcp` on stdio, spoken to line by line: the SDK's client
    reads every answer as it comes, and these tests must not."""

    def __init__(self, tmp_path, config):
        super().__init__(tmp_path, ["--config", str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.pending = bytearray()

    def send(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read(self, within=HANG):
        """The next line the server wrote, as JSON (a deadline turns a hang into a failure)."""
        deadline = time.monotonic() + within
        fd = self.process.stdout.fileno()
        while (end := self.pending.find(b"\n")) < 0:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"no line from the server in {within} s"
            chunk = os.read(fd, 1 << 20)
            assert chunk, "the server closed its stdout"
            self.pending += chunk
        line = bytes(self.pending[:end])
        del self.pending[:end + 1]
        return json.loads(line)

    def read_to_end(self):
        """Every line the server writes until it closes its stdout, as JSON."""
        lines = []
        while True:
            try:
                lines.append(self.read())
            except AssertionError as closed:
                assert "closed its stdout" in str(closed), closed
                return lines

    def initialize(self):
        self.send(INITIALIZE)
        assert self.read()["id"] == "init"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def run(self, id, code):
        self.send(run_request(id, code))

    def close(self):
        self.process.stdin.close()
        super().close()
        self.process.stdout.close()


INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


def run_request(id, code):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_javascript", "arguments": {"code": code}}}


# 40 runs whose programs each return 4 MB (an answer of 8 MB: the value
# goes as structured content and as text), 2 at a time.
MAX_RUNNING, COUNT, SIZE = 2, 40, 4_000_000


def big(i=None):
    return f'return "x".repeat({SIZE})' + ("" if i is None else f" + {i}")


def check_held(server, base):
    """The server, sent COUNT big runs and read nothing, settled holding at
    most MAX_RUNNING answers."""
    server.wait_ended(1 + MAX_RUNNING)
    server.settle(1 + COUNT)
    peak, ended = server.status("VmHWM"), server.ended() - 1
    # An answer is the value twice and its line of JSON: 3 x SIZE while it
    # is written; the runs and the answers are at most MAX_RUNNING of each,
    # and the base had one of each.
    bound = base + (2 * MAX_RUNNING + 1) * 3 * SIZE // 1024
    print(f"base {base} kB, peak {peak} kB with {ended} runs ended, bound {bound} kB")
    assert ended == MAX_RUNNING, f"{ended} runs ended while nothing was read (peak {peak} kB)"
    assert peak <= bound, f"peak {peak} kB, over base {base} kB + the answers' {bound - base} kB"


def check_answers(answers):
    """Every answer arrived, once, under its id, with its own value."""
    seen = {}
    for answer in answers:
        assert answer["id"] not in seen, f"{answer['id']} answered twice"
        seen[answer["id"]] = answer["result"]["structuredContent"]["value"]
    assert sorted(seen) == list(range(COUNT))
    for i, value in seen.items():
        assert value == "x" * SIZE + str(i), (i, len(value), value[-4:])


def test_a_client_that_does_not_read_makes_the_server_hold_at_most_max_running_answers(tmp_path):
    # An execution's place (max_running) was given back when it ended, not
    # when its answer had been written: a client that sent 100 programs
    # returning 8 MB each and read nothing drove the server to 1.7 GB, every
    # finished answer queued in it. Now a run starts only once an answer is
    # out, so the server holds at most max_running answers.
    server = RawServer(tmp_path, write_config(tmp_path, {}, max_running=MAX_RUNNING))
    try:
        server.initialize()
        # The base: the peak after one such run, its answer read.
        server.run("one", big())
        assert len(server.read()["result"]["structuredContent"]["value"]) == SIZE
        base = server.status("VmHWM")
        for i in range(COUNT):
            server.run(i, big(i))
        check_held(server, base)
        check_answers(server.read() for _ in range(COUNT))
    finally:
        server.close()


def sse_answer(response):
    """The JSON-RPC answer among a response's server-sent events."""
    body = response.read().decode()
    events = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
    answers = [e for e in events if "result" in e or "error" in e]
    assert len(answers) == 1, body[:300]
    return answers[0]


def http_session(server):
    """Waits until `server` (`--listen`) listens, opens a session with raw
    HTTP: `post(message, session)` (a connection with the request sent),
    the address, and the session's headers."""
    deadline = time.monotonic() + HANG
    while "listening on http://" not in server.stderr.read_text():
        assert time.monotonic() < deadline and server.process.poll() is None, server.stderr.read_text()
        time.sleep(0.02)
    address = server.stderr.read_text().split("listening on http://")[1].split("/")[0]
    host, port = address.rsplit(":", 1)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(message, session):
        connection = http.client.HTTPConnection(host, int(port), timeout=HANG)
        connection.request("POST", "/mcp", json.dumps(message), {**headers, **session})
        return connection

    response = post(INITIALIZE, {}).getresponse()
    session = {"mcp-session-id": response.getheader("mcp-session-id"), "mcp-protocol-version": "2025-06-18"}
    assert sse_answer(response)["id"] == "init"
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session).getresponse().read()
    return post, (host, int(port)), session


def test_over_streamable_http_a_request_whose_tree_would_not_fit_is_refused_unread(tmp_path):
    # 3.6 MB of `[{"": 0}, ...]` in a request's arguments: rmcp read it into
    # a tree of about 180 MiB before anything looked at it, and every
    # connection of every session could send one at once.
    config = write_config(tmp_path, {}, header_timeout="2s")
    server = Watched(tmp_path, ["--config", str(config), "--listen", "127.0.0.1:0"])
    try:
        post, (host, port), session = http_session(server)
        base = server.status("VmHWM")
        junk = {"jsonrpc": "2.0", "id": "junk", "method": "tools/call",
                "params": {"name": "run_javascript", "arguments": {"code": "1", "x": [{"": 0}] * 400000}}}
        response = post(junk, session).getresponse()
        answer = json.loads(response.read())
        assert response.status == 413, (response.status, answer)
        assert answer["id"] == "junk" and "would take about" in answer["error"]["message"], answer
        grew = (server.status("VmHWM") - base) // 1024
        assert grew < 64, f"the server's peak grew {grew} MiB reading a refused request"
        # The session is still served, and a request of ordinary size is read.
        response = post(run_request("after", "[1, 2, 3].length"), session).getresponse()
        assert sse_answer(response)["result"]["structuredContent"]["value"] == 3
        # The server reads the body itself now, within the header timeout:
        # one that never comes is answered 408 (rmcp waited for it for ever).
        slow = socket.create_connection((host, port), timeout=HANG)
        try:
            head = "".join(f"{k}: {v}\r\n" for k, v in session.items())
            slow.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Content-Type: application/json\r\n"
                         "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n".encode())
            slow.sendall(b'{"jsonrpc": "2.0"')
            status = slow.makefile("rb").readline()
            assert status.startswith(b"HTTP/1.1 408"), status
        finally:
            slow.close()
    finally:
        server.close()


def test_over_streamable_http_too_a_client_that_does_not_read_makes_the_server_hold_at_most_max_running_answers(
        tmp_path):
    # Each call on its own connection, none read: every answer was queued
    # for its connection (394 MB for these 40). What the kernel takes of an
    # answer a client does not read is its connection's send buffer (4 MiB
    # at most by default), so an answer of 8 MB stays mostly in the server.
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        send_buffer = int(f.read().split()[2])
    if send_buffer >= 2 * SIZE:
        pytest.skip(f"the kernel's send buffers (tcp_wmem, up to {send_buffer} bytes) take a whole answer")
    config = write_config(tmp_path, {}, max_running=MAX_RUNNING)
    server = Watched(tmp_path, ["--config", str(config), "--listen", "127.0.0.1:0"])
    connections = []
    try:
        post, (host, port), session = http_session(server)
        base_call = post(run_request("one", big()), session)
        assert len(sse_answer(base_call.getresponse())["result"]["structuredContent"]["value"]) == SIZE
        base = server.status("VmHWM")
        for i in range(COUNT):
            connections.append(post(run_request(i, big(i)), session))
        check_held(server, base)
        # Read all at once: a run waits for any of its session's answers
        # to be read, not for the one its connection would give next.
        with concurrent.futures.ThreadPoolExecutor(COUNT) as readers:
            check_answers(readers.map(lambda connection: sse_answer(connection.getresponse()), connections))
    finally:
        for connection in connections:
            connection.close()
        server.close()


def test_calls_cancelled_or_failed_while_answers_are_not_read_give_their_places_back(tmp_path):
    # One place: a place not given back would leave every later call waiting.
    server = RawServer(tmp_path, write_config(tmp_path, {}, max_running=1))

    def cancel(id):
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})

    try:
        server.initialize()
        server.run(0, big())  # its answer fills what stdout takes, and waits
        server.wait_ended(1)
        server.run(1, "return 1")  # waits for the place
        server.run(2, "return 2")  # waits too
        server.settle(3)
        assert server.ended() == 1, "a run started while an answer waited to be read"
        # Cancelled while waiting: no answer. Cancelled once its answer is
        # under way (it has, by now): the answer goes out whole, its place
        # with it; were it not yet under way, it would go unanswered.
        cancel(1)
        cancel(0)
        server.run(3, "throw new Error('boom')")  # an error result holds a place too
        server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                     "params": {"name": "nope", "arguments": {}}})  # a protocol error holds none
        answers = {}
        while not {2, 3, 4} <= answers.keys():
            answer = server.read()
            assert answer["id"] not in answers, answer
            answers[answer["id"]] = answer
        assert answers.keys() <= {0, 2, 3, 4}, sorted(answers)
        if 0 in answers:
            assert answers[0]["result"]["structuredContent"]["value"] == "x" * SIZE
        assert answers[2]["result"]["structuredContent"]["value"] == 2
        assert answers[3]["result"]["isError"] is True
        assert "boom" in answers[3]["result"]["structuredContent"]["error"]
        assert answers[4]["error"]["code"] == -32602
        # Every place came back: the next call runs.
        server.run(5, "return 5")
        answer = server.read()
        assert answer["id"] == 5 and answer["result"]["structuredContent"]["value"] == 5, answer
    finally:
        server.close()


# A program that runs until it is cancelled (no wall clock lets it go sooner
# than the test needs), and one that holds 4 MB of text while it waits.
BLOCKER = "await new Promise(resolve => setTimeout(resolve, 600000))"
PROGRAM = 4_000_000


def padded(value):
    return "//" + "x" * PROGRAM + f"\nreturn {value}"


def cancel_request(id):
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}


def start_blocker(server, id="blocker"):
    """Sends BLOCKER as `id` and waits until it runs (its console line,
    as a progress notification)."""
    request = run_request(id, 'console.log("started"); ' + BLOCKER)
    request["params"]["_meta"] = {"progressToken": id}
    server.send(request)
    note = server.read()
    assert note["method"] == "notifications/progress" and note["params"]["message"] == "started", note


def wait_stderr(server, text, count, within=20):
    """Waits until `text` is on the server's stderr `count` times (a
    deadline of its own: the code before the fix never writes it)."""
    deadline = time.monotonic() + within
    while server.stderr.read_text().count(text) < count:
        assert time.monotonic() < deadline and server.process.poll() is None, \
            f"{count} x {text!r} not on stderr: {server.stderr.read_text()[-2000:]}"
        time.sleep(0.02)


def test_calls_that_must_wait_are_bounded_by_the_bytes_they_hold_and_refused_busy_past_it(tmp_path):
    # Every call waiting for a place was held, program and all, without
    # bound: 100 programs of 4 MB took the server to 528 MB. Now the
    # waiting calls hold at most max_waiting_bytes (64 MiB by default);
    # a call past it is answered "server busy" at once.
    count = 60
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        server.run("base", padded(0))
        assert server.read()["result"]["structuredContent"]["value"] == 0
        base = server.status("VmHWM")
        start_blocker(server)
        for i in range(count):
            server.run(i, padded(i))
        # 16 programs of 4 MB fit in 64 MiB: the rest are refused at once.
        # (Before, none was: every call waited.)
        busy = [server.read(within=20) for _ in range(count - 16)]
        grew = (server.status("VmHWM") - base) // 1024
        print(f"base {base} kB, grew {grew} MiB")
        for answer in busy:
            content = answer["result"]["structuredContent"]
            assert answer["result"]["isError"] and content["kind"] == "transient", answer
            assert "server busy" in content["error"] and "max_waiting_bytes" in content["error"], content
        waiters = sorted(set(range(count)) - {a["id"] for a in busy})
        # Before: every program held (about 300 MB here). Now 64 MiB of
        # them, and what a run of one holds.
        assert grew < 128, f"the server grew {grew} MiB holding {count} calls of 4 MB"
        # A waiting call cancelled never runs; the others run.
        server.send(cancel_request(waiters[0]))
        wait_stderr(server, f"(id {waiters[0]}) was not run: cancelled", 1)
        server.send(cancel_request("blocker"))
        answers = {a["id"]: a["result"]["structuredContent"]["value"] for a in
                   (server.read() for _ in range(len(waiters) - 1))}
        assert answers == {i: i for i in waiters[1:]}, answers
        assert server.ended() == 1 + 1 + len(waiters) - 1, server.stderr.read_text()[-2000:]
    finally:
        server.close()


def test_past_max_waiting_calls_are_refused_busy_at_once(tmp_path):
    config = write_config(tmp_path, {}, max_running=1, max_waiting=2, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        start_blocker(server)
        for i in range(10):
            server.run(i, f"return {i}")
        busy = [server.read() for _ in range(8)]
        for answer in busy:
            content = answer["result"]["structuredContent"]
            assert content["kind"] == "transient", answer
            assert "server busy: 2 calls already wait" in content["error"], content
            assert "raise max_waiting in the server's config" in content["error"], content
        waiters = sorted(set(range(10)) - {a["id"] for a in busy})
        server.send(cancel_request("blocker"))
        answers = {a["id"]: a["result"]["structuredContent"]["value"] for a in (server.read(), server.read())}
        assert answers == {i: i for i in waiters}, answers
    finally:
        server.close()


def test_a_stdio_client_that_reads_nothing_is_no_longer_read_past_a_bound(tmp_path):
    # rmcp read every line and started a task for each request, whatever
    # became of the answers: 20,000 small calls from a client that read
    # nothing took the server to 168 MB. Now past 3 x max_running +
    # max_waiting + 64 requests unanswered it reads no more, and the
    # client's writes block, as with any pipe.
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    sent = [0]
    writer = None

    def flood():
        line = b"".join(json.dumps(run_request(i, "return 1" + " " * 2000)).encode() + b"\n"
                        for i in range(20_000))
        try:
            server.process.stdin.write(line)
            server.process.stdin.flush()
            sent[0] = 20_000
        except (BrokenPipeError, ValueError):
            pass

    try:
        server.initialize()
        base = server.status("VmHWM")
        start_blocker(server)
        writer = concurrent.futures.ThreadPoolExecutor(1)
        writer.submit(flood)
        server.settle(10**9)
        grew = (server.status("VmHWM") - base) // 1024
        print(f"base {base} kB, grew {grew} MiB")
        assert sent[0] == 0, "the server read all 20,000 calls while nothing was read"
        assert grew < 32, f"the server grew {grew} MiB for calls whose answers were not read"
        # Read again, it reads again: the refusals come, and more.
        busy = 0
        while busy < 200:
            answer = server.read()
            if answer["result"]["structuredContent"].get("kind") == "transient":
                busy += 1
    finally:
        # The writer may be blocked on the pipe: the server goes first.
        server.process.kill()
        if writer is not None:
            writer.shutdown(wait=True)
        server.close()


def test_on_stdin_eof_runs_are_cancelled_at_once_and_the_server_exits_though_stdout_is_not_read(tmp_path):
    # After stdin closed, the server waited for ever while an answer was
    # stuck behind a stdout the client did not read, and otherwise waited
    # 5 s with its executions still running before it cancelled them.
    config = write_config(tmp_path, {}, max_running=2, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        server.run("spin", "while (true) {}")
        server.run("big", 'return "x".repeat(1000000)')  # its answer fills the pipe
        server.wait_ended(1)
        closed = time.monotonic()
        server.process.stdin.close()
        # (Before, it had not exited after 20 s.)
        rc = server.process.wait(timeout=10)
        took = time.monotonic() - closed
        errors = server.stderr.read_text()
        assert rc == 0, errors
        assert "run_javascript ended cancelled" in errors and "the server is stopping" in errors, errors
        # Answers get 2 s to flush; the process then ends at once.
        assert took < 4, f"exited {took:.1f} s after stdin closed"
    finally:
        server.close()


def test_on_stdin_eof_a_client_still_reading_gets_every_answer_and_the_server_exits_at_once(tmp_path):
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        start_blocker(server, "spin")
        closed = time.monotonic()
        server.process.stdin.close()
        answer = server.read()
        assert server.process.wait(timeout=HANG) == 0
        took = time.monotonic() - closed
        assert answer["id"] == "spin" and answer["result"]["structuredContent"]["kind"] == "cancelled", answer
        # Before, 5 s, the program running all the while.
        assert took < 1.5, f"exited {took:.1f} s after stdin closed"
    finally:
        server.close()


def test_on_stdin_eof_every_request_sent_before_it_is_answered_once(tmp_path):
    # stdin's end cancelled rmcp's service at once, and a request the
    # filter had passed on but rmcp had not yet read was never answered
    # (seen: the last of a burst, under a loaded machine). Each kind that
    # goes to rmcp: a list, a ping, runs (a run not started when the
    # server stops is answered that it was not run).
    config = write_config(tmp_path, {}, max_running=2, budget={"wall_clock": "60s"})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        burst = []
        for i in range(150):
            burst.append({"jsonrpc": "2.0", "id": f"list{i}", "method": "tools/list"})
            burst.append({"jsonrpc": "2.0", "id": f"ping{i}", "method": "ping"})
            burst.append(run_request(f"run{i}", f"return {i}"))
        server.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in burst))
        server.process.stdin.close()
        # Read as a client does, to the end of stdout: one that does not
        # read has its answers given up after 2 s.
        answers = server.read_to_end()
        assert server.process.wait(timeout=HANG) == 0, server.stderr.read_text()
        assert not server.pending, f"a line cut: {bytes(server.pending[-200:])!r}"
        ids = [a.get("id") for a in answers]
        missing = [m["id"] for m in burst if m["id"] not in ids]
        assert not missing, f"{len(missing)} unanswered, first {missing[:5]}"
        assert len(ids) == len(set(ids)) == len(burst), len(ids)
        for answer in answers:
            if answer["id"].startswith("list"):
                assert len(answer["result"]["tools"]) == 2, answer
    finally:
        server.close()


@pytest.mark.parametrize("last, answer", [
    (b'{"jsonrpc":"2.0","id":"last","method":"ping"}', "result"),
    (b'{"jsonrpc":"2.0","id":"last","method":"tools/call","params":[1]}', "error"),
    (b'{"jsonrpc":"2.0","id":"last","method":"pi', "error"),
])
def test_a_last_request_without_its_newline_is_answered(tmp_path, last, answer):
    # rmcp drops a last line that never ends (as the TypeScript SDK does):
    # a client that closed stdin right after a request without its newline
    # waited on its id for ever. Now it is read as a line that ended: served,
    # refused for its shape, or refused as JSON cut short, under its id.
    config = write_config(tmp_path, {})
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        server.process.stdin.write(last)
        server.process.stdin.close()
        answers = server.read_to_end()
        assert server.process.wait(timeout=HANG) == 0, server.stderr.read_text()
        (got,) = [a for a in answers if a.get("id") == "last"]
        assert answer in got, got
    finally:
        server.close()


def test_on_a_signal_a_client_still_reading_gets_every_answer_and_the_server_exits_at_once(tmp_path):
    # A signal stopped the server as stdin closing does, but wrote no answer:
    # the client saw its stdout close with its calls unanswered.
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    for number in (signal.SIGTERM, signal.SIGHUP):
        server = RawServer(tmp_path, config)
        try:
            server.initialize()
            start_blocker(server, "spin")
            server.run("waiting", "return 1")
            # Requests are read in order: once the ping is answered, the
            # call before it has reached the server's handler.
            server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
            assert server.read()["id"] == "ping"
            sent = time.monotonic()
            server.process.send_signal(number)
            answers = {}
            for _ in range(2):
                answer = server.read()
                answers[answer["id"]] = answer["result"]
            assert server.process.wait(timeout=HANG) == 0
            took = time.monotonic() - sent
            assert answers["spin"]["structuredContent"]["kind"] == "cancelled", answers
            assert answers["waiting"]["isError"] and "not run" in json.dumps(answers["waiting"]), answers
            assert took < 1.5, f"exited {took:.1f} s after signal {number}"
        finally:
            server.close()


def test_over_streamable_http_a_signal_answers_every_call_before_the_server_exits(tmp_path):
    # The signal closed every connection at once: a call running, or
    # waiting for a place to run, got its stream ended with no answer.
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    server = Watched(tmp_path, ["--config", str(config), "--listen", "127.0.0.1:0"])
    try:
        post, _, session = http_session(server)
        request = run_request("running", 'console.log("started"); ' + BLOCKER)
        request["params"]["_meta"] = {"progressToken": "running"}
        running = post(request, session).getresponse()
        # Its console line, as a progress notification: it runs.
        while not (line := running.readline()).startswith(b"data:") or b"started" not in line:
            assert line, "the stream ended before the program ran"
        # The other has no place to run. Its stream's headers come once
        # the server has taken it; the signal comes after them.
        waiting = post(run_request("waiting", "return 1"), session).getresponse()
        assert waiting.status == 200, waiting.status
        sent = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        ran = sse_answer(running)
        waited = sse_answer(waiting)
        assert server.process.wait(timeout=HANG) == 0, server.stderr.read_text()
        took = time.monotonic() - sent
        assert ran["result"]["structuredContent"]["kind"] == "cancelled", ran
        assert waited["result"]["isError"] and "not run" in json.dumps(waited), waited
        assert took < 3, f"exited {took:.1f} s after the signal"
    finally:
        server.close()


def test_over_streamable_http_a_call_whose_connection_closed_while_it_waited_never_runs(tmp_path):
    # Each call on its own connection, closed once the response began: the
    # calls outlived their connections, held their programs (300 of 4 MB:
    # 1.31 GB) and all ran later, for no one.
    config = write_config(tmp_path, {}, max_running=1, budget={"wall_clock": "60s"})
    server = Watched(tmp_path, ["--config", str(config), "--listen", "127.0.0.1:0"])
    blocker = None
    try:
        post, _, session = http_session(server)
        base_call = post(run_request("base", padded(0)), session)
        assert sse_answer(base_call.getresponse())["result"]["structuredContent"]["value"] == 0
        base = server.status("VmHWM")
        blocker = post(run_request("blocker", BLOCKER), session)
        gone = 20
        for i in range(gone):
            connection = post(run_request(i, padded(i)), session)
            assert connection.getresponse().status == 200
            connection.close()
        wait_stderr(server, "was not run: its HTTP response stream closed", gone)
        grew = (server.status("VmHWM") - base) // 1024
        print(f"base {base} kB, grew {grew} MiB")
        post(cancel_request("blocker"), session).getresponse().read()
        after = post(run_request("after", "return 2"), session)
        assert sse_answer(after.getresponse())["result"]["structuredContent"]["value"] == 2
        # The base, the blocker (cancelled) and the last: none of the gone.
        assert server.ended() == 3, server.stderr.read_text()[-2000:]
        assert grew < 64, f"the server grew {grew} MiB"
    finally:
        if blocker is not None:
            blocker.close()
        server.close()


def test_an_upstream_that_floods_requests_is_held_to_a_bound_and_the_server_still_exits(tmp_path):
    # rmcp answers an upstream's `ping` in a task of its own, and the
    # answer waits for an upstream that does not read: `wasmwire mcp` grew
    # by 2 GB in 12 s over stdio, 30 MB a second over HTTP, where it then
    # ignored stdin's end and SIGTERM alike.
    config = tmp_path / "flood.json"
    config.write_text(json.dumps({"mcpServers": {"raw": {
        "command": sys.executable, "args": [str(HERE / "raw_upstream.py"), "--flood"]}}}))
    server = RawServer(tmp_path, config)
    try:
        server.initialize()
        base = server.status("VmRSS")
        time.sleep(3)
        grown = server.status("VmRSS") - base
        server.run(1, "return await raw_odd({mode: 'fine'})")
        answer = server.read()
        assert answer["id"] == 1 and "caf" in answer["result"]["content"][0]["text"], answer
        assert grown < 64 << 10, f"grew by {grown} kB in 3 s of pings"
        assert "requests that were not yet answered" in server.stderr.read_text()
        server.process.stdin.close()
        assert server.process.wait(timeout=10) == 0
    finally:
        server.close()


async def test_console_lines_go_out_as_progress_in_batches_every_one_before_the_answer(tmp_path):
    # One notification per console line: 20,000 lines made 20,000
    # notifications, and the answer came after all of them. Now the lines
    # written while one is sent go out together.
    messages, values = [], []

    async def progress(progress, total, message):
        messages.append(message)
        values.append(progress)

    async with connect(tmp_path, write_config(tmp_path, {})) as session:
        code = "for (let i = 0; i < 20000; i++) console.log('line ' + i); return 1"
        with anyio.fail_after(HANG):
            result = await session.call_tool("run_javascript", {"code": code}, progress_callback=progress)
    assert result.structured_content["value"] == 1, result
    lines = [line for message in messages for line in message.split("\n")]
    assert lines == [f"line {i}" for i in range(20000)], (len(messages), lines[:3], lines[-3:])
    assert len(messages) <= 200, f"{len(messages)} notifications for 20,000 lines"
    # The progress is the count of lines sent so far.
    assert values[-1] == 20000 and values == sorted(values), values[-5:]


def test_a_run_that_floods_its_console_frees_its_place_when_it_ends(tmp_path):
    # A 1 s program logging empty lines sent one notification per line,
    # ~650,000 of them, and held its place in max_running while they went:
    # its answer, and an unrelated run waiting for the place, came after
    # 52 s.
    server = RawServer(tmp_path, write_config(tmp_path, {}, max_running=1))
    try:
        server.initialize()
        flood = run_request("flood", "console.log('started'); for (;;) console.log('')")
        flood["params"]["arguments"]["limits"] = {"wall_clock_ms": 1000}
        flood["params"]["_meta"] = {"progressToken": "flood"}
        server.send(flood)
        note = server.read()
        assert note["method"] == "notifications/progress" and note["params"]["message"].startswith("started")
        server.run("other", "return 2")
        start, notes, answers = time.monotonic(), 1, {}
        while len(answers) < 2:
            line = server.read(within=20)
            if "id" in line:
                answers[line["id"]] = line
            else:
                notes += 1
        took = time.monotonic() - start
        assert answers["flood"]["result"]["structuredContent"]["kind"] == "limit", answers["flood"]
        assert answers["other"]["result"]["structuredContent"]["value"] == 2, answers["other"]
        # The 1 s wall clock and its lines (at most the 1 MiB console) out,
        # with a wide margin: before, the two answers came 50 s later.
        assert took < 20, f"the answers took {took:.1f} s"
        assert notes < 1000, f"{notes} notifications"
    finally:
        server.close()


def test_requests_whose_shape_rmcp_cannot_read_are_answered_under_their_id_or_null(tmp_path):
    # rmcp answered each "Invalid request" under no id (the client, unable
    # to match it to its call, waited for ever), said nothing to a lone
    # surrogate's id or to a request without a method, and answered
    # notifications, which JSON-RPC forbids.
    call = {"name": "run_javascript", "arguments": {"code": "return 1"}}
    answers = raw_answers(tmp_path, [
        {"jsonrpc": "2.0", "id": "meta", "method": "tools/call", "params": {**call, "_meta": "str"}},
        {"jsonrpc": "2.0", "id": "array", "method": "tools/call", "params": [1]},
        {"jsonrpc": "2.0", "id": "ping", "method": "ping", "params": 5},
        {"jsonrpc": "2.0", "id": "method", "method": 5},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2 ** 70, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": "\ud800", "method": "ping"},
        {"jsonrpc": "2.0", "id": "none"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": "x"},
        # Answered at once: a run still running when stdin closes is cancelled.
        {"jsonrpc": "2.0", "id": "last", "method": "tools/list"},
    ])
    assert all("id" in a for a in answers), [a for a in answers if "id" not in a]
    by_id = {}
    for answer in answers:
        by_id.setdefault(json.dumps(answer["id"]), []).append(answer)
    for id, why in [("meta", "_meta is a string"), ("array", "params are an array"),
                    ("ping", "params are an integer"), ("method", "method is an integer"),
                    (1.5, "no integer"), (2 ** 70, "no integer"), ("none", "no method")]:
        (answer,) = by_id[json.dumps(id)]
        assert answer["error"]["code"] == -32600 and why in answer["error"]["message"], answer
    # An id that cannot be read (no string nor number; half a surrogate
    # pair) gets null, as JSON-RPC 2.0 asks.
    nulls = sorted(a["error"]["message"] for a in by_id["null"])
    assert len(nulls) == 2 and "boolean" in nulls[0] and "surrogate" in nulls[1], nulls
    # Neither notification is answered; what fits is served.
    assert len(by_id['"last"'][0]["result"]["tools"]) == 2, by_id['"last"']
    assert len(answers) == 11, answers


def test_a_tools_call_with_a_member_given_twice_is_invalid_params(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    server = RawServer(tmp_path, path)
    try:
        server.initialize()
        line = b'{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"run_javascript","arguments":{"code":"1"},"name":"x"}}\n'
        server.process.stdin.write(line)
        server.process.stdin.flush()
        answer = server.read()
        assert answer["id"] == "t" and answer["error"]["code"] == -32602, answer
        assert "given twice" in answer["error"]["message"], answer
    finally:
        server.close()


def big_upstream(tmp_path, **env):
    servers = {"big": {"command": sys.executable, "args": [str(HERE / "raw_upstream.py"), "--big"],
                       "env": {k.upper(): str(v) for k, v in env.items()}}}
    return write_config(tmp_path, servers)


def test_an_upstream_whose_tools_take_too_much_memory_is_refused_at_startup(tmp_path):
    # Only the count of tools was bounded (10,000): pages of one tool with
    # a 15 MB description each grew the server past 4 GB.
    config = big_upstream(tmp_path, tools=0, page=1, description=4_000_000)
    server = Watched(tmp_path, ["--config", str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + HANG
        while server.process.poll() is None:
            assert time.monotonic() < deadline, "still listing"
            try:
                rss = server.status("VmRSS")
            except (KeyError, FileNotFoundError):
                continue  # it is exiting
            # Far past the bound's 64 MiB (and rmcp's own reading of a page).
            assert rss < 1_000_000, f"{rss} kB while listing"
            time.sleep(0.05)
        assert server.process.returncode == 2
        said = server.stderr.read_text()
        assert 'upstream server "big"' in said and "more than 64 MiB" in said, said[-2000:]
    finally:
        server.close()


async def test_describe_tools_longer_than_an_answer_may_be_is_refused_saying_so(tmp_path):
    # Three 6 MB descriptions made an 18 MB answer, past the 16 MiB line a
    # client built on rmcp reads: it dropped it, and waited for ever.
    config = big_upstream(tmp_path, tools=3, page=1, description=6_000_000)
    async with connect(tmp_path, config) as session:
        with anyio.fail_after(HANG):
            every = await session.call_tool("describe_tools", {})
            one = await session.call_tool("describe_tools", {"tools": ["big_t1"]})
    assert every.is_error and every.structured_content["kind"] == "limit", str(every)[:500]
    error = every.structured_content["error"]
    assert "past the" in error and "big_t0, big_t1, big_t2" in error, error
    assert not one.is_error and "declare function big_t1(" in one.content[0].text
