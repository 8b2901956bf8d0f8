"""The busy refusal of the limit on requests to Opengist, end to end and
deterministic: opengist-mcp points at a loopback listener that accepts a request and never
answers (a stalled Opengist, which a real one cannot be made on demand), with room for one
request to Opengist at a time and a 1 s queue. The first call's request holds the only turn
(the listener has its request in hand before the second call starts); the second call waits
its queue time and is refused with the clear busy error, naming the limit that was full,
having sent nothing (the listener never sees a second request). The live burst against a
real Opengist is test_live_burst.py.
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
from support import target_of
from support import connect, text_of

pytestmark = pytest.mark.anyio

GIST = "0123456789abcdef0123456789abcdef"


class StalledUpstream:
    """Accepts connections on loopback, reads each request's head, never answers. Counts the
    requests it has in hand; `first` is set once one arrived."""

    def __init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests = 0
        self.first = threading.Event()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return
        with self.lock:
            self.requests += 1
        self.first.set()

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            for conn in self.conns:
                conn.close()


async def test_a_request_that_waits_too_long_is_refused_as_busy(opengist_mcp_server, era):
    upstream = StalledUpstream()
    try:
        server = opengist_mcp_server(
            env={
                "OPENGIST_URL": upstream.url,
                "OPENGIST_TOKEN": "og_" + "0" * 64,
                "OPENGIST_MCP_OPENGIST_MAX_REQUESTS": "1",
                "OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL": "4",
                "OPENGIST_MCP_OPENGIST_QUEUE_SECS": "1",
                "OPENGIST_MCP_REQUEST_TIMEOUT_SECS": "120",
            }
        )
        async with connect(target_of(server), era) as client:
            first = asyncio.ensure_future(client.call_tool("get_gist", {"gist_id": GIST}))
            # The first call's request is at the stalled Opengist, holding the only turn.
            assert await asyncio.to_thread(upstream.first.wait, 60), "the first request never arrived"
            second = await client.call_tool("get_gist", {"gist_id": GIST})
            text = text_of(second)
            assert second.is_error, text
            assert "Opengist is busy" in text and "Nothing was sent" in text and "retry" in text, text
            assert "all callers together" in text and "OPENGIST_MCP_OPENGIST_MAX_REQUESTS" in text, text
            assert upstream.requests == 1, "the refused call sent a request"
            first.cancel()
    finally:
        upstream.close()
