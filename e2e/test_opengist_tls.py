"""TLS to Opengist: certificates are verified against the system's roots (rustls with the
`ring` provider), a self-signed certificate is refused unless trusted through
SSL_CERT_FILE or accepted by OPENGIST_INSECURE_TLS=true.

The Opengist stand-in is a local HTTPS server (Python's ssl) answering `GET /api/gists` with an
empty list; its certificate is made here by the `openssl` command (NOT RUN, counted skipped,
where that is missing). A real Opengist behind TLS would need a TLS proxy; what is tested is
the client's handshake and verification, which do not depend on what serves the answer.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

TOKEN = "og_" + "a" * 64


class _Gists(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        body = b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def https_server(tmp_path: Path):
    if shutil.which("openssl") is None:
        pytest.skip("NOT RUN: the openssl command (to make a test certificate) is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:FALSE"],
        check=True, capture_output=True,
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gists)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


def _list_gists(binary: Path, url: str, extra: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENGIST", "SSL_CERT"))}
    env.update({"OPENGIST_URL": url, "OPENGIST_TOKEN": TOKEN, **extra})
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tls-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_gists", "arguments": {}}},
    ]
    proc = subprocess.Popen([str(binary)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests).encode())
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed stdout before answering"
            message = json.loads(line)
            if message.get("id") == 2:
                return message["result"]
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_an_untrusted_certificate_is_refused_and_a_trusted_one_is_accepted(opengist_mcp_binary, https_server):
    url, cert = https_server
    refused = _list_gists(opengist_mcp_binary, url, {})
    assert refused["isError"] is True
    assert "TLS handshake failed" in refused["content"][0]["text"], refused
    # Positive control: the same server, its certificate trusted as a system root.
    trusted = _list_gists(opengist_mcp_binary, url, {"SSL_CERT_FILE": str(cert)})
    assert trusted.get("isError") is not True, trusted
    assert json.loads(trusted["content"][0]["text"])["gists"] == []


def test_insecure_tls_accepts_a_self_signed_certificate(opengist_mcp_binary, https_server):
    url, _ = https_server
    answer = _list_gists(opengist_mcp_binary, url, {"OPENGIST_INSECURE_TLS": "true"})
    assert answer.get("isError") is not True, answer
    assert json.loads(answer["content"][0]["text"])["gists"] == []
