"""Start-up contract of the notes example: the ELICITATION switch, and a stdout that carries
nothing but the protocol."""

from __future__ import annotations

import json
import subprocess

import pytest
from support import STARTUP_BOUND_S, base_env, free_port, run_to_exit

NOTICE = "notes: ELICITATION=false — guarded tools fall back to the two-call token"


@pytest.mark.parametrize("value", ["yes", "1", "off", "TRUE", "False"])
@pytest.mark.parametrize("mode", ["stdio", "http"])
def test_bad_elicitation_value_exits_1_naming_both_values(notes_binary, value, mode):
    args = ["--http", f"127.0.0.1:{free_port()}"] if mode == "http" else []
    done = run_to_exit(notes_binary, {"ELICITATION": value}, args, timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "true" in done.stderr and "false" in done.stderr, done.stderr
    assert done.stdout == "", f"stdout is for the protocol only: {done.stdout!r}"


def test_elicitation_false_notice_on_stderr(notes_binary):
    done = run_to_exit(notes_binary, {"ELICITATION": "false"})
    assert NOTICE in done.stderr.splitlines(), done.stderr
    assert NOTICE not in done.stdout
    assert done.stdout == "", f"nothing but protocol on stdout: {done.stdout!r}"


def _exchange(binary, env: dict[str, str], stderr_path) -> list[str]:
    """Speak raw JSON-RPC over stdio (legacy handshake, a list and a call) and return every
    line the server wrote on stdout (its stderr goes to `stderr_path`)."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "e2e-raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_notes", "arguments": {}}},
    ]
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [str(binary)],
            env={**base_env(), **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )
    lines: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" not in request:
                continue
            # Read until the response to this request (the server may send other messages first).
            while True:
                line = proc.stdout.readline()
                assert line, f"stdout closed before the answer to request {request['id']}; got {lines}"
                lines.append(line)
                message = json.loads(line)
                if message.get("id") == request["id"]:
                    break
        proc.stdin.close()  # EOF: the server must exit by itself
        lines.extend(proc.stdout.read().splitlines(keepends=True))
        proc.wait(timeout=STARTUP_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return lines


@pytest.mark.parametrize("elicitation", ["true", "false"])
def test_stdout_carries_only_protocol(notes_binary, elicitation, tmp_path):
    stderr_path = tmp_path / "stderr"
    lines = _exchange(notes_binary, {"ELICITATION": elicitation}, stderr_path)
    ids = []
    for line in lines:
        if not line.strip():
            continue
        message = json.loads(line)  # a non-JSON line fails here, naming it
        assert message.get("jsonrpc") == "2.0", line
        ids.append(message.get("id"))
    assert {1, 2, 3} <= set(ids), lines
    listed = next(json.loads(line) for line in lines if line.strip() and json.loads(line).get("id") == 3)
    notes = listed["result"]["structuredContent"]["notes"]
    assert sorted(note["id"] for note in notes) == ["n1", "n2", "n3"], notes
    stderr_lines = stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
    # The notice is printed exactly when the switch is off, and only on stderr.
    assert (NOTICE in stderr_lines) == (elicitation == "false"), stderr_lines
