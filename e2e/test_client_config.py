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
import subprocess
import tomllib
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from support import HttpTarget, base_env, connect, run_to_exit

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
# Each client's HTTP form, from its own documentation: the key its URL goes under.
HTTP_URL_KEYS = {"vscode": "url", "cursor": "url", "gemini-cli": "httpUrl", "zed": "url"}
HTTP_CLIENTS = [*HTTP_URL_KEYS, "codex", "claude-code"]


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
    # `--scope user`: registered for all the user's projects, not the current directory only.
    assert words[:6] == ["claude", "mcp", "add", "--scope", "user", "opengist"], words
    split = words.index("--")
    env = {}
    options = words[6:split]
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


# ----------------------------------------------------------------------- settings carried


async def test_read_only_and_elicitation_are_carried_into_the_stdio_configuration(opengist_mcp_binary):
    for client in CLIENTS:
        done = run_to_exit(
            opengist_mcp_binary, {"ELICITATION": "false"}, ["client-config", client, "--read-only"]
        )
        assert done.returncode == 0, done.stderr
        _command, _args, env = as_launched(client, done.stdout)
        assert env.get("OPENGIST_READ_ONLY") == "true" and env.get("ELICITATION") == "false", (client, env)
    # The configuration starts the server it describes: only the reading tools.
    command, args, env = as_launched(client, done.stdout)
    params = StdioServerParameters(command=command, args=args, env={**base_env(), **env}, cwd=os.getcwd())
    async with connect(params, "legacy") as client_session:
        tools = await client_session.list_tools()
    assert len(tools.tools) == 8, [t.name for t in tools.tools]
    # Positive control: without them, neither variable is in the configuration.
    out, _ = printed(opengist_mcp_binary, "codex")
    assert "OPENGIST_READ_ONLY" not in out and "ELICITATION" not in out, out


# ---------------------------------------------------------------------------------- HTTP


def as_reached(client: str, text: str) -> tuple[str, str | None]:
    """(url, Authorization header) as the client would reach the server from `text`; Codex's
    header is the bearer variable it names, returned as `env:NAME`."""
    if client in HTTP_URL_KEYS:
        entry = json.loads(text)[JSON_SECTIONS[client]]["opengist"]
        if client == "vscode":
            assert entry["type"] == "http", entry
        return entry[HTTP_URL_KEYS[client]], entry["headers"]["Authorization"]
    if client == "codex":
        entry = tomllib.loads(text)["mcp_servers"]["opengist"]
        assert "bearer_token" not in entry, entry  # Codex refuses an inline token
        return entry["url"], "env:" + entry["bearer_token_env_var"]
    words = shlex.split(text)
    assert words[:8] == ["claude", "mcp", "add", "--scope", "user", "--transport", "http", "opengist"], words
    assert words[9] == "--header", words
    name, _, value = words[10].partition(": ")
    assert name == "Authorization", words
    return words[8], value


@pytest.mark.parametrize("client", HTTP_CLIENTS)
async def test_each_http_configuration_reaches_the_server_with_its_secret(launcher, opengist_mcp_binary, client):
    server = launcher.http(opengist_mcp_binary)
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", client, "--http", server.url])
    assert done.returncode == 0, done.stderr
    url, authorization = as_reached(client, done.stdout)
    assert url == server.url, (url, server.url)
    # What the user is told to do: the secret where the placeholder is.
    if client == "codex":
        assert authorization == "env:OPENGIST_MCP_HTTP_TOKEN" and "export OPENGIST_MCP_HTTP_TOKEN" in done.stderr
        bearer = server.token
    else:
        assert authorization == "Bearer <secret>" and "replace <secret>" in done.stderr, (authorization, done.stderr)
        bearer = authorization.replace("<secret>", server.token).removeprefix("Bearer ")
    async with connect(HttpTarget(url, bearer), "legacy") as client_session:
        tools = await client_session.list_tools()
    assert len(tools.tools) == 14, [t.name for t in tools.tools]


def test_an_address_is_the_local_servers_endpoint_and_claude_desktop_is_told_what_to_do(opengist_mcp_binary):
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", "zed", "--http", "8765"])
    assert done.returncode == 0, done.stderr
    assert as_reached("zed", done.stdout)[0] == "http://127.0.0.1:8765/mcp", done.stdout
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", "claude-desktop", "--http", "8765"])
    assert done.returncode == 1 and done.stdout == "", done
    assert "cannot send an Authorization header" in done.stderr and "Connectors" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("env", "args", "setting"),
    [({}, ["--read-only"], "OPENGIST_READ_ONLY"), ({"ELICITATION": "false"}, [], "ELICITATION")],
)
def test_server_settings_are_refused_for_an_http_client(opengist_mcp_binary, env, args, setting):
    done = run_to_exit(opengist_mcp_binary, env, ["client-config", "vscode", "--http", "8765", *args])
    assert done.returncode == 2 and done.stdout == "", done
    assert f"{setting} changes what the server offers" in done.stderr, done.stderr


# The team guide in docs/DEPLOYMENT.md writes each client's HTTP form for people who do not
# have the binary; it must say what `client-config --http` prints.
DEPLOYMENT = Path(__file__).parent.parent / "docs" / "DEPLOYMENT.md"
GUIDE_ROWS = {"Claude Code": "claude-code", "VS Code": "vscode", "Cursor": "cursor", "Gemini CLI": "gemini-cli", "Zed": "zed", "Codex CLI": "codex"}


def team_guide_rows() -> dict[str, str]:
    """client -> the 'what to write' cell of the team guide's table, code spans joined."""
    text = DEPLOYMENT.read_text()
    start = text.index("**Each person's client, step by step.**")
    rows = {}
    for line in text[start:].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in GUIDE_ROWS:
            rows[GUIDE_ROWS[cells[0]]] = cells[2]
        if line.startswith("A `401`"):
            break
    return rows


def test_the_team_guide_writes_what_client_config_prints(opengist_mcp_binary):
    rows = team_guide_rows()
    assert sorted(rows) == sorted(HTTP_CLIENTS), rows
    url = "https://mcp.example.com/mcp"
    for client, cell in rows.items():
        done = run_to_exit(opengist_mcp_binary, {}, ["client-config", client, "--http", url])
        assert done.returncode == 0, done.stderr
        spans = [s.replace("<token>", "<secret>") for s in cell.split("`")[1::2]]
        if client in HTTP_URL_KEYS:
            assert json.loads(spans[0]) == json.loads(done.stdout), (client, spans[0], done.stdout)
        elif client == "codex":
            printed_toml = tomllib.loads(done.stdout)["mcp_servers"]["opengist"]
            assert spans[0] == "[mcp_servers.opengist]", spans
            written = tomllib.loads("\n".join(spans[1:3]))
            assert written == printed_toml, (written, printed_toml)
            assert spans[3] == f"export {printed_toml['bearer_token_env_var']}=<secret>", spans
        else:
            assert spans[0] == done.stdout.strip(), (spans[0], done.stdout)
    # Claude Desktop's row says what the binary says: it cannot, and the two ways instead.
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", "claude-desktop", "--http", url])
    guide = DEPLOYMENT.read_text()
    assert done.returncode == 1 and "Connectors" in done.stderr and "over stdio" in done.stderr, done.stderr
    assert "| Claude Desktop | — | cannot send an `Authorization` header" in guide


# ------------------------------------------------------------- every setting given, carried

SEAL_KEY = "ab" * 32  # a secret: never printed


def given_everything(binary: Path, client: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "OPENGIST_URL": "http://127.0.0.1:9",
        "OPENGIST_TOKEN": SECRET,
        "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist",
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_MAX_RESULT_BYTES": "65536",
        "OPENGIST_MCP_SEAL_KEY": SEAL_KEY,
        "OPENGIST_MCP_HTTP_ADDR": "127.0.0.1:9",
    }
    return run_to_exit(binary, env, ["client-config", client, "--deny-tools", "get_user"])


@pytest.mark.parametrize("client", CLIENTS)
async def test_every_setting_given_is_carried_or_named_as_left_out(opengist_mcp_binary, client, tmp_path):
    state = tmp_path / "state"
    done = given_everything(opengist_mcp_binary, client, state)
    assert done.returncode == 0, done.stderr
    _command, _args, env = as_launched(client, done.stdout)
    assert env == {
        "OPENGIST_URL": "http://127.0.0.1:9",
        "OPENGIST_TOKEN": PLACEHOLDER,
        "OPENGIST_DENY_TOOLS": "get_user",
        "OPENGIST_MCP_STATE_DIR": str(state),
        "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist",
        "OPENGIST_MCP_SEAL_KEY": "<OPENGIST_MCP_SEAL_KEY>",
        "OPENGIST_MCP_MAX_RESULT_BYTES": "65536",
    }, env
    # Secrets are placeholders, said so; the HTTP address is left out, said why.
    for secret in (SECRET, SEAL_KEY):
        assert secret not in done.stdout and secret not in done.stderr
    assert "replace <OPENGIST_MCP_SEAL_KEY> with the value you gave" in done.stderr, done.stderr
    assert "Left out: OPENGIST_MCP_HTTP_ADDR: they apply only to a server serving HTTP" in done.stderr, done.stderr


async def test_the_carried_configuration_starts_the_server_it_describes(opengist_mcp_binary, tmp_path):
    state = tmp_path / "state"
    done = given_everything(opengist_mcp_binary, "vscode", state)
    command, args, env = as_launched("vscode", done.stdout)
    # What the user is told to do: each secret where its placeholder is.
    env = {**base_env(), **env, "OPENGIST_TOKEN": SECRET, "OPENGIST_MCP_SEAL_KEY": SEAL_KEY}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=os.getcwd())
    async with connect(params, "legacy") as client_session:
        tools = {tool.name: tool for tool in (await client_session.list_tools()).tools}
    # The tool list carried (get_user denied), and the seal key with no Redis: the spent
    # answers' log in the state directory carried.
    assert len(tools) == 13 and "get_user" not in tools, sorted(tools)
    assert (state / "spent-answers.log").exists(), list(state.iterdir()) if state.exists() else state
    # Positive control: the configuration printed without them starts all fourteen.
    out, _ = printed(opengist_mcp_binary, "vscode")
    command, args, env = as_launched("vscode", out)
    params = StdioServerParameters(command=command, args=args, env={**base_env(), **env, "OPENGIST_TOKEN": SECRET}, cwd=os.getcwd())
    async with connect(params, "legacy") as client_session:
        assert len((await client_session.list_tools()).tools) == 14


def test_the_readme_invocation_warns_of_nothing(opengist_mcp_binary):
    """`OPENGIST_URL=https://gist.example.com opengist-mcp client-config claude-desktop`, as
    the README shows it: no token (the configuration carries its placeholder), no warning."""
    env = {"OPENGIST_URL": "https://gist.example.com"}
    done = run_to_exit(opengist_mcp_binary, env, ["client-config", "claude-desktop"])
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert "WARN" not in done.stderr and "OPENGIST_TOKEN is not" not in done.stderr, done.stderr
    assert done.stderr.startswith("merge into claude_desktop_config.json; replace og_..."), done.stderr
    # Positive control: the server itself, with the same settings, does warn.
    served = run_to_exit(opengist_mcp_binary, env)
    assert "OPENGIST_TOKEN is not" in served.stderr, served.stderr


def test_a_misspelt_setting_is_named_as_not_carried(opengist_mcp_binary):
    env = {"OPENGIST_URL": "https://gist.example.com", "OPENGIST_MCP_VERIFIED_TOOL": "delete_gist"}
    done = run_to_exit(opengist_mcp_binary, env, ["client-config", "codex"])
    assert done.returncode == 0, done.stderr
    assert "VERIFIED_TOOL" not in done.stdout, done.stdout
    assert (
        "Not carried: OPENGIST_MCP_VERIFIED_TOOL is set but is no setting of this server, so it does nothing; "
        "did you mean OPENGIST_MCP_VERIFIED_TOOLS?"
    ) in done.stderr, done.stderr
    # Positive control: spelt right, it is carried and nothing is said about it.
    env = {"OPENGIST_URL": "https://gist.example.com", "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}
    done = run_to_exit(opengist_mcp_binary, env, ["client-config", "codex"])
    assert 'OPENGIST_MCP_VERIFIED_TOOLS = "delete_gist"' in done.stdout and "Not carried" not in done.stderr, done


def test_an_http_configuration_names_the_settings_it_leaves_to_the_server(opengist_mcp_binary):
    env = {"OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}
    done = run_to_exit(opengist_mcp_binary, env, ["client-config", "vscode", "--http", "8765"])
    assert done.returncode == 0, done.stderr
    assert "VERIFIED" not in done.stdout, done.stdout
    assert "Left out: OPENGIST_MCP_VERIFIED_TOOLS: a client of a running HTTP server" in done.stderr, done.stderr
    # Positive control: nothing given, nothing left out.
    done = run_to_exit(opengist_mcp_binary, {}, ["client-config", "vscode", "--http", "8765"])
    assert "Left out" not in done.stderr, done.stderr
