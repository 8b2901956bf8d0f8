"""What the tool descriptions and the server instructions say about the guard is true for the
client that asks: they follow the route its guarded calls will take, which the guard works out
from what this client declared (form or URL elicitation, or none), its era, the operator's
routes (`OPENGIST_MCP_APPROVAL_ROUTES`, `OPENGIST_MCP_VERIFIED_TOOLS`), `ELICITATION`, and
whether a passkey is enrolled for the approval page. No Opengist needed: the server lists its
tools and sends its instructions unconfigured.

- A client that shows dialogs gets the dialog's words; with the defaults its `tools/list` is
  exactly the recorded one (test_tools_list_snapshot.py).
- A client that declared no elicitation gets the two-call token's words, and nothing tells it
  that a person is asked, unless a passkey is enrolled: then the approval page's link, with
  "ask the person to open the link and approve".
- A client that declares URL elicitation (the Python SDK with a callback) with a passkey
  enrolled is told its client is sent the page (pushed on 2025-11-25, `input_required` on
  2026-07-28).
- `ELICITATION=false`: the token for every client, saying why.

Each negative check stands beside a positive control on the same server.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import base_env, connect, jsonrpc_lines, raw_stdio_exchange, target_of
from test_approval_page import enrol

pytestmark = pytest.mark.anyio

SNAPSHOTS = Path(__file__).parent / "snapshots"
GUARDED = ("create_gist", "update_gist", "delete_gist_files", "delete_gist")
# What only a route on which a person decides may say.
PROMISES = ("asks the person", "Always asks", "approves", "person first", "person's yes")
FORM = {"elicitation": {}}
NONE: dict = {}
MODERN = "2026-07-28"


def exchange(binary: Path, tmp_path: Path, env: dict[str, str], capabilities: dict) -> tuple[dict, dict]:
    """(initialize result, tools/list result) over raw stdio, 2025-11-25, declaring `capabilities`."""
    lines = raw_stdio_exchange(
        binary, env, tmp_path / "stderr.log", ("list_gists", {"per_page": 0}), capabilities=capabilities
    )
    answers = jsonrpc_lines(lines)
    assert "result" in answers[1] and "result" in answers[2], answers
    return answers[1]["result"], answers[2]["result"]


def modern_exchange(binary: Path, tmp_path: Path, env: dict[str, str], capabilities: dict) -> tuple[dict, dict]:
    """(server/discover result, tools/list result) over raw stdio, 2026-07-28: no handshake,
    each request declaring `capabilities` in its `_meta`."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
    ]
    done = subprocess.run(
        [str(binary)],
        env={**base_env(), **env},
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    answers = jsonrpc_lines(done.stdout.splitlines())
    assert "result" in answers.get(1, {}) and "result" in answers.get(2, {}), (answers, done.stderr[-2000:])
    return answers[1]["result"], answers[2]["result"]


def descriptions(listed: dict) -> dict[str, str]:
    return {tool["name"]: tool.get("description") or "" for tool in listed["tools"]}


def promises_a_person(text: str) -> bool:
    return any(promise in text for promise in PROMISES)


def check_token_words(listed: dict, why: str) -> None:
    for name in GUARDED:
        text = descriptions(listed)[name]
        assert "two calls" in text and "confirm_token" in text and why in text, f"{name}: {text}"
        assert not promises_a_person(text), f"{name}: {text}"


def check_dialog_words(listed: dict) -> None:
    for name in GUARDED:
        text = descriptions(listed)[name]
        assert "asks the person" in text.lower() or "approves" in text, f"{name}: {text}"


def check_instructions(text: str, route: str) -> None:
    assert "simulate" not in text and "never try" not in text.lower(), text
    if route in ("dialog", "token-off", "token-none"):
        # The way a token reply says to go ahead is described (the dialog's: as its fallback).
        assert "confirm_token" in text and "repeating the same call" in text, text
    if route == "dialog":
        assert "dialog" in text and "person at the client" in text, text
    elif route == "token-off":
        assert "asks no person (ELICITATION=false)" in text and "two calls" in text, text
        assert "dialog" not in text and not promises_a_person(text), text
    elif route == "token-none":
        assert "declared no dialog" in text and "two calls" in text, text
        assert not promises_a_person(text), text
    elif route == "link":
        assert "approval page, with their passkey" in text, text
        assert "Ask the person to open the link and approve" in text, text
        assert "confirm_token" not in text, text
    elif route == "url":
        assert "approval page, with their passkey" in text and "your client" in text, text
        assert "confirm_token" not in text, text
    else:
        raise AssertionError(route)


@pytest.mark.parametrize("elicitation", ["unset", "true", "false"])
def test_each_client_is_told_its_own_route_on_stdio_2025(opengist_mcp_binary, tmp_path, elicitation):
    env = {} if elicitation == "unset" else {"ELICITATION": elicitation}
    on = elicitation != "false"
    default = json.loads((SNAPSHOTS / "tools-list.json").read_text())
    form_init, form_listed = exchange(opengist_mcp_binary, tmp_path, env, FORM)
    none_init, none_listed = exchange(opengist_mcp_binary, tmp_path, env, NONE)
    if not on:
        # Dialogs off: the token for both clients, saying so; nothing else differs.
        for init, listed in ((form_init, form_listed), (none_init, none_listed)):
            check_instructions(init.get("instructions") or "", "token-off")
            check_token_words(listed, "ELICITATION=false")
        assert form_listed == none_listed
        # Positive control: the same words with the dialog on promise the person.
        check_dialog_words(default)
        return
    # The client that shows dialogs: the recorded list, the dialog's words.
    assert form_listed == default, "a dialog client's tools/list is the recorded one"
    check_dialog_words(form_listed)
    check_instructions(form_init.get("instructions") or "", "dialog")
    # The client that declared none: only the guarded tools' descriptions differ, and they
    # promise no person.
    check_instructions(none_init.get("instructions") or "", "token-none")
    check_token_words(none_listed, "declared no dialog")
    assert [t["name"] for t in none_listed["tools"]] == [t["name"] for t in default["tools"]]
    for now, before in zip(none_listed["tools"], default["tools"]):
        if now["name"] not in GUARDED:
            assert now == before, f"{now['name']} changed for a client without dialogs"
            continue
        assert {k: v for k, v in now.items() if k != "description"} == {
            k: v for k, v in before.items() if k != "description"
        }, now["name"]


def test_each_client_is_told_its_own_route_on_stdio_2026(opengist_mcp_binary, tmp_path):
    form_discover, form_listed = modern_exchange(opengist_mcp_binary, tmp_path, {}, {"elicitation": {"form": {}}})
    none_discover, none_listed = modern_exchange(opengist_mcp_binary, tmp_path, {}, {})
    assert "input_required" in form_discover["instructions"], form_discover["instructions"]
    assert "dialog" in form_discover["instructions"], form_discover["instructions"]
    check_dialog_words(form_listed)
    check_instructions(none_discover["instructions"], "token-none")
    check_token_words(none_listed, "declared no dialog")
    # Capabilities hold for each request only: the list is the requesting client's alone.
    assert none_listed.get("cacheScope") == "private" and none_listed.get("ttlMs") == 0, none_listed


@pytest.mark.parametrize("elicitation", ["true", "false"])
async def test_every_transport_and_era_tells_each_client_its_route(opengist_mcp_server, era, elicitation, tmp_path):
    from support import Dialog

    server = opengist_mcp_server(env={"ELICITATION": elicitation})
    told = {}
    for name, dialog in (("form", Dialog("accept")), ("none", None)):
        async with connect(target_of(server), era, dialog=dialog) as client:
            if era == "legacy":
                # The 2026-07-28 client here does not ask for server/discover, which carries them.
                told[f"{name}-instructions"] = client.instructions or ""
            told[name] = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    for name in ("form", "none"):
        delete = told[name]["delete_gist"]
        if elicitation == "false":
            assert "Takes two calls" in delete and "asks no person" in delete, delete
            assert not promises_a_person(delete), delete
        elif name == "form":
            assert delete.startswith("Delete a gist with all its revisions. Always asks the person first"), delete
        else:
            assert "Takes two calls" in delete and "declared no dialog" in delete, delete
            assert not promises_a_person(delete), delete
    if era == "legacy":
        check_instructions(told["form-instructions"], "dialog" if elicitation == "true" else "token-off")
        check_instructions(told["none-instructions"], "token-none" if elicitation == "true" else "token-off")


async def test_with_a_passkey_enrolled_each_client_is_told_of_the_page(
    opengist_mcp_binary, opengist_mcp_server, transport, era, browser, tmp_path
):
    from support import Dialog
    from test_approval_page_http import bearer_principal

    state = tmp_path / "state"
    # The page is told of to the principal the passkey is enrolled for: `local` on stdio, the
    # shared secret's principal over HTTP.
    secret = "e2e-guard-texts-secret-0123456789"
    env = {"OPENGIST_MCP_STATE_DIR": str(state)}
    principal = "local"
    if transport == "http":
        env["OPENGIST_MCP_HTTP_TOKEN"] = secret
        principal = bearer_principal(secret)
    # Positive control first: before a passkey is enrolled there is no page to speak of.
    bare = opengist_mcp_server(env=env)
    async with connect(target_of(bare), era) as client:
        before = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    assert "approval page" not in before["delete_gist"] and "Takes two calls" in before["delete_gist"]
    # The passkey is enrolled before the server starts (it reads them at start).
    enrol(opengist_mcp_binary, state, browser, principal=principal, prefix="OPENGIST_MCP")
    server = opengist_mcp_server(env=env)
    told = {}
    for name, dialog in (("url", Dialog("accept")), ("none", None)):
        async with connect(target_of(server), era, dialog=dialog) as client:
            if era == "legacy":
                told[f"{name}-instructions"] = client.instructions or ""
            told[name] = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    for tool in GUARDED:
        link, url = told["none"][tool], told["url"][tool]
        # No elicitation: the link, for the person; never a token.
        assert "approval page, with their passkey" in link and "Ask the person to open the link" in link, link
        assert "confirm_token" not in link and "two calls" not in link, link
        # URL elicitation: the client is sent the page, in its era's way.
        assert "approval page, with their passkey" in url and "confirm_token" not in url, url
        assert ("input_required" in url) == (era == MODERN), url
        assert "Ask the person to open the link" not in url, url
    if era == "legacy":
        check_instructions(told["none-instructions"], "link")
        check_instructions(told["url-instructions"], "url")
    # The operator puts the form first: a client that shows dialogs is told of the dialog, and
    # one without elicitation still of the page.
    form_first = opengist_mcp_server(env={**env, "OPENGIST_MCP_APPROVAL_ROUTES": "form,page"})
    async with connect(target_of(form_first), era, dialog=Dialog("accept")) as client:
        form = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    async with connect(target_of(form_first), era) as client:
        bare_client = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    assert form["delete_gist"].startswith("Delete a gist with all its revisions. Always asks the person first")
    assert "Ask the person to open the link" in bare_client["delete_gist"], bare_client["delete_gist"]


async def test_verified_tools_are_told_apart(opengist_mcp_server, era, tmp_path):
    """`OPENGIST_MCP_VERIFIED_TOOLS` without a passkey: those tools say their calls are refused,
    naming the page; the others keep the route this client gets."""
    from support import Dialog

    server = opengist_mcp_server(
        env={"OPENGIST_MCP_STATE_DIR": str(tmp_path / "state"), "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}
    )
    async with connect(target_of(server), era, dialog=Dialog("accept")) as client:
        instructions = (client.instructions or "") if era == "legacy" else ""
        tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    delete = tools["delete_gist"]
    assert "refused and changes nothing" in delete and "approval page" in delete, delete
    assert "Always asks" not in delete and "confirm_token" not in delete, delete
    # Positive control: an unlisted guarded tool, same client, same server: the dialog.
    assert tools["delete_gist_files"].startswith("Delete 1-50 files from a gist, keeping at least one. Always asks")
    if era == "legacy":
        assert "For `delete_gist`, instead:" in instructions and "refused" in instructions, instructions
