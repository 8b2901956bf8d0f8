"""No anonymous HTTP unless asked for, and bounded work per request,
against the notes example and opengist-mcp over real HTTP on loopback.

- Without any credential setting, the server makes up a secret at start, prints it once on
  stderr with a client configuration, and requires it: an unrelated local client without it gets
  401 and can neither read nor delete a note; the same calls with the secret work (positive
  control). The secret appears nowhere but that start-up text.
- `<PREFIX>_HTTP_NO_AUTH=true` serves without authentication and says so on stderr at start;
  it is refused off loopback and together with a secret (exit 1, naming the ways out).
- A body over the limit gets 413 before anything parses it; a body of many tiny values under the
  limit is refused unparsed, with its id, and a legitimate call works meanwhile.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest
from support import (
    HttpHandle,
    Launcher,
    connect,
    notes_bin,
    opengist_mcp_bin,
    require_binary,
    run_to_exit,
    text_of,
    token_in,
)

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"
MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_VALUES = 20_000


@pytest.fixture
def notes_binary():
    return require_binary(notes_bin(), "cargo build --example notes")


def post(url: str, message: dict | bytes, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": ACCEPT, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def per_request(method: str, params: dict | None = None, id_: int = 1) -> dict:
    """A 2026-07-28 request (no session, protocol version in `_meta`)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e-gate", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**(params or {}), "_meta": meta}}


def protocol_headers(extra: dict[str, str] | None = None, message: dict | None = None) -> dict[str, str]:
    """The 2026-07-28 request headers (`Mcp-Method`, `Mcp-Name` for a call) and `extra`."""
    headers = {"MCP-Protocol-Version": "2026-07-28"}
    if message is not None:
        headers["Mcp-Method"] = message["method"]
        if "name" in message.get("params", {}):
            headers["Mcp-Name"] = message["params"]["name"]
    return {**headers, **(extra or {})}


async def test_without_a_credential_a_made_up_secret_is_printed_once_and_required(
    launcher: Launcher, notes_binary
) -> None:
    server = launcher.http(notes_binary, auth="minted")
    secret = server.token
    assert secret is not None, f"no made-up secret on stderr:\n{server.stderr()}"
    stderr = server.stderr()
    assert stderr.count(secret) == 2, "the secret is printed once, in the header line and the client configuration"
    assert "NOTES_HTTP_TOKEN" in stderr and "NOTES_HTTP_NO_AUTH=true" in stderr, stderr
    config_line = next(line for line in stderr.splitlines() if line.strip().startswith("{"))
    config = json.loads(config_line)
    assert config["url"] == server.url and config["headers"]["Authorization"] == f"Bearer {secret}", config

    # An unrelated local process without the secret: 401 on every route, reads and deletes alike.
    for message in (
        per_request("tools/list"),
        per_request("tools/call", {"name": "list_notes", "arguments": {}}),
        per_request("tools/call", {"name": "delete_note", "arguments": {"note_id": "n1"}}),
    ):
        status, headers, body = post(server.url, message, protocol_headers())
        assert status == 401, (status, body)
        assert headers.get("www-authenticate") == "Bearer", headers
        assert b"first note" not in body
    status, _, _ = post(
        server.url, per_request("tools/list"), protocol_headers({"Authorization": "Bearer guessed-secret-0123456789"})
    )
    assert status == 401

    # The person, with the secret (positive control): n1 is still there, so nothing the
    # intruder sent ran; and the secret's holder reads and deletes through the token path.
    async with connect(server.target, "2026-07-28", dialog=None) as person:
        listed = await person.call_tool("list_notes", {})
        assert "first note" in text_of(listed), text_of(listed)
        first = await person.call_tool("delete_note", {"note_id": "n1"})
        token = token_in(first)
        done = await person.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert not done.is_error, text_of(done)
        listed = await person.call_tool("list_notes", {})
        assert "first note" not in text_of(listed), text_of(listed)


def test_the_made_up_secret_is_never_logged(launcher: Launcher, notes_binary, tmp_path) -> None:
    audit = tmp_path / "audit.jsonl"
    server = launcher.http(notes_binary, env={"NOTES_AUDIT_LOG": str(audit), "RUST_LOG": "trace"}, auth="minted")
    assert server.token
    status, _, _ = post(server.url, per_request("tools/list"), protocol_headers(server.headers, per_request("tools/list")))
    assert status == 200
    status, _, _ = post(server.url, per_request("tools/list"), protocol_headers())
    assert status == 401
    # Only the start-up text holds it: no tracing line, no audit line.
    log_lines = [line for line in server.stderr().splitlines() if " INFO " in line or " DEBUG " in line or " TRACE " in line or " WARN " in line]
    assert log_lines, "tracing wrote something at trace level"
    assert not [line for line in log_lines if server.token in line], "the secret reached the log"
    if audit.exists():
        assert server.token not in audit.read_text()


async def test_the_explicit_opt_out_serves_without_authentication_and_says_so(launcher: Launcher, notes_binary) -> None:
    server = launcher.http(notes_binary, auth="none")
    assert server.token is None
    stderr = server.stderr()
    assert "NOTES_HTTP_NO_AUTH=true" in stderr and "without authentication" in stderr, stderr
    assert server.minted_secret() is None
    status, _, body = post(server.url, per_request("tools/list"), protocol_headers(None, per_request("tools/list")))
    assert status == 200, body


@pytest.mark.parametrize(
    "env, words",
    [
        ({"NOTES_HTTP_NO_AUTH": "true", "NOTES_HTTP_TOKEN": "a-secret-of-enough-length-1234"}, ["contradict", "NOTES_HTTP_TOKEN"]),
        ({"NOTES_HTTP_NO_AUTH": "true", "NOTES_HTTP_ADDR": "0.0.0.0:0"}, ["not a loopback address", "NOTES_HTTP_TOKEN"]),
        ({"NOTES_HTTP_ADDR": "0.0.0.0:0"}, ["not a loopback address", "NOTES_HTTP_TOKEN"]),
        ({"NOTES_HTTP_ADDR": "127.0.0.1:0", "NOTES_HTTP_NO_AUTH": "yes"}, ["NOTES_HTTP_NO_AUTH", "`true` or `false`"]),
    ],
    ids=["opt-out and secret", "opt-out off loopback", "no secret off loopback", "not a switch"],
)
def test_contradictory_or_unsafe_settings_refuse_to_start(notes_binary, tmp_path, env, words) -> None:
    env = {"NOTES_HTTP_ADDR": "127.0.0.1:0", "XDG_STATE_HOME": str(tmp_path), **env}
    done = run_to_exit(notes_binary, env)
    assert done.returncode == 1, (done.returncode, done.stderr)
    for word in words:
        assert word in done.stderr, done.stderr


def test_opengist_mcp_makes_up_a_secret_too(launcher: Launcher) -> None:
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    server = launcher.http(binary, env={"OPENGIST_URL": "http://127.0.0.1:9"}, auth="minted")
    assert server.token, server.stderr()
    assert "OPENGIST_MCP_HTTP_TOKEN" in server.stderr()
    status, _, _ = post(server.url, per_request("tools/list"), protocol_headers())
    assert status == 401
    status, _, _ = post(server.url, per_request("tools/list"), protocol_headers(server.headers, per_request("tools/list")))
    assert status == 200


# --------------------------------------------------------------------------- bounded work


def raw_post_status(port: int, headers: dict[str, str], length: int, chunk: bytes) -> tuple[int, int]:
    """Sends a POST head announcing `length` bytes, then body bytes until the server answers or
    `length` are sent; the status and how many body bytes were sent."""
    head = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {length}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            while sent < length:
                piece = chunk[: min(len(chunk), length - sent)]
                sock.sendall(piece)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while b"\r\n" not in answer:
                data = sock.recv(4096)
                if not data:
                    break
                answer += data
        except ConnectionResetError:
            pass
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    return status, sent


def test_a_body_over_the_limit_is_413_before_it_is_parsed(launcher: Launcher, notes_binary) -> None:
    server = launcher.http(notes_binary)
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **server.headers}
    # Not JSON at all: had it been parsed, the answer would be a 400 parse error.
    status, _ = raw_post_status(server.port, headers, MAX_BODY_BYTES + 1, b"x" * 65536)
    assert status == 413
    # Positive control: a body at the limit is read and parsed (so: a 400 parse error).
    status, _ = raw_post_status(server.port, headers, MAX_BODY_BYTES, b"x" * 65536)
    assert status == 400


def test_many_tiny_values_are_refused_unparsed_and_a_call_still_works(launcher: Launcher, notes_binary) -> None:
    server = launcher.http(notes_binary)
    tiny = "[" + "0," * (MAX_VALUES * 10) + "0]"
    arguments = {"note_id": "n9", "text": "x", "shared": False, "extra": None}
    message = per_request("tools/call", {"name": "write_note", "arguments": arguments}, 7)
    body = json.dumps(message).replace('"extra": null', f'"extra": {tiny}').encode()
    assert len(body) < MAX_BODY_BYTES
    status, _, answer = post(server.url, body, protocol_headers(server.headers, message))
    assert status == 400, (status, answer[:300])
    error = json.loads(answer)
    # A tool call: invalid params, naming the argument that holds the values.
    assert error["id"] == 7 and error["error"]["code"] == -32602, error
    assert str(MAX_VALUES) in error["error"]["message"] and "`extra`" in error["error"]["message"], error
    # Positive control: a legitimate call answers, and the refused one added nothing.
    listing = per_request("tools/call", {"name": "list_notes", "arguments": {}}, 8)
    status, _, answer = post(server.url, listing, protocol_headers(server.headers, listing))
    assert status == 200, answer
    assert b"n1" in answer and b"n9" not in answer, answer
