"""Spent answers survive a restart wherever the seal key does: the notes
example with a fixed NOTES_SEAL_KEY and no Redis keeps spent answers in a file under its state
directory, so after a restart a spent `confirm_token` and a spent `requestState` do not work
again, while fresh ones do (positive control). Two processes cannot share the file; with no
state directory at all, serving refuses to start, naming both ways out.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess

import pytest
from raw_mcp import approving, is_input_required, per_request
from support import Launcher, connect, run_to_exit, text_of, token_in

pytestmark = pytest.mark.anyio

SEAL_KEY = secrets.token_hex(32)


def env_for(state_home) -> dict[str, str]:
    # A fixed bearer secret too: answers are bound to the caller, who stays the same.
    return {
        "NOTES_SEAL_KEY": SEAL_KEY,
        "NOTES_HTTP_TOKEN": "restart-test-secret-0123456789",
        "XDG_STATE_HOME": str(state_home),
    }


def stop(server) -> None:
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)


def note_ids(server) -> list[str]:
    listed = per_request(server.url, server.authorization, 90, {"name": "list_notes", "arguments": {}})
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


async def test_spent_answers_stay_spent_after_a_restart(launcher: Launcher, notes_binary, tmp_path) -> None:
    env = env_for(tmp_path / "state")
    first = launcher.http(notes_binary, env=env)
    assert (tmp_path / "state" / "notes" / "spent-answers.log").exists()

    # A confirm_token, spent.
    async with connect(first.target, "2026-07-28", dialog=None) as client:
        token = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert not done.is_error, text_of(done)
    # A requestState, answered and spent.
    args = {"name": "delete_note", "arguments": {"note_id": "n2"}}
    asked = per_request(first.url, first.authorization, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    done = per_request(first.url, first.authorization, 2, {**args, "requestState": state, "inputResponses": responses})
    assert done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert note_ids(first) == ["n3"]
    stop(first)

    # The same server again: its notes are back (they live in memory), its spent answers are not.
    second = launcher.http(notes_binary, env=env)
    assert note_ids(second) == ["n1", "n2", "n3"]
    async with connect(second.target, "2026-07-28", dialog=None) as client:
        replay = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert replay.is_error or "confirm_token:" in text_of(replay), text_of(replay)
    replayed = per_request(second.url, second.authorization, 3, {**args, "requestState": state, "inputResponses": responses})
    assert "deleted" not in (replayed.get("result", {}).get("structuredContent") or {}), replayed
    assert note_ids(second) == ["n1", "n2", "n3"], "a spent answer worked again after the restart"

    # Positive control: fresh answers work on the restarted server.
    async with connect(second.target, "2026-07-28", dialog=None) as client:
        fresh = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": fresh})
        assert not done.is_error, text_of(done)
    asked = per_request(second.url, second.authorization, 4, args)
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    done = per_request(second.url, second.authorization, 5, {**args, "requestState": state, "inputResponses": responses})
    assert done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert note_ids(second) == ["n3"]


async def test_two_processes_cannot_share_one_spent_answer_log(launcher: Launcher, notes_binary, tmp_path) -> None:
    """The log itself is locked: there is no other file in the state directory to remove, a
    second process is refused while the first runs (with nothing removed and after removing
    everything else there), and once the first stops the second starts and refuses what the
    first spent."""
    env = env_for(tmp_path / "state")
    state = tmp_path / "state" / "notes"
    running = launcher.http(notes_binary, env=env)
    async with connect(running.target, "2026-07-28", dialog=None) as client:
        token = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert not done.is_error, text_of(done)

    def refused() -> None:
        # Over stdio with stdin at its end: a server that started would end at once with 0.
        done = run_to_exit(notes_binary, env)
        assert done.returncode == 1, done.stderr
        assert "another process is using the spent-answer log" in done.stderr, done.stderr
        assert str(state / "spent-answers.log") in done.stderr, done.stderr
        assert "NOTES_STATE_DIR" in done.stderr, done.stderr
        for invitation in ("lock file", "delete", "remove"):
            assert invitation not in done.stderr, done.stderr

    refused()
    # Removing every other file of the state directory (a lock file beside the log would be
    # one) lets no second process in.
    for path in state.iterdir():
        if path.name != "spent-answers.log":
            path.unlink()
    refused()
    assert sorted(path.name for path in state.iterdir()) == ["spent-answers.log"]
    # Positive control: the first one still serves, and once it stops the second starts, and the
    # answer the first one spent is refused there.
    assert note_ids(running) == ["n2", "n3"]
    stop(running)
    again = launcher.http(notes_binary, env=env)
    async with connect(again.target, "2026-07-28", dialog=None) as client:
        replay = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert replay.is_error or "confirm_token:" in text_of(replay), text_of(replay)
    assert note_ids(again) == ["n1", "n2", "n3"], "an answer spent by the first process ran on the second"


def flipped_in_last_record(log: bytes) -> bytes:
    damaged = bytearray(log)
    damaged[-20] ^= 0x01  # inside the last record's expiry and checksum
    return bytes(damaged)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(flipped_in_last_record, id="flipped-byte-in-the-last-record"),
        pytest.param(lambda log: log[:-24], id="last-record-cut-short"),
        pytest.param(lambda log: log + bytes(24), id="half-written-record-after-the-last"),
    ],
)
async def test_a_damaged_spent_answer_log_refuses_to_start(launcher: Launcher, notes_binary, tmp_path, damage) -> None:
    """A record that cannot be read is never dropped: the server refuses to start, naming the
    file and the fix. The same log intact (positive control) starts, and the answer it holds is
    still refused."""
    env = env_for(tmp_path / "state")
    log = tmp_path / "state" / "notes" / "spent-answers.log"
    first = launcher.http(notes_binary, env=env)
    async with connect(first.target, "2026-07-28", dialog=None) as client:
        token = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert not done.is_error, text_of(done)
    stop(first)
    intact = log.read_bytes()
    assert len(intact) == 8 + 48, "the header and the one spent answer"

    log.write_bytes(damage(intact))
    # Over stdio with stdin at its end: a server that started would end at once with 0.
    done = run_to_exit(notes_binary, env)
    assert done.returncode == 1, done.stderr
    for words in (str(log), "is damaged at byte", "move the file aside"):
        assert words in done.stderr, done.stderr
    assert log.read_bytes() == damage(intact), "the damaged log must be left as it was"

    log.write_bytes(intact)
    second = launcher.http(notes_binary, env=env)
    async with connect(second.target, "2026-07-28", dialog=None) as client:
        replay = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert replay.is_error or "confirm_token:" in text_of(replay), text_of(replay)
        assert note_ids(second) == ["n1", "n2", "n3"], "a spent answer worked again after the restart"
        fresh = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": fresh})
        assert not done.is_error, text_of(done)
    assert note_ids(second) == ["n2", "n3"]


def test_a_fixed_key_without_anywhere_to_keep_spent_answers_refuses_to_start(notes_binary, tmp_path) -> None:
    # Neither HOME nor XDG_STATE_HOME nor NOTES_STATE_DIR: no default state directory.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NOTES_SEAL_KEY": SEAL_KEY}
    done = subprocess.run(
        [str(notes_binary)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    for word in ("NOTES_STATE_DIR", "NOTES_REDIS_URL", "NOTES_SEAL_KEY"):
        assert word in done.stderr, done.stderr
    # Positive control: with a state directory it starts (and ends with stdin).
    ok = subprocess.run(
        [str(notes_binary)],
        env={**env, "NOTES_STATE_DIR": str(tmp_path / "s")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "s" / "spent-answers.log").exists()


def test_opengist_mcp_keeps_spent_answers_in_its_state_directory_too(launcher: Launcher, tmp_path) -> None:
    from support import opengist_mcp_bin, require_binary

    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    env = {"OPENGIST_URL": "http://127.0.0.1:9", "OPENGIST_MCP_SEAL_KEY": SEAL_KEY, "XDG_STATE_HOME": str(tmp_path / "state")}
    running = launcher.http(binary, env=env)
    assert (tmp_path / "state" / "opengist-mcp" / "spent-answers.log").exists()
    second = run_to_exit(binary, env)
    assert second.returncode == 1, second.stderr
    assert "another process is using the spent-answer log" in second.stderr, second.stderr
    assert "OPENGIST_MCP_STATE_DIR" in second.stderr, second.stderr
    # Positive control: with its own state directory a second process starts serving (then
    # stdin's end closes it before a first request, which ends serving normally, as for every
    # server on the framework's serving).
    own = run_to_exit(binary, {**env, "OPENGIST_MCP_STATE_DIR": str(tmp_path / "other")})
    assert "serving MCP on stdio" in own.stderr, own.stderr
    assert (tmp_path / "other" / "spent-answers.log").exists()
    assert running.proc.poll() is None
