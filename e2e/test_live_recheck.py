"""A yes holds only for what the person was shown, against a REAL Opengist (marker
`opengist`), in both eras over stdio and HTTP.

"Delete gist … 1 file(s)" is asked; while the dialog is open the owner adds a 4000-byte file
to the gist through Opengist's own API. The yes given to "1 file(s)" must not delete the gist:
the person is asked again with "2 file(s)" (saying the target changed), and a no leaves the
gist with both files, as Opengist holds them afterwards.
"""

from __future__ import annotations

import pytest
from live import api, marker, session
from support import Dialog, answer_for, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

CHANGED = "The target changed since it was last shown to you"
ADDED = "y" * 4000


class AddingDialog(Dialog):
    """The person: on the first question, before answering yes, the gist's owner adds a file
    through Opengist directly; every later question is answered `then`."""

    def __init__(self, og, gist_id: str, then: str) -> None:
        super().__init__("accept")
        self.og = og
        self.gist_id = gist_id
        self.then = then

    async def __call__(self, context, params):
        self.calls.append(params)
        if len(self.calls) > 1:
            return answer_for(params.requested_schema, self.then)
        self.og.update(self.gist_id, {"files": {"added.txt": {"content": ADDED}}})
        assert set(self.og.files(self.gist_id)) == {"a.txt", "added.txt"}, "the file was added"
        return answer_for(params.requested_schema, "accept")


async def test_a_file_added_during_the_delete_dialog_is_asked_about_again(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    dialog = AddingDialog(og, gist_id, then="decline")
    async with session(live_server, era, dialog) as client:
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
    text = text_of(result)
    assert result.is_error and "declined" in text and "nothing was changed" in text.lower(), text
    messages = [call.message for call in dialog.calls]
    assert len(messages) == 2, messages
    assert "1 file(s)" in messages[0] and CHANGED not in messages[0], messages
    assert messages[1].startswith(CHANGED) and "2 file(s)" in messages[1], messages
    assert og.exists(gist_id), "the gist was deleted on the old answer"
    assert og.files(gist_id) == {"a.txt": "a\n", "added.txt": ADDED}


async def test_an_unchanged_gist_is_deleted_after_one_yes(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
    assert not result.is_error, text_of(result)
    assert len(dialog.calls) == 1, [call.message for call in dialog.calls]
    assert not og.exists(gist_id)
