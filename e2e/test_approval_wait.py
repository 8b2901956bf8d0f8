"""How long a call shown the approval page by a URL elicitation waits: the guard's example
server (`notes`) with `NOTES_APPROVAL_WAIT_SECS` short, the Python `mcp` 2.3.0 client (whose
own request timeout is 120 s) and a real headless Chromium with a virtual authenticator.

A 2025-11-25 client that declares URL elicitation is pushed the page's link and the call waits
for the person's decision, at most the wait; then it answers `approval_pending` with the link,
nothing changed. The record stays pending: an identical retry is shown the same page and waits
again, and once the person approved it runs at once, from that record, once.
"""

from __future__ import annotations

import time

import anyio
import pytest
from support import connect, run_to_exit, text_of
from test_approval_page import PageDialog, enrol, note_ids, notes_env, pending_link

pytestmark = pytest.mark.anyio

WAIT_S = 3


def start(launcher, notes_binary, state, transport: str, **env: str):
    settings = notes_env(state, **env)
    if transport == "stdio":
        return launcher.stdio(notes_binary, env=settings).params
    return launcher.http(notes_binary, env=settings).target


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_waiting_call_answers_within_the_wait_and_its_retry_picks_the_record_up(
    transport, launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    target = start(launcher, notes_binary, state, transport, NOTES_APPROVAL_WAIT_SECS=str(WAIT_S))
    # The client opens the link (accept) but the person does not decide.
    hook = PageDialog(None)
    async with connect(target, "legacy", dialog=hook) as client:
        began = time.monotonic()
        first = await client.call_tool("delete_note", {"note_id": "n1"})
        waited = time.monotonic() - began
        url = pending_link(first)
        assert "has not approved it yet" in text_of(first), text_of(first)
        # It waited for the person (the record stayed undecided that long), and answered
        # within the wait, far below the client's own timeout.
        assert WAIT_S <= waited < WAIT_S + 20, waited
        assert hook.urls == [url], hook.urls
        assert "n1" in await note_ids(client)

        # A retry before the person decides: the same record, pushed again, nothing runs.
        again = await client.call_tool("delete_note", {"note_id": "n1"})
        assert pending_link(again) == url
        assert hook.urls == [url, url], hook.urls
        assert "n1" in await note_ids(client)

        # The person approves on the page: the next retry runs from that record at once.
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        # Answered from the approved record: the client was not sent the page again.
        assert hook.urls == [url, url], hook.urls
        assert "n1" not in await note_ids(client)
        assert {"n2", "n3"} <= await note_ids(client)
        # Once: the record is spent; the next identical call is a new question.
        after = await client.call_tool("delete_note", {"note_id": "n2"})
        assert pending_link(after) != url


async def test_a_decision_within_the_wait_completes_the_call_it_was_for(launcher, notes_binary, browser, tmp_path):
    """Positive control of the wait: the person approving while the call waits lets that same
    call run (no retry needed)."""
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    target = start(launcher, notes_binary, state, "stdio", NOTES_APPROVAL_WAIT_SECS="60")
    person = PageDialog(browser)
    async with connect(target, "legacy", dialog=person) as client:
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert len(person.urls) == 1
        assert "n1" not in await note_ids(client)


@pytest.mark.parametrize("value", ["0", "3601", "soon"])
async def test_a_wait_out_of_range_stops_the_server_naming_the_setting(value, notes_binary, tmp_path):
    done = run_to_exit(notes_binary, notes_env(tmp_path / "state", NOTES_APPROVAL_WAIT_SECS=value))
    assert done.returncode != 0, done
    assert "NOTES_APPROVAL_WAIT_SECS" in done.stderr and "1 to 3600" in done.stderr, done.stderr
    # Positive control: an accepted value starts (and, stdin at EOF, ends cleanly).
    ok = run_to_exit(notes_binary, notes_env(tmp_path / "state", NOTES_APPROVAL_WAIT_SECS="100"))
    assert ok.returncode == 0, ok.stderr
