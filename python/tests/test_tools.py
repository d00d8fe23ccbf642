"""Python tools: how calls reach them, their values, their failures."""

import asyncio
import functools
import json
import threading

import pytest

import wasmwire

CATCH = """
try { return ["ok", await %s]; }
catch (e) { return [e.name, e.kind, e.message, e.retryable]; }
"""


def test_a_signature_maps_positional_arguments_to_keywords(sandbox):
    def add(a, b):
        return a + b

    tool = wasmwire.Tool(add, signature="add(a, b)")
    outcome = sandbox.run("return await add(2, 3) * 2", tools=[tool])
    assert outcome.value == 10
    assert outcome.calls == 1 and outcome.bytes == 1


def test_a_signature_may_be_a_list_of_names(sandbox):
    def greet(name, punct="!"):
        return f"hello {name}{punct}"

    tool = wasmwire.Tool(greet, signature=["name", "punct"])
    assert tool.signature == "greet(name, punct)"
    assert sandbox.run('return greet("ann")', tools=[tool]).value == "hello ann!"


def test_without_a_signature_the_tool_gets_one_value(sandbox):
    seen = []

    def search(args):
        seen.append(args)
        return [args["q"].upper()]

    def ping():
        return "pong"

    outcome = sandbox.run('return [await search({q: "x", n: [1]}), await ping()]', tools=[search, ping])
    assert outcome.value == [["X"], "pong"]
    assert seen == [{"q": "x", "n": [1]}]


def test_values_are_json_text_is_a_string(sandbox):
    def text():
        return "123"

    def nothing():
        return None

    outcome = sandbox.run("return [typeof await text(), await nothing()]", tools=[text, nothing])
    assert outcome.value == ["string", None]


def test_an_async_tool_is_awaited_on_the_callers_loop(sandbox):
    loops = []

    async def fetch_doc(id):
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return {"id": id}

    async def main():
        tool = wasmwire.Tool(fetch_doc, signature="fetch_doc(id)")
        outcome = await sandbox.run_async(
            "return (await Promise.all([1, 2, 3].map(fetch_doc))).map((r) => r.id)", tools=[tool]
        )
        return outcome, asyncio.get_running_loop()

    outcome, loop = asyncio.run(main())
    assert outcome.value == [1, 2, 3]
    assert loops == [loop] * 3


def test_an_async_tool_under_a_sync_run_uses_a_background_loop(sandbox):
    async def later(x):
        await asyncio.sleep(0.001)
        return x * 2

    tool = wasmwire.Tool(later, signature="later(x)")
    assert sandbox.run("return await later(21)", tools=[tool]).value == 42


def test_a_sync_tool_runs_on_a_worker_thread(sandbox):
    threads = []

    def where():
        threads.append(threading.current_thread())
        return 1

    sandbox.run("return await where()", tools=[where])
    assert threads and threads[0] is not threading.main_thread()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", wasmwire.KINDS)
def test_every_failure_kind_reaches_the_program(sandbox, kind, is_async):
    def fail():
        raise wasmwire.ToolError(kind, f"because {kind}")

    async def fail_async():
        raise wasmwire.ToolError(kind, f"because {kind}")

    tool = wasmwire.Tool(fail_async if is_async else fail, name="fail")
    outcome = sandbox.run(CATCH % "fail()", tools=[tool])
    name, got_kind, message, retryable = outcome.value
    assert (name, got_kind) == ("ToolError", kind)
    assert f"because {kind}" in message
    assert retryable == wasmwire.retryable(kind)
    assert retryable == (kind in ("transient", "rate_limited"))


def test_a_kind_outside_the_closed_set_is_refused():
    with pytest.raises(ValueError, match="unknown failure kind"):
        wasmwire.ToolError("timeout", "no such kind")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_exception_in_a_tool_is_unknown_with_its_message(sandbox, is_async):
    def boom():
        raise RuntimeError("the disk is on fire")

    async def boom_async():
        await asyncio.sleep(0)
        raise KeyError("missing")

    tool = wasmwire.Tool(boom_async if is_async else boom, name="boom")
    outcome = sandbox.run(CATCH % "boom()", tools=[tool])
    _, kind, message, _ = outcome.value
    assert kind == "unknown"
    assert message == ("KeyError: 'missing'" if is_async else "RuntimeError: the disk is on fire")
    # The execution itself carries on, and so does the sandbox.
    assert outcome.ok
    assert sandbox.run("return 1").value == 1


def test_an_uncaught_tool_failure_fails_the_execution_with_its_kind(sandbox):
    def deny():
        raise wasmwire.ToolError("denied", "ask an operator")

    outcome = sandbox.run("await deny(); return 1", tools=[deny])
    assert outcome.kind == "denied"
    assert "ask an operator" in outcome.message


def test_a_value_that_is_not_json_is_unknown(sandbox):
    def odd():
        return {1, 2}

    def nan():
        return float("nan")

    for name in ("odd", "nan"):
        outcome = sandbox.run(CATCH % f"{name}()", tools=[odd, nan])
        assert outcome.value[1] == "unknown", outcome.value
        assert "not JSON-serialisable" in outcome.value[2]


def test_arguments_that_do_not_bind_are_invalid_and_the_tool_never_runs(sandbox):
    called = []

    def get(host):
        called.append(host)
        return host

    tool = wasmwire.Tool(get, signature="get(host, extra)")
    outcome = sandbox.run(CATCH % 'get("a", 1)', tools=[tool])
    assert outcome.value[1] == "invalid"
    assert "extra" in outcome.value[2]
    assert called == []


def test_args_are_checked_against_the_params_schema_before_the_tool_runs(sandbox):
    called = []

    def load(host):
        called.append(host)
        return 0.5

    tool = wasmwire.Tool(
        load,
        signature="load(host)",
        description="The load of one host.",
        params={"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]},
        result={"type": "number"},
    )
    outcome = sandbox.run(CATCH % "load(7)", tools=[tool])
    assert outcome.value[1] == "invalid"
    assert "args.host" in outcome.value[2] and "type" in outcome.value[2]
    assert called == []
    assert sandbox.run('return await load("db1")', tools=[tool]).value == 0.5
    declarations = wasmwire.Tools([tool]).typescript()
    assert "The load of one host." in declarations
    assert "declare function load(host: string): Promise<number>;" in declarations


def test_an_unknown_tool_is_not_found(sandbox):
    outcome = sandbox.run(CATCH % 'host.call("nope", {})')
    assert outcome.value[1] == "not_found"


def test_a_tool_past_its_timeout_is_transient_and_its_task_is_cancelled(sandbox):
    cancelled = threading.Event()

    async def stuck():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    tool = wasmwire.Tool(stuck, timeout=0.05)
    outcome = sandbox.run(CATCH % "stuck()", tools=[tool])
    assert outcome.value[1] == "transient"
    # Named as the tool's own timeout, not as a deadline the program set.
    assert outcome.value[2] == "the tool's timeout of 50 ms passed"
    assert cancelled.wait(5), "the coroutine was not cancelled"


def test_bad_tools_are_refused_at_registration():
    def f():
        return 1

    for bad, why in [
        (wasmwire.Tool(f, name="delete"), "reserved word"),
        (wasmwire.Tool(f, name="search-docs"), "call_only"),
        (wasmwire.Tool(f, signature="g(a)"), "another function"),
        (wasmwire.Tool(f, timeout=0), "timeout of 0"),
    ]:
        with pytest.raises(wasmwire.ToolDefinitionError, match=why) as raised:
            wasmwire.Tools([bad])
        assert raised.value.tool == bad.name
    with pytest.raises(wasmwire.ToolDefinitionError, match="registered twice"):
        wasmwire.Tools([f, f])
    with pytest.raises(TypeError):
        wasmwire.Tool(42)  # type: ignore[arg-type]


def test_a_call_only_tool_is_reached_through_host_call(sandbox):
    def docs(args):
        return args["q"]

    tool = wasmwire.Tool(docs, name="search-docs", call_only=True)
    assert sandbox.run('return host.call("search-docs", {q: "x"})', tools=[tool]).value == "x"


def test_the_tool_decorator_and_the_prompt(sandbox):
    @wasmwire.tool(signature="get_load(host)")
    def get_load(host: str) -> float:
        """The current load of one host."""
        return 0.5

    assert isinstance(get_load, wasmwire.Tool)
    assert get_load.description == "The current load of one host."
    prompt = sandbox.prompt([get_load], wasmwire.Budget(wall_clock=2, max_calls=7))
    assert "The current load of one host." in prompt
    assert "7" in prompt


def test_a_plain_callables_parameters_are_its_signature(sandbox):
    # Without a signature the program's string was JSON-decoded: "hello"
    # failed "args are not JSON", "123" came as 123, '{"admin": true}' as a
    # dict, "" as no argument; and get_logs("db1", 2) could not be made.
    def echo(text):
        return [type(text).__name__, text]

    def get_logs(host, count):
        return [host] * count

    tools = wasmwire.Tools([echo, get_logs])
    for text in ["hello", "123", '{"admin": true}', "", " ", "null"]:
        program = f"return await echo({json.dumps(text)})"
        assert sandbox.run(program, tools=tools).value == ["str", text], text
    # Every call that worked before is the same: the one value, by name.
    assert sandbox.run("return await echo({q: [1]})", tools=tools).value == ["dict", {"q": [1]}]
    assert sandbox.run("return await echo(7)", tools=tools).value == ["int", 7]
    assert sandbox.run('return await get_logs("db1", 2)', tools=tools).value == ["db1", "db1"]
    outcome = sandbox.run(CATCH % "get_logs()", tools=tools)
    assert outcome.value[1] == "invalid" and "host" in outcome.value[2], outcome
    # host.call passes one value as it is: an object of parameters is named
    # args, any other object the one value, a string decoded if it is JSON.
    for args, expected in [
        ('{text: "x"}', ["str", "x"]),
        ('{q: "x"}', ["dict", {"q": "x"}]),
        ('"hello"', ["str", "hello"]),
        ('"123"', ["int", 123]),
    ]:
        program = f'return await host.call("echo", {args})'
        assert sandbox.run(program, tools=tools).value == expected, args
    assert repr(wasmwire.Tool(get_logs)) == "<wasmwire.Tool get_logs(host, count)>"
    declarations = tools.typescript()
    assert "declare function echo(text: unknown): Promise<unknown>;" in declarations
    assert "declare function get_logs(host: unknown, count: unknown): Promise<unknown>;" in (
        declarations
    )
    assert "get_logs(host: unknown, count: unknown)" in sandbox.prompt(tools)


def test_a_derived_signature_leaves_out_what_the_host_chose(sandbox):
    # A default, or an argument functools.partial froze, was the host's:
    # derived into the signature, the program could override it
    # (`delete_file('/etc/x', false)` undid a dry run). Only the first
    # parameter (the one value, as before) and the required ones are in it.
    def delete_file(path, *, dry_run):
        return {"path": path, "dry_run": dry_run}

    def read(path, root="/srv/public"):
        return f"{root}/{path}"

    def first_has_a_default(x=None):
        return x

    tools = wasmwire.Tools(
        [
            wasmwire.Tool(functools.partial(delete_file, dry_run=True), name="delete_file"),
            read,
            first_has_a_default,
        ]
    )
    value = sandbox.run(
        "return await host.call('delete_file', {path: '/etc/x', dry_run: false})", tools=tools
    ).value
    assert value["dry_run"] is True, value
    # An argument past the signature is refused (it was dropped unseen),
    # so the program hears that its `false` is not taken.
    for program, tool in [
        ("return await delete_file('/etc/x', false)", "delete_file"),
        ("return await read('passwd', '/etc')", "read"),
    ]:
        outcome = sandbox.run(program, tools=tools)
        assert not outcome.ok, outcome.value
        assert f"TypeError: {tool} takes one argument, path; its 2nd argument" in outcome.message, (
            outcome.message
        )
    assert sandbox.run("return await read('passwd')", tools=tools).value == "/srv/public/passwd"
    assert sandbox.run("return await first_has_a_default('hello')", tools=tools).value == "hello"
    declarations = tools.typescript()
    assert "declare function delete_file(path: unknown)" in declarations, declarations
    assert "declare function read(path: unknown)" in declarations, declarations


def test_without_a_signature_to_derive_text_that_is_not_json_is_the_string(sandbox):
    # `*args`, a reserved word, a params schema or call_only: no signature
    # is derived. Text that is not JSON failed "args are not JSON".
    def spread(*values):
        return [type(v).__name__ for v in values]

    def fresh(new):
        return new

    def schema(args):
        return args

    tools = [
        spread,
        fresh,
        wasmwire.Tool(schema, params={"type": "object"}),
        wasmwire.Tool(fresh, name="shell", call_only=True),
    ]
    assert all(t.signature is None and t._signature() is None for t in wasmwire.Tools(tools))
    assert sandbox.run('return await spread("hello")', tools=tools).value == ["str"]
    assert sandbox.run('return await spread("123")', tools=tools).value == ["int"]
    assert sandbox.run('return await spread("")', tools=tools).value == []
    assert sandbox.run('return await fresh("ls -l")', tools=tools).value == "ls -l"
    assert sandbox.run('return await host.call("shell", "ls -l")', tools=tools).value == "ls -l"
    assert sandbox.run("return await schema({a: 1})", tools=tools).value == {"a": 1}


def test_host_call_with_text_on_a_tool_with_a_signature(sandbox):
    def get_load(host):
        return host

    tool = wasmwire.Tool(get_load, signature="get_load(host)")
    assert sandbox.run('return await host.call("get_load", "db1")', tools=[tool]).value == "db1"
    assert sandbox.run('return await host.call("get_load", {host: "a"})', tools=[tool]).value == "a"
