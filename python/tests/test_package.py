"""What ships: the stubs match the module, py.typed is there, and the
README's example runs."""

import ast
import importlib.resources
import inspect
import subprocess
import sys
from pathlib import Path

import wasmwire
from wasmwire import _native

ROOT = Path(__file__).resolve().parents[2]


def stub_names(tree):
    """Top-level names of a .pyi, and each class's members."""
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            members[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            } | {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        elif isinstance(node, (ast.FunctionDef, ast.AnnAssign)):
            names.add(node.name if isinstance(node, ast.FunctionDef) else node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if not t.id.startswith("_"))
    return names, members


def test_the_native_stub_names_what_the_module_has():
    package = importlib.resources.files("wasmwire")
    tree = ast.parse(package.joinpath("_native.pyi").read_text())
    names, members = stub_names(tree)
    module_names = {n for n in dir(_native) if not n.startswith("_")}
    assert names == module_names
    for cls, stubbed in members.items():
        runtime = getattr(_native, cls)
        public = {
            n for n in vars(runtime) if not n.startswith("_") or n in ("__init__", "__call__", "__len__")
        }
        public.add("__init__") if "__init__" in stubbed else None
        assert stubbed == public, cls


def test_the_package_is_typed_and_exports_what_it_says():
    package = importlib.resources.files("wasmwire")
    assert package.joinpath("py.typed").is_file()
    for name in wasmwire.__all__:
        assert hasattr(wasmwire, name), name
    public = {n for n, v in vars(wasmwire).items() if not n.startswith("_") and not inspect.ismodule(v)}
    assert public == set(wasmwire.__all__)
    assert wasmwire.KINDS == (
        "transient", "rate_limited", "invalid", "not_found", "denied", "limit", "cancelled", "unknown",
    )


def test_the_agent_example_runs():
    example = ROOT / "python" / "examples" / "agent.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )
    out = done.stdout
    assert "'busiest': 'db1'" in out, out
    assert "'logs': ['db1: line 0', 'db1: line 1']" in out, out
    assert "{'host': 'nope', 'error': 'not_found'}" in out, out
    assert "console: warn: nope: not_found" in out, out
    assert "calls 5 bytes" in out, out


def test_the_readme_shows_the_example_as_it_is():
    readme = (ROOT / "README.md").read_text()
    example = (ROOT / "python" / "examples" / "agent.py").read_text()
    begin, end = "<!-- agent.py begins -->\n```python\n", "```\n<!-- agent.py ends -->"
    assert begin in readme and end in readme
    shown = readme.split(begin, 1)[1].split(end, 1)[0]
    assert shown == example
