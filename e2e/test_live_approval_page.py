"""The approval page in opengist-mcp against a REAL Opengist (marker `opengist`): with
`OPENGIST_MCP_VERIFIED_TOOLS=delete_gist`, a delete runs only after the person's passkey on the
page, once; repeating the call or a form dialog's yes does not delete. Every outcome is read
back through Opengist's REST API."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import urllib.request

import anyio
import pytest
from live import api, marker
from support import connect, text_of
from test_approval_page import EVIDENCE, PageDialog, enrol, pending_link

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_verified_delete_runs_once_after_the_passkey(era, opengist_env, launcher, opengist_mcp_binary, browser, tmp_path):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    state = tmp_path / "state"
    enrol(opengist_mcp_binary, state, browser, prefix="OPENGIST_MCP")
    env = {
        "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
        "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist,delete_gist_files",
        # The form first: a verified tool skips it even for a client that shows dialogs.
        "OPENGIST_MCP_APPROVAL_ROUTES": "form,page,token",
    }
    server = launcher.stdio(opengist_mcp_binary, env=env)
    if era == "2026-07-28":
        # A hook that accepts every URL without the page: nothing is deleted.
        hook = PageDialog(None)
        async with connect(server.params, era, dialog=hook) as client:
            with pytest.raises(Exception):
                await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert hook.urls and og.exists(gist_id)
    # A client that shows dialogs: a verified tool never asks it by form; the person approves
    # on the page it was sent to, and the delete runs.
    person = PageDialog(browser)
    async with connect(server.params, era, dialog=person) as client:
        ran = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert not ran.is_error, text_of(ran)
        # The result says what approved it: the page, never a token.
        assert ran.structured_content["cleared_by"] == "approval_page", ran.structured_content
    assert len(person.calls) == 1 and person.urls == [person.calls[0].url], "a form dialog was shown"
    assert not og.exists(gist_id), "Opengist still holds the gist"
    # Once: the same call again is a new question, and nothing else is deleted.
    async with connect(server.params, era) as client:
        again = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert again.is_error, text_of(again)


async def test_over_http_the_page_is_on_the_servers_own_address(opengist_env, launcher, opengist_mcp_binary, browser, tmp_path):
    """opengist-mcp over HTTP: the link names its own port, opens without the bearer, and the
    person's passkey there deletes the gist."""
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    state = tmp_path / "state"
    secret = secrets.token_urlsafe(32)
    # The principal of every holder of one shared secret is `local`: `passkeys add`'s default.
    enrol(opengist_mcp_binary, state, browser, prefix="OPENGIST_MCP")
    env = {
        "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
        "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist",
        "OPENGIST_MCP_HTTP_TOKEN": secret,
    }
    server = launcher.http(opengist_mcp_binary, env=env)
    async with connect(server.target, "legacy") as client:
        first = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert first.is_error and og.exists(gist_id), text_of(first)
        match = re.search(r"http://localhost:(\d+)/approve/[A-Za-z0-9_-]+", text_of(first))
        assert match and int(match.group(1)) == server.port, text_of(first)
        await anyio.to_thread.run_sync(browser.open, match.group(0))
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        ran = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert not ran.is_error, text_of(ran)
    assert not og.exists(gist_id), "Opengist still holds the gist"


def sha20(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def group(evidence: str, heading: str) -> str:
    """The lines of one group of the page's evidence (its heading to the next blank line or
    heading)."""
    after = evidence.split(heading, 1)[1]
    return re.split(r"\n(?:Files |Where it is|Digest of all)", after, maxsplit=1)[0]


async def test_look_alike_file_deletes_show_which_file_goes(opengist_env, launcher, opengist_mcp_binary, browser, tmp_path):
    """Deleting scratch.txt or keep.txt (10 bytes each) asks one question; the two pages show
    which file goes and which stay, each with the digest of what Opengist holds, and the gist's
    page; the link's result names the same. The person reads the page, approves the one that
    deletes scratch.txt, and Opengist then holds keep.txt as it was."""
    og = api(opengist_env)
    files = {"scratch.txt": "temporary\n", "keep.txt": "important\n", "readme.md": "# notes\n"}
    gist_id = og.create(files, "private", title=marker())
    state = tmp_path / "state"
    enrol(opengist_mcp_binary, state, browser, prefix="OPENGIST_MCP")
    env = {
        "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
        "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist_files",
    }
    server = launcher.stdio(opengist_mcp_binary, env=env)
    async with connect(server.params, "legacy") as client:
        scratch = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["scratch.txt"]})
        keep = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["keep.txt"]})
        scratch_url, keep_url = pending_link(scratch), pending_link(keep)
        assert scratch_url != keep_url
        # The model's result: which file goes, by name and digest.
        for result, gone, stays in ((scratch, "scratch.txt", "keep.txt"), (keep, "keep.txt", "scratch.txt")):
            text = text_of(result)
            assert f"Files deleted:\n- «{gone}»: 10 bytes, SHA-256 {sha20(files[gone])}\n" in text, text
            assert f"- «{stays}»: 10 bytes, SHA-256 {sha20(files[stays])}" in group(text, "Files that stay:"), text

        pages = {}
        for url in (scratch_url, keep_url):
            await anyio.to_thread.run_sync(browser.open, url)
            pages[url] = {
                "question": await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent"),
                "evidence": await anyio.to_thread.run_sync(browser.evaluate, EVIDENCE),
                "link": await anyio.to_thread.run_sync(browser.evaluate, "document.querySelector('#evidence a').href"),
            }
        one, two = pages[scratch_url], pages[keep_url]
        with urllib.request.urlopen(scratch_url, timeout=10) as answer:
            size = len(answer.read())
        assert size <= 30 * 1024, size
        # One question, word for word, naming no file; two pages a person tells apart.
        assert one["question"] == two["question"] and "scratch" not in one["question"], one
        assert one["evidence"] != two["evidence"]
        assert "Supplied by the caller — not written by this server." in one["evidence"]
        deleted = group(one["evidence"], "Files deleted")
        assert "«scratch.txt» 10 bytes, SHA-256 " + sha20(files["scratch.txt"]) in deleted, one["evidence"]
        assert "keep.txt" not in deleted
        # The keep.txt link's page says keep.txt goes: a person sent it instead sees it.
        assert "«keep.txt» 10 bytes, SHA-256 " + sha20(files["keep.txt"]) in group(two["evidence"], "Files deleted")
        owner = og.gist(gist_id)["owner"]
        name = owner.get("username") or owner.get("login")
        assert one["link"] == f"{opengist_env['OPENGIST_E2E_URL'].rstrip('/')}/{name}/{gist_id}", one["link"]

        # The person approves the page that deletes scratch.txt; the keep.txt call still waits.
        await anyio.to_thread.run_sync(browser.open, scratch_url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        waiting = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["keep.txt"]})
        assert pending_link(waiting) == keep_url
        assert og.files(gist_id) == files, "something was deleted before its own yes"
        ran = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["scratch.txt"]})
        assert not ran.is_error, text_of(ran)
        assert ran.structured_content["deleted"] == ["scratch.txt"], ran.structured_content
    # What Opengist holds: keep.txt and readme.md, as they were.
    assert og.files(gist_id) == {"keep.txt": "important\n", "readme.md": "# notes\n"}


async def test_a_public_create_shows_the_content_it_publishes(opengist_env, launcher, opengist_mcp_binary, browser, tmp_path):
    """Two public gists of one length: one question, two pages, each showing its own content;
    the yes on one creates that one, with exactly that content."""
    og = api(opengist_env)
    title = marker()
    state = tmp_path / "state"
    enrol(opengist_mcp_binary, state, browser, prefix="OPENGIST_MCP")
    env = {
        "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
        "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_VERIFIED_TOOLS": "create_gist",
    }
    story, secret = "shopping: milk, eggs\n", "AKIA-0123456789-KEYS\n"
    assert len(story) == len(secret)
    server = launcher.stdio(opengist_mcp_binary, env=env)
    call = lambda text: {"title": title, "visibility": "public", "files": [{"filename": "notes.txt", "content": text}]}  # noqa: E731
    async with connect(server.params, "legacy") as client:
        story_url = pending_link(await client.call_tool("create_gist", call(story)))
        secret_url = pending_link(await client.call_tool("create_gist", call(secret)))
        shown = {}
        for url in (story_url, secret_url):
            await anyio.to_thread.run_sync(browser.open, url)
            shown[url] = (
                await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent"),
                await anyio.to_thread.run_sync(browser.evaluate, EVIDENCE),
            )
        assert shown[story_url][0] == shown[secret_url][0]
        assert secret in shown[secret_url][1] and sha20(secret) in shown[secret_url][1]
        assert story in shown[story_url][1] and secret not in shown[story_url][1]
        assert og.titled(title) == [], "created before anyone approved"
        await anyio.to_thread.run_sync(browser.open, story_url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert pending_link(await client.call_tool("create_gist", call(secret))) == secret_url
        ran = await client.call_tool("create_gist", call(story))
        assert not ran.is_error, text_of(ran)
    (created,) = og.titled(title)
    assert og.files(created) == {"notes.txt": story}


async def test_the_gist_on_the_page_is_a_link_to_it(opengist_env, launcher, opengist_mcp_binary, browser, tmp_path):
    """The question names the gist's page on this Opengist: on the approval page it is a link
    there (`<a href>`, http/https, escaped), the question's text unchanged; nothing else in
    it is a link."""
    og = api(opengist_env)
    title = marker()
    gist_id = og.create({"a.txt": "a\n"}, "private", title=title)
    state = tmp_path / "state"
    enrol(opengist_mcp_binary, state, browser, prefix="OPENGIST_MCP")
    env = {
        "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
        "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
        "OPENGIST_MCP_STATE_DIR": str(state),
    }
    server = launcher.stdio(opengist_mcp_binary, env=env)
    async with connect(server.params, "legacy") as client:
        url = pending_link(await client.call_tool("delete_gist", {"gist_id": gist_id}))
        await anyio.to_thread.run_sync(browser.open, url)
        links = await anyio.to_thread.run_sync(
            browser.evaluate,
            "JSON.stringify([...document.querySelectorAll('#question a')].map(a => [a.getAttribute('href'), a.textContent, a.rel]))",
        )
        question = await anyio.to_thread.run_sync(browser.evaluate, "document.getElementById('question').textContent")
    page = og.gist(gist_id)["html_url"]
    assert json.loads(links) == [[page, page, "noopener noreferrer"]], (links, page)
    assert f"Its page on this Opengist: {page} (open it" in question, question
    assert title not in question, "the title (someone else's words) is never in the question"
    assert og.exists(gist_id), "opening the page deleted nothing"
