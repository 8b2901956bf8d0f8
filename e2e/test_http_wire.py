"""What opengist-mcp answers on the HTTP wire where clients expect something exact:
JSON-RPC errors for bodies that are no message, UnsupportedProtocolVersion for a
per-request 2025-11-25 call, the DELETE status the official clients accept, and schemas without
non-standard integer formats. The server runs without an Opengist: nothing here reaches one.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

import pytest
from support import HttpHandle, Launcher, connect, opengist_mcp_bin, require_binary

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def server(launcher: Launcher) -> HttpHandle:
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    return launcher.http(binary, env={"OPENGIST_URL": "http://127.0.0.1:9"})


def post(server: HttpHandle, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """POST `body` to the server's MCP endpoint with its bearer secret and `headers`."""
    request = urllib.request.Request(
        server.url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": ACCEPT, **server.headers, **(headers or {})},
    )
    return send(request)


def send(request: urllib.request.Request) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def json_rpc_error(status: int, headers: dict[str, str], body: bytes) -> dict:
    assert status == 400, (status, body)
    assert headers.get("content-type", "").startswith("application/json"), headers
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0", message
    assert "result" not in message, message
    return message


def test_malformed_json_is_a_400_parse_error(server: HttpHandle) -> None:
    message = json_rpc_error(*post(server, b'{"jsonrpc": "2.0", "id": 1, "method": '))
    assert message["id"] is None
    assert message["error"]["code"] == -32700, message
    assert "not valid JSON" in message["error"]["message"], message


def test_a_batch_is_a_400_invalid_request(server: HttpHandle) -> None:
    batch = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).encode()
    message = json_rpc_error(*post(server, batch))
    assert message["error"]["code"] == -32600, message
    assert "batches are not supported" in message["error"]["message"], message


def test_json_that_is_no_message_is_a_400_invalid_request_with_its_id(server: HttpHandle) -> None:
    message = json_rpc_error(*post(server, json.dumps({"id": 7, "hello": "world"}).encode()))
    assert message["error"]["code"] == -32600, message
    assert message["id"] == 7, message


def test_a_per_request_call_naming_2025_11_25_is_unsupported_protocol_version(server: HttpHandle) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}
    message = json_rpc_error(*post(server, json.dumps(body).encode(), headers))
    assert message["id"] == 3
    assert message["error"]["code"] == -32022, message
    assert message["error"]["data"] == {"requested": "2025-11-25", "supported": ["2026-07-28"]}, message
    assert "initialize" in message["error"]["message"], message

    # The same call at 2026-07-28 is served: the check is about the version, not the shape.
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
    headers["MCP-Protocol-Version"] = "2026-07-28"
    status, _, answer = post(server, json.dumps(body).encode(), headers)
    assert status == 200, answer
    assert b'"tools"' in answer, answer


def test_deleting_a_session_answers_200_and_ends_it(server: HttpHandle) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}},
    }
    status, headers, _ = post(server, json.dumps(init).encode())
    assert status == 200
    session = headers["mcp-session-id"]
    delete = urllib.request.Request(server.url, method="DELETE", headers={"Mcp-Session-Id": session, **server.headers})
    status, _, body = send(delete)
    assert status == 200, (status, body)
    # The session is gone: using it again is refused.
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    status, _, _ = post(server, ping, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    assert status == 404, status


async def test_the_python_sdk_ends_its_session_without_a_warning(
    server: HttpHandle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp")
    async with connect(server.target, "legacy") as client:
        await client.list_tools()
    failures = [r.getMessage() for r in caplog.records if "Session termination failed" in r.getMessage()]
    assert failures == [], failures


def integer_formats(schema: object, path: str = "$") -> list[str]:
    """Every `format` on an integer schema (JSON Schema defines none)."""
    found = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "integer" in kinds and "format" in schema:
            found.append(f"{path}: {schema['format']}")
        for key, value in schema.items():
            found += integer_formats(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += integer_formats(value, f"{path}[{i}]")
    return found


async def test_tool_schemas_carry_plain_integer_bounds(server: HttpHandle) -> None:
    async with connect(server.target, "2026-07-28") as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == 14
    formats = []
    bounded = 0
    for tool in tools:
        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            formats += [f"{tool.name} {kind} {where}" for where in integer_formats(schema)]
            bounded += json.dumps(schema).count('"minimum": 0')
    assert formats == [], "\n".join(formats)
    assert bounded > 20, "unsigned integers keep their lower bound"
    get_gist = next(tool for tool in tools if tool.name == "get_gist")
    max_file_bytes = get_gist.input_schema["properties"]["max_file_bytes"]
    assert max_file_bytes["minimum"] == 0, max_file_bytes
