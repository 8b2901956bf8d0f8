"""A misspelt setting (a variable that looks like one of opengist-mcp's settings but is none)
does nothing; the person must hear of it, not only the server's stderr, which most clients
show no one. The server's instructions to every client name it, on stdio and over HTTP, in
both eras, beside the closest real setting; `doctor` fails on it (crates/opengist-mcp/tests/
doctor.rs; with a real Opengist, where every other check passes: test_doctor_mistakes.py).

Each negative check stands beside a positive control: the same setting spelt right, where the
instructions say nothing of a mistake.
"""

from __future__ import annotations

import pytest
from support import connect, jsonrpc_lines, raw_stdio_exchange
from test_guard_texts import modern_exchange

pytestmark = pytest.mark.anyio

MISSPELT = {"OPENGIST_MCP_VERIFIED_TOOL": "delete_gist"}
RIGHT = {"OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}
NAMED = (
    "OPENGIST_MCP_VERIFIED_TOOL is set but is no setting of this server, so it does nothing; "
    "did you mean OPENGIST_MCP_VERIFIED_TOOLS?"
)


def initialize(binary, tmp_path, env: dict[str, str]) -> str:
    """The instructions of opengist-mcp's answer to a 2025-11-25 `initialize` on stdio."""
    lines = raw_stdio_exchange(binary, env, tmp_path / "stderr.log", ("list_gists", {}), capabilities={})
    return jsonrpc_lines(lines)[1]["result"].get("instructions") or ""


def test_the_instructions_name_a_misspelt_setting_on_stdio(opengist_mcp_binary, tmp_path):
    text = initialize(opengist_mcp_binary, tmp_path, MISSPELT)
    assert "Tell the person: this server's settings have a mistake" in text, text
    assert NAMED in text and "opengist-mcp doctor" in text, text
    # 2026-07-28: server/discover says it too.
    discover, _ = modern_exchange(opengist_mcp_binary, tmp_path, MISSPELT, {})
    assert NAMED in discover["instructions"], discover["instructions"]
    # Positive control: spelt right, no word of a mistake.
    for env in (RIGHT, {}):
        right = initialize(opengist_mcp_binary, tmp_path, env)
        assert "settings have a mistake" not in right and "OPENGIST_MCP_VERIFIED_TOOL " not in right, right
    discover, _ = modern_exchange(opengist_mcp_binary, tmp_path, RIGHT, {})
    assert "settings have a mistake" not in discover["instructions"]


async def test_the_instructions_name_a_misspelt_setting_over_http(launcher, opengist_mcp_binary):
    for env, named in ((MISSPELT, True), (RIGHT, False)):
        server = launcher.http(opengist_mcp_binary, env=env)
        async with connect(server.target, "legacy") as client:
            instructions = client.instructions or ""
        assert (NAMED in instructions) is named, instructions
