"""The `tools/list` answer, byte for byte in meaning, against the one recorded before the
tools were laid out one per file: names, order, descriptions, schemas and
annotations. A layout change must not change what a client is told.

The snapshot was written by this test from main at dd8fa75 with `SNAPSHOT_WRITE=1`; write
it again only for a change that means to alter the tool list, and say so in the commit.

The guarded tools' descriptions follow the route the asking client's calls take
(test_guard_texts.py): the recorded default list is what a client that shows dialogs (it
declares elicitation) is told, so these exchanges declare it; with `ELICITATION=false` every
client is told of the two-call token. With `OPENGIST_MCP_VERIFIED_TOOLS` (and no passkey
enrolled) the two verified tools offer no `confirm_token`, carry `ask-first/person_required`
and say their calls are refused; every other entry is the default list's
(`test_verified_tools_differ_only_in_their_own_entries`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import jsonrpc_lines, raw_stdio_exchange

SNAPSHOTS = Path(__file__).parent / "snapshots"

# (case, snapshot file, extra environment, what of the snapshot the answer must be): every
# tool; what read-only mode keeps, which is the full snapshot's read-only tools, entry for entry
# (derived here rather than kept as a second 1,743-line copy that could drift); and the list
# with the dialog off, whose four guarded tools say they take two calls
# (test_guard_texts.py checks it differs from the default in those descriptions only).


def everything(recorded: dict) -> dict:
    return recorded


def read_only_tools(recorded: dict) -> dict:
    """What OPENGIST_READ_ONLY=yes lists: the tools whose annotations say readOnlyHint, in order."""
    kept = [t for t in recorded["tools"] if t.get("annotations", {}).get("readOnlyHint") is True]
    assert kept and len(kept) < len(recorded["tools"]), "the snapshot has read-only and writing tools"
    return {**recorded, "tools": kept}


CASES = [
    ("tools-list.json", "tools-list.json", {}, everything),
    ("tools-list-read-only", "tools-list.json", {"OPENGIST_READ_ONLY": "yes"}, read_only_tools),
    ("tools-list-elicitation-false.json", "tools-list-elicitation-false.json", {"ELICITATION": "false"}, everything),
    (
        "tools-list-verified.json",
        "tools-list-verified.json",
        {"OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist,delete_gist_files"},
        everything,
    ),
]

# A client that shows dialogs (an empty elicitation capability is form mode).
DIALOG_CLIENT = {"elicitation": {}}


@pytest.mark.parametrize(("name", "env", "expected_of"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_tools_list_answer_is_unchanged(opengist_mcp_binary, tmp_path, name, env, expected_of):
    lines = raw_stdio_exchange(
        opengist_mcp_binary,
        env,
        tmp_path / "stderr.log",
        ("list_gists", {"per_page": 0}),
        capabilities=DIALOG_CLIENT,
    )
    answer = jsonrpc_lines(lines)[2]
    assert "result" in answer, f"tools/list failed: {answer}"
    listed = answer["result"]
    snapshot = SNAPSHOTS / name
    if os.environ.get("SNAPSHOT_WRITE") == "1" and expected_of is everything:
        snapshot.write_text(json.dumps(listed, indent=2, sort_keys=True) + "\n")
    recorded = expected_of(json.loads(snapshot.read_text()))
    assert [t["name"] for t in listed["tools"]] == [t["name"] for t in recorded["tools"]], (
        "the tool names or their order changed"
    )
    for now, before in zip(listed["tools"], recorded["tools"]):
        assert now == before, f"{now['name']}: its tools/list entry changed:\n{json.dumps(now, sort_keys=True)}"
    assert listed == recorded


def test_verified_tools_differ_only_in_their_own_entries():
    default = json.loads((SNAPSHOTS / "tools-list.json").read_text())["tools"]
    verified = json.loads((SNAPSHOTS / "tools-list-verified.json").read_text())["tools"]
    assert [t["name"] for t in default] == [t["name"] for t in verified]
    changed = {before["name"] for before, now in zip(default, verified) if before != now}
    assert changed == {"delete_gist", "delete_gist_files"}, changed
    for before, now in zip(default, verified):
        if now["name"] in changed:
            assert "confirm_token" in before["inputSchema"]["properties"], "the default offers the token"
            assert "confirm_token" not in now["inputSchema"]["properties"], now
            assert now["_meta"]["ask-first/person_required"] is True, now
            assert "refused and changes nothing" in now["description"], now["description"]
            assert before["annotations"] == now["annotations"] and before["outputSchema"] == now["outputSchema"]
