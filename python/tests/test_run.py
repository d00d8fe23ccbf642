"""Running programs, sync and async: values, failures, console, language."""

import asyncio

import pytest

import wasmwire


def test_a_sync_run_returns_the_value_decoded_from_json(sandbox):
    outcome = sandbox.run('return {n: 1, list: [1.5, "x", null, true], s: "é\\n"}')
    assert outcome.ok, outcome
    assert outcome.value == {"n": 1, "list": [1.5, "x", None, True], "s": "é\n"}
    assert (outcome.kind, outcome.message) == (None, None)
    assert (outcome.calls, outcome.bytes) == (0, 0)
    assert outcome.elapsed > 0
    assert outcome.unwrap() == outcome.value


def test_a_program_that_returns_nothing_has_the_value_none(sandbox):
    outcome = sandbox.run("let x = 1;")
    assert outcome.ok and outcome.value is None


def test_an_async_run_returns_the_value(sandbox):
    outcome = asyncio.run(sandbox.run_async("const a = await Promise.resolve(20); a + 22"))
    assert outcome.ok and outcome.value == 42


def test_a_program_error_is_invalid_with_its_place(sandbox):
    outcome = sandbox.run("const x = 1;\nnull.boom;")
    assert not outcome.ok
    assert outcome.kind == "invalid"
    assert "line 2" in outcome.message or ":2:" in outcome.message, outcome.message
    assert not outcome.retryable and not outcome.protocol_violation
    with pytest.raises(wasmwire.ExecutionError) as raised:
        outcome.unwrap()
    assert raised.value.kind == "invalid"
    assert raised.value.message == outcome.message


def test_a_syntax_error_is_invalid(sandbox):
    outcome = sandbox.run("return (;")
    assert outcome.kind == "invalid"


def test_the_console_is_kept(sandbox):
    outcome = sandbox.run('console.log("one"); console.error("two", 2); return 0')
    assert outcome.console == "one\nerror: two 2\n"


def test_typescript_has_its_types_stripped(sandbox):
    program = "const n: number = 41;\nfunction inc(x: number): number { return x + 1 }\ninc(n)"
    assert sandbox.run(program, language="typescript").value == 42
    assert sandbox.run(program).kind == "invalid"
    with pytest.raises(ValueError):
        sandbox.run("1", language="cobol")


def test_executions_share_nothing(sandbox):
    assert sandbox.run("globalThis.leak = 1; return 1").value == 1
    assert sandbox.run("return typeof leak").value == "undefined"


def test_a_program_must_be_text(sandbox):
    with pytest.raises(TypeError):
        sandbox.run(b"return 1")  # type: ignore[arg-type]
