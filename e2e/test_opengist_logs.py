"""Trace-level logs of full guarded rounds against a REAL Opengist carry nothing secret,
in both eras, on both transports.

Each test runs opengist-mcp with RUST_LOG at its most verbose (`trace`, and `rmcp=trace`
spelt out), plants marker strings in a gist's title, filename and content, and drives guarded
rounds through the Python `mcp` client: a public create approved in a dialog, an update
approved in a dialog, a delete declined, then the same delete on the two-call token path, then
a delete approved. Then it greps the server's stderr for the markers, the question text, the
answer, the confirm token, any seal (`v1.` + base64url: requestState values) and any session
id (a UUID). The gist is read back through Opengist's own API after every write.
"""

from __future__ import annotations

import re

import pytest
from support import target_of
from live import api, gist_id_in, marker
from support import Dialog, connect, text_of, token_in

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

SEAL = re.compile(r"v1\.[A-Za-z0-9_-]{16,}")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# What a dialog's answer looks like in any formatting: JSON, escaped JSON, rmcp's Debug output.
ANSWER = re.compile(r"""approve[\\"':=\s]*(?:Bool\()?(?:true|false)|action[\\"':=\s]*(?:String\()?\\?"?(?:accept|decline)""", re.I)
VERBOSE = ["trace", "rmcp=trace,opengist_mcp=trace,trace"]


async def guarded_rounds(target, era: str, env: dict[str, str], m: str) -> tuple[list[str], list[str]]:
    """Runs the rounds; returns (texts that must not be logged, confirm tokens seen)."""
    title, filename, content = f"title-{m}", f"file-{m}.txt", f"content-{m}"
    secrets = [title, filename, content, f"renamed-{m}.txt", f"new content-{m}"]
    tokens: list[str] = []
    rest = api(env)
    dialog = Dialog("accept")
    async with connect(target, era, dialog) as client:
        created = await client.call_tool(
            "create_gist",
            {"files": [{"filename": filename, "content": content}], "visibility": "public", "title": title},
        )
        assert not created.is_error, text_of(created)
        gist_id = gist_id_in(created.structured_content)
        assert rest.files(gist_id) == {filename: content}
        updated = await client.call_tool(
            "update_gist",
            {
                "gist_id": gist_id,
                "file_ops": [
                    {"op": "rename", "filename": filename, "new_filename": f"renamed-{m}.txt", "content": f"new content-{m}"}
                ],
            },
        )
        assert not updated.is_error, text_of(updated)
        assert rest.files(gist_id) == {f"renamed-{m}.txt": f"new content-{m}"}
        assert len(dialog.calls) == 2, dialog.calls
        secrets.extend(call.message for call in dialog.calls)
    async with connect(target, era, Dialog("decline")) as client:
        declined = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert declined.is_error and rest.exists(gist_id), text_of(declined)
    async with connect(target, era, None) as client:  # no dialog: the two-call token
        first = await client.call_tool("delete_gist", {"gist_id": gist_id})
        token = token_in(first)
        tokens.append(token)
        assert rest.exists(gist_id)
        second = await client.call_tool("delete_gist", {"gist_id": gist_id, "confirm_token": token})
        assert not second.is_error, text_of(second)
    assert not rest.exists(gist_id)
    return secrets, tokens


def assert_clean(stderr: str, secrets: list[str], tokens: list[str]) -> None:
    assert stderr.strip(), "the server logged nothing at all: is RUST_LOG reaching it?"
    for secret in secrets + tokens:
        assert secret not in stderr, f"{secret!r} is in the log:\n{excerpt(stderr, secret)}"
    for name, pattern in (("a seal", SEAL), ("a session id", UUID), ("an answer", ANSWER)):
        found = pattern.search(stderr)
        assert found is None, f"{name} is in the log:\n{excerpt(stderr, found.group(0))}"


def excerpt(stderr: str, needle: str) -> str:
    lines = [line for line in stderr.splitlines() if needle in line]
    return "\n".join(line[:600] for line in lines[:3])


@pytest.mark.parametrize("rust_log", VERBOSE)
async def test_trace_logs_of_guarded_rounds_carry_no_secrets(opengist_env, live_server, era, rust_log):
    m = marker()
    handle = live_server(extra={"RUST_LOG": rust_log})
    secrets, tokens = await guarded_rounds(target_of(handle), era, opengist_env, m)
    assert_clean(handle.stderr(), secrets, tokens)


async def test_the_protocol_trace_switch_is_loud_and_still_redacts(opengist_env, live_server, era):
    m = marker()
    handle = live_server(extra={"RUST_LOG": "trace", "OPENGIST_MCP_PROTOCOL_TRACE": "1"})
    secrets, tokens = await guarded_rounds(target_of(handle), era, opengist_env, m)
    stderr = handle.stderr()
    assert "PROTOCOL TRACE IS ON" in stderr, stderr[:2000]
    assert re.search(r"\brmcp(::\w+)*:", stderr), "the switch lets the SDK's messages through"
    # Content may appear in an explicit protocol trace; seals, tokens, answers, session ids never.
    assert_clean(stderr, [], tokens)
