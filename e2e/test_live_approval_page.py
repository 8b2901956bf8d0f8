"""The approval page in opengist-mcp against a REAL Opengist (marker `opengist`): with
`OPENGIST_MCP_VERIFIED_TOOLS=delete_gist`, a delete runs only after the person's passkey on the
page, once; repeating the call or a form dialog's yes does not delete. Every outcome is read
back through Opengist's REST API."""

from __future__ import annotations

import json
import re
import secrets

import anyio
import pytest
from live import api, marker
from support import connect, text_of
from test_approval_page import PageDialog, enrol, pending_link

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
