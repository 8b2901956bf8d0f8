"""A loopback HTTP proxy in front of the REAL Opengist that loses answers on demand.

The one place a fault injector is right: a real Opengist cannot be told to apply a write and
then lose its answer. Every request is forwarded to Opengist as it came; for a request that
matches a rule (method and path), the proxy does what the rule says:

- `drop`: forwards it, reads Opengist's full answer (so the write is applied), then closes the
  connection without sending a byte back;
- `delay`: forwards it, then holds Opengist's answer for `delay_s` before sending it (longer
  than the client's request timeout, so the client gives up first);
- `refuse`: closes the connection after reading the request, without forwarding it (the write
  never reaches Opengist).

Each rule fires `times` times (default once); everything else passes through untouched. A
request whose body is exactly `{}` is the server's side-effect-free check before it asks
(Opengist answers 422 and changes nothing), not the write under test: a rule fires on such a
check only when it says so (`probe=True`), and then on nothing else. `hits` records every
other request (method, path) that reached the proxy, `probes` those checks.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


@dataclass
class Rule:
    method: str
    path: str  # a regular expression matched against the whole path (query excluded)
    mode: str  # drop | delay | refuse
    delay_s: float = 5.0
    times: int = 1
    fired: int = 0
    probe: bool = False  # fire on the `{}` check before asking instead of on the write


@dataclass
class FaultProxy:
    upstream: str
    rules: list[Rule] = field(default_factory=list)
    hits: list[tuple[str, str]] = field(default_factory=list)
    probes: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def rule_for(self, method: str, path: str, body: bytes | None = None) -> Rule | None:
        with self._lock:
            probe = body is not None and body.strip() == b"{}"
            (self.probes if probe else self.hits).append((method, path))
            for rule in self.rules:
                if rule.probe != probe:
                    continue
                if rule.fired < rule.times and rule.method == method and re.fullmatch(rule.path, path):
                    rule.fired += 1
                    return rule
        return None

    def start(self) -> FaultProxy:
        proxy = self
        upstream = urlsplit(self.upstream)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                path = urlsplit(self.path).path
                rule = proxy.rule_for(self.command, path, body)
                if rule is not None and rule.mode == "refuse":
                    self._hang_up()
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
                connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    payload = answer.read()
                    status, reason, answer_headers = answer.status, answer.reason, answer.getheaders()
                finally:
                    connection.close()
                if rule is not None and rule.mode == "drop":
                    self._hang_up()
                    return
                if rule is not None and rule.mode == "delay":
                    time.sleep(rule.delay_s)
                try:
                    self.send_response(status, reason)
                    for key, value in answer_headers:
                        if key.lower() not in HOP_BY_HOP | {"content-length"}:
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True

            def _hang_up(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def writes(self, method: str, path_pattern: str) -> int:
        with self._lock:
            return sum(1 for m, p in self.hits if m == method and re.fullmatch(path_pattern, p))

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
