"""What the tool descriptions and the server instructions say about the guard is true in
the running setting. No Opengist needed: the server lists its tools and
sends its instructions unconfigured.

With the dialog on (the default) the guarded tools speak of the person, and `tools/list` is
exactly the recorded one (test_tools_list_snapshot.py). With `ELICITATION=false` no person
is asked: the four guarded tools say they take two calls with a confirm_token, everything
else in `tools/list` is unchanged, and the instructions say the same. In neither setting do
the instructions tell a model both to call again and never to obtain the confirmation (the
token reply says "to go ahead, call again").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import target_of
from support import connect, jsonrpc_lines, raw_stdio_exchange

pytestmark = pytest.mark.anyio

SNAPSHOTS = Path(__file__).parent / "snapshots"
GUARDED = {"create_gist", "update_gist", "delete_gist_files", "delete_gist"}


def exchange(binary: Path, tmp_path: Path, env: dict[str, str]) -> tuple[dict, dict]:
    """(initialize result, tools/list result) over raw stdio."""
    lines = raw_stdio_exchange(binary, env, tmp_path / "stderr.log", ("list_gists", {"per_page": 0}))
    answers = jsonrpc_lines(lines)
    assert "result" in answers[1] and "result" in answers[2], answers
    return answers[1]["result"], answers[2]["result"]


def check_instructions(text: str, elicitation: bool) -> None:
    assert "simulate" not in text and "never try" not in text.lower(), text
    # The way a token reply says to go ahead is described, in both settings.
    assert "confirm_token" in text and "repeating the same call" in text, text
    if elicitation:
        assert "dialog" in text and "person at the client" in text, text
    else:
        assert "asks no person (ELICITATION=false)" in text and "two calls" in text, text
        assert "dialog" not in text and "confirmed by the person" not in text, text


@pytest.mark.parametrize("elicitation", ["unset", "true", "false"])
def test_descriptions_and_instructions_match_the_setting(opengist_mcp_binary, tmp_path, elicitation):
    env = {} if elicitation == "unset" else {"ELICITATION": elicitation}
    on = elicitation != "false"
    init, listed = exchange(opengist_mcp_binary, tmp_path, env)
    check_instructions(init.get("instructions") or "", on)
    default = json.loads((SNAPSHOTS / "tools-list.json").read_text())
    if on:
        assert listed == default, "with the dialog on, tools/list is the recorded one"
        return
    assert [t["name"] for t in listed["tools"]] == [t["name"] for t in default["tools"]]
    for now, before in zip(listed["tools"], default["tools"]):
        if now["name"] not in GUARDED:
            assert now == before, f"{now['name']} changed with ELICITATION=false"
            continue
        # Only the description differs, and it promises no person.
        assert {k: v for k, v in now.items() if k != "description"} == {
            k: v for k, v in before.items() if k != "description"
        }, now["name"]
        text = now["description"]
        assert "two calls" in text and "confirm_token" in text and "ELICITATION=false" in text, text
        for promise in ("asks the person", "Always asks", "approves", "person first"):
            assert promise not in text, f"{now['name']}: {text}"
        assert "asks the person" in before["description"].lower() or "approves" in before["description"]


@pytest.mark.parametrize("elicitation", ["true", "false"])
async def test_every_transport_and_era_is_told_the_same(opengist_mcp_server, era, elicitation):
    server = opengist_mcp_server(env={"ELICITATION": elicitation})
    async with connect(target_of(server), era) as client:
        if era == "legacy":
            # The 2026-07-28 client here does not ask for server/discover, which carries them.
            check_instructions(client.instructions or "", elicitation == "true")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    delete = tools["delete_gist"].description or ""
    if elicitation == "true":
        assert delete.startswith("Delete a gist with all its revisions. Always asks the person first"), delete
    else:
        assert "Takes two calls" in delete and "asks no person" in delete, delete
