"""The approval page of a server in `oauth` mode: its public URL is its OAuth resource's origin.
A real oidc-provider (scripts/oidc-env, e2e/oidc/server.mjs) issues the access tokens, the
notes example serves HTTP with `NOTES_HTTP_AUTH=oauth`, and a real headless Chromium with a
virtual authenticator approves (`e2e/cdp.py`).

With the resource `http://localhost:PORT/mcp` the page's link is `http://localhost:PORT/approve/`
on the server's own port, it opens without an access token, and alice's passkey (enrolled for
`oauth:<issuer>#alice`) approves alice's question there; bob's passkey is refused on it.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import HttpTarget, _stop_popen, connect, free_port, notes_bin, require_binary, wait_listening
from test_approval_page import enrol, fetch, note_ids, pending_link
from test_oauth import oidc_command, start, start_issuer

pytestmark = [pytest.mark.anyio, pytest.mark.oauth]


@pytest.fixture
def browsers(tmp_path: Path):
    made = []
    try:
        for name in ("alice", "bob"):
            browser = Browser(tmp_path / f"profile-{name}")
            made.append(browser)
            browser.add_authenticator()
        yield made
    finally:
        for browser in made:
            browser.close()


async def test_in_oauth_mode_the_page_is_on_the_resources_origin(browsers, tmp_path):
    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    alice_browser, bob_browser = browsers
    started = []
    try:
        port = free_port()
        resource = f"http://localhost:{port}/mcp"
        issuer = start_issuer(command, tmp_path, "issuer", resource, tmp_path / "keys.json", started)
        state = tmp_path / "state"
        await anyio.to_thread.run_sync(lambda: enrol(binary, state, alice_browser, principal=f"oauth:{issuer}#alice"))
        await anyio.to_thread.run_sync(lambda: enrol(binary, state, bob_browser, principal=f"oauth:{issuer}#bob"))
        env = {
            "NOTES_HTTP_AUTH": "oauth",
            "NOTES_OAUTH_ISSUER": issuer,
            "NOTES_OAUTH_RESOURCE": resource,
            "NOTES_STATE_DIR": str(state),
        }
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "notes", started)
        assert wait_listening(notes.proc, port), notes.output()
        token = await anyio.to_thread.run_sync(lambda: access_token(issuer, resource, "alice"))
        target = HttpTarget(f"http://127.0.0.1:{port}/mcp", token)
        async with connect(target, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            assert url.startswith(f"http://localhost:{port}/approve/"), url
            # No access token needed to open it; the MCP endpoint beside it wants one.
            status, _ = await anyio.to_thread.run_sync(fetch, url)
            assert status == 200
            status, _ = await anyio.to_thread.run_sync(fetch, f"http://localhost:{port}/mcp")
            assert status == 401
            # Bob's passkey on alice's question: refused; alice's: approved, runs once.
            await anyio.to_thread.run_sync(bob_browser.open, url)
            outcome = await anyio.to_thread.run_sync(bob_browser.click, "approve")
            assert outcome["state"] == "refused" and "another principal" in outcome["text"], outcome
            assert "n1" in await note_ids(client)
            await anyio.to_thread.run_sync(alice_browser.open, url)
            assert (await anyio.to_thread.run_sync(alice_browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        for proc in started:
            _stop_popen(proc)


def access_token(issuer: str, resource: str, client: str) -> str:
    """A real access token for `resource` (client_credentials; its `sub` is the client id)."""
    form = {
        "grant_type": "client_credentials",
        "client_id": client,
        "client_secret": f"{client}-secret",
        "resource": resource,
    }
    request = urllib.request.Request(f"{issuer}/token", data=urllib.parse.urlencode(form).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["access_token"]
