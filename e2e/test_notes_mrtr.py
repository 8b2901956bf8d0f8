"""2026-07-28 multi-round-trip requests (`input_required` + sealed `requestState`), driven by
hand through `client.session.call_tool(..., allow_input_required=True)`.

The server must treat `requestState` as attacker-controlled: a tampered, replayed or
re-targeted state, or a state without answers, gets a NEW `input_required` (not an error)
and nothing happens. Each case first proves the honest round works, on the same server.
"""

from __future__ import annotations

import copy

import mcp_types as types
import pytest
from support import target_of
from support import Dialog, answer_for, assert_yes_no_schema, connect, dump, text_of

from test_notes_guard import initial, notes

pytestmark = pytest.mark.anyio

ERA = "2026-07-28"


class NeverAsked(Dialog):
    """Declares the elicitation capability (so the server may ask) but is driven by hand:
    the SDK must never call it in these tests."""

    async def __call__(self, context, params):
        self.calls.append(params)
        raise AssertionError("the manual MRTR tests answer by hand; the callback must not run")


async def ask(client, name: str, args: dict) -> types.InputRequiredResult:
    result = await client.session.call_tool(name, args, allow_input_required=True)
    assert isinstance(result, types.InputRequiredResult), f"expected input_required, got {dump(result)}"
    assert result.request_state, "input_required must carry a requestState"
    assert result.input_requests, "input_required must carry the question"
    for request in result.input_requests.values():
        assert isinstance(request, types.ElicitRequest), dump(request)
        assert_yes_no_schema(request.params.requested_schema)
    return result


def answers(ir: types.InputRequiredResult, answer: str = "accept") -> dict[str, types.ElicitResult]:
    return {key: answer_for(req.params.requested_schema, answer) for key, req in ir.input_requests.items()}


async def retry(client, name: str, args: dict, *, state: str | None, responses=None):
    return await client.session.call_tool(
        name, args, allow_input_required=True, request_state=state, input_responses=responses
    )


def assert_new_input_required(result, old_state: str) -> None:
    assert isinstance(result, types.InputRequiredResult), (
        f"expected a new input_required (not an error, not a result), got {dump(result)}"
    )
    assert result.input_requests, dump(result)
    assert result.request_state and result.request_state != old_state, "the new round needs a new state"


def flip_one_char(state: str) -> str:
    """Change one character in the middle (a change at the very end of base64 text may
    only touch padding bits)."""
    i = len(state) // 2
    replacement = "A" if state[i] != "A" else "B"
    return state[:i] + replacement + state[i + 1 :]


@pytest.fixture
async def client(notes_server, anyio_backend):
    server = notes_server()
    async with connect(target_of(server), ERA, NeverAsked()) as c:
        yield c


async def test_honest_round_deletes(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n1"})
    done = await retry(client, "delete_note", {"note_id": "n1"}, state=ir.request_state, responses=answers(ir))
    assert isinstance(done, types.CallToolResult), dump(done)
    assert not done.is_error, text_of(done)
    assert await notes(client) == {k: v for k, v in before.items() if k != "n1"}


async def test_honest_round_declined_changes_nothing(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n1"})
    done = await retry(
        client, "delete_note", {"note_id": "n1"}, state=ir.request_state, responses=answers(ir, "decline")
    )
    assert isinstance(done, types.CallToolResult), dump(done)
    assert done.is_error and "declined" in text_of(done).lower(), text_of(done)
    assert await notes(client) == before


async def test_tampered_state_gets_new_question(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n1"})
    tampered = flip_one_char(ir.request_state)
    assert tampered != ir.request_state
    result = await retry(client, "delete_note", {"note_id": "n1"}, state=tampered, responses=answers(ir))
    assert_new_input_required(result, ir.request_state)
    assert await notes(client) == before, "a tampered state deleted the note"


async def test_replayed_state_and_answer_do_nothing_twice(client):
    before = await initial(client)
    args = {"note_id": "n2", "text": "approved once", "shared": True}
    ir = await ask(client, "write_note", args)
    approved = answers(ir)
    done = await retry(client, "write_note", args, state=ir.request_state, responses=approved)
    assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    expected = copy.deepcopy(before)
    expected["n2"] = {"id": "n2", "text": "approved once", "shared": True}
    assert await notes(client) == expected

    # Change the note without the guard, so a second run of the approved write would show.
    private = await client.call_tool("write_note", {"note_id": "n2", "text": "changed since", "shared": False})
    assert not private.is_error, text_of(private)
    expected["n2"] = {"id": "n2", "text": "changed since", "shared": False}
    assert await notes(client) == expected

    replay = await retry(client, "write_note", args, state=ir.request_state, responses=approved)
    assert_new_input_required(replay, ir.request_state)
    assert await notes(client) == expected, "a replayed state + answer ran the write a second time"


async def test_state_for_one_note_retried_for_another(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n1"})
    result = await retry(client, "delete_note", {"note_id": "n2"}, state=ir.request_state, responses=answers(ir))
    assert_new_input_required(result, ir.request_state)
    assert await notes(client) == before, "an approval for n1 deleted something when retried for n2"


async def test_state_for_delete_retried_on_write(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n1"})
    result = await retry(
        client,
        "write_note",
        {"note_id": "n1", "text": "x", "shared": True},
        state=ir.request_state,
        responses=answers(ir),
    )
    assert_new_input_required(result, ir.request_state)
    assert await notes(client) == before


async def test_state_without_answers_gets_new_question(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n3"})
    result = await retry(client, "delete_note", {"note_id": "n3"}, state=ir.request_state, responses=None)
    assert_new_input_required(result, ir.request_state)
    assert await notes(client) == before


async def test_answers_without_state_get_new_question(client):
    before = await initial(client)
    ir = await ask(client, "delete_note", {"note_id": "n3"})
    result = await retry(client, "delete_note", {"note_id": "n3"}, state=None, responses=answers(ir))
    assert isinstance(result, types.InputRequiredResult), f"an answer without its state approved: {dump(result)}"
    assert await notes(client) == before


async def test_client_without_capability_gets_no_input_required(notes_server):
    """A request that does not declare elicitation must not be answered with an
    elicitation/create input request: it gets the token path."""
    server = notes_server()
    async with connect(target_of(server), ERA, dialog=None) as c:
        before = await initial(c)
        result = await c.session.call_tool("delete_note", {"note_id": "n1"}, allow_input_required=True)
        assert isinstance(result, types.CallToolResult), dump(result)
        assert result.is_error and "confirm_token:" in text_of(result), text_of(result)
        assert await notes(c) == before
