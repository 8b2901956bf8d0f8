"""The framework's replica wiring, under the notes example's own names (issue 17): replicas that
share `NOTES_SEAL_KEY` and `NOTES_REDIS_URL` (a real `redis-server`, started here on loopback
and stopped by its PID) open each other's questions and spend each answer once;
`NOTES_AUDIT_LOG` writes the same JSON lines as opengist-mcp's audit log, tagged with
`NOTES_REPLICA_ID`, which also prefixes legacy session ids; while Redis is down, guarded calls
are refused with a message naming Redis and `NOTES_REDIS_URL`, and reading tools still work.
No Opengist and no nginx here (tests are skipped where `redis-server` is not installed).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from raw_mcp import RawHttp, approving, is_input_required, per_request
from support import free_port

SEAL_KEY = "5e" * 32
ALICE = "Bearer alice-credential-0001"
AUDIT_FIELDS = ["operation", "outcome", "principal", "replica", "route", "target", "time", "tool"]


@pytest.fixture
def redis_url(tmp_path: Path):
    """A throwaway redis-server on 127.0.0.1 (no persistence), stopped by its PID."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/replica-env install)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "redis-server exited"
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait(timeout=30)


def replica_env(replica: str, redis: str, audit: Path) -> dict[str, str]:
    return {
        "NOTES_SEAL_KEY": SEAL_KEY,
        "NOTES_REDIS_URL": redis,
        "NOTES_AUDIT_LOG": str(audit),
        "NOTES_REPLICA_ID": replica,
    }


def audit_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ids(url: str) -> list[str]:
    listed = per_request(url, ALICE, 90, {"name": "list_notes", "arguments": {}})
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


def test_replicas_open_each_others_questions_and_spend_each_answer_once(launcher, notes_binary, redis_url, tmp_path):
    audit = tmp_path / "audit.jsonl"
    one = launcher.http(notes_binary, env=replica_env("web-1", redis_url, audit))
    two = launcher.http(notes_binary, env=replica_env("web-2", redis_url, audit))
    args = {"name": "delete_note", "arguments": {"note_id": "n1"}}

    asked = per_request(one.url, ALICE, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    # Answered on the other replica: its seal key opens the state, its Redis spends it.
    done = per_request(two.url, ALICE, 2, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert ids(two.url) == ["n2", "n3"], "the approved delete did not run on the replica that was answered"
    assert ids(one.url) == ["n1", "n2", "n3"], "replicas share approvals, not notes"

    # Replayed on the first replica: spent in the shared Redis, so asked again; nothing runs.
    replay = per_request(one.url, ALICE, 3, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(replay), f"a replayed answer ran again on another replica: {replay}"
    assert ids(one.url) == ["n1", "n2", "n3"]

    lines = audit_lines(audit)
    for line in lines:
        assert sorted(line) == AUDIT_FIELDS, line
    asked_line = [l for l in lines if l["outcome"] == "asked" and l["replica"] == "web-1"]
    executed = [l for l in lines if l["outcome"] == "executed"]
    refused = [l for l in lines if l["outcome"] == "replay_refused"]
    assert asked_line and asked_line[0]["tool"] == "delete_note", lines
    assert [l["replica"] for l in executed] == ["web-2"], lines
    assert [l["replica"] for l in refused] == ["web-1"], lines
    assert all(l["route"] == "input_required" for l in executed + refused), lines


def test_legacy_session_ids_start_with_the_replica_id(launcher, notes_binary, redis_url, tmp_path):
    server = launcher.http(notes_binary, env=replica_env("web-7", redis_url, tmp_path / "audit.jsonl"))
    session = RawHttp(server.url, ALICE)
    assert session.session_id and session.session_id.startswith("web-7."), session.session_id
    assert session.delete() == 200


def test_while_redis_is_down_guarded_calls_are_refused_naming_it_and_reads_work(launcher, notes_binary, tmp_path):
    down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    server = launcher.http(notes_binary, env=replica_env("web-1", down, tmp_path / "audit.jsonl"))
    assert ids(server.url) == ["n1", "n2", "n3"], "a reading tool failed while Redis is down"
    args = {"name": "delete_note", "arguments": {"note_id": "n1"}}
    asked = per_request(server.url, ALICE, 1, args)
    assert is_input_required(asked), asked
    answer = {**args, "requestState": asked["result"]["requestState"], "inputResponses": approving(asked["result"])}
    refused = per_request(server.url, ALICE, 2, answer)
    text = json.dumps(refused)
    assert "Redis" in text and "NOTES_REDIS_URL" in text, refused
    assert ids(server.url) == ["n1", "n2", "n3"], "a guarded call ran without its answer being spent"
    assert "NOTES_REDIS_URL" in server.stderr(), server.stderr()
