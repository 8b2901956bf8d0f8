"""The approval page's records, end to end: the notes example (`notes`), the Python `mcp`
client and a real headless Chromium with a virtual authenticator (`e2e/cdp.py`) as the person.

- A decline on the page reaches the model: its retry says that the person declined (once: the
  record is spent), and the call after it asks afresh with a new link.
- Per-person tokens: alice's second token making the identical call later does not hide her
  yes from her first token's retry (an approved record answers before a newer pending one).
- A model alone cannot fill the state directory: one principal's open questions are bounded
  (one record file each), the refusal says so and what to do, and another principal is not
  affected.

Every outcome is read back from the server's notes (`list_notes`) and the state directory,
never from the guarded tool's own word; each negative beside a positive control.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from support import HttpTarget, connect, text_of
from test_approval_page import enrol, note_ids, notes_env, pending_link
from test_notes_people import another_token_of

pytestmark = pytest.mark.anyio

# The bound on one principal's open questions (ask_first_core::MAX_PENDING_APPROVALS).
MAX_PENDING = 20


async def decide(browser, url: str, button: str) -> None:
    """The person opens the page and clicks `button` (`approve` or `decline`) with the passkey."""
    await anyio.to_thread.run_sync(browser.open, url)
    outcome = await anyio.to_thread.run_sync(browser.click, button)
    assert outcome["state"] == "done", outcome


def record_files(state: Path) -> set[str]:
    """The records the state directory holds: one `<id>.json` each."""
    return {path.stem for path in (state / "approvals").glob("*.json")}


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_decline_on_the_page_is_told_to_the_model_once_then_asked_afresh(
    era, launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    async with connect(server.params, era) as client:
        first = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await decide(browser, first, "decline")
        told = await client.call_tool("delete_note", {"note_id": "n1"})
        text = text_of(told)
        assert told.is_error and "The person declined on the approval page" in text, text
        assert "Calling `delete_note` again asks them afresh" in text, text
        assert "/approve/" not in text, f"a new link came with the decline: {text}"
        assert "n1" in await note_ids(client)
        # Told once: the next call is a new question, on a new link.
        second = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert second != first
        assert "n1" in await note_ids(client)
        # The control: approved on the page, the identical retry runs.
        await decide(browser, second, "approve")
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert "n1" not in await note_ids(client)


async def test_alices_second_token_does_not_hide_her_yes_from_her_first(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    # The passkey first: the server reads them at start.
    enrol(notes_binary, state, browser, principal="token:alice")
    server = launcher.http(notes_binary, env=notes_env(state), auth="tokens", people=("alice",))
    laptop = server.tokens["alice"]
    phone = another_token_of(launcher, notes_binary, server, "alice").removeprefix("Bearer ")
    async with connect(HttpTarget(server.url, laptop), "2026-07-28") as on_laptop:
        url = pending_link(await on_laptop.call_tool("delete_note", {"note_id": "n2"}))
        await decide(browser, url, "approve")
        async with connect(HttpTarget(server.url, phone), "2026-07-28") as on_phone:
            # The same call from her phone: its own question (a record answers only the
            # credential that asked), newer than the laptop's approved one.
            other = pending_link(await on_phone.call_tool("delete_note", {"note_id": "n2"}))
            assert other != url
            assert "n2" in await note_ids(on_phone)
        ran = await on_laptop.call_tool("delete_note", {"note_id": "n2"})
        assert not ran.is_error, f"the laptop's yes was lost: {text_of(ran)}"
        assert "n2" not in await note_ids(on_laptop)


async def test_one_principals_open_questions_are_bounded_and_another_is_not_affected(
    launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    # Only alice's passkey is on the browser's authenticator while she decides (the page asks
    # for any passkey of the site, and the authenticator would offer either); bob's is enrolled
    # after, while the server runs, for the control.
    enrol(notes_binary, state, browser, principal="token:alice")
    server = launcher.http(notes_binary, env=notes_env(state), auth="tokens", people=("alice", "bob"))
    async with connect(HttpTarget(server.url, server.tokens["alice"]), "2026-07-28") as alice:
        for i in range(MAX_PENDING + 1):
            written = await alice.call_tool("write_note", {"note_id": f"q{i}", "text": "x", "shared": False})
            assert not written.is_error, text_of(written)
        links = [pending_link(await alice.call_tool("delete_note", {"note_id": f"q{i}"})) for i in range(MAX_PENDING)]
        assert len(set(links)) == MAX_PENDING
        files = record_files(state)
        assert len(files) == MAX_PENDING, files
        refused = await alice.call_tool("delete_note", {"note_id": f"q{MAX_PENDING}"})
        text = text_of(refused)
        assert refused.is_error and f"{MAX_PENDING} questions are waiting for their answer already" in text, text
        assert "Ask them to answer (approve or decline) the open ones, or wait until those expire" in text, text
        assert record_files(state) == files, "a record was written past the bound"
        # An answer frees a place: alice declines one on the page, and the next is asked.
        await decide(browser, links[0], "decline")
        pending_link(await alice.call_tool("delete_note", {"note_id": f"q{MAX_PENDING}"}))
        assert len(record_files(state)) == MAX_PENDING + 1
        # The control: bob is another principal, asked as before while alice is at her bound.
        enrol(notes_binary, state, browser, principal="token:bob")
        async with connect(HttpTarget(server.url, server.tokens["bob"]), "2026-07-28") as bob:
            pending_link(await bob.call_tool("delete_note", {"note_id": "n1"}))
        assert len(record_files(state)) == MAX_PENDING + 2
        assert {f"q{i}" for i in range(MAX_PENDING + 1)} <= await note_ids(alice)
