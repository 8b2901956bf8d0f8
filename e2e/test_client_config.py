"""`opengist-mcp client-config CLIENT`: what it prints is what each client needs, and each
configuration starts the server when a client does what that configuration says.

The clients themselves (Claude Code, Claude Desktop, VS Code, Cursor, Codex, Gemini CLI, Zed)
do not run here; what each would do with its configuration is plain: run `command` (with
`args`) and the `env` it names over stdio. So each printed configuration is read the way its
client reads it (JSON, TOML, or a `claude mcp add` command line), the token placeholder is
replaced as the user is told to, and the Python mcp client spawns exactly that command with
exactly that environment and lists the fourteen tools. Which clients show the dialog is in
docs/CLIENTS.md (sourced, apart from the clients measured in the rest of this suite).
"""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from support import base_env, connect, run_to_exit

pytestmark = pytest.mark.anyio

SECRET = "og_" + "5" * 64  # a well-formed token that must never be printed
PLACEHOLDER = "og_..."
JSON_SECTIONS = {
    "claude-desktop": "mcpServers",
    "cursor": "mcpServers",
    "gemini-cli": "mcpServers",
    "vscode": "servers",
    "zed": "context_servers",
}
CLIENTS = [*JSON_SECTIONS, "codex", "claude-code"]


def printed(binary: Path, client: str) -> tuple[str, str]:
    done = run_to_exit(binary, {"OPENGIST_TOKEN": SECRET, "OPENGIST_URL": "http://127.0.0.1:9"}, ["client-config", client])
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def as_launched(client: str, text: str) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) as the client would start the server from `text`."""
    if client in JSON_SECTIONS:
        entry = json.loads(text)[JSON_SECTIONS[client]]["opengist"]
        return entry["command"], entry.get("args", []), entry["env"]
    if client == "codex":
        entry = tomllib.loads(text)["mcp_servers"]["opengist"]
        return entry["command"], entry.get("args", []), entry["env"]
    words = shlex.split(text)
    assert words[:4] == ["claude", "mcp", "add", "opengist"], words
    split = words.index("--")
    env = {}
    options = words[4:split]
    for flag, value in zip(options[::2], options[1::2], strict=True):
        assert flag == "--env", options
        key, _, val = value.partition("=")
        env[key] = val
    return words[split + 1], words[split + 2 :], env


@pytest.mark.parametrize("client", CLIENTS)
def test_prints_the_real_binary_and_never_the_token(opengist_mcp_binary, client):
    out, err = printed(opengist_mcp_binary, client)
    command, _args, env = as_launched(client, out)
    assert Path(command) == opengist_mcp_binary.resolve(), command
    assert env == {"OPENGIST_URL": "http://127.0.0.1:9", "OPENGIST_TOKEN": PLACEHOLDER}, env
    assert SECRET not in out and SECRET not in err
    assert PLACEHOLDER in err, err  # the note says what to replace


@pytest.mark.parametrize("client", CLIENTS)
async def test_each_configuration_starts_the_server(opengist_mcp_binary, client):
    out, _ = printed(opengist_mcp_binary, client)
    command, args, env = as_launched(client, out)
    # What the user is told to do: put their token where the placeholder is. No Opengist is
    # needed to list the tools (a call would answer that the instance cannot be reached).
    env = {**base_env(), **env, "OPENGIST_TOKEN": SECRET}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=os.getcwd())
    async with connect(params, "legacy") as client_session:
        tools = await client_session.list_tools()
    assert len(tools.tools) == 14, [t.name for t in tools.tools]


def test_an_unknown_client_is_a_usage_error_listing_the_known_ones(opengist_mcp_binary):
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", "notepad"])
    assert done.returncode == 2, done
    for client in CLIENTS:
        assert client in done.stderr, done.stderr
