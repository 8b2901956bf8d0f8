"""The guard framework serves safely by itself: the notes example, which has not a
line of its own about sessions, served over streamable HTTP through `ask_first::Serving`.

A legacy (2025-11-25) session belongs to the principal that opened it, by the guard's own
principal rule: another principal reusing its `Mcp-Session-Id` (another `Authorization`
header, or none) is refused (403) whether it answers the owner's open dialog, calls a tool,
closes the session or opens its stream; the note is kept, and the owner's own dialog still
works. A 2026-07-28 `requestState` retried by another principal is asked again. With a custom
principal rule (`NOTES_PRINCIPAL_HEADER`), the binding follows that rule, not the
`Authorization` header.

Raw JSON-RPC (e2e/raw_mcp.py): the attacks are what a well-behaved client never sends.
"""

from __future__ import annotations


import pytest
from raw_mcp import RawHttp, approve, approving, call, is_elicitation, is_input_required, is_response_to, per_request

WAIT_S = 60
ALICE = "Bearer alice-credential-0001"
MALLORY = "Bearer mallory-credential-02"


@pytest.fixture
def notes_http(launcher, notes_binary):
    """`notes_http(env)`: `notes --http 127.0.0.1:PORT`, stopped at the end of the test. With
    NOTES_HTTP_NO_AUTH=true: the callers here are told apart by their own `Authorization`
    headers (principals), which one shared bearer secret would make one caller."""

    def start(env: dict[str, str] | None = None):
        return launcher.http(notes_binary, env=env or {}, auth="none")

    return start


def note_ids(session: RawHttp, request_id: int) -> list[str]:
    """The notes as the session's owner lists them (a real read of the server's store)."""
    session.send(call(request_id, "list_notes", {}))
    listed = session.must(is_response_to(request_id), WAIT_S, "list_notes result")
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


@pytest.mark.parametrize(
    ("owner", "intruder"),
    [(ALICE, MALLORY), (ALICE, ""), ("", MALLORY)],
    ids=["other-authorization", "no-authorization", "owner-without-authorization"],
)
def test_another_principal_cannot_answer_call_close_or_stream_the_session(notes_http, owner, intruder):
    server = notes_http()
    alice = RawHttp(server.url, owner or None)
    alice.send(call(20, "delete_note", {"note_id": "n1"}))
    dialog = alice.must(is_elicitation, WAIT_S, "the owner's dialog")

    attempts = [
        ("the dialog answer", approve(dialog)),
        ("a guarded tool call", call(21, "delete_note", {"note_id": "n2"})),
        ("a reading tool call", call(22, "list_notes", {})),
        ("tools/list", {"jsonrpc": "2.0", "id": 23, "method": "tools/list"}),
    ]
    for what, attempt in attempts:
        status, _ = alice.post(attempt, authorization=intruder)
        assert status == 403, f"HTTP {status} for {what} on another principal's session"
    assert alice.open_stream(authorization=intruder) == 403, "GET stream on another principal's session"
    assert alice.delete(authorization=intruder) == 403, "DELETE of another principal's session"

    # Nothing the intruder sent reached the session: the owner's own call, sent after them, is
    # answered (the positive control, and the event: anything the session had taken from the
    # intruder it would have handled first), the notes are kept, and no answer to the
    # intruder's calls came before the owner's.
    assert note_ids(alice, 30) == ["n1", "n2", "n3"], "the intruder's answer or call deleted a note"
    for request_id in (21, 22, 23):
        assert alice.wait_for(is_response_to(request_id), 0) is None, f"the intruder's request {request_id} was served"

    # The owner's own answer is accepted, on the session the intruder could not close.
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "the owner's delete result")
    assert not done["result"].get("isError"), done
    assert done["result"]["structuredContent"] == {"deleted": "n1"}, done
    assert note_ids(alice, 31) == ["n2", "n3"]
    # And the owner may close it.
    assert alice.delete() == 200


def test_the_owner_still_closes_and_the_closed_session_is_gone(notes_http):
    server = notes_http()
    alice = RawHttp(server.url, ALICE)
    assert alice.delete() == 200
    status, _ = alice.post({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert status == 404, f"HTTP {status} for a request on a closed session"


# --- 2026-07-28: the sealed requestState is bound to the principal it was issued to ---------


def list_ids(url: str, authorization: str | None, headers=None) -> list[str]:
    listed = per_request(url, authorization, 90, {"name": "list_notes", "arguments": {}}, headers)
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


@pytest.mark.parametrize("intruder", [MALLORY, None], ids=["other-authorization", "no-authorization"])
def test_a_request_state_retried_by_another_principal_is_asked_again(notes_http, intruder):
    server = notes_http()
    args = {"name": "delete_note", "arguments": {"note_id": "n2"}}
    asked = per_request(server.url, ALICE, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])

    stolen = per_request(server.url, intruder, 2, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(stolen), f"another principal's retry was not asked again: {stolen}"
    assert stolen["result"]["requestState"] != state
    assert list_ids(server.url, ALICE) == ["n1", "n2", "n3"], "another principal's retry deleted the note"

    # The owner's retry with her own state runs once.
    done = per_request(server.url, ALICE, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert list_ids(server.url, ALICE) == ["n1", "n3"]


# --- A custom principal rule covers the binding --------------------------------------------


def test_a_custom_principal_rule_decides_who_owns_a_session(notes_http):
    """`NOTES_PRINCIPAL_HEADER=x-user`: the principal is the X-User header (as an
    authenticating gateway would set it), whatever the Authorization header says."""
    server = notes_http({"NOTES_PRINCIPAL_HEADER": "X-User"})
    shared = "Bearer one-secret-for-everyone"
    alice = RawHttp(server.url, shared, headers={"X-User": "alice"})
    alice.send(call(40, "delete_note", {"note_id": "n3"}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")

    # Bob holds the same Authorization header: under this rule he is still not alice.
    bob = {"X-User": "bob"}
    status, _ = alice.post(approve(dialog), headers=bob)
    assert status == 403, f"HTTP {status} for bob's answer to alice's dialog"
    status, _ = alice.post(call(41, "list_notes", {}), headers=bob)
    assert status == 403, f"HTTP {status} for bob's call on alice's session"
    assert alice.open_stream(headers=bob) == 403
    assert alice.delete(headers=bob) == 403

    # Alice with another Authorization header is still alice: the rule, not the header, decides.
    # Her call is also the event for the check on bob's: answered after it was sent, with no
    # answer to bob's call before it.
    status, _ = alice.post(call(42, "list_notes", {}), authorization="Bearer alice-other-device-01")
    assert status in (200, 202), f"HTTP {status} for alice's own call under another Authorization"
    listed = alice.must(is_response_to(42), WAIT_S, "alice's list")
    assert sorted(n["id"] for n in listed["result"]["structuredContent"]["notes"]) == ["n1", "n2", "n3"]
    assert alice.wait_for(is_response_to(41), 0) is None, "bob's call on alice's session was served"

    alice.send(approve(dialog))
    done = alice.must(is_response_to(40), WAIT_S, "alice's delete result")
    assert done["result"]["structuredContent"] == {"deleted": "n3"}, done

    # The seal follows the same rule: bob's retry of alice's requestState is asked again.
    args = {"name": "delete_note", "arguments": {"note_id": "n1"}}
    asked = per_request(server.url, shared, 50, args, {"X-User": "alice"})
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    stolen = per_request(server.url, shared, 51, {**args, "requestState": state, "inputResponses": responses}, bob)
    assert is_input_required(stolen), f"bob's retry of alice's state was not asked again: {stolen}"
    assert list_ids(server.url, shared, {"X-User": "alice"}) == ["n1", "n2"]
    done = per_request(server.url, shared, 52, {**args, "requestState": state, "inputResponses": responses}, {"X-User": "alice"})
    assert done["result"]["structuredContent"] == {"deleted": "n1"}, done
