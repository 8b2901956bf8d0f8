"""opengist-mcp serving a team (`OPENGIST_MCP_HTTP_AUTH=opengist`) against a REAL Opengist
(marker `opengist`): a long-lived stream passes the gate once, when it opens, so the server asks
Opengist again about the token of every open stream. A token deleted in Opengist ends its `GET`
stream (legacy session) and its `subscriptions/listen` stream (2026-07-28) without any request
of its holder; another person's streams, opened at the same time, stay open (the control).

The end of a stream is the event waited on (with a generous bound), never a duration measured.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
import uuid

import pytest
from raw_mcp import PER_REQUEST_ERA, PROTOCOL, RawHttp
from test_live_team import B, TokenSettings, opengist_accepts, team_server, token_of  # noqa: F401

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

# Generous: the server asks every 5 s, and Opengist's answer may be remembered 5 s.
END_WAIT_S = 60
A = "full"


class HeldStream:
    """One long-lived SSE response held open, read on a thread to its end: `ended` is set when
    the server ends it (or the connection drops)."""

    def __init__(self, url: str, method: str, headers: dict[str, str], body: dict | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
        self.connection.request(method, parts.path, body=json.dumps(body) if body else None, headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.kind = self.response.getheader("content-type", "")
        self.ended = threading.Event()
        if self.status == 200 and self.kind.startswith("text/event-stream"):
            threading.Thread(target=self._drain, daemon=True).start()
        else:
            self.body = self.response.read().decode(errors="replace")
            self.ended.set()

    def _drain(self) -> None:
        try:
            while self.response.readline():
                pass
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            # Closed under the reader by close(): the test is over.
            pass
        finally:
            self.ended.set()

    def close(self) -> None:
        self.connection.close()


def get_stream(server_url: str, session: RawHttp) -> HeldStream:
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session.session_id or "",
        "Mcp-Protocol-Version": PROTOCOL,
        "Authorization": session.authorization or "",
    }
    return HeldStream(server_url, "GET", headers)


def listen_stream(server_url: str, authorization: str) -> HeldStream:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PER_REQUEST_ERA,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PER_REQUEST_ERA,
        "Mcp-Method": "subscriptions/listen",
        "Authorization": authorization,
    }
    return HeldStream(server_url, "POST", headers, body)


def test_a_token_deleted_in_opengist_ends_its_open_streams_and_another_persons_stay(team_server, opengist_env):
    env = opengist_env
    settings = TokenSettings(env, A)
    name = f"team-stream-{uuid.uuid4().hex[:8]}"
    token = settings.mint(name)
    deleted = False
    server = team_server()
    revoked_bearer, other_bearer = f"Bearer {token}", f"Bearer {token_of(env, B)}"
    streams: list[HeldStream] = []
    try:
        a_session = RawHttp(server.url, revoked_bearer)
        b_session = RawHttp(server.url, other_bearer)
        a_get, b_get = get_stream(server.url, a_session), get_stream(server.url, b_session)
        a_listen, b_listen = listen_stream(server.url, revoked_bearer), listen_stream(server.url, other_bearer)
        streams = [a_get, b_get, a_listen, b_listen]
        for stream in streams:
            assert stream.status == 200 and stream.kind.startswith("text/event-stream"), (stream.status, stream.kind)
            assert not stream.ended.is_set()

        settings.delete(name)
        deleted = True
        assert not opengist_accepts(env, token), "Opengist still takes the deleted token"
        # The events waited on: both streams of the deleted token end, with no request of theirs.
        assert a_get.ended.wait(END_WAIT_S), "the deleted token's GET stream is still open"
        assert a_listen.ended.wait(END_WAIT_S), "the deleted token's listen stream is still open"
        # A new stream with the deleted token is refused at the gate.
        assert a_session.open_stream() == 401
        # The control: the other person's streams, checked at the same rounds, are open, and
        # their session still serves.
        assert not b_get.ended.is_set(), "another person's GET stream ended"
        assert not b_listen.ended.is_set(), "another person's listen stream ended"
        status, _ = b_session.post({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert status == 200, f"HTTP {status} for the other person's ping"
        b_session.close()
    finally:
        for stream in streams:
            stream.close()
        if not deleted:
            settings.delete(name)
