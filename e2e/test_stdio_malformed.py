"""Malformed input on raw stdio, against the built binary: every line gets an answer.

Each case writes one hostile line to a running `opengist-mcp` (no Opengist configured: nothing
can be written anywhere) and waits, with a deadline, for the one JSON-RPC error it must get:
-32700 with id null for a line that is not JSON, -32600 for a message that is not a request
this server takes (with its id when one can be read), -32602 for params that do not fit,
naming the argument. After each line the same session must still answer `ping`, so a refused
line never ends the session. Both eras: the legacy `initialize` handshake, and 2026-07-28
(`server/discover`, a per-request `_meta`).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

import pytest
from support import base_env

ANSWER_TIMEOUT = 20.0
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class RawServer:
    """The binary on pipes, with a thread that reads stdout line by line."""

    def __init__(self, binary: Path, era: str, stderr_path: Path) -> None:
        self.era = era
        self._err = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [str(binary)],
            env=base_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._next_id = 1000
        if era == "legacy":
            self.request(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            )
            self.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        else:
            self.request("server/discover", {"_meta": META})

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def next_message(self) -> dict:
        line = self.lines.get(timeout=ANSWER_TIMEOUT)
        assert line is not None, "the server closed stdout"
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line[:300]
        return message

    def answer_to(self, request_id) -> dict:
        """The next response whose id is `request_id` (other messages are skipped)."""
        while True:
            message = self.next_message()
            if "method" not in message and message.get("id") == request_id:
                return message

    def request(self, method: str, params: dict | None = None) -> dict:
        self._next_id += 1
        params = dict(params or {})
        if self.era != "legacy":
            params.setdefault("_meta", META)
        self.write(json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}).encode())
        return self.answer_to(self._next_id)

    def close(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            self._err.close()


@pytest.fixture(params=["legacy", MODERN])
def raw(request, opengist_mcp_binary, tmp_path):
    server = RawServer(opengist_mcp_binary, request.param, tmp_path / "stderr")
    try:
        yield server
    finally:
        server.close()


def call_line(era: str, request_id, arguments_json: str, name: str = "get_gist", extra: str = "") -> bytes:
    meta = "" if era == "legacy" else ',"_meta":' + json.dumps(META)
    return (
        '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s%s%s}}'
        % (json.dumps(request_id), name, arguments_json, extra, meta)
    ).encode()


def nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def assert_error(message: dict, code: int, request_id, *words: str) -> None:
    assert "error" in message, message
    assert message["error"]["code"] == code, message
    assert message["id"] == request_id, message
    text = message["error"]["message"]
    for word in words:
        assert word in text, message


def assert_still_alive(raw: RawServer) -> None:
    pong = raw.request("ping")
    assert "result" in pong, pong


# (name, line builder, expected code, expected id, words in the message)
CASES = [
    ("invalid_utf8_with_readable_id", lambda era: call_line(era, 11, '{"gist_id":"AB"}').replace(b'"AB"', b'"\xff\xfe"'), -32600, 11, ("UTF-8",)),
    ("invalid_utf8_garbage", lambda era: b"\xff\xfe\xfd", -32700, None, ("UTF-8",)),
    ("lone_surrogate", lambda era: call_line(era, 12, '{"gist_id":"\\ud800"}'), -32602, 12, ("gist_id",)),
    ("nested_200_deep", lambda era: call_line(era, 13, '{"gist_id":%s}' % nested(200)), -32602, 13, ("gist_id", "levels")),
    ("batch", lambda era: b'[{"jsonrpc":"2.0","id":14,"method":"ping"}]', -32600, None, ("batch",)),
    ("jsonrpc_1_0", lambda era: b'{"jsonrpc":"1.0","id":15,"method":"ping"}', -32600, 15, ("2.0",)),
    ("object_id", lambda era: b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', -32600, None, ("id",)),
    ("not_json", lambda era: b'{"jsonrpc":"2.0","id":16,', -32700, None, ("JSON",)),
    ("request_state_number", lambda era: call_line(era, 17, '{"gist_id":"x"}', "delete_gist", ',"requestState":5'), -32602, 17, ("requestState",)),
    ("input_responses_string", lambda era: call_line(era, 18, '{"gist_id":"x"}', "delete_gist", ',"inputResponses":"yes"'), -32602, 18, ("inputResponses",)),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_a_malformed_line_gets_its_answer_and_the_session_goes_on(raw, case):
    _, build, code, request_id, words = case
    raw.write(build(raw.era))
    assert_error(raw.next_message(), code, request_id, *words)
    assert_still_alive(raw)


def test_a_line_over_16_mib_gets_an_answer_with_its_id(raw):
    content = "x" * (16 * 1024 * 1024 + 10)
    raw.write(call_line(raw.era, 21, json.dumps({"content": content}), "create_gist"))
    assert_error(raw.next_message(), -32600, 21, "longer than")
    assert_still_alive(raw)


def test_a_deep_first_call_is_answered_and_the_session_goes_on(opengist_mcp_binary, tmp_path):
    """2026-07-28: the first request after discover is the deep one (it used to end the session)."""
    server = RawServer(opengist_mcp_binary, MODERN, tmp_path / "stderr")
    try:
        server.write(call_line(MODERN, 31, '{"gist_id":%s}' % nested(200)))
        assert_error(server.next_message(), -32602, 31, "gist_id")
        tools = server.request("tools/list")
        assert len(tools["result"]["tools"]) == 14, tools
    finally:
        server.close()


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_the_guards_example_server_answers_malformed_lines_too(notes_binary, tmp_path, era):
    """The transport is the guard framework's (`ask_first_serve::stdio`): the notes example uses it."""
    server = RawServer(notes_binary, era, tmp_path / "stderr")
    try:
        server.write(call_line(era, 41, '{"note_id":%s}' % nested(200), "delete_note"))
        assert_error(server.next_message(), -32602, 41, "note_id")
        server.write(b'[{"jsonrpc":"2.0","id":42,"method":"ping"}]')
        assert_error(server.next_message(), -32600, None, "batch")
        server.write(b"\xff\xfe")
        assert_error(server.next_message(), -32700, None, "UTF-8")
        assert_still_alive(server)
    finally:
        server.close()
