"""One `passkeys add`, with the defaults, lasts across restarts of an HTTP server with the
defaults: the guard's example server (`notes --http`, no secret set, so it makes one up at
every start), the Python `mcp` 2.3.0 client and a real headless Chromium with a virtual
authenticator (`e2e/cdp.py`).

Every holder of the one shared secret is the principal `local` whatever the secret, the
principal `passkeys add` enrols by default; what a record answers is still bound to the
secret (the identity's credential), so a record asked with the first run's secret never clears
a call made with the second run's.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import STARTUP_BOUND_S, base_env, connect, text_of
from test_approval_page import LINK, enrol, fetch, note_ids, pending_link

pytestmark = pytest.mark.anyio


def passkeys_add_with_defaults(binary: Path, state_home: Path, browser: Browser) -> str:
    """`notes passkeys add`, exactly as the guide shows it (no option), with the operator's
    default state directory (`$XDG_STATE_HOME/notes`); the browser enrols through the link.
    Returns what the command printed."""
    command = subprocess.Popen(
        [str(binary), "passkeys", "add"],
        env={**base_env(), "XDG_STATE_HOME": str(state_home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert command.stdout is not None
        printed = ""
        link = None
        for line in command.stdout:
            printed += line
            match = LINK.search(line)
            if match:
                link = match.group(1)
                break
        assert link, printed
        browser.open(link)
        outcome = browser.click("enrol")
        assert outcome["state"] == "done", outcome
        out, err = command.communicate(timeout=STARTUP_BOUND_S)
        assert command.returncode == 0 and "Enrolled" in out, (out, err)
        return printed + out
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


def stop(server) -> None:
    """Stops one server this test started, by its PID, and waits for it to exit."""
    server.proc.terminate()
    server.proc.wait(timeout=STARTUP_BOUND_S)


async def approve(browser: Browser, url: str) -> dict:
    await anyio.to_thread.run_sync(browser.open, url)
    return await anyio.to_thread.run_sync(browser.click, "approve")


async def test_one_passkey_with_the_defaults_approves_after_a_restart(launcher, notes_binary, browser, tmp_path):
    state_home = tmp_path / "xdg-state"
    printed = passkeys_add_with_defaults(notes_binary, state_home, browser)
    assert "`local`" in printed, printed
    assert (state_home / "notes" / "passkeys.json").is_file()
    env = {"XDG_STATE_HOME": str(state_home)}

    # First run: no secret set, so one made up at start; the start-up line names the principal.
    first = launcher.http(notes_binary, env=env, auth="minted")
    assert first.token, first.stderr()
    assert "ONE principal, `local`" in first.stderr(), first.stderr()
    async with connect(first.target, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert (await approve(browser, url))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)
        # Left pending across the restart: asked with this run's secret.
        old_url = pending_link(await client.call_tool("delete_note", {"note_id": "n3"}))
    first_secret = first.token
    stop(first)

    # Second run, same defaults: another made-up secret, and the first one no longer opens it.
    second = launcher.http(notes_binary, env=env, auth="minted")
    assert second.token and second.token != first_secret
    status, _ = await anyio.to_thread.run_sync(
        lambda: fetch(second.url, b"{}", {"Authorization": f"Bearer {first_secret}", "Content-Type": "application/json"})
    )
    assert status == 401, status
    async with connect(second.target, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
        # The passkey enrolled once, before the first run, approves the second run's question.
        outcome = await approve(browser, url)
        assert outcome["state"] == "done", outcome
        ran = await client.call_tool("delete_note", {"note_id": "n2"})
        assert not ran.is_error, text_of(ran)
        assert "n2" not in await note_ids(client)

        # The first run's record (kept in the state directory) is its secret's: approved now,
        # on this run's page, with the same passkey, it clears no call made with this run's
        # secret, which is asked afresh (and n3 stays).
        old_here = old_url.replace(f":{first.port}/", f":{second.port}/", 1)
        assert old_here != old_url
        assert (await approve(browser, old_here))["state"] == "done"
        fresh = pending_link(await client.call_tool("delete_note", {"note_id": "n3"}))
        assert fresh != old_here, fresh
        assert "n3" in await note_ids(client)
        # Positive control: this run's own record, approved, runs.
        assert (await approve(browser, fresh))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n3"})).is_error
        assert "n3" not in await note_ids(client)


async def test_a_passkey_of_another_principal_is_refused_after_the_restart_too(
    launcher, notes_binary, browser, tmp_path
):
    """Negative control: the page still checks whose passkey it is. A passkey enrolled for
    `token:alice` is refused on a single-secret server's question; the default one decides it."""
    state_home = tmp_path / "xdg-state"
    passkeys_add_with_defaults(notes_binary, state_home, browser)
    alice = Browser(tmp_path / "alice")
    try:
        alice.add_authenticator()
        enrol(notes_binary, state_home / "notes", alice, principal="token:alice")
        env = {"XDG_STATE_HOME": str(state_home)}
        stop(launcher.http(notes_binary, env=env, auth="minted"))
        server = launcher.http(notes_binary, env=env, auth="minted")
        async with connect(server.target, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            outcome = await approve(alice, url)
            assert outcome["state"] == "refused" and "another principal" in outcome["text"], outcome
            assert re.search(r"`local`", outcome["text"]), outcome
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
            assert "n1" in await note_ids(client)
            assert (await approve(browser, url))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        alice.close()
