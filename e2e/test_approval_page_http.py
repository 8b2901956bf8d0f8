"""The approval page on the HTTP server's own address: the guard's example server (`notes
--http`), the Python `mcp` 2.3.0 client and a real headless Chromium with a virtual
authenticator (`e2e/cdp.py`).

Served over HTTP, the page's link points at the server's own address (one origin, one TLS proxy
in front of both), it opens without the MCP credential (a person opens it in a browser; the
passkey says who they are), and the person's passkey approves there. The gate's Host check
still holds for it, each refusal beside a positive control. A stdio server, and an HTTP server
with `NOTES_APPROVAL_ADDR` set, keep the page on its own loopback listener. With
`NOTES_PUBLIC_URL` set, `passkeys add` enrols through the running server's own address.
"""

from __future__ import annotations

import http.client
import re
import secrets
import subprocess
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import base_env, connect, free_port, text_of
from test_approval_page import LINK, enrol, fetch, note_ids, notes_env, pending_link

pytestmark = pytest.mark.anyio


def bearer_principal(secret: str) -> str:
    """The principal a client sending `Bearer <secret>` is under one shared secret: `local`,
    whatever the secret (test_passkey_restart.py shows it lasts across restarts)."""
    del secret
    return "local"


def get_with_host(port: int, path: str, host: str) -> int:
    """The status of `GET path` on 127.0.0.1:port with the `Host` header `host`."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": host})
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_over_http_the_link_is_the_servers_own_address_and_the_passkey_approves_there(
    era, launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    secret = secrets.token_urlsafe(32)
    enrol(notes_binary, state, browser, principal=bearer_principal(secret))
    server = launcher.http(notes_binary, env=notes_env(state, NOTES_HTTP_TOKEN=secret))
    async with connect(server.target, era) as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert url.startswith(f"http://localhost:{server.port}/approve/"), url
        path = url.split(f":{server.port}", 1)[1]

        # No MCP credential is needed to open it (the MCP endpoint beside it refuses one
        # without: the control that the gate is on).
        status, page = await anyio.to_thread.run_sync(fetch, url)
        assert status == 200 and "n1" in page, (status, page[:300])
        status, _ = await anyio.to_thread.run_sync(fetch, f"http://localhost:{server.port}/mcp")
        assert status == 401, status
        # The gate's Host check holds for the page: a rebinding name is refused.
        refused = await anyio.to_thread.run_sync(get_with_host, server.port, path, "evil.example")
        allowed = await anyio.to_thread.run_sync(get_with_host, server.port, path, f"localhost:{server.port}")
        assert (refused, allowed) == (403, 200)

        # The person approves on the page with the passkey; the call runs, once.
        await anyio.to_thread.run_sync(browser.open, url)
        outcome = await anyio.to_thread.run_sync(browser.click, "approve")
        assert outcome["state"] == "done", outcome
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert "n1" not in await note_ids(client)
        assert pending_link(await client.call_tool("delete_note", {"note_id": "n2"})) != url


async def test_another_principals_passkey_is_refused_on_the_servers_address(
    launcher, notes_binary, browser, tmp_path
):
    """Mounted without the MCP gate, the page still answers only its own principal's passkeys:
    bob's passkey on alice's question is refused, alice's decides it."""
    state = tmp_path / "state"
    enrol(notes_binary, state, browser, principal="token:alice")
    bob = Browser(tmp_path / "bob")
    try:
        bob.add_authenticator()
        enrol(notes_binary, state, bob, principal="token:bob")
        server = launcher.http(notes_binary, env=notes_env(state), auth="tokens")
        async with connect(server.as_person("alice"), "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            assert url.startswith(f"http://localhost:{server.port}/approve/"), url
            await anyio.to_thread.run_sync(bob.open, url)
            outcome = await anyio.to_thread.run_sync(bob.click, "approve")
            assert outcome["state"] == "refused" and "another principal" in outcome["text"], outcome
            assert "n1" in await note_ids(client)
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        bob.close()


async def test_stdio_and_an_explicit_approval_addr_keep_the_loopback_listener(
    launcher, notes_binary, browser, tmp_path
):
    # stdio: the page's own listener on localhost.
    enrol(notes_binary, tmp_path / "stdio", browser)
    stdio = launcher.stdio(notes_binary, env=notes_env(tmp_path / "stdio"))
    async with connect(stdio.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert LINK.fullmatch(url), url
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
    browser.remove_authenticator()
    browser.add_authenticator()
    # HTTP with NOTES_APPROVAL_ADDR set: there, not on the server's port.
    state = tmp_path / "http"
    secret = secrets.token_urlsafe(32)
    enrol(notes_binary, state, browser, principal=bearer_principal(secret))
    page_port = free_port()
    server = launcher.http(
        notes_binary,
        env=notes_env(state, NOTES_HTTP_TOKEN=secret, NOTES_APPROVAL_ADDR=f"localhost:{page_port}"),
    )
    async with connect(server.target, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert url.startswith(f"http://localhost:{page_port}/approve/"), url
        # The server's own address has no page (the gate answers for it); the page's does.
        status, _ = await anyio.to_thread.run_sync(fetch, url.replace(str(page_port), str(server.port), 1))
        assert status == 401, status
        status, _ = await anyio.to_thread.run_sync(fetch, url)
        assert status == 200, status
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error


def enrol_through(binary: Path, state: Path, public_url: str, principal: str, browser: Browser) -> str:
    """`passkeys add` with the server's public URL set: the link it prints is on the server's
    address; the browser enrols through it. Returns the (used) link."""
    env = {**base_env(), "NOTES_STATE_DIR": str(state), "NOTES_PUBLIC_URL": public_url}
    command = subprocess.Popen(
        [str(binary), "passkeys", "add", "--principal", principal, "--valid-for-secs", "120"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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
        assert link and link.startswith(public_url + "/enrol/"), link
        browser.open(link)
        outcome = browser.click("enrol")
        assert outcome["state"] == "done", outcome
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0 and "Enrolled" in out, (out, err)
        return link
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


async def test_with_a_public_url_the_passkey_is_enrolled_through_the_server(
    launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    secret = secrets.token_urlsafe(32)
    port = free_port()
    public = f"http://localhost:{port}"
    # No passkey yet: the server serves the enrolment link all the same.
    server = launcher.http(notes_binary, env=notes_env(state, NOTES_HTTP_TOKEN=secret, NOTES_PUBLIC_URL=public), port=port)
    link = await anyio.to_thread.run_sync(
        lambda: enrol_through(notes_binary, state, public, bearer_principal(secret), browser)
    )
    # Once: the used link enrols nothing more.
    status, text = await anyio.to_thread.run_sync(fetch, link)
    assert status == 410 and "already used" in text, (status, text)
    async with connect(server.target, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert url.startswith(public + "/approve/"), url
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)
