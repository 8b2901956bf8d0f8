"""Nobody else's ceremony stands in for the person's, and nobody's traffic pushes the person's
page out: the guard's example server (`examples/notes`) over stdio and its `passkeys add`, a
real headless Chromium with a virtual WebAuthn authenticator, and what a model with a fetch
tool or another local process can do beside them.

- The page's listener answers only `localhost` on the port it bound: a request addressed to
  another host or port is `421`, and an assertion the person's authenticator made on another
  `http://localhost:<port>` page (a dev server, a notebook) decides nothing.
- The listeners hold `[::1]` on their port: a local process cannot bind it (plainly, with
  `SO_REUSEADDR` or `SO_REUSEPORT`) to receive the browsers the links send; a fixed port
  already squatted there is refused, and served once free.
- An enrolment page belongs to the first browser that opened its link.
- A thousand requests for another record's page, or for the person's own, leave the page the
  person opened working; the person then approves.

Each refusal is checked beside a positive control: the same person, browser and page succeed.
"""

from __future__ import annotations

import base64
import errno
import http.client
import json
import re
import socket
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from support import base_env, connect, free_port, text_of

from test_approval_page import LINK, enrol, fetch, note_ids, notes_env, pending_link

pytestmark = pytest.mark.anyio


def port_of(url: str) -> int:
    return int(re.match(r"http://localhost:(\d+)/", url).group(1))


def raw(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> tuple[int, dict, str]:
    """One request to 127.0.0.1:`port` with exactly these headers (`Host` among them), as a
    model's fetch tool or a local process sends it: (status, headers, text)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read().decode()
    finally:
        connection.close()


def opened(port: int, path: str) -> tuple[str, str]:
    """The page at `path` opened as a model would (no browser): its token and its cookie."""
    status, headers, page = raw(port, "GET", path, {"Host": f"localhost:{port}"})
    assert status == 200, (status, page[:300])
    token = re.search(r'data-token="([^"]+)"', page).group(1)
    cookie = headers["set-cookie"].split(";")[0]
    return token, cookie


class ForeignPage:
    """Another local page, on `http://localhost:<port>` (a dev server, a notebook): it serves
    one empty document and records every request it gets."""

    def __init__(self) -> None:
        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                seen.append(self.path)
                body = b"<!doctype html><title>another local page</title><p>hello</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Squatter:
    """Another local process's socket on `[::1]:port`, listening; records who connects."""

    def __init__(self, port: int) -> None:
        self.socket = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("::1", port))
        self.socket.listen(8)
        self.socket.settimeout(0.2)
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while self.running:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.running = False
        self.thread.join(timeout=5)
        self.socket.close()


def squat_attempts(port: int) -> list[int | None]:
    """Another local process trying to take `[::1]:port` plainly, with SO_REUSEADDR and with
    SO_REUSEPORT: the errno each attempt got (None: it took the port)."""
    outcomes: list[int | None] = []
    for options in ((), (socket.SO_REUSEADDR,), (socket.SO_REUSEADDR, socket.SO_REUSEPORT)):
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            for option in options:
                s.setsockopt(socket.SOL_SOCKET, option, 1)
            s.bind(("::1", port))
            s.listen(1)
            outcomes.append(None)
        except OSError as error:
            outcomes.append(error.errno)
        finally:
            s.close()
    return outcomes


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


async def test_a_request_to_another_host_or_port_is_refused_while_the_page_itself_works(
    launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    foreign = ForeignPage()
    try:
        async with connect(server.params, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            port, path = port_of(url), url.split(f":{port_of(url)}", 1)[1]
            token, cookie = await anyio.to_thread.run_sync(opened, port, path)
            other = f"localhost:{foreign.port}"
            for host in (other, f"127.0.0.1:{port}", f"[::1]:{port}", f"attacker.example:{port}"):
                status, _, text = await anyio.to_thread.run_sync(lambda: raw(port, "GET", path, {"Host": host}))
                assert status == 421, (host, status, text)
                assert f"served at http://localhost:{port} only" in text, text
            # The old way through: the page's own token and cookie, Host and Origin of another
            # localhost page. Refused before any ceremony begins.
            body = json.dumps({"token": token, "decision": "approve"}).encode()
            headers = {"Host": other, "Origin": f"http://{other}", "Cookie": cookie, "Content-Type": "application/json"}
            for step in ("begin", "finish"):
                status, _, text = await anyio.to_thread.run_sync(lambda: raw(port, "POST", f"{path}/{step}", headers, body))
                assert status == 421, (step, status, text)
            # Positive control: the same request addressed to the page itself gets its challenge.
            own = {**headers, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
            status, _, text = await anyio.to_thread.run_sync(lambda: raw(port, "POST", f"{path}/begin", own, body))
            assert status == 200 and "challenge" in text, (status, text)
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
            assert "n1" in await note_ids(client)
            # And the person approves on the page: it runs.
            await anyio.to_thread.run_sync(browser.open, url)
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
            assert outcome["state"] == "done", outcome
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        foreign.close()


def assertion_on(browser: Browser, page: str, options: str) -> dict:
    """The person's authenticator answering `options` (the server's challenge) on `page`."""
    browser.open(page)
    return browser.evaluate(
        f"""(async () => {{ const o = {options};
          const c = await navigator.credentials.get({{publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(o.publicKey || o)}});
          return c.toJSON(); }})()"""
    )


async def test_an_assertion_made_on_another_localhost_page_decides_nothing(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    foreign = ForeignPage()
    try:
        async with connect(server.params, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            port, path = port_of(url), url.split(f":{port_of(url)}", 1)[1]
            token, cookie = await anyio.to_thread.run_sync(opened, port, path)
            begin = json.dumps({"token": token, "decision": "approve"}).encode()
            foreign_url = f"http://localhost:{foreign.port}/"
            # The red team's way: a ceremony begun as if the page were that other page (its Host
            # and Origin), to be answered there. Refused before a challenge is given.
            as_foreign = {
                "Host": f"localhost:{foreign.port}",
                "Origin": f"http://localhost:{foreign.port}",
                "Cookie": cookie,
                "Content-Type": "application/json",
            }
            status, _, text = await anyio.to_thread.run_sync(lambda: raw(port, "POST", f"{path}/begin", as_foreign, begin))
            assert status == 421 and "challenge" not in text, (status, text)
            # A ceremony begun on the page itself, as a model can, and the person's passkey
            # answering its challenge on the other localhost page (the same relying party,
            # `localhost`, so the browser offers it there): the assertion decides nothing.
            own = {**as_foreign, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
            status, _, options = await anyio.to_thread.run_sync(lambda: raw(port, "POST", f"{path}/begin", own, begin))
            assert status == 200 and "challenge" in options, (status, options)
            credential = await anyio.to_thread.run_sync(assertion_on, browser, foreign_url, options)
            assert credential and credential.get("type") == "public-key", credential
            client_data = base64.urlsafe_b64decode(credential["response"]["clientDataJSON"] + "==")
            assert json.loads(client_data)["origin"] == f"http://localhost:{foreign.port}", client_data
            finish = json.dumps({"token": token, "credential": credential}).encode()
            status, _, text = await anyio.to_thread.run_sync(lambda: raw(port, "POST", f"{path}/finish", own, finish))
            assert status == 403 and "Nothing was decided" in text, (status, text)
            assert pending_link(await client.call_tool("delete_note", {"note_id": "n1"})) == url
            assert "n1" in await note_ids(client)
            # Positive control: the same authenticator on the page itself decides it.
            await anyio.to_thread.run_sync(browser.open, url)
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
            assert outcome["state"] == "done", outcome
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        foreign.close()


def start_passkeys_add(binary: Path, state: Path) -> tuple[subprocess.Popen, str]:
    """`notes passkeys add` running: the process and the link it printed."""
    env = {**base_env(), "NOTES_STATE_DIR": str(state)}
    command = subprocess.Popen(
        [str(binary), "passkeys", "add", "--valid-for-secs", "120"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert command.stdout is not None
    for line in command.stdout:
        match = LINK.search(line)
        if match:
            return command, match.group(1)
    command.kill()
    raise AssertionError("passkeys add printed no link")


def stop(command: subprocess.Popen) -> None:
    if command.poll() is None:
        command.kill()
        command.wait()


@pytest.mark.skipif(not has_ipv6_loopback(), reason="NOT RUN: this machine has no ::1 (nobody can squat it)")
def test_a_local_process_cannot_take_the_enrolment_links_ipv6_address(notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    command, link = start_passkeys_add(notes_binary, state)
    try:
        port = port_of(link)
        attempts = squat_attempts(port)
        assert attempts == [errno.EADDRINUSE] * 3, attempts
        # Positive control: the same attempts on a port nobody holds take it.
        assert squat_attempts(free_port())[0] is None
        # The link reaches the command's own listener: the person enrols through it.
        browser.open(link)
        assert browser.click("enrol")["state"] == "done"
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0 and "Enrolled" in out, (out, err)
        assert len(json.loads((state / "passkeys.json").read_text())) == 1
    finally:
        stop(command)


@pytest.mark.skipif(not has_ipv6_loopback(), reason="NOT RUN: this machine has no ::1 (nobody can squat it)")
async def test_a_page_port_squatted_on_ipv6_is_refused_then_served_once_free(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    port = free_port()
    squatter = Squatter(port)
    server = launcher.stdio(notes_binary, env=notes_env(state, NOTES_APPROVAL_ADDR=f"localhost:{port}"))
    try:
        async with connect(server.params, "legacy") as client:
            refused = await client.call_tool("delete_note", {"note_id": "n1"})
            text = text_of(refused)
            assert refused.is_error and f"[::1]:{port} is held by another process" in text, text
            assert "/approve/" not in text, "a link was handed out beside the squatter"
            assert "n1" in await note_ids(client)
            assert squatter.connections == 0
            # Positive control: the squatter gone, the same server serves the page on that port.
            squatter.close()
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
            assert port_of(url) == port
            assert squat_attempts(port) == [errno.EADDRINUSE] * 3
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
            assert "n1" not in await note_ids(client)
    finally:
        squatter.close()


def test_a_second_browser_cannot_take_over_an_enrolment_page(notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    command, link = start_passkeys_add(notes_binary, state)
    stranger = Browser(tmp_path / "stranger")
    try:
        stranger.add_authenticator()
        browser.open(link)
        first_token = browser.evaluate("document.body.dataset.token")
        assert first_token
        # A model fetching the link, and another browser opening it: told, given no page.
        status, page = fetch(link)
        assert status == 409 and "already opened in another browser" in page, (status, page[:300])
        assert first_token not in page
        stranger.open(link)
        notice = stranger.evaluate("document.getElementById('notice') && document.getElementById('notice').textContent")
        assert notice and "already opened in another browser" in notice, notice
        assert stranger.evaluate("document.getElementById('enrol') === null")
        # The person's browser reloading keeps its page; it enrols.
        browser.open(link)
        assert browser.evaluate("document.body.dataset.token") == first_token
        outcome = browser.click("enrol")
        assert outcome["state"] == "done", outcome
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0 and "Enrolled" in out, (out, err)
        # The operator's terminal was told of the second browser.
        assert "opened in a second browser" in err, err
        enrolled = json.loads((state / "passkeys.json").read_text())
        assert len(enrolled) == 1 and enrolled[0]["principal"] == "local"
    finally:
        stop(command)
        stranger.close()


def flood(url: str, times: int) -> dict[int, int]:
    """`times` GETs of `url`, eight at a time, as a model's fetch tool: the count per status."""
    port, path = port_of(url), url.split(f":{port_of(url)}", 1)[1]
    counts: dict[int, int] = {}
    lock = threading.Lock()

    def one(_):
        status, _, _ = raw(port, "GET", path, {"Host": f"localhost:{port}"})
        with lock:
            counts[status] = counts.get(status, 0) + 1

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(times)))
    return counts


async def test_a_flood_of_page_requests_does_not_evict_the_persons_open_page(launcher, notes_binary, browser, tmp_path):
    state = tmp_path / "state"
    enrol(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env=notes_env(state))
    async with connect(server.params, "legacy") as client:
        persons = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        models = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
        assert persons != models
        # The person opens the page; before they click, a model requests the person's page a
        # thousand times, then its own pending page a thousand times while the person clicks.
        await anyio.to_thread.run_sync(browser.open, persons)
        same = await anyio.to_thread.run_sync(flood, persons, 1000)
        assert sum(same.values()) == 1000 and same.get(429, 0) >= 992, same
        floods: dict[str, dict[int, int]] = {}

        async def flood_models_page():
            floods["other"] = await anyio.to_thread.run_sync(flood, models, 1000)

        async with anyio.create_task_group() as group:
            group.start_soon(flood_models_page)
            await anyio.sleep(0.1)
            outcome = await anyio.to_thread.run_sync(browser.click, "approve")
        other = floods["other"]
        assert sum(other.values()) == 1000 and other.get(200, 0) <= 8 and other.get(429, 0) >= 992, other
        # The person's open page still decided: approved, and the retry runs.
        assert outcome["state"] == "done", outcome
        assert "Return to your chat" in outcome["text"] and "when your client makes it again" in outcome["text"], outcome
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
        assert "n1" not in await note_ids(client)
        # Positive control: the model's record was flooded and stays pending, undecided.
        assert pending_link(await client.call_tool("delete_note", {"note_id": "n2"})) == models
        assert "n2" in await note_ids(client)


@pytest.mark.skipif(not has_ipv6_loopback(), reason="NOT RUN: this machine has no ::1 (nobody can squat it)")
async def test_over_http_on_loopback_the_servers_port_is_held_on_ipv6_too(launcher, notes_binary, browser, tmp_path):
    """The page mounted on an HTTP server bound to 127.0.0.1:P has links to
    http://localhost:P: [::1]:P is held beside it. Squatted before the server starts, the
    page moves to its own listener (both families held) and the squatter gets nothing."""
    state = tmp_path / "state"
    secret = "s" * 43
    # One shared secret: its holders are the principal `local`, the enrolment's default.
    enrol(notes_binary, state, browser)
    server = launcher.http(notes_binary, env=notes_env(state, NOTES_HTTP_TOKEN=secret))
    async with connect(server.target, "legacy") as client:
        url = pending_link(await client.call_tool("delete_note", {"note_id": "n1"}))
        assert port_of(url) == server.port, url
        assert squat_attempts(server.port) == [errno.EADDRINUSE] * 3
        await anyio.to_thread.run_sync(browser.open, url)
        assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
        assert not (await client.call_tool("delete_note", {"note_id": "n1"})).is_error
    # Squatted first: the page is not served on that port.
    port = free_port()
    squatter = Squatter(port)
    try:
        squatted = launcher.http(notes_binary, env=notes_env(state, NOTES_HTTP_TOKEN=secret), port=port)
        assert f"[::1]:{port} is held by another process" in squatted.stderr()
        async with connect(squatted.target, "legacy") as client:
            url = pending_link(await client.call_tool("delete_note", {"note_id": "n2"}))
            assert port_of(url) != port, url
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            assert not (await client.call_tool("delete_note", {"note_id": "n2"})).is_error
            assert "n2" not in await note_ids(client)
        assert squatter.connections == 0
    finally:
        squatter.close()
