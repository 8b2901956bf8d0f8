"""The opengist-mcp server binary without an Opengist: what a registry or an inspector sees
when it starts the server with no secrets, and the start-up configuration contract
(shared docs TOOLS.md: the tool table, the annotations table, the configuration table).

These run everywhere. The tests that need a real Opengist are in test_opengist_live.py.
"""

from __future__ import annotations

import pytest
from support import target_of
from support import Dialog, connect, free_port, jsonrpc_lines, raw_stdio_exchange, run_to_exit, text_of

pytestmark = pytest.mark.anyio

READING = {
    "list_gists",
    "search_gists",
    "get_gist",
    "get_gist_file",
    "list_gist_commits",
    "list_gist_forks",
    "get_user",
    "check_gist_like",
}
WRITING = {"create_gist", "update_gist", "delete_gist_files", "delete_gist", "fork_gist", "set_gist_like"}
ALL_TOOLS = READING | WRITING

# (readOnly, destructive, idempotent, openWorld), exactly as TOOLS.md's table.
ANNOTATIONS = {
    **{name: (True, False, True, False) for name in READING},
    "create_gist": (False, False, False, False),
    "update_gist": (False, False, False, False),
    "delete_gist_files": (False, True, True, False),
    "delete_gist": (False, True, True, False),
    "fork_gist": (False, False, True, False),
    "set_gist_like": (False, False, True, False),
}

# Parameters TOOLS.md names for each tool (snake_case throughout).
PARAMETERS = {
    "list_gists": {"scope", "username", "since", "page", "per_page"},
    "search_gists": {"query", "fields", "scope", "username", "visibility", "since", "limit", "max_pages"},
    "get_gist": {
        "gist_id",
        "sha",
        "include_content",
        "max_file_bytes",
        "max_total_bytes",
        "include_commits",
        "include_forks",
        "include_clone_urls",
    },
    "get_gist_file": {"gist_id", "filename", "sha", "offset", "max_bytes"},
    "list_gist_commits": {"gist_id", "page", "per_page"},
    "list_gist_forks": {"gist_id", "page", "per_page"},
    "get_user": {"username", "user_id"},
    "check_gist_like": {"gist_id"},
    "create_gist": {"files", "visibility", "title", "description", "confirm_token"},
    "update_gist": {"gist_id", "title", "description", "visibility", "file_ops", "allow_create", "confirm_token"},
    "delete_gist_files": {"gist_id", "filenames", "confirm_token"},
    "delete_gist": {"gist_id", "confirm_token"},
    "fork_gist": {"gist_id"},
    "set_gist_like": {"gist_id", "liked"},
}

ELICITATION_FALSE_NOTICE = "opengist-mcp: ELICITATION=false — guarded tools fall back to the two-call token"


async def tools_of(server, era: str) -> dict:
    async with connect(target_of(server), era) as client:
        listed = await client.list_tools()
        assert listed.next_cursor is None, "the fourteen tools fit on one page"
        return {tool.name: tool for tool in listed.tools}


# --------------------------------------------------------------------------- the tool list


async def test_lists_fourteen_tools_with_exact_annotations(opengist_mcp_server, era):
    tools = await tools_of(opengist_mcp_server(), era)
    assert set(tools) == ALL_TOOLS, sorted(set(tools) ^ ALL_TOOLS)
    for name, tool in tools.items():
        a = tool.annotations
        assert a is not None, f"{name}: no annotations"
        hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        assert None not in hints, f"{name}: every hint must be declared explicitly, got {hints}"
        assert hints == ANNOTATIONS[name], f"{name}: annotations {hints}, TOOLS.md says {ANNOTATIONS[name]}"
        assert tool.input_schema.get("type") == "object", f"{name}: input schema {tool.input_schema}"
        assert tool.output_schema is not None, f"{name}: no output schema"
        assert tool.output_schema.get("type") == "object", f"{name}: output schema {tool.output_schema}"
        assert tool.description, f"{name}: no description"


async def test_parameters_are_the_documented_ones(opengist_mcp_server):
    tools = await tools_of(opengist_mcp_server(), "legacy")
    for name, expected in PARAMETERS.items():
        props = set(tools[name].input_schema.get("properties") or {})
        assert expected <= props, f"{name}: missing parameters {sorted(expected - props)} (has {sorted(props)})"
        required = set(tools[name].input_schema.get("required") or [])
        assert "confirm_token" not in required, f"{name}: confirm_token must be optional"
    create_props = set(tools["create_gist"].input_schema.get("properties") or {})
    assert {"expire", "expires_at"} & create_props, f"create_gist: no expire/expires_at in {sorted(create_props)}"
    assert "visibility" in (tools["create_gist"].input_schema.get("required") or []), (
        "create_gist: visibility is required, never implicit"
    )


# --------------------------------------------------------------------------- unconfigured calls


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_user", {}),
        ("list_gists", {}),
        ("delete_gist", {"gist_id": "0123456789abcdef0123456789abcdef"}),
        ("create_gist", {"files": [{"filename": "a.txt", "content": "x"}], "visibility": "public"}),
    ],
)
async def test_unconfigured_call_answers_setup_instructions(opengist_mcp_server, era, tool, args):
    dialog = Dialog("accept")
    server = opengist_mcp_server()
    async with connect(target_of(server), era, dialog) as client:
        result = await client.call_tool(tool, args)
        text = text_of(result)
        assert result.is_error, f"{tool} without configuration must be an error result: {text}"
        assert "OPENGIST_URL" in text, f"the setup instructions should name OPENGIST_URL: {text}"
        assert dialog.calls == [], "nothing to approve on a server that cannot reach an Opengist"


# --------------------------------------------------------------------------- tool filtering


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "Yes"])
async def test_read_only_registers_only_reading_tools(launcher, opengist_mcp_binary, value):
    tools = await tools_of(launcher.stdio(opengist_mcp_binary, env={"OPENGIST_READ_ONLY": value}), "legacy")
    assert set(tools) == READING, sorted(tools)


async def test_read_only_over_http_modern(launcher, opengist_mcp_binary):
    tools = await tools_of(launcher.http(opengist_mcp_binary, env={"OPENGIST_READ_ONLY": "1"}), "2026-07-28")
    assert set(tools) == READING, sorted(tools)


async def test_read_only_false_keeps_all(launcher, opengist_mcp_binary):
    tools = await tools_of(launcher.stdio(opengist_mcp_binary, env={"OPENGIST_READ_ONLY": "false"}), "legacy")
    assert set(tools) == ALL_TOOLS, sorted(tools)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"OPENGIST_ALLOW_TOOLS": "get_gist,list_gists"}, {"get_gist", "list_gists"}),
        ({"OPENGIST_ALLOW_TOOLS": "list_*"}, {"list_gists", "list_gist_commits", "list_gist_forks"}),
        ({"OPENGIST_DENY_TOOLS": "delete_*"}, ALL_TOOLS - {"delete_gist", "delete_gist_files"}),
        ({"OPENGIST_DENY_TOOLS": "fork_gist,set_gist_like"}, ALL_TOOLS - {"fork_gist", "set_gist_like"}),
        (
            {"OPENGIST_ALLOW_TOOLS": "get_*,list_*", "OPENGIST_DENY_TOOLS": "get_user"},
            {"get_gist", "get_gist_file", "list_gists", "list_gist_commits", "list_gist_forks"},
        ),
        ({"OPENGIST_READ_ONLY": "1", "OPENGIST_DENY_TOOLS": "search_gists"}, READING - {"search_gists"}),
    ],
)
async def test_allow_and_deny_lists(launcher, opengist_mcp_binary, env, expected):
    tools = await tools_of(launcher.stdio(opengist_mcp_binary, env=env), "legacy")
    assert set(tools) == expected, sorted(tools)


async def test_allow_essential_is_a_curated_seven(launcher, opengist_mcp_binary):
    tools = await tools_of(launcher.stdio(opengist_mcp_binary, env={"OPENGIST_ALLOW_TOOLS": "essential"}), "legacy")
    assert len(tools) == 7, sorted(tools)
    assert set(tools) <= ALL_TOOLS, sorted(tools)


async def test_deny_essential_leaves_the_other_seven(launcher, opengist_mcp_binary):
    allowed = await tools_of(
        launcher.stdio(opengist_mcp_binary, env={"OPENGIST_ALLOW_TOOLS": "essential"}), "legacy"
    )
    denied = await tools_of(launcher.stdio(opengist_mcp_binary, env={"OPENGIST_DENY_TOOLS": "essential"}), "legacy")
    assert set(denied) == ALL_TOOLS - set(allowed), (sorted(allowed), sorted(denied))


# --------------------------------------------------------------------------- start-up refusals


def _args(mode: str) -> list[str]:
    return ["--http", f"127.0.0.1:{free_port()}"] if mode == "http" else []


@pytest.mark.parametrize(
    ("var", "entry"),
    [
        ("OPENGIST_ALLOW_TOOLS", "no_such_tool"),
        ("OPENGIST_DENY_TOOLS", "zzz*"),
        ("OPENGIST_ALLOW_TOOLS", "get_gist,gist_get"),
    ],
)
def test_filter_entry_matching_nothing_stops_the_server(opengist_mcp_binary, var, entry):
    done = run_to_exit(opengist_mcp_binary, {var: entry}, timeout=30)
    bad = entry.split(",")[-1].rstrip("*")
    assert done.returncode != 0, done.stderr
    assert bad in done.stderr, f"the refusal should name {bad!r}: {done.stderr}"
    assert done.stdout == "", done.stdout


@pytest.mark.parametrize("value", ["yes", "1", "off", "TRUE", "False"])
@pytest.mark.parametrize("mode", ["stdio", "http"])
def test_bad_elicitation_value_exits_1(opengist_mcp_binary, value, mode):
    done = run_to_exit(opengist_mcp_binary, {"ELICITATION": value}, _args(mode), timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "true" in done.stderr and "false" in done.stderr, done.stderr
    assert done.stdout == "", done.stdout


def test_elicitation_false_notice_on_stderr(opengist_mcp_binary):
    done = run_to_exit(opengist_mcp_binary, {"ELICITATION": "false"})
    assert ELICITATION_FALSE_NOTICE in done.stderr.splitlines(), done.stderr
    assert done.stdout == "", done.stdout


async def test_elicitation_false_notice_over_http(launcher, opengist_mcp_binary):
    server = launcher.http(opengist_mcp_binary, env={"ELICITATION": "false"})
    await tools_of(server, "2026-07-28")
    assert ELICITATION_FALSE_NOTICE in server.stderr().splitlines(), server.stderr()
    assert server.stdout() == "", server.stdout()


@pytest.mark.parametrize(
    "value",
    [
        "og_s3cretTokenLookingValue0123",  # a pasted token
        "ftp://files.invalid-scheme.example",
        "http://someone:hunter2pw@127.0.0.1:9",  # userinfo
        "not a url at all, secret-ish 42",
    ],
)
@pytest.mark.parametrize("mode", ["stdio", "http"])
def test_invalid_url_exits_1_without_echoing_it(opengist_mcp_binary, value, mode):
    done = run_to_exit(opengist_mcp_binary, {"OPENGIST_URL": value}, _args(mode), timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "OPENGIST_URL" in done.stderr, f"the refusal should name the variable: {done.stderr}"
    for shown in (done.stderr, done.stdout):
        assert value not in shown, f"the invalid value was echoed: {shown}"
    assert "hunter2pw" not in done.stderr and "s3cretToken" not in done.stderr, done.stderr


@pytest.mark.parametrize("elicitation", ["true", "false"])
def test_stdout_carries_only_protocol(opengist_mcp_binary, elicitation, tmp_path):
    stderr_path = tmp_path / "stderr"
    lines = raw_stdio_exchange(opengist_mcp_binary, {"ELICITATION": elicitation}, stderr_path, ("get_user", {}))
    by_id = jsonrpc_lines(lines)
    assert {1, 2, 3} <= set(by_id), lines
    assert {tool["name"] for tool in by_id[2]["result"]["tools"]} == ALL_TOOLS
    assert by_id[3]["result"]["isError"] is True, by_id[3]
    stderr_lines = stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
    assert (ELICITATION_FALSE_NOTICE in stderr_lines) == (elicitation == "false"), stderr_lines


@pytest.mark.parametrize("rust_log", [None, "trace"])
def test_token_never_echoed_and_unreachable_opengist_is_an_error_result(opengist_mcp_binary, tmp_path, rust_log):
    """Nothing listens on the port: the call fails as a tool error (not a crash, not a hang),
    and the token appears nowhere, not even with every log level switched on."""
    token = "og_" + "5ec2e7" * 10 + "abcd"
    env = {"OPENGIST_URL": f"http://127.0.0.1:{free_port()}", "OPENGIST_TOKEN": token}
    if rust_log:
        env["RUST_LOG"] = rust_log
    stderr_path = tmp_path / "stderr"
    lines = raw_stdio_exchange(opengist_mcp_binary, env, stderr_path, ("get_user", {}))
    by_id = jsonrpc_lines(lines)
    assert by_id[3]["result"]["isError"] is True, by_id[3]
    stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    assert token not in "".join(lines), "the token was echoed on stdout"
    assert token not in stderr, "the token was logged on stderr"
    assert "5ec2e75ec2e7" not in stderr + "".join(lines), "part of the token leaked"
