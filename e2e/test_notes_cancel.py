"""A cancelled call never runs, in another server built on the guard framework: the `notes`
example (the Opengist server has its own test in test_opengist_attacks.py).

Raw JSON-RPC, legacy era, stdio and streamable HTTP: `tools/call delete_note`, the server pushes
`elicitation/create`, the client sends `notifications/cancelled` for the call and answers the
dialog accept + approve once a ping sent after the cancellation is answered. The note must still be listed; an honest approval on the
same session still deletes (so the test can fail).
"""

from __future__ import annotations

import json

import pytest
from raw_mcp import RawHttp, RawStdio, approve, call, cancelled, is_elicitation, is_response_to

WAIT_S = 60


def listed(session, request_id: int) -> set[str]:
    session.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "list_notes", "arguments": {}}})
    result = session.must(is_response_to(request_id), WAIT_S, "list_notes")["result"]
    notes = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    return {note["id"] for note in notes["notes"]}


@pytest.fixture
def session(transport, launcher, notes_binary, tmp_path):
    if transport == "stdio":
        opened = RawStdio(notes_binary, {}, tmp_path / "notes.stderr")
    else:
        server = launcher.http(notes_binary)
        opened = RawHttp(server.url, server.authorization)
    yield opened
    opened.close()


def test_a_note_whose_delete_was_cancelled_is_kept_though_the_dialog_is_approved(session):
    assert "n1" in listed(session, 1)
    session.send(call(10, "delete_note", {"note_id": "n1"}))
    dialog = session.must(is_elicitation, WAIT_S, "elicitation/create")
    session.send(cancelled(10))
    # The event that says the cancellation has been read: the answer to a ping sent after it
    # (the session reads its messages in order), not a pause.
    session.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
    session.must(is_response_to(12), WAIT_S, "the ping after the cancellation")
    session.send(approve(dialog))
    late = session.wait_for(is_response_to(10), 2.0)
    assert "n1" in listed(session, 2), f"the note of a cancelled call was deleted (server said {late})"
    session.send(call(11, "delete_note", {"note_id": "n2"}))
    second = session.must(lambda m: is_elicitation(m) and m["id"] != dialog["id"], WAIT_S, "a second dialog")
    session.send(approve(second))
    done = session.must(is_response_to(11), WAIT_S, "the honest delete")
    assert not done["result"].get("isError"), done
    assert "n2" not in listed(session, 3)
