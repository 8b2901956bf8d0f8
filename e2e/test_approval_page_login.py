"""The approval page approved by a login at the operator's identity provider (`oauth` mode):
OpenID Connect authorization code with PKCE, whose issuer and subject must be the MCP caller's.

A real oidc-provider (scripts/oidc-env, e2e/oidc/server.mjs with the approval page's client
`approval-page` and its sign-in form) issues both the MCP caller's access tokens and the
page's ID tokens; the notes example serves HTTP with `NOTES_HTTP_AUTH=oauth`, `delete_note`
verified and no passkey enrolled; a real headless Chromium plays the person (`e2e/cdp.py`).

Alice's pending delete: the result says the page needs a sign-in; the person opens the link,
signs in at the provider as alice, approves, and the call runs once. Refused, each beside its
positive control: a sign-in as bob; the provider's callback replayed; a plain HTTP client
posting the page without signing in (with a signed-in page's token and cookie, the same post is
heard); a signed-in page whose record was spent meanwhile; a sign-in posted to another record's
page; a sign-in used twice.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import HttpTarget, _stop_popen, connect, free_port, notes_bin, require_binary, text_of, wait_listening
from test_approval_page import fetch, note_ids, pending_link
from test_approval_page_oauth import access_token
from test_oauth import STARTUP_BOUND_S, oidc_command, start

pytestmark = [pytest.mark.anyio, pytest.mark.oauth]


def start_login_issuer(command: list[str], workdir: Path, resource: str, redirect: str, started) -> str:
    """oidc-provider with the approval page's client, whose redirect URI is `redirect`."""
    port = free_port()
    env = {
        "OIDC_PORT": str(port),
        "OIDC_RESOURCE": resource,
        "OIDC_KEYS_FILE": str(workdir / "keys.json"),
        "OIDC_LOGIN_REDIRECT_URI": redirect,
    }
    process = start(command, env, workdir, "issuer", started)
    deadline = time.monotonic() + STARTUP_BOUND_S
    while "listening on" not in process.stdout.read_text(errors="replace"):
        assert process.proc.poll() is None, f"oidc-provider exited:\n{process.output()}"
        assert time.monotonic() < deadline, f"oidc-provider did not start:\n{process.output()}"
        time.sleep(0.05)
    assert wait_listening(process.proc, port), process.output()
    return f"http://127.0.0.1:{port}"


def navigate(browser: Browser, expression: str) -> str:
    """Runs `expression` (a click or a submit) and waits for the page it leads to; its URL."""
    browser.events.clear()
    browser.evaluate(expression)
    while not any(e.get("method") == "Page.loadEventFired" for e in browser.events):
        browser.events.append(json.loads(browser.ws.recv(timeout=60)))
    return browser.evaluate("location.href")


def sign_in(browser: Browser, url: str, account: str) -> str:
    """Opens the approval link, follows its sign-in link and signs in at the provider as
    `account`; the URL the provider sent the browser back to (the page's callback)."""
    browser.open(url)
    assert browser.evaluate("document.getElementById('approve') === null"), "a passkey button without a passkey"
    at_provider = navigate(browser, "document.getElementById('login').click()")
    assert "/interaction/" in at_provider, at_provider
    fill = (
        f"document.getElementById('login').value={json.dumps(account)};"
        f"document.getElementById('password').value={json.dumps(account + '-password')};"
        "document.getElementById('submit').click()"
    )
    return navigate(browser, fill)


def page_text(browser: Browser) -> str:
    return browser.evaluate("document.body.innerText")


def post_decide(url: str, body: dict, cookie: str | None = None) -> tuple[int, str]:
    """A plain HTTP client (a model's fetch tool) posting the page's decision."""
    origin = "/".join(url.split("/")[:3])
    headers = {"content-type": "application/json", "origin": origin}
    if cookie:
        headers["cookie"] = cookie
    request = urllib.request.Request(f"{url}/decide", data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def browser(tmp_path: Path):
    made = Browser(tmp_path / "profile")
    try:
        yield made
    finally:
        made.close()


async def test_a_login_as_the_caller_approves_once_and_nothing_else_does(browser, tmp_path):
    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    started = []
    try:
        port = free_port()
        resource = f"http://localhost:{port}/mcp"
        callback = f"http://localhost:{port}/approve-login/callback"
        issuer = await anyio.to_thread.run_sync(
            lambda: start_login_issuer(command, tmp_path, resource, callback, started)
        )
        env = {
            "NOTES_HTTP_AUTH": "oauth",
            "NOTES_OAUTH_ISSUER": issuer,
            "NOTES_OAUTH_RESOURCE": resource,
            "NOTES_STATE_DIR": str(tmp_path / "state"),
            "NOTES_VERIFIED_TOOLS": "delete_note",
            "NOTES_APPROVAL_LOGIN_CLIENT_ID": "approval-page",
            "NOTES_APPROVAL_LOGIN_CLIENT_SECRET": "approval-page-secret",
        }
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "notes", started)
        assert wait_listening(notes.proc, port), notes.output()
        token = await anyio.to_thread.run_sync(lambda: access_token(issuer, resource, "alice"))
        async with connect(HttpTarget(f"http://127.0.0.1:{port}/mcp", token), "legacy") as client:
            # The verified delete waits on the page (no passkey is enrolled: the login is the
            # route a model cannot complete).
            first = await client.call_tool("delete_note", {"note_id": "n1"})
            url = pending_link(first)
            assert url.startswith(f"http://localhost:{port}/approve/"), url
            # The result says what the page will ask for: a sign-in, not a passkey.
            assert "a sign-in at their identity provider" in text_of(first), text_of(first)
            assert "passkey" not in text_of(first), text_of(first)

            # A plain HTTP client: the page opens (approving nothing) and offers the sign-in;
            # posting a decision with the page's own token, but no sign-in, is refused.
            status, page = await anyio.to_thread.run_sync(fetch, url)
            assert status == 200 and 'id="login"' in page, page
            page_token = page.split('data-token="', 1)[1].split('"', 1)[0]
            status, said = await anyio.to_thread.run_sync(
                lambda: post_decide(url, {"token": page_token, "decision": "approve"}, f"ask_first_page={page_token}")
            )
            assert status == 403 and "nobody signed in" in said, (status, said)
            assert "n1" in await note_ids(client)
            # The same client following the sign-in link gets the provider's address, and
            # nothing it can finish without the person's password.
            request = urllib.request.Request(f"{url}/login")
            opener = urllib.request.build_opener(NoRedirect)
            with pytest.raises(urllib.error.HTTPError) as redirect:
                await anyio.to_thread.run_sync(lambda: opener.open(request, timeout=30))
            assert redirect.value.code == 303
            assert redirect.value.headers["location"].startswith(f"{issuer}/auth?"), redirect.value.headers

            # Bob signs in on alice's question: refused, with a page that says why.
            back = await anyio.to_thread.run_sync(lambda: sign_in(browser, url, "bob"))
            assert back.startswith(callback), back
            said = await anyio.to_thread.run_sync(page_text, browser)
            assert "you signed in as" in said and "#bob" in said and "#alice" in said, said
            assert await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('approve') === null")
            assert "n1" in await note_ids(client)

            # Alice signs in: the question again, with Approve and Decline.
            back = await anyio.to_thread.run_sync(lambda: sign_in(browser, url, "alice"))
            assert back.startswith(callback), back
            said = await anyio.to_thread.run_sync(page_text, browser)
            assert "delete" in said.lower() and "n1" in said, said
            # The callback replayed (same state and code): refused, and it decides nothing.
            await anyio.to_thread.run_sync(browser.open, back)
            said = await anyio.to_thread.run_sync(page_text, browser)
            assert "already used" in said, said
            assert "n1" in await note_ids(client)

            # Signed in afresh, alice approves: the call runs, once.
            back = await anyio.to_thread.run_sync(lambda: sign_in(browser, url, "alice"))
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
            assert outcome["state"] == "done" and "Approved" in outcome["text"], outcome
            result = await client.call_tool("delete_note", {"note_id": "n1"})
            assert not result.is_error, text_of(result)
            assert "n1" not in await note_ids(client)

            # Spent: the page says so and offers no sign-in.
            status, page = await anyio.to_thread.run_sync(fetch, url)
            assert status == 410 and 'id="login"' not in page, (status, page)

            # A signed-in page whose record was spent meanwhile decides nothing: alice signs in
            # twice on n2's question, approves on the second page, the call runs; the first
            # page's token (posted by a plain HTTP client, with its cookie) is then refused.
            url2 = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
            await anyio.to_thread.run_sync(lambda: sign_in(browser, url2, "alice"))
            first = await anyio.to_thread.run_sync(browser.evaluate, "document.body.dataset.token")
            await anyio.to_thread.run_sync(lambda: sign_in(browser, url2, "alice"))
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
            assert outcome["state"] == "done", outcome
            assert not (await client.call_tool("delete_note", {"note_id": "n2"})).is_error
            assert "n2" not in await note_ids(client)
            status, said = await anyio.to_thread.run_sync(
                lambda: post_decide(url2, {"token": first, "decision": "approve"}, f"ask_first_page={first}")
            )
            assert status == 410 and "already answered" in said, (status, said)

            # Positive control for both posts above: the same plain client, with a signed-in
            # page's token for a pending record, is heard (the person's browser did sign in).
            url3 = pending_link(await client.call_tool("delete_note", {"note_id": "n3"}))
            # A sign-in is bound to its own record: n3's, posted to n2's page, is refused.
            await anyio.to_thread.run_sync(lambda: sign_in(browser, url3, "alice"))
            elsewhere = await anyio.to_thread.run_sync(browser.evaluate, "document.body.dataset.token")
            status, said = await anyio.to_thread.run_sync(
                lambda: post_decide(url2, {"token": elsewhere, "decision": "approve"}, f"ask_first_page={elsewhere}")
            )
            assert status == 403 and "nobody signed in" in said, (status, said)
            await anyio.to_thread.run_sync(lambda: sign_in(browser, url3, "alice"))
            signed = await anyio.to_thread.run_sync(browser.evaluate, "document.body.dataset.token")
            status, said = await anyio.to_thread.run_sync(
                lambda: post_decide(url3, {"token": signed, "decision": "approve"}, f"ask_first_page={signed}")
            )
            assert status == 200 and "Approved" in said, (status, said)
            # Single use: the same sign-in posting again is not heard (the question's sign-ins
            # went with its decision; the page says it was answered).
            status, said = await anyio.to_thread.run_sync(
                lambda: post_decide(url3, {"token": signed, "decision": "decline"}, f"ask_first_page={signed}")
            )
            assert status == 410 and "already answered" in said, (status, said)
            assert not (await client.call_tool("delete_note", {"note_id": "n3"})).is_error
            assert "n3" not in await note_ids(client)
    finally:
        for proc in started:
            _stop_popen(proc)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


async def test_the_login_outside_oauth_mode_is_refused_at_start(tmp_path):
    """A half-wired setting is refused at start, naming what it needs (the test above is the
    positive control: the same setting in `oauth` mode starts and serves)."""
    binary = require_binary(notes_bin(), "cargo build --example notes")
    port = free_port()
    env = {
        "NOTES_STATE_DIR": str(tmp_path / "state"),
        "NOTES_APPROVAL_LOGIN_CLIENT_ID": "approval-page",
    }
    started = []
    try:
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "notes", started)
        code = await anyio.to_thread.run_sync(lambda: notes.proc.wait(timeout=60))
        assert code != 0
        assert "NOTES_HTTP_AUTH=oauth" in notes.output(), notes.output()
    finally:
        for proc in started:
            _stop_popen(proc)


def login_flood(url: str, times: int) -> dict[int, int]:
    """`times` GETs of the page's sign-in link (`<url>/login`), as a model's fetch tool that
    does not follow the redirect: the count per status."""
    opener = urllib.request.build_opener(NoRedirect)
    counts: dict[int, int] = {}
    for _ in range(times):
        try:
            with opener.open(urllib.request.Request(f"{url}/login"), timeout=30) as answer:
                status = answer.status
        except urllib.error.HTTPError as error:
            status = error.code
        counts[status] = counts.get(status, 0) + 1
    return counts


async def test_a_flood_of_sign_ins_does_not_evict_the_persons_sign_in(browser, tmp_path):
    """The person's sign-in is under way at the provider while a model starts a thousand
    sign-ins for another record and a thousand for the person's own: the person's comes back,
    signs in and approves (the floods were heard: each record's bound refused the rest)."""
    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    started = []
    try:
        port = free_port()
        resource = f"http://localhost:{port}/mcp"
        callback = f"http://localhost:{port}/approve-login/callback"
        issuer = await anyio.to_thread.run_sync(
            lambda: start_login_issuer(command, tmp_path, resource, callback, started)
        )
        env = {
            "NOTES_HTTP_AUTH": "oauth",
            "NOTES_OAUTH_ISSUER": issuer,
            "NOTES_OAUTH_RESOURCE": resource,
            "NOTES_STATE_DIR": str(tmp_path / "state"),
            "NOTES_VERIFIED_TOOLS": "delete_note",
            "NOTES_APPROVAL_LOGIN_CLIENT_ID": "approval-page",
            "NOTES_APPROVAL_LOGIN_CLIENT_SECRET": "approval-page-secret",
        }
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "notes", started)
        assert wait_listening(notes.proc, port), notes.output()
        token = await anyio.to_thread.run_sync(lambda: access_token(issuer, resource, "alice"))
        async with connect(HttpTarget(f"http://127.0.0.1:{port}/mcp", token), "legacy") as client:
            persons = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            models = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
            await anyio.to_thread.run_sync(browser.open, persons)
            at_provider = await anyio.to_thread.run_sync(
                lambda: navigate(browser, "document.getElementById('login').click()")
            )
            assert "/interaction/" in at_provider, at_provider
            other = await anyio.to_thread.run_sync(login_flood, models, 1000)
            assert other.get(303, 0) <= 8 and other.get(429, 0) >= 992, other
            same = await anyio.to_thread.run_sync(login_flood, persons, 1000)
            assert same.get(303, 0) <= 7 and same.get(429, 0) >= 993, same
            fill = (
                "document.getElementById('login').value='alice';"
                "document.getElementById('password').value='alice-password';"
                "document.getElementById('submit').click()"
            )
            back = await anyio.to_thread.run_sync(lambda: navigate(browser, fill))
            assert back.startswith(callback), back
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
            assert outcome["state"] == "done" and "Return to your chat" in outcome["text"], outcome
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
            # The flooded record stays pending, undecided.
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n2"})) == models
            assert "n2" in await note_ids(client)
    finally:
        for proc in started:
            _stop_popen(proc)
