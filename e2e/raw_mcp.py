"""Raw JSON-RPC sessions (2025-11-25 handshake) over stdio and streamable HTTP, for the attacks
the Python `mcp` client cannot make: cancelling a call while its dialog is open and answering the
dialog afterwards, or posting into another caller's session.

`RawStdio` spawns the server itself (a real process, killed by its PID at the end).
`RawHttp` talks to a running `--http` server; every POST that answers with an SSE stream is read
on a thread, and every message from the server, on any stream, lands in one queue.
"""

from __future__ import annotations

import http.client
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from support import base_env

PROTOCOL = "2025-11-25"
# The era whose requests carry their version and capabilities in `_meta`, without a session.
PER_REQUEST_ERA = "2026-07-28"
Message = dict[str, Any]


def initialize_request(elicitation: bool = True) -> Message:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {"elicitation": {"form": {}}} if elicitation else {},
            "clientInfo": {"name": "e2e-raw-attacker", "version": "0"},
        },
    }


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def cancelled(request_id: int) -> Message:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "the user pressed stop"},
    }


def approve(elicitation: Message) -> Message:
    """The answer a person gives who ticks "approve" (accept, every boolean true)."""
    schema = elicitation["params"].get("requestedSchema") or {}
    content = {name: True for name, spec in (schema.get("properties") or {}).items() if spec.get("type") == "boolean"}
    return {"jsonrpc": "2.0", "id": elicitation["id"], "result": {"action": "accept", "content": content}}


def is_elicitation(message: Message) -> bool:
    return message.get("method") == "elicitation/create" and "id" in message


def is_response_to(request_id: int) -> Callable[[Message], bool]:
    return lambda message: message.get("id") == request_id and ("result" in message or "error" in message)


class _Inbox:
    def __init__(self) -> None:
        self.queue: queue.Queue[Message] = queue.Queue()
        self.seen: list[Message] = []

    def wait_for(self, predicate: Callable[[Message], bool], timeout: float) -> Message | None:
        """The first message (seen before or arriving within `timeout`) that matches."""
        for message in self.seen:
            if predicate(message):
                return message
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.queue.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(message)
            if predicate(message):
                return message
        return None

    def must(self, predicate: Callable[[Message], bool], timeout: float, what: str) -> Message:
        message = self.wait_for(predicate, timeout)
        assert message is not None, f"no {what} within {timeout} s; the server sent: {self.seen}"
        return message


class RawStdio(_Inbox):
    """One server process on stdio, initialized (legacy handshake)."""

    def __init__(self, binary: Path, env: dict[str, str], stderr_path: Path, elicitation: bool = True) -> None:
        super().__init__()
        self._err = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [str(binary)],
            env={**base_env(), **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.send(initialize_request(elicitation))
        self.must(is_response_to(0), 60, "initialize result")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.queue.put(json.loads(line))

    def send(self, message: Message) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # by its PID: ours
        self.proc.wait(timeout=30)
        self._err.close()


class RawHttp(_Inbox):
    """One legacy session on a streamable HTTP server, opened with `authorization` (or none)
    and any `headers` (sent with every request of the session unless overridden)."""

    def __init__(
        self, url: str, authorization: str | None = None, elicitation: bool = True, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__()
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.authorization = authorization
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        status, headers = self.post(initialize_request(elicitation))
        assert status == 200, f"initialize: HTTP {status}"
        self.session_id = headers.get("mcp-session-id")
        assert self.session_id, f"no Mcp-Session-Id in {headers}"
        self.must(is_response_to(0), 60, "initialize result")
        status, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202, status

    def post(
        self,
        message: Message,
        authorization: str | None = None,
        session_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str]]:
        """POSTs one message as this session (or with the given credentials / session id /
        extra headers). Returns the status and headers; an SSE body is read on a thread into
        the inbox, a JSON body is put there at once."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        extra = {**self.headers, **(headers or {})}
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **extra}
        auth = authorization if authorization is not None else self.authorization
        if auth:
            headers["Authorization"] = auth
        sid = session_id if session_id is not None else self.session_id
        if sid:
            headers["Mcp-Session-Id"] = sid
            headers["Mcp-Protocol-Version"] = PROTOCOL
        connection.request("POST", self.path, body=json.dumps(message), headers=headers)
        response = connection.getresponse()
        response_headers = {k.lower(): v for k, v in response.getheaders()}
        kind = response_headers.get("content-type", "")
        if response.status == 200 and kind.startswith("text/event-stream"):
            threading.Thread(target=self._read_sse, args=(connection, response), daemon=True).start()
        else:
            body = response.read()
            connection.close()
            if response.status == 200 and body and kind.startswith("application/json"):
                self.queue.put(json.loads(body))
        return response.status, response_headers

    def _read_sse(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        data: list[str] = []
        try:
            for raw in response:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif not line and data:
                    text = "\n".join(data)
                    data = []
                    if text.strip():
                        self.queue.put(json.loads(text))
        except (OSError, http.client.HTTPException, ValueError):
            pass
        finally:
            connection.close()

    def open_stream(self, authorization: str | None = None, headers: dict[str, str] | None = None) -> int:
        """Opens the session's standalone SSE stream (GET) with the given credentials and
        returns the status (the stream itself, if opened, is closed at once)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        headers = {
            **self.headers,
            **(headers or {}),
            "Accept": "text/event-stream",
            "Mcp-Session-Id": self.session_id or "",
            "Mcp-Protocol-Version": PROTOCOL,
        }
        auth = authorization if authorization is not None else self.authorization
        if auth:
            headers["Authorization"] = auth
        try:
            connection.request("GET", self.path, headers=headers)
            return connection.getresponse().status
        finally:
            connection.close()

    def send(self, message: Message) -> None:
        status, _ = self.post(message)
        assert status in (200, 202), f"HTTP {status} for {message}"

    def delete(self, authorization: str | None = None, headers: dict[str, str] | None = None) -> int:
        """Ends the session (DELETE) with the given credentials and headers; the status."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = {
            **self.headers,
            **(headers or {}),
            "Mcp-Session-Id": self.session_id or "",
            "Mcp-Protocol-Version": PROTOCOL,
        }
        auth = authorization if authorization is not None else self.authorization
        if auth:
            sent["Authorization"] = auth
        try:
            connection.request("DELETE", self.path, headers=sent)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def close(self) -> None:
        try:
            self.delete()
        except OSError:
            pass


# --- 2026-07-28 requests, one POST each, no session ----------------------------------------


def per_request(url: str, authorization: str | None, request_id: int, params: dict[str, Any], headers=None) -> dict:
    """One 2026-07-28 `tools/call` (no session; version and capabilities in `_meta`)."""
    parts = urlsplit(url)
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PER_REQUEST_ERA,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            },
        },
    }
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PER_REQUEST_ERA,
        "Mcp-Method": "tools/call",
        "Mcp-Name": params["name"],
        **(headers or {}),
    }
    if authorization:
        sent["Authorization"] = authorization
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request("POST", parts.path, body=json.dumps(body), headers=sent)
        response = connection.getresponse()
        text = response.read().decode("utf-8")
        assert response.status == 200, (response.status, text)
    finally:
        connection.close()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    messages = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    answers = [m for m in messages if m.get("id") == request_id]
    assert answers, text
    return answers[-1]


def approving(result: dict) -> dict:
    """`inputResponses` that approve every question of an `input_required` result."""
    responses = {}
    for key, request in result["inputRequests"].items():
        schema = request["params"].get("requestedSchema") or {}
        content = {name: True for name, spec in (schema.get("properties") or {}).items() if spec.get("type") == "boolean"}
        responses[key] = {"action": "accept", "content": content}
    return responses


def is_input_required(message: dict) -> bool:
    return message.get("result", {}).get("resultType") == "input_required"
