"""A yes holds only for what the person was shown: `examples/notes` driven by the Python MCP
client over stdio and streamable HTTP, in both protocol eras.

While the question "delete note n1 (10 bytes of text)?" is open, the same server rewrites n1
with 5000 bytes (a private write, never asked about). The person's yes to the old facts must
not delete the note: they are asked again with the new facts (saying the target changed), and
a no leaves the note, rewritten, in place. A note that did not change runs after one yes. On
the token path, a token for the old facts is refused with the reason, and a fresh one runs.
"""

from __future__ import annotations

import pytest
from support import target_of
from support import Dialog, answer_for, connect, text_of, token_in

from test_notes_guard import assert_not_run, initial, notes

pytestmark = pytest.mark.anyio

REWRITTEN = "x" * 5000
CHANGED = "The target changed since it was last shown to you"
OLD_QUESTION = "This will delete note n1 (10 bytes of text). It cannot be undone."
NEW_QUESTION = "This will delete note n1 (5000 bytes of text). It cannot be undone."


class ChangingDialog(Dialog):
    """The person: on the first question, before answering, the note `changes` is rewritten
    with 5000 bytes through the same server (as its owner would while the person reads);
    then answers `first`, and every later question `then`."""

    def __init__(self, first: str, then: str, changes: str = "n1") -> None:
        super().__init__(first)
        self.then = then
        self.changes = changes
        self.client = None

    async def __call__(self, context, params):
        self.calls.append(params)
        if len(self.calls) > 1:
            return answer_for(params.requested_schema, self.then)
        assert self.client is not None, "the test sets the client before calling"
        written = await self.client.call_tool(
            "write_note", {"note_id": self.changes, "text": REWRITTEN, "shared": False}
        )
        assert not written.is_error, text_of(written)
        return answer_for(params.requested_schema, self.answer)


async def test_a_note_changed_during_the_dialog_is_asked_again_and_a_no_keeps_it(notes_server, era):
    dialog = ChangingDialog("accept", "decline")
    server = notes_server()
    async with connect(target_of(server), era, dialog) as client:
        dialog.client = client
        before = await initial(client)
        result = await client.call_tool("delete_note", {"note_id": "n1"})
        assert_not_run(result, "declined", "nothing was changed")
        messages = [call.message for call in dialog.calls]
        assert len(messages) == 2, messages
        assert messages[0] == OLD_QUESTION, messages
        assert messages[1].startswith(CHANGED), messages
        assert messages[1].endswith(NEW_QUESTION), messages
        after = await notes(client)
        assert after == {**before, "n1": {"id": "n1", "text": REWRITTEN, "shared": False}}, after


async def test_a_yes_to_the_new_facts_deletes_the_note_as_it_is_now(notes_server, era):
    dialog = ChangingDialog("accept", "accept")
    server = notes_server()
    async with connect(target_of(server), era, dialog) as client:
        dialog.client = client
        before = await initial(client)
        result = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not result.is_error, text_of(result)
        assert len(dialog.calls) == 2, [call.message for call in dialog.calls]
        assert await notes(client) == {k: v for k, v in before.items() if k != "n1"}


async def test_an_unchanged_note_runs_after_one_yes(notes_server, era):
    # Another note changes while the person reads: not what the question showed.
    dialog = ChangingDialog("accept", "decline", changes="n2")
    server = notes_server()
    async with connect(target_of(server), era, dialog) as client:
        dialog.client = client
        before = await initial(client)
        result = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not result.is_error, text_of(result)
        assert [call.message for call in dialog.calls] == [OLD_QUESTION]
        expected = {k: v for k, v in before.items() if k != "n1"}
        expected["n2"] = {"id": "n2", "text": REWRITTEN, "shared": False}
        assert await notes(client) == expected


async def test_a_token_for_the_old_facts_is_refused_with_the_reason(notes_server, era):
    server = notes_server()
    async with connect(target_of(server), era, dialog=None) as client:
        before = await initial(client)
        token = token_in(await client.call_tool("delete_note", {"note_id": "n1"}))
        written = await client.call_tool("write_note", {"note_id": "n1", "text": REWRITTEN, "shared": False})
        assert not written.is_error, text_of(written)
        refused = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        text = assert_not_run(refused, "the target changed since it was issued", "nothing was changed")
        assert "(5000 bytes of text)" in text, text
        rewritten = {**before, "n1": {"id": "n1", "text": REWRITTEN, "shared": False}}
        assert await notes(client) == rewritten
        fresh = token_in(refused)
        assert fresh != token
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": fresh})
        assert not done.is_error, text_of(done)
        assert await notes(client) == {k: v for k, v in rewritten.items() if k != "n1"}
