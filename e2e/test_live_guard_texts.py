"""Against a REAL Opengist (marker `opengist`): what `delete_gist`'s description tells a client
is the route that client's call then takes. Each client reads the tool list, then calls
`delete_gist` on a fresh private gist that nobody approves; the answer is classified (a form
dialog shown, a `confirm_token`, the approval page's link, the page's URL sent to the client)
and must be the route its description named. The gist is read back through Opengist's REST
API: it still exists after every case (no one approved), and beside it, as the positive
control, a token client's second call does delete.
"""

from __future__ import annotations


import pytest
from live import api, marker
from support import Dialog, connect, target_of, text_of, token_in
from test_approval_page import enrol

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]


def route_told(description: str) -> str:
    if "Takes two calls" in description:
        return "token"
    if "Always asks the person first" in description:
        return "dialog"
    if "Ask the person to open the link and approve" in description:
        return "link"
    if "approval page" in description and "the client" in description:
        return "url"
    raise AssertionError(f"a description naming no route: {description}")


async def route_taken(target, era: str, dialog: Dialog | None, gist_id: str) -> tuple[str, str]:
    """(route told, route taken) for one client calling `delete_gist` once."""
    async with connect(target, era, dialog=dialog) as client:
        tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
        told = route_told(tools["delete_gist"])
        try:
            result = await client.call_tool("delete_gist", {"gist_id": gist_id})
        except Exception:  # a 2026-07-28 client gives up on a page nobody approves
            result = None
    shown = dialog.calls if dialog is not None else []
    if shown and getattr(shown[0], "url", None):
        return told, "url"
    if shown:
        return told, "dialog"
    assert result is not None
    text = text_of(result)
    if "confirm_token:" in text:
        return told, "token"
    if "ask the person to open this link and approve" in text.lower():
        return told, "link"
    raise AssertionError(f"an answer of no known route: {text}")


async def test_each_client_takes_the_route_it_was_told(
    live_server, opengist_env, opengist_mcp_binary, transport, era, browser, tmp_path
):
    from test_approval_page_http import bearer_principal

    og = api(opengist_env)
    # The passkey is enrolled for the caller's principal: `local` on stdio, the shared secret's
    # over HTTP (the page is offered only to a principal with a passkey).
    secret = "e2e-live-guard-texts-secret-0123456789"
    http = {"OPENGIST_MCP_HTTP_TOKEN": secret} if transport == "http" else {}
    principal = bearer_principal(secret) if transport == "http" else "local"
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    state = tmp_path / "state"
    seen = set()
    # Its own state directory: a stdio server is a new process per connection, and one started
    # after the enrolment below would read the passkey.
    server = live_server(extra={"OPENGIST_MCP_STATE_DIR": str(tmp_path / "bare"), **http})
    for dialog in (None, Dialog("decline")):
        told, taken = await route_taken(target_of(server), era, dialog, gist_id)
        assert told == taken, (dialog, told, taken)
        seen.add(taken)
        assert og.exists(gist_id), f"deleted on the {taken} route with nobody's yes"
    # With a passkey enrolled (read at start): the page, each client in its own way.
    enrol(opengist_mcp_binary, state, browser, principal=principal, prefix="OPENGIST_MCP")
    paged = live_server(extra={"OPENGIST_MCP_STATE_DIR": str(state), **http})
    for dialog in (None, Dialog("decline")):
        told, taken = await route_taken(target_of(paged), era, dialog, gist_id)
        assert told == taken, (dialog, told, taken)
        seen.add(taken)
        assert og.exists(gist_id), f"deleted on the {taken} route with nobody's yes"
    assert seen == {"token", "dialog", "link", "url"}, seen
    # Positive control: the token client's second call, quoting its token, deletes.
    async with connect(target_of(server), era) as client:
        first = await client.call_tool("delete_gist", {"gist_id": gist_id})
        second = await client.call_tool("delete_gist", {"gist_id": gist_id, "confirm_token": token_in(first)})
        assert not second.is_error, text_of(second)
    assert not og.exists(gist_id)
