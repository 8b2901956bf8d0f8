"""A browser client (headless Chromium, the Debian package: scripts/browser-env) calls
opengist-mcp over streamable HTTP from a page on a loopback origin: CORS is answered for the
origins in OPENGIST_MCP_ALLOWED_ORIGINS only (preflights, and Mcp-Session-Id exposed so the page
can keep its session), and a page on an origin not listed cannot read anything.

The page reports what it saw by POSTing JSON back to the little server that served it.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support import ROOT, HttpHandle, Launcher, opengist_mcp_bin, require_binary

PAGE = """<!doctype html>
<html><body><script>
const MCP = %(mcp)s;
async function post(body, session) {
  const headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"};
  if (session) { headers["Mcp-Session-Id"] = session; headers["MCP-Protocol-Version"] = "2025-11-25"; }
  return fetch(MCP, {method: "POST", headers, body: JSON.stringify(body)});
}
function message(text) {
  const line = text.split("\\n").find((l) => l.startsWith("data: ") && l.length > 6);
  return line ? JSON.parse(line.slice(6)) : JSON.parse(text);
}
async function run() {
  const report = {};
  try {
    const init = await post({jsonrpc: "2.0", id: 1, method: "initialize", params: {
      protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "browser", version: "1"}}});
    report.init_status = init.status;
    const session = init.headers.get("Mcp-Session-Id");
    report.session_visible = !!session;
    report.server = message(await init.text()).result.serverInfo.name;
    const ack = await post({jsonrpc: "2.0", method: "notifications/initialized"}, session);
    report.initialized_status = ack.status;
    const list = await post({jsonrpc: "2.0", id: 2, method: "tools/list"}, session);
    report.tools = message(await list.text()).result.tools.length;
    const end = await fetch(MCP, {method: "DELETE", headers: {"Mcp-Session-Id": session}});
    report.delete_status = end.status;
  } catch (error) {
    report.error = String(error);
  }
  await fetch("/result", {method: "POST", body: JSON.stringify(report)});
}
run();
</script></body></html>
"""


class PageServer:
    """Serves the page at / on 127.0.0.1:PORT (a loopback origin of its own) and collects what
    the page POSTs to /result. The page's MCP URL is set once the server under test runs (it
    needs this origin first)."""

    def __init__(self) -> None:
        self.results: list[dict] = []
        self.mcp_url = ""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                page = (PAGE % {"mcp": json.dumps(owner.mcp_url)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.results.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chromium() -> str:
    found = subprocess.run(["bash", str(ROOT / "scripts" / "browser-env")], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.fail(f"scripts/browser-env failed (exit {found.returncode}):\n{found.stderr}", pytrace=False)
    return found.stdout.strip().splitlines()[-1]


def visit(browser: str, page: PageServer, profile: Path) -> dict:
    """Loads the page in headless Chromium and waits for its report."""
    proc = subprocess.Popen(
        [
            browser,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            page.origin + "/",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not page.results and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert page.results, f"the page reported nothing within 60 s (chromium exit {proc.poll()})"
        return page.results[0]
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_cors_for_listed_origins_only(launcher: Launcher, tmp_path: Path) -> None:
    browser = chromium()
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    listed, unlisted = PageServer(), PageServer()
    try:
        # About CORS, not credentials: the pages send no Authorization, so the server runs with
        # the explicit no-authentication setting (test_http_gate covers the secret).
        server: HttpHandle = launcher.http(
            binary,
            env={"OPENGIST_URL": "http://127.0.0.1:9", "OPENGIST_MCP_ALLOWED_ORIGINS": listed.origin},
            auth="none",
        )
        listed.mcp_url = unlisted.mcp_url = server.url

        report = visit(browser, listed, tmp_path / "profile-listed")
        assert "error" not in report, report
        assert report["init_status"] == 200, report
        assert report["session_visible"] is True, f"Mcp-Session-Id is not exposed to the page: {report}"
        assert report["server"] == "opengist-mcp", report
        assert report["initialized_status"] == 202, report
        assert report["tools"] == 14, report
        assert report["delete_status"] == 200, report

        # Loopback, so the gate would let it in: only CORS keeps the page from reading.
        report = visit(browser, unlisted, tmp_path / "profile-unlisted")
        assert "error" in report and "Failed to fetch" in report["error"], (
            f"a page on an origin not in OPENGIST_MCP_ALLOWED_ORIGINS could read the server: {report}"
        )
    finally:
        listed.close()
        unlisted.close()
