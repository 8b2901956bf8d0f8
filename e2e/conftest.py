"""Fixtures for the end-to-end suite.

Servers are real processes, spawned as a user would spawn them, on 127.0.0.1 only. Every
process a test starts is killed by its PID at teardown, whether the test passed or not.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cdp import Browser
from support import (
    ERAS,
    TRANSPORTS,
    HttpHandle,
    Launcher,
    TOKENS,
    StdioHandle,
    notes_bin,
    opengist_mcp_bin,
    require_binary,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[Launcher]:
    launcher = Launcher(workdir=tmp_path)
    try:
        yield launcher
    finally:
        launcher.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    """Headless Chromium over the DevTools protocol (e2e/cdp.py) with a virtual authenticator
    (user verification on), for the approval page's passkeys; closed after the test."""
    made = Browser(tmp_path / "profile")
    made.add_authenticator()
    try:
        yield made
    finally:
        made.close()


ServerFactory = Callable[..., "StdioHandle | HttpHandle"]


def _factory(launcher: Launcher, transport: str, binary: Path) -> ServerFactory:
    def start(env: dict[str, str] | None = None, args: list[str] | None = None) -> StdioHandle | HttpHandle:
        if transport == "stdio":
            return launcher.stdio(binary, args=args, env=env)
        return launcher.http(binary, args=args, env=env)

    return start


@pytest.fixture
def notes_binary() -> Path:
    return require_binary(notes_bin(), "cargo build --example notes")


@pytest.fixture
def opengist_mcp_binary() -> Path:
    return require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")


@pytest.fixture
def notes_server(launcher: Launcher, transport: str, notes_binary: Path) -> ServerFactory:
    """`notes_server(env=...)` starts the notes example on the test's transport."""
    return _factory(launcher, transport, notes_binary)


@pytest.fixture
def opengist_mcp_server(launcher: Launcher, transport: str, opengist_mcp_binary: Path) -> ServerFactory:
    return _factory(launcher, transport, opengist_mcp_binary)


OPENGIST_ENV = (
    "OPENGIST_E2E_URL",
    "OPENGIST_E2E_TOKEN_FULL",
    "OPENGIST_E2E_TOKEN_READ",
    "OPENGIST_E2E_TOKEN_NOGIST",
    "OPENGIST_E2E_TOKEN_USER2",
)


@pytest.fixture
def opengist_env() -> dict[str, str]:
    """The provisioned real Opengist. Missing means the run is broken: fail, never skip."""
    missing = [name for name in OPENGIST_ENV if not os.environ.get(name)]
    if missing:
        pytest.fail(
            "the Opengist-backed tests need a provisioned Opengist: run scripts/provision-opengist "
            f"and source target/opengist/run/env.sh (missing: {', '.join(missing)})",
            pytrace=False,
        )
    # Everything else provision-opengist exported (users, PID, start command, version).
    return {name: value for name, value in os.environ.items() if name.startswith("OPENGIST_E2E_")}


@pytest.fixture
def live_server(opengist_env, opengist_mcp_server) -> ServerFactory:
    """`live_server(token="full", extra={...}, args=[...])`: opengist-mcp on the test's
    transport, pointed at the provisioned Opengist with one of the seeded tokens
    ("full", "read", "nogist", "user2"; None sends no token)."""
    def start(token: str | None = "full", extra: dict[str, str] | None = None, args: list[str] | None = None):
        env = {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"]}
        if token is not None:
            env["OPENGIST_TOKEN"] = opengist_env[TOKENS[token]]
        return opengist_mcp_server(env={**env, **(extra or {})}, args=args)

    return start
