"""One Sandbox for the whole suite: it is built once and shared, as it
would be in a real host."""

import pytest

import wasmwire


@pytest.fixture(scope="session")
def sandbox() -> wasmwire.Sandbox:
    return wasmwire.Sandbox()
