"""The approval page with a passkey: the guard's example server (`examples/notes`) over stdio,
the Python `mcp` 2.3.0 client, and a real headless Chromium with a virtual WebAuthn
authenticator (user verification on) driven over the DevTools protocol (`e2e/cdp.py`).

The person enrols a passkey through the one-time link `notes passkeys add` prints, then
approves a pending delete on the page; the store is read back to see it ran once. Everything a
model alone can do is refused beside a positive control: calling again, reading and fetching
the link, posting the page without the passkey, an assertion without user verification, an
authenticator never enrolled, a replayed assertion, a reused or expired enrolment link, a
target changed after the yes.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import Dialog, Launcher, base_env, connect, text_of

pytestmark = pytest.mark.anyio

LINK = re.compile(r"(http://localhost:\d+/(?:enrol|approve)/[A-Za-z0-9_-]+)")


def enrol(
    binary: Path, state_dir: Path, browser: Browser, principal: str = "local", valid: int = 120, prefix: str = "NOTES"
) -> str:
    """`<server> passkeys add` with the browser as the operator: the link it printed is opened
    and enrolled through; returns the link (used up)."""
    env = {**base_env(), f"{prefix}_STATE_DIR": str(state_dir)}
    command = subprocess.Popen(
        [str(binary), "passkeys", "add", "--principal", principal, "--valid-for-secs", str(valid)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert command.stdout is not None
        link = None
        for line in command.stdout:
            match = LINK.search(line)
            if match:
                link = match.group(1)
                break
        assert link, "passkeys add printed no link"
        browser.open(link)
        outcome = browser.click("enrol")
        assert outcome["state"] == "done", outcome
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0, (out, err)
        assert "Enrolled" in out, out
        return link
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


def notes_env(state_dir: Path, **extra: str) -> dict[str, str]:
    return {"NOTES_STATE_DIR": str(state_dir), **extra}


async def note_ids(client) -> set[str]:
    result = await client.call_tool("list_notes", {})
    assert not result.is_error, text_of(result)
    return {note["id"] for note in result.structured_content["notes"]}


def pending_link(result) -> str:
    assert result.is_error, text_of(result)
    # A tool with an outputSchema carries these facts in `_meta` instead.
    structured = result.structured_content or (result.meta or {}).get("ask-first/token_reply") or {}
    assert structured.get("status") == "approval_pending", (structured, text_of(result))
    url = structured["approval_url"]
    assert url in text_of(result)
    assert "ask the person to open this link and approve" in text_of(result).lower()
    return url


@pytest.fixture
def launcher(tmp_path: Path):
    launcher = Launcher(workdir=tmp_path)
    try:
        yield launcher
    finally:
        launcher.close()


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_link_route_runs_once_after_the_passkey_and_never_on_repeats(
    era, launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    # No elicitation at all: the result carries the link.
    async with connect(server.params, era) as client:
        first = await client.call_tool("delete_note", {"note_id": "n1"})
        url = pending_link(first)
        # A model repeats the call: nothing runs, the same record is named.
        again = await client.call_tool("delete_note", {"note_id": "n1"})
        assert pending_link(again) == url
        assert "not approved it yet" in text_of(again)
        assert "n1" in await note_ids(client)

        # A model fetches the link and posts the page without a passkey: the page shows the
        # question but nothing decides it.
        status, page = await anyio.to_thread.run_sync(fetch, url)
        assert status == 200 and "delete" in page.lower(), (status, page[:300])
        token = re.search(r'data-token="([^"]+)"', page).group(1)
        origin = url.split("/approve/")[0]
        for headers in (
            {"content-type": "application/json"},
            {"content-type": "application/json", "origin": origin},
            {"content-type": "application/json", "origin": origin, "cookie": f"ask_first_page={token}"},
        ):
            body = json.dumps({"token": token, "decision": "approve"}).encode()
            status, text = await anyio.to_thread.run_sync(lambda: fetch(url + "/begin", body, headers))
            if "cookie" in headers:
                # Every check passed: it gets a passkey challenge, which it cannot answer.
                assert status == 200 and "challenge" in text, (status, text)
                status, text = await anyio.to_thread.run_sync(
                    lambda: fetch(url + "/finish", json.dumps({"token": token, "credential": {}}).encode(), headers)
                )
            assert status in (400, 403), (headers, status, text)
        assert "n1" in await note_ids(client)
        third = await client.call_tool("delete_note", {"note_id": "n1"})
        assert pending_link(third) == url

        # The person approves on the page with the passkey.
        await anyio.to_thread.run_sync(browser.open, url)
        question = await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent")
        assert "n1" in question
        outcome = await anyio.to_thread.run_sync(browser.click, "approve")
        assert outcome["state"] == "done", outcome

        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert "n1" not in await note_ids(client)
        # Once: the next identical call is asked afresh (and the note is gone anyway).
        after = await client.call_tool("delete_note", {"note_id": "n2"})
        assert pending_link(after) != url
        assert "n2" in await note_ids(client)


class PageDialog(Dialog):
    """A client that declares URL elicitation (the Python SDK does whenever it has a callback):
    it records each URL it is asked to open and, when `person` is set, has the person approve
    there with the passkey before it answers `accept`; without, it only answers `accept` (what
    a hook or a model driving the client would do)."""

    def __init__(self, browser: Browser | None) -> None:
        super().__init__("accept")
        self.browser = browser
        self.urls: list[str] = []

    async def __call__(self, context, params):
        url = getattr(params, "url", None)
        if url:
            self.urls.append(url)
            if self.browser is not None and len(self.urls) == 1:
                await anyio.to_thread.run_sync(self.browser.open, url)
                outcome = await anyio.to_thread.run_sync(self.browser.click, "approve")
                assert outcome["state"] == "done", outcome
        return await super().__call__(context, params)


def started(launcher, notes_binary, browser, state: Path, transport: str):
    """The notes server on `transport`, with a passkey enrolled in `browser` for the principal
    its client will be (`local`, `passkeys add`'s default: on stdio, and over HTTP with one
    shared secret, whatever the secret): what the client connects to."""
    enrol(notes_binary, state, browser)
    if transport == "stdio":
        return launcher.stdio(notes_binary, env=notes_env(state)).params
    # The passkey must be enrolled before the server starts (it reads them at start).
    secret = secrets.token_urlsafe(32)
    server = launcher.http(notes_binary, env=notes_env(state, NOTES_HTTP_TOKEN=secret))
    assert server.authorization == f"Bearer {secret}"
    return server.target


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_url_mode_2026_runs_only_once_the_page_approved(transport, launcher, notes_binary, browser, tmp_path):
    target = started(launcher, notes_binary, browser, tmp_path / "state", transport)
    # Accept without the page: every retry finds the record pending; nothing runs.
    hook = PageDialog(None)
    async with connect(target, "2026-07-28", dialog=hook) as client:
        with pytest.raises(Exception) as refused:
            await client.call_tool("delete_note", {"note_id": "n1"})
        assert hook.urls, "the client was never sent the page's URL"
        assert len(set(hook.urls)) == 1, hook.urls
        assert "n1" in await note_ids(client), refused.value
    # The person approves on the page: the retry runs.
    person = PageDialog(browser)
    async with connect(target, "2026-07-28", dialog=person) as client:
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert person.urls and LINK.search(person.urls[0])
        assert "n1" not in await note_ids(client)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_url_mode_2025_waits_for_the_page_then_completes(transport, launcher, notes_binary, browser, tmp_path):
    target = started(launcher, notes_binary, browser, tmp_path / "state", transport)
    person = PageDialog(browser)
    async with connect(target, "legacy", dialog=person) as client:
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert len(person.urls) == 1
        assert "n1" not in await note_ids(client)
        assert {"n2", "n3"} <= await note_ids(client)


async def pending_page(launcher, notes_binary, state: Path, env: dict[str, str] | None = None):
    """A stdio notes server whose `delete_note n1` waits on the page: (server, url)."""
    server = launcher.stdio(notes_binary, env=notes_env(state, **(env or {})))
    return server


async def test_without_user_verification_nothing_is_decided(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    async with connect(server.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        # The authenticator answers without verifying its user: refused, still pending.
        await anyio.to_thread.run_sync(browser.set_user_verified, False)
        await anyio.to_thread.run_sync(browser.open, url)
        outcome = await anyio.to_thread.run_sync(browser.click, "approve")
        assert outcome["state"] == "refused", outcome
        assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
        assert "n1" in await note_ids(client)
        # Positive control: the same authenticator, verifying its user, on the same page.
        await anyio.to_thread.run_sync(browser.set_user_verified, True)
        await anyio.to_thread.run_sync(browser.open, url)
        outcome = await anyio.to_thread.run_sync(browser.click, "approve")
        assert outcome["state"] == "done", outcome
        ran = await client.call_tool("delete_note", {"note_id": "n1"})
        assert not ran.is_error, text_of(ran)
        assert "n1" not in await note_ids(client)


async def test_an_authenticator_never_enrolled_is_refused(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    stranger = Browser(tmp_path / "stranger")
    try:
        stranger.add_authenticator()
        async with connect(server.params, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            await anyio.to_thread.run_sync(stranger.open, url)
            outcome = await anyio.to_thread.run_sync(stranger.click, "approve")
            assert outcome["state"] == "refused", outcome
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
            assert "n1" in await note_ids(client)
            # Positive control: the enrolled authenticator on the same page.
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        stranger.close()


RECORD_POSTS = """(() => { window.posted = []; const f = window.fetch;
  window.fetch = (url, init) => { window.posted.push({url: String(url), body: init && init.body}); return f(url, init); };
  return true; })()"""


async def test_a_replayed_assertion_is_refused(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    async with connect(server.params, "legacy") as client:
        first_url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await anyio.to_thread.run_sync(browser.open, first_url)
        await anyio.to_thread.run_sync(browser.evaluate, RECORD_POSTS)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        posted = await anyio.to_thread.run_sync(browser.evaluate, "window.posted")
        finish = next(p for p in posted if p["url"].endswith("/finish"))
        assertion = json.loads(finish["body"])["credential"]
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error

        # Another question; its page opened and a ceremony begun, then the old assertion sent
        # in place of a fresh one: refused (another challenge), the record stays pending.
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
        await anyio.to_thread.run_sync(browser.open, url)
        replay = f"""(async () => {{
          const t = document.body.dataset.token, post = (p, b) => fetch(location.pathname + p,
            {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: JSON.stringify(b)}});
          const begun = await post('/begin', {{token: t, decision: 'approve'}});
          const r = await post('/finish', {{token: t, credential: {json.dumps(assertion)}}});
          return {{begun: begun.status, status: r.status, text: await r.text()}};
        }})()"""
        answer = await anyio.to_thread.run_sync(browser.evaluate, replay)
        assert answer["begun"] == 200 and answer["status"] == 403, answer
        assert pending_link(await client.call_tool("delete_note", {"note_id": "n2"})) == url
        assert "n2" in await note_ids(client)
        # Positive control: a fresh assertion on a fresh page decides it.
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n2"})).is_error
        assert "n2" not in await note_ids(client)


async def test_a_target_changed_after_the_yes_is_asked_again(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    async with connect(server.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        # The note changes after the yes (an unguarded write of a private note).
        changed = await client.call_tool("write_note", {"note_id": "n1", "text": "something much longer now", "shared": False})
        assert not changed.is_error, text_of(changed)
        again = await client.call_tool("delete_note", {"note_id": "n1"})
        new_url = pending_link(again)
        assert new_url != url, "the old yes was used for a changed target"
        assert "n1" in await note_ids(client)
        # Positive control: the person approves what it is now; it runs.
        await anyio.to_thread.run_sync(browser.open, new_url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)


def test_enrolment_links_work_once_and_expire(notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    link = enrol(notes_binary, state, browser)
    enrolled = json.loads((state / "passkeys.json").read_text())
    assert len(enrolled) == 1 and enrolled[0]["principal"] == "local"
    # Reused: the command has ended; the link opens nothing and enrols nothing.
    with pytest.raises(urllib.error.URLError):
        fetch(link)
    # Expired: a link valid for one second, opened after the command said it expired.
    env = {**base_env(), "NOTES_STATE_DIR": str(state)}
    done = subprocess.run(
        [str(notes_binary), "passkeys", "add", "--valid-for-secs", "1"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 1 and "expired" in done.stderr, (done.stdout, done.stderr)
    expired = LINK.search(done.stdout).group(1)
    with pytest.raises(urllib.error.URLError):
        fetch(expired)
    assert len(json.loads((state / "passkeys.json").read_text())) == 1


async def test_verified_tool_takes_only_the_page(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    env = {"NOTES_VERIFIED_TOOLS": "delete_note"}
    # No passkey enrolled: refused, naming how to enable the page; a dialog's yes does not do.
    bare = launcher.stdio(notes_binary, env=notes_env(state, **env))
    async with connect(bare.params, "legacy", dialog=Dialog("accept")) as client:
        refused = await client.call_tool("delete_note", {"note_id": "n1"})
        assert refused.is_error
        text = text_of(refused)
        assert "passkeys add" in text and "NOTES_APPROVAL_ROUTES" in text, text
        assert "n1" in await note_ids(client)
    # Positive control: with a passkey enrolled the page asks, and the person's yes runs it.
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state, **env, NOTES_APPROVAL_ROUTES="form,page"))
    async with connect(server.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)


async def test_another_principals_passkey_is_refused(launcher, notes_binary, browser, tmp_path):
    """Over HTTP with per-person tokens: alice's question, opened by bob with bob's passkey,
    is refused; alice's passkey decides it."""
    state = tmp_path / "state"
    enrol(notes_binary, state, browser, principal="token:alice")
    bob = Browser(tmp_path / "bob")
    try:
        bob.add_authenticator()
        enrol(notes_binary, state, bob, principal="token:bob")
        server = launcher.http(notes_binary, env=notes_env(state), auth="tokens")
        async with connect(server.as_person("alice"), "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            await anyio.to_thread.run_sync(bob.open, url)
            outcome = await anyio.to_thread.run_sync(bob.click, "approve")
            assert outcome["state"] == "refused" and "another principal" in outcome["text"], outcome
            # It says whose question it is and how the operator enrols for them.
            assert "passkeys add --principal token:alice" in outcome["text"], outcome
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
            assert "n1" in await note_ids(client)
            # Positive control: alice's own passkey.
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        bob.close()


async def test_the_page_shows_the_form_dialogs_question_byte_for_byte(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    dialog = Dialog("decline")
    form = launcher.stdio(notes_binary, env=notes_env(state, NOTES_APPROVAL_ROUTES="form"))
    async with connect(form.params, "legacy", dialog=dialog) as client:
        await client.call_tool("delete_note", {"note_id": "n1"})
    (asked,) = dialog.calls
    page = launcher.stdio(notes_binary, env=notes_env(state))
    # The page's listener lives with its server: it is read while that server runs.
    async with connect(page.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        await anyio.to_thread.run_sync(browser.open, url)
        shown = await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent")
        with urllib.request.urlopen(urllib.request.Request(url), timeout=10) as answer:
            body = answer.read()
            headers = answer.headers
    assert shown == asked.message
    assert len(body) <= 30 * 1024, len(body)
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, csp
    assert headers["x-frame-options"] == "DENY"
    assert "SameSite=Strict" in headers["set-cookie"] and "HttpOnly" in headers["set-cookie"]
    assert b"http" not in body, "the page names no other resource"


def test_a_form_only_client_gets_the_link_not_a_dialog(notes_binary, browser, tmp_path):
    """A client that declares form elicitation only (as Claude Code does): no dialog is pushed;
    the result carries the link, and the call runs on the retry after the page's yes."""
    from raw_mcp import RawStdio, call, is_elicitation, is_response_to

    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    session = RawStdio(notes_binary, notes_env(state), tmp_path / "raw.stderr", elicitation=True)
    try:
        session.send(call(10, "delete_note", {"note_id": "n1"}))
        first = session.must(is_response_to(10), 60, "the pending result")["result"]
        assert session.wait_for(is_elicitation, 0) is None, "a form dialog was pushed instead of the page"
        text = first["content"][0]["text"]
        assert first.get("isError") and "ask the person to open this link and approve" in text.lower(), first
        url = LINK.search(text).group(1)
        browser.open(url)
        assert browser.click("approve")["state"] == "done"
        session.send(call(11, "delete_note", {"note_id": "n1"}))
        ran = session.must(is_response_to(11), 60, "the approved retry")["result"]
        assert not ran.get("isError"), ran
        session.send(call(12, "list_notes", {}))
        notes = session.must(is_response_to(12), 60, "list_notes")["result"]["structuredContent"]["notes"]
        assert "n1" not in {note["id"] for note in notes}
    finally:
        session.close()


EVIDENCE = "document.getElementById('evidence') ? document.getElementById('evidence').innerText : null"


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_look_alike_writes_show_their_own_text_on_the_page(era, launcher, notes_binary, browser, tmp_path):
    """Two shared writes of one note with texts of one length: one question, two pages. Each
    page shows its own text below the question, framed as the caller's; the link's result names
    the same digest; the person's yes on one runs that one only."""
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    secret, story = "AKIA-SECRET-0001 </pre><script>x()</script>", "a harmless shopping list: milk, eggs, bread, tea"
    secret = secret + "." * (len(story) - len(secret))
    assert len(secret) == len(story)
    digest = lambda text: hashlib.sha256(text.encode()).hexdigest()[:20]  # noqa: E731
    async with connect(server.params, era) as client:
        write = {"note_id": "n1", "shared": True}
        first = await client.call_tool("write_note", {**write, "text": story})
        second = await client.call_tool("write_note", {**write, "text": secret})
        story_url, secret_url = pending_link(first), pending_link(second)
        assert story_url != secret_url
        # The model's result names each text's digest, never the text itself.
        assert f"«n1»: {len(story)} bytes, SHA-256 {digest(story)}" in text_of(first), text_of(first)
        assert f"«n1»: {len(secret)} bytes, SHA-256 {digest(secret)}" in text_of(second), text_of(second)
        assert "AKIA" not in text_of(second) and "shopping" not in text_of(first)

        pages = {}
        for url in (story_url, secret_url):
            await anyio.to_thread.run_sync(browser.open, url)
            question = await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent")
            evidence = await anyio.to_thread.run_sync(browser.evaluate, EVIDENCE)
            scripts = await anyio.to_thread.run_sync(browser.evaluate, "document.scripts.length")
            pages[url] = (question, evidence, scripts)
        (story_q, story_ev, _), (secret_q, secret_ev, secret_scripts) = pages[story_url], pages[secret_url]
        # One question, word for word; two evidences, each its own text and digest.
        assert story_q == secret_q and "visible to everyone" in story_q
        assert story_ev != secret_ev
        assert "Supplied by the caller — not written by this server." in secret_ev, secret_ev
        assert secret in secret_ev and digest(secret) in secret_ev and story not in secret_ev
        assert story in story_ev and digest(story) in story_ev
        # The planted markup is text on the page, never an element: one script, the page's.
        assert secret_scripts == 1

        # The person approves the page that shows the harmless text: only that call runs.
        await anyio.to_thread.run_sync(browser.open, story_url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert pending_link(await client.call_tool("write_note", {**write, "text": secret})) == secret_url
        notes = (await client.call_tool("list_notes", {})).structured_content["notes"]
        assert next(n for n in notes if n["id"] == "n1") == {"id": "n1", "text": "first note", "shared": False}
        # Positive control: the approved one runs, and the store holds exactly its text.
        ran = await client.call_tool("write_note", {**write, "text": story})
        assert not ran.is_error, text_of(ran)
        notes = (await client.call_tool("list_notes", {})).structured_content["notes"]
        assert next(n for n in notes if n["id"] == "n1") == {"id": "n1", "text": story, "shared": True}
