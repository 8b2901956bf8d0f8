"""The AAGUID allowlist of enrolment (`NOTES_PASSKEY_AAGUIDS`), with a real headless Chromium and
its virtual authenticator (`e2e/cdp.py`), which reports the AAGUID
01020304-0506-0708-0102-030405060708 (Chromium's virtual FIDO device) under the `none`
attestation the enrolment asks for.

Listed, it enrols (and the passkey then approves on the page); another AAGUID listed, the same
authenticator is refused with a message naming the AAGUID and the setting, and nothing is
written; both through `passkeys add`'s own link and through the HTTP server's own address.
"""

from __future__ import annotations

import re
import secrets
import subprocess
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import base_env, connect, free_port
from test_approval_page import note_ids, notes_env, pending_link
from test_approval_page_http import bearer_principal

pytestmark = pytest.mark.anyio

CHROMIUM_VIRTUAL = "01020304-0506-0708-0102-030405060708"
# Another authenticator's AAGUID (any UUID but the virtual one's).
OTHER = "cb69481e-8ff7-4039-93ec-0a2729a154a8"


def try_enrol(binary: Path, state: Path, browser: Browser, env: dict[str, str], principal: str = "local"):
    """`passkeys add` with `env`; the browser opens its link and clicks enrol. Returns the
    page's outcome and, when it enrolled, the command's stdout (else the command is ended)."""
    command = subprocess.Popen(
        [str(binary), "passkeys", "add", "--principal", principal, "--valid-for-secs", "120"],
        env={**base_env(), "NOTES_STATE_DIR": str(state), **env},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        assert command.stdout is not None
        link = None
        for line in command.stdout:
            match = re.search(r"(http://\S+/enrol/[A-Za-z0-9_-]+)", line)
            if match:
                link = match.group(1)
                break
        assert link, "passkeys add printed no link"
        browser.open(link)
        outcome = browser.click("enrol")
        if outcome["state"] != "done":
            return outcome, None
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0, (out, err)
        return outcome, out
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


async def test_a_listed_authenticator_enrols_and_another_is_refused(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    # Another authenticator listed: refused, naming what it reported and the setting.
    outcome, _ = await anyio.to_thread.run_sync(
        lambda: try_enrol(notes_binary, state, browser, {"NOTES_PASSKEY_AAGUIDS": OTHER})
    )
    assert outcome["state"] == "refused", outcome
    assert CHROMIUM_VIRTUAL in outcome["text"] and "NOTES_PASSKEY_AAGUIDS" in outcome["text"], outcome
    assert not (state / "passkeys.json").exists()
    # The refused credential stays in the authenticator: a fresh one (the same model) instead,
    # so the page below is answered by the enrolled passkey.
    await anyio.to_thread.run_sync(browser.remove_authenticator)
    await anyio.to_thread.run_sync(browser.add_authenticator)
    # Positive control: its AAGUID listed (beside another), the same authenticator enrols.
    listed = f"{OTHER}, {CHROMIUM_VIRTUAL.upper()}"
    outcome, out = await anyio.to_thread.run_sync(
        lambda: try_enrol(notes_binary, state, browser, {"NOTES_PASSKEY_AAGUIDS": listed})
    )
    assert outcome["state"] == "done", outcome
    assert CHROMIUM_VIRTUAL in out, out
    assert CHROMIUM_VIRTUAL in (state / "passkeys.json").read_text()
    # The passkey approves on the page.
    server = launcher.stdio(notes_binary, env=notes_env(state, NOTES_PASSKEY_AAGUIDS=listed))
    async with connect(server.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)


async def test_through_the_server_the_servers_list_decides(launcher, notes_binary, browser, tmp_path):
    secret = secrets.token_urlsafe(32)
    principal = bearer_principal(secret)
    for listed, enrols in ((OTHER, False), (f"{CHROMIUM_VIRTUAL},{OTHER}", True)):
        state = tmp_path / f"state-{enrols}"
        port = free_port()
        public = f"http://localhost:{port}"
        env = notes_env(state, NOTES_HTTP_TOKEN=secret, NOTES_PUBLIC_URL=public, NOTES_PASSKEY_AAGUIDS=listed)
        launcher.http(notes_binary, env=env, port=port)
        outcome, _ = await anyio.to_thread.run_sync(
            lambda: try_enrol(notes_binary, state, browser, {"NOTES_PUBLIC_URL": public}, principal)
        )
        if enrols:
            assert outcome["state"] == "done", outcome
            assert CHROMIUM_VIRTUAL in (state / "passkeys.json").read_text()
        else:
            assert outcome["state"] == "refused" and "NOTES_PASSKEY_AAGUIDS" in outcome["text"], outcome
            assert not (state / "passkeys.json").exists()


def test_a_list_that_is_not_uuids_is_refused_naming_the_setting(notes_binary, tmp_path):
    env = {**base_env(), "NOTES_STATE_DIR": str(tmp_path), "NOTES_PASSKEY_AAGUIDS": "yubikey"}
    done = subprocess.run(
        [str(notes_binary), "passkeys", "add"], env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 2 and "NOTES_PASSKEY_AAGUIDS" in done.stderr, (done.stdout, done.stderr)
    # Positive control: a UUID is taken (the command prints its link; ended at once).
    env["NOTES_PASSKEY_AAGUIDS"] = CHROMIUM_VIRTUAL
    command = subprocess.Popen(
        [str(notes_binary), "passkeys", "add"], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert command.stdout is not None
        assert "/enrol/" in command.stdout.readline() + command.stdout.readline()
    finally:
        command.kill()
        command.wait()
