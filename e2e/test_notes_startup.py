"""Start-up contract of the notes example: the ELICITATION switch, and a stdout that carries
nothing but the protocol."""

from __future__ import annotations

import pytest
from support import free_port, jsonrpc_lines, raw_stdio_exchange, run_to_exit

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


@pytest.mark.parametrize("elicitation", ["true", "false"])
def test_stdout_carries_only_protocol(notes_binary, elicitation, tmp_path):
    stderr_path = tmp_path / "stderr"
    lines = raw_stdio_exchange(notes_binary, {"ELICITATION": elicitation}, stderr_path, ("list_notes", {}))
    by_id = jsonrpc_lines(lines)
    assert {1, 2, 3} <= set(by_id), lines
    notes = by_id[3]["result"]["structuredContent"]["notes"]
    assert sorted(note["id"] for note in notes) == ["n1", "n2", "n3"], notes
    stderr_lines = stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
    # The notice is printed exactly when the switch is off, and only on stderr.
    assert (NOTICE in stderr_lines) == (elicitation == "false"), stderr_lines
