"""The stubs and annotations hold: mypy --strict accepts the package and
the example, and rejects misuse of the API."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

PYTHON = Path(__file__).resolve().parents[1]

MISUSE = """
import asyncio
import wasmwire

sandbox = wasmwire.Sandbox()
ok: int = sandbox.run("return 1").calls
sandbox.run(42)
wasmwire.Budget(wall_clock="5s")
value: str = sandbox.run("return 1").kind
asyncio.run(sandbox.run_async("1", budget=3))
wasmwire.ToolError("denied")
"""


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *args],
        cwd=PYTHON,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_package_and_the_example_type_check_strictly():
    done = mypy("wasmwire", "examples/agent.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_misuse_of_the_api_is_a_type_error(tmp_path):
    sample = tmp_path / "misuse.py"
    sample.write_text(MISUSE)
    done = mypy(str(sample))
    assert done.returncode == 1, done.stdout
    lines = sorted(
        int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line
    )
    # Every misuse line (7 to 11), and not the correct one (6).
    assert lines == [7, 8, 9, 10, 11], done.stdout
