"""The README's first command, `scripts/sandbox`, as a newcomer runs it: it prints a client
configuration, that configuration reaches a working server, and Ctrl-C stops everything it
started.

With an Opengist installed (marker `opengist`) the sandbox provisions its own throwaway
instance (in a directory of this test's, never the live layer's) and puts opengist-mcp in
front of it; a write through the printed configuration is checked in that Opengist. Without
one, it says so and serves the guarded notes example instead. Both run the binaries the
test command built (`SANDBOX_NO_BUILD=1`; the build path is the README's own command).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from live import OpengistApi
from support import ROOT, Dialog, HttpTarget, base_env, connect, text_of

pytestmark = pytest.mark.anyio

READY_LINE = "Press Ctrl-C to stop"
START_TIMEOUT_S = 120


class Sandbox:
    """`scripts/sandbox` running in its own process group, its stdout gathered line by line."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            ["bash", str(ROOT / "scripts" / "sandbox")],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            start_new_session=True,
            text=True,
        )
        self.out = ""

    def wait_ready(self) -> str:
        """Everything printed up to the ready line; fails with the script's stderr if it ends
        first or takes too long."""
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self.proc.stdout is not None
        while READY_LINE not in self.out:
            line = self.proc.stdout.readline()
            if not line:
                pytest.fail(f"scripts/sandbox ended before it was ready:\n{self.out}\n{self.log.read_text()}")
            self.out += line
            assert time.monotonic() < deadline, f"scripts/sandbox not ready in {START_TIMEOUT_S}s:\n{self.out}"
        return self.out

    def target(self) -> HttpTarget:
        config = json.loads(self.out[self.out.index('{\n  "mcpServers"') : self.out.rindex("}") + 1])
        ((server,),) = [list(config["mcpServers"].values())]
        bearer = server["headers"]["Authorization"].removeprefix("Bearer ")
        return HttpTarget(server["url"], bearer)

    def pids(self) -> list[int]:
        return [int(p) for p in re.findall(r"\(pid (\d+)", self.out)]

    def interrupt(self) -> int:
        """Ctrl-C as a terminal sends it: SIGINT to the whole process group; the exit code."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def sandbox_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **base_env(),
        "SANDBOX_NO_BUILD": "1",
        "OPENGIST_PROVISION_DIR": str(tmp_path / "opengist"),
        **extra,
    }


def assert_all_stopped(pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    for pid in pids:
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{pid}").exists(), f"pid {pid} still runs after Ctrl-C"


async def test_without_opengist_the_sandbox_serves_the_guarded_notes_example(tmp_path):
    env = sandbox_env(tmp_path, OPENGIST_BIN=str(tmp_path / "no-opengist-here"))
    sandbox = Sandbox(env, tmp_path / "sandbox.log")
    try:
        out = sandbox.wait_ready()
        assert "NO OPENGIST" in sandbox.log.read_text(), sandbox.log.read_text()
        assert "notes" in out, out
        (notes_pid,) = sandbox.pids()
        dialog = Dialog("accept")
        async with connect(sandbox.target(), "legacy", dialog) as client:
            before = (await client.call_tool("list_notes", {})).structured_content["notes"]
            assert "n1" in [n["id"] for n in before], before
            deleted = await client.call_tool("delete_note", {"note_id": "n1"})
            assert not deleted.is_error, text_of(deleted)
            assert len(dialog.calls) == 1, "the delete was not asked about"
            after = (await client.call_tool("list_notes", {})).structured_content["notes"]
            assert "n1" not in [n["id"] for n in after], after
    finally:
        rc = sandbox.interrupt()
    assert rc == 0, sandbox.log.read_text()
    assert_all_stopped([notes_pid])


@pytest.mark.opengist
async def test_the_sandbox_puts_opengist_mcp_in_front_of_a_real_opengist(tmp_path):
    sandbox = Sandbox(sandbox_env(tmp_path), tmp_path / "sandbox.log")
    try:
        out = sandbox.wait_ready()
        assert "opengist-mcp is running" in out, out
        pids = sandbox.pids()
        assert len(pids) == 2, out  # opengist-mcp and the Opengist it started
        seeded = dict(
            re.findall(r"^export (OPENGIST_E2E_\w+)=(.*)$", (tmp_path / "opengist/run/env.sh").read_text(), re.M)
        )
        seeded = {k: shlex.split(v)[0] if v else "" for k, v in seeded.items()}
        assert seeded["OPENGIST_E2E_URL"] in out, out
        opengist = OpengistApi(seeded["OPENGIST_E2E_URL"], seeded["OPENGIST_E2E_TOKEN_FULL"])
        async with connect(sandbox.target(), "legacy", Dialog("decline")) as client:
            made = await client.call_tool(
                "create_gist",
                {"files": [{"filename": "hello.txt", "content": "from the sandbox\n"}], "visibility": "private"},
            )
            assert not made.is_error, text_of(made)
            gist_id = made.structured_content["gist"]["id"]
        assert opengist.files(gist_id) == {"hello.txt": "from the sandbox\n"}
    finally:
        rc = sandbox.interrupt()
    assert rc == 0, sandbox.log.read_text()
    assert_all_stopped(pids)
