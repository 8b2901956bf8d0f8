"""docs/DEPLOYMENT.md's TLS example, run as written (marker `replicas`: the layer where
nginx is installed): its nginx block, with a throwaway certificate and free ports put where
the guide has its own, in front of a real opengist-mcp over streamable HTTP; the Python client
reaches it over https with the certificate trusted and lists the tools. The positive control
beside the negative one: without the bearer secret nginx passes the request on and the server
answers 401.
"""

from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.replicas]

NAME = "mcp.example.com"


def nginx_block() -> str:
    guide = (ROOT / "docs/DEPLOYMENT.md").read_text(encoding="utf-8")
    section = guide.split("### Behind TLS: nginx", 1)[1]
    return re.search(r"```nginx\n(.*?)```", section, re.S).group(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def tls_front(tmp_path: Path, launcher, opengist_mcp_binary):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.fail("nginx is not installed (scripts/replica-env install)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={NAME}",
         "-addext", f"subjectAltName=DNS:{NAME}", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    server = launcher.http(opengist_mcp_binary, env={"OPENGIST_MCP_ALLOWED_HOSTS": NAME})
    port = free_port()
    block = (
        nginx_block()
        .replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
        .replace("/etc/ssl/certs/mcp.example.com.pem", str(cert))
        .replace("/etc/ssl/private/mcp.example.com.key", str(key))
        .replace("http://127.0.0.1:8765", f"http://127.0.0.1:{server.port}")
    )
    assert f"127.0.0.1:{server.port}" in block and str(cert) in block, block
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        f"events {{ worker_connections 64; }}\nhttp {{\naccess_log off;\nclient_body_temp_path {tmp_path};\n"
        f"proxy_temp_path {tmp_path};\n{block}\n}}\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # Ready when the port accepts (nginx prints no ready line in the foreground).
        for _ in range(400):
            if proc.poll() is not None:
                pytest.fail(f"nginx exited: {proc.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("nginx did not accept connections")
        yield port, cert, server
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_the_guides_nginx_block_serves_mcp_over_tls(tls_front):
    port, cert, server = tls_front
    url = f"https://{NAME}:{port}/mcp"
    # The name resolves to nginx on loopback only for these clients.
    transport = httpx.AsyncHTTPTransport(verify=ssl.create_default_context(cafile=str(cert)))

    class Loopback(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request):
            request.extensions["sni_hostname"] = NAME
            request.url = request.url.copy_with(host="127.0.0.1")
            return await transport.handle_async_request(request)

    def client(headers):
        return httpx.AsyncClient(transport=Loopback(), headers=headers, timeout=30)

    async with client({}) as plain:
        refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401, refused.text

    headers = {"Authorization": f"Bearer {server.token}"}
    async with (
        client(headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None) as session,
    ):
        tools = await session.list_tools()
    assert len(tools.tools) == 14, [t.name for t in tools.tools]
