"""The replica guarantee without Opengist: three replicas of the guard's notes example behind a
real nginx, sharing NOTES_SEAL_KEY and a real Redis (marker `replicas`, not `opengist`: this
runs on every machine that can install redis-server and nginx).

Each replica keeps its notes in its own memory, so a replica that runs a spent approval is
seen directly: the note it deletes (or writes) is still there (or absent) on the others. What
each replica holds is read from each one directly (`list_notes`, never asked about), and
which replica did what from the shared audit log (NOTES_AUDIT_LOG).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from live import marker
from replica_deployment import (
    AUDIT_KEYS,
    REPLICAS,
    ByHand,
    Deployment,
    answers,
    ask,
    new_lines,
    replica_env,
    retry,
    the_line,
)
from support import Dialog, connect, dump, notes_bin, require_binary, text_of, token_in

pytestmark = [pytest.mark.replicas, pytest.mark.anyio]

ERA = "2026-07-28"


def notes_settings(d: Deployment, rid: str) -> dict[str, str]:
    """The notes example's own variables for one replica."""
    return {
        "NOTES_SEAL_KEY": d.seal_key,
        "NOTES_REDIS_URL": d.redis_url,
        "NOTES_AUDIT_LOG": str(d.audit_path),
        "NOTES_REPLICA_ID": rid,
        # Behind nginx the Host header is the gateway's address.
        "NOTES_ALLOWED_HOSTS": "127.0.0.1",
    }


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory):
    replica_env("install")
    binary = require_binary(notes_bin(), "cargo build --example notes")
    d = Deployment(tmp_path_factory.mktemp("notes-replicas"), binary, notes_settings)
    try:
        d.start()
        yield d
    finally:
        d.close()


async def held(deployment: Deployment, rid: str) -> dict[str, dict[str, Any]]:
    """The notes replica `rid` holds, read from it directly."""
    async with connect(deployment.replica_url(rid), ERA, dialog=None) as direct:
        result = await direct.call_tool("list_notes", {})
        assert not result.is_error, text_of(result)
        listed = (result.structured_content or {}).get("notes")
        assert isinstance(listed, list), dump(result)
        return {note["id"]: note for note in listed}


async def holders(deployment: Deployment, note_id: str) -> set[str]:
    """The replicas that hold this note."""
    return {rid for rid in REPLICAS if note_id in await held(deployment, rid)}


async def plant_everywhere(deployment: Deployment, note_id: str, text: str = "kept") -> None:
    """The same private note on every replica (writing a private note asks no one)."""
    for rid in REPLICAS:
        async with connect(deployment.replica_url(rid), ERA, dialog=None) as direct:
            done = await direct.call_tool("write_note", {"note_id": note_id, "text": text, "shared": False})
            assert not done.is_error, text_of(done)
    assert await holders(deployment, note_id) == set(REPLICAS)


def shared_note_args(note_id: str) -> dict[str, Any]:
    return {"note_id": note_id, "text": "for everyone", "shared": True}


async def test_asked_on_one_replica_answered_on_another_runs_once_and_a_replay_is_asked_again(deployment):
    note_id = marker()
    await plant_everywhere(deployment, note_id)
    args = {"note_id": note_id}
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        mark = len(deployment.audit())
        ir = await ask(client, "delete_note", args)
        done = await retry(client, "delete_note", args, ir.request_state, answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
        lines = new_lines(deployment, mark)
        asked = the_line(lines, tool="delete_note", outcome="asked", route="input_required")
        approved = the_line(lines, tool="delete_note", outcome="approved", route="input_required")
        executed = the_line(lines, tool="delete_note", outcome="executed", route="input_required")
        assert asked["replica"] != approved["replica"], "nginx sent the answer to the replica that asked"
        assert executed["replica"] == approved["replica"]
        others = set(REPLICAS) - {approved["replica"]}
        assert await holders(deployment, note_id) == others, "the delete ran on more or fewer replicas than one"

    # The same answer sent again to every replica that still holds the note: asked again.
    for rid in sorted(others):
        async with connect(deployment.replica_url(rid), ERA, ByHand()) as direct:
            mark = len(deployment.audit())
            replay = await retry(direct, "delete_note", args, ir.request_state, answers(ir))
            assert isinstance(replay, types.InputRequiredResult), f"replica {rid} ran a spent state: {dump(replay)}"
            assert replay.request_state != ir.request_state
            lines = new_lines(deployment, mark)
            assert the_line(lines, outcome="replay_refused")["replica"] == rid
            assert not [line for line in lines if line["outcome"] == "executed"], lines
    assert await holders(deployment, note_id) == others, "a spent state deleted the note on another replica"


async def test_a_declined_state_re_answered_on_another_replica_changes_nothing(deployment):
    note_id = marker()
    await plant_everywhere(deployment, note_id)
    args = {"note_id": note_id}
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        mark = len(deployment.audit())
        ir = await ask(client, "delete_note", args)
        declined = await retry(client, "delete_note", args, ir.request_state, answers(ir, "decline"))
        assert isinstance(declined, types.CallToolResult) and declined.is_error, dump(declined)
        assert "declined" in text_of(declined).lower()
        for _ in REPLICAS:  # the declined state, answered yes, on each replica in turn
            flipped = await retry(client, "delete_note", args, ir.request_state, answers(ir, "accept"))
            assert isinstance(flipped, types.InputRequiredResult), f"a declined state was re-answered: {dump(flipped)}"
        lines = new_lines(deployment, mark)
        no = the_line(lines, tool="delete_note", outcome="declined")
        replayed = [line for line in lines if line["outcome"] == "replay_refused"]
        assert {line["replica"] for line in replayed} == set(REPLICAS), lines
        assert not [line for line in lines if line["outcome"] == "executed"], lines
        assert no["replica"] in REPLICAS
    assert await holders(deployment, note_id) == set(REPLICAS), "a declined question, re-answered, deleted a note"


async def test_a_spent_state_still_changes_nothing_after_every_replica_restarts(deployment):
    note_id = marker()
    args = shared_note_args(note_id)
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        ir = await ask(client, "write_note", args)
        done = await retry(client, "write_note", args, ir.request_state, answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert len(await holders(deployment, note_id)) == 1
    deployment.restart_replicas()  # every replica starts afresh: no replica holds the note
    assert await holders(deployment, note_id) == set()
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        for _ in REPLICAS:  # one try on each replica
            replay = await retry(client, "write_note", args, ir.request_state, answers(ir))
            assert isinstance(replay, types.InputRequiredResult), f"restart reopened a spent state: {dump(replay)}"
    assert await holders(deployment, note_id) == set(), "after a restart a spent state shared a note"


async def test_the_token_path_runs_once_across_replicas_and_restarts(deployment):
    note_id = marker()
    args = shared_note_args(note_id)
    async with connect(deployment.rr_url, ERA, dialog=None) as client:
        mark = len(deployment.audit())
        first = await client.session.call_tool("write_note", args, allow_input_required=True)
        assert isinstance(first, types.CallToolResult) and first.is_error, dump(first)
        token = token_in(first)
        assert await holders(deployment, note_id) == set(), "the first call of the token path wrote"
        with_token = {**args, "confirm_token": token}
        done = await client.session.call_tool("write_note", with_token, allow_input_required=True)
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
        (writer,) = await holders(deployment, note_id)
        again = await client.session.call_tool("write_note", with_token, allow_input_required=True)
        assert again.is_error and "already been used" in text_of(again), text_of(again)
        lines = new_lines(deployment, mark)
        issued = [line for line in lines if line["outcome"] == "asked" and line["route"] == "token"]
        approved = the_line(lines, tool="write_note", outcome="approved", route="token")
        refused = the_line(lines, tool="write_note", outcome="replay_refused", route="token")
        executed = the_line(lines, tool="write_note", outcome="executed", route="token")
        assert issued and issued[0]["replica"] != approved["replica"], "nginx sent the token back to its issuer"
        assert executed["replica"] == approved["replica"] == writer
        assert refused["replica"] != approved["replica"], lines
    for rid in REPLICAS:  # the spent token, quoted to each replica directly
        async with connect(deployment.replica_url(rid), ERA, dialog=None) as direct:
            again = await direct.session.call_tool("write_note", with_token, allow_input_required=True)
            assert again.is_error and "already been used" in text_of(again), f"{rid}: {text_of(again)}"
    assert await holders(deployment, note_id) == {writer}, "a spent token wrote on another replica"
    deployment.restart_replicas()
    async with connect(deployment.rr_url, ERA, dialog=None) as client:
        for _ in REPLICAS:
            again = await client.session.call_tool("write_note", with_token, allow_input_required=True)
            assert again.is_error and "already been used" in text_of(again), text_of(again)
    assert await holders(deployment, note_id) == set(), "after a restart a spent token wrote"


async def test_without_redis_guarded_calls_fail_closed_reads_work_and_recovery_is_automatic(deployment):
    note_id = marker()
    await plant_everywhere(deployment, note_id)
    args = {"note_id": note_id}
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        ir = await ask(client, "delete_note", args)
        deployment.redis_stop()
        try:
            mark = len(deployment.audit())
            for _ in REPLICAS:
                refused = await retry(client, "delete_note", args, ir.request_state, answers(ir))
                assert isinstance(refused, types.CallToolResult) and refused.is_error, dump(refused)
                text = text_of(refused)
                assert "Redis" in text and "NOTES_REDIS_URL" in text and "Nothing was changed" in text, text
                assert deployment.password not in text
            stores = [line for line in new_lines(deployment, mark) if line["outcome"] == "store_unavailable"]
            assert {line["replica"] for line in stores} == set(REPLICAS)
            # Reads ask no one and need no store: every replica still serves them, note kept.
            assert await holders(deployment, note_id) == set(REPLICAS), "a guarded call ran without its store"
        finally:
            deployment.redis_start()
        # Redis is back: the same, never spent, answer now goes through, without a restart.
        done = None
        for _ in range(10):
            done = await retry(client, "delete_note", args, ir.request_state, answers(ir))
            if isinstance(done, types.CallToolResult) and not done.is_error:
                break
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert len(await holders(deployment, note_id)) == 2, "the recovered answer ran on more or fewer replicas than one"


async def test_legacy_sessions_through_nginx_with_session_affinity(deployment):
    note_id = marker()
    dialog = Dialog("accept")
    mark = len(deployment.audit())
    async with connect(deployment.affinity_url, "legacy", dialog) as client:
        planted = await client.call_tool("write_note", {"note_id": note_id, "text": "bye", "shared": False})
        assert not planted.is_error, text_of(planted)
        done = await client.call_tool("delete_note", {"note_id": note_id})
        assert not done.is_error, text_of(done)
    assert len(dialog.calls) == 1, "the person was asked exactly once, in a pushed dialog"
    lines = new_lines(deployment, mark)
    written = the_line(lines, tool="write_note", route="exempt", outcome="executed")
    asked = the_line(lines, tool="delete_note", outcome="asked", route="dialog")
    approved = the_line(lines, tool="delete_note", outcome="approved", route="dialog")
    executed = the_line(lines, tool="delete_note", outcome="executed", route="dialog")
    assert written["replica"] == asked["replica"] == approved["replica"] == executed["replica"], lines
    assert await holders(deployment, note_id) == set(), "the session did not stay on its replica"


async def test_the_audit_log_covers_every_route_and_holds_no_content(deployment):
    note_id = marker()
    text = f"{note_id}-secret-text"
    mark = len(deployment.audit())
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        private = await client.call_tool("write_note", {"note_id": note_id, "text": text, "shared": False})
        assert not private.is_error, text_of(private)
        (writer,) = await holders(deployment, note_id)
    async with connect(deployment.replica_url(writer), ERA, ByHand()) as direct:
        ir = await ask(direct, "delete_note", {"note_id": note_id})
        cancelled = await retry(direct, "delete_note", {"note_id": note_id}, ir.request_state, answers(ir, "cancel"))
        assert cancelled.is_error, dump(cancelled)
    assert await holders(deployment, note_id) == {writer}
    lines = new_lines(deployment, mark)
    the_line(lines, tool="write_note", route="exempt", outcome="executed")
    the_line(lines, tool="delete_note", route="input_required", outcome="cancelled")
    for line in deployment.audit():
        assert set(line) == AUDIT_KEYS, line
    log = deployment.audit_path.read_text()
    for secret in (text, ir.request_state, deployment.seal_key, deployment.password):
        assert secret not in log, f"the audit log holds {secret!r}"
    assert "This will" not in log, "the audit log holds a question"
