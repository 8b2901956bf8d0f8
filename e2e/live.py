"""Shared helpers for the tests against a REAL Opengist (marker `opengist`).

`OpengistApi` talks to Opengist's REST API directly (urllib), never through the server
under test: after every write a test reads back what Opengist actually holds.
`live_server` (a fixture in conftest.py) starts opengist-mcp pointed at the provisioned
instance with the token the test names.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from support import TOKENS, Dialog, connect, target_of, text_of

# Both transports and both eras, each once: for behaviour that does not depend on how the
# client talks to the server (reads, unguarded writes), so the live layer stays fast.
# Guard routes, which do depend on it, take the full `era` x `transport` product instead.
DIAGONAL = pytest.mark.parametrize(("transport", "era"), [("stdio", "legacy"), ("http", "2026-07-28")])

HEX32 = re.compile(r"^[0-9a-f]{32}$")

# Which seeded token a test runs with (see scripts/provision-opengist).


def marker() -> str:
    """A unique word for one test's gists, so parallel tests never see each other's."""
    return f"e2e-{uuid.uuid4().hex[:12]}"


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str]


@dataclass
class OpengistApi:
    """Opengist's REST API with one of the seeded tokens (or none)."""

    base: str
    token: str | None

    def request(self, method: str, path: str, body: Any = None, raw: bool = False) -> Response:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base.rstrip("/") + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                payload = response.read()
                status, hdrs = response.status, dict(response.headers)
        except urllib.error.HTTPError as error:
            payload = error.read()
            status, hdrs = error.code, dict(error.headers)
        if raw:
            return Response(status, payload, hdrs)
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return Response(status, parsed, hdrs)

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def gist(self, gist_id: str) -> Any:
        """The gist as Opengist holds it; fails the test when it is not there."""
        response = self.get(f"/api/gists/{gist_id}")
        assert response.status == 200, f"GET /api/gists/{gist_id}: {response.status} {response.body}"
        return response.body

    def exists(self, gist_id: str) -> bool:
        status = self.get(f"/api/gists/{gist_id}").status
        assert status in (200, 404), status
        return status == 200

    def files(self, gist_id: str) -> dict[str, str]:
        """filename -> content, as Opengist holds them now."""
        return {name: f.get("content") for name, f in (self.gist(gist_id).get("files") or {}).items()}

    def create(self, files: dict[str, str], visibility: str = "private", **fields: Any) -> str:
        """Create a gist directly (not through the server under test); returns its uuid."""
        body = {"visibility": visibility, "files": {n: {"content": c} for n, c in files.items()}, **fields}
        response = self.request("POST", "/api/gists", body)
        assert response.status == 201, f"POST /api/gists: {response.status} {response.body}"
        return response.body["id"]

    def delete(self, gist_id: str) -> int:
        return self.request("DELETE", f"/api/gists/{gist_id}").status

    def update(self, gist_id: str, body: dict[str, Any]) -> None:
        """PATCH the gist directly (e.g. to change it behind the server's back)."""
        response = self.request("PATCH", f"/api/gists/{gist_id}", body)
        assert response.status == 200, f"PATCH /api/gists/{gist_id}: {response.status} {response.body}"

    def mine(self, within_minutes: int = 15) -> list[dict[str, Any]]:
        """Every gist of the token's owner updated in the last `within_minutes` (all pages of
        GET /api/gists?since=...: no test runs that long, and the instance's older gists,
        which pile up over a run, are not read again and again)."""
        since = (datetime.now(timezone.utc) - timedelta(minutes=within_minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            response = self.get(f"/api/gists?per_page=100&page={page}&since={since}")
            assert response.status == 200, f"GET /api/gists: {response.status} {response.body}"
            out.extend(response.body or [])
            if len(response.body or []) < 100:
                return out
            page += 1

    def titled(self, word: str) -> list[str]:
        """Ids of the owner's gists updated in the last 4 minutes whose title contains `word`
        (a test's marker): proves a create happened once, or not at all. (No test runs that
        long: the per-test timeout is 3 minutes.)"""
        return [g["id"] for g in self.mine(within_minutes=4) if word in (g.get("title") or "")]

    def commits(self, gist_id: str) -> list[dict[str, Any]]:
        response = self.get(f"/api/gists/{gist_id}/commits?per_page=100")
        assert response.status == 200, f"GET commits: {response.status} {response.body}"
        return response.body or []

    def liked(self, gist_id: str) -> bool:
        """Whether the token's owner likes the gist (204 liked, 404 not)."""
        status = self.get(f"/api/gists/{gist_id}/like").status
        assert status in (204, 404), status
        return status == 204

    def toggle_like(self, gist_id: str) -> None:
        status = self.request("PUT", f"/api/gists/{gist_id}/like").status
        assert status == 204, status

    def fork(self, gist_id: str) -> str:
        response = self.request("POST", f"/api/gists/{gist_id}/forks")
        assert response.status in (200, 201), f"POST forks: {response.status} {response.body}"
        return response.body["id"]

    def forks(self, gist_id: str) -> list[str]:
        response = self.get(f"/api/gists/{gist_id}/forks?per_page=100")
        assert response.status == 200, f"GET forks: {response.status} {response.body}"
        return [f["id"] for f in response.body or []]


def api(env: dict[str, str], token: str | None = "full") -> OpengistApi:
    """The REST API of the provisioned Opengist with a seeded token ("full", "read",
    "nogist", "user2") or none."""
    return OpengistApi(env["OPENGIST_E2E_URL"], env[TOKENS[token]] if token else None)


def gist_id_in(structured: Any) -> str:
    """The 32-hex gist uuid in a tool's structured result, wherever the server put it."""
    found: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and HEX32.match(value) and ("id" in key or "uuid" in key):
            found.append(value)

    walk(structured)
    assert found, f"no gist uuid in the structured result: {structured}"
    return found[0]


# --------------------------------------------------------------------------- sessions


@asynccontextmanager
async def session(
    live_server,
    era: str,
    dialog: Dialog | None = None,
    token: str | None = "full",
    extra: dict[str, str] | None = None,
) -> AsyncIterator[Any]:
    """One MCP client session with opengist-mcp in front of the provisioned Opengist."""
    async with connect(target_of(live_server(token=token, extra=extra)), era, dialog) as client:
        yield client


def http_as(url: str, bearer: str):
    """A streamable HTTP transport to `url` that sends `Authorization: Bearer <bearer>`:
    how a gateway tells callers apart (the guard binds approvals to that header)."""
    from support import http_transport

    return http_transport(url, bearer)


async def ok(client, name: str, args: dict[str, Any]) -> Any:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(name, args)
    assert not result.is_error, f"{name} {args} failed: {text_of(result)}"
    assert result.structured_content is not None, f"{name}: no structured content"
    return result.structured_content


async def search_until_found(client, args: dict[str, Any]) -> dict[str, Any]:
    """`search_gists` with `args`, going on as a model would with the `next_call` it names
    until some page matches (at most ten more pages): tests running in parallel make gists
    inside the same `since` window (some large), so a search may stop at its budget before
    reaching a test's gist. The last page's answer, with every match gathered."""
    out = await ok(client, "search_gists", args)
    matches = list(out["matches"])
    for _ in range(10):
        if matches or not out.get("next_call"):
            break
        tool, more = follow(out["next_call"])
        assert tool == "search_gists", out["next_call"]
        out = await ok(client, tool, more)
        matches += out["matches"]
    return {**out, "matches": matches}


async def refused(client, name: str, args: dict[str, Any], *words: str) -> str:
    """Call a tool that must answer with an error result naming every one of `words`
    (case-insensitive); its text."""
    result = await client.call_tool(name, args)
    text = text_of(result)
    assert result.is_error, f"{name} {args} was expected to fail, got: {text}"
    for word in words:
        assert word.lower() in text.lower(), f"expected {word!r} in: {text}"
    return text


def since_now() -> str:
    """An RFC 3339 time a little before now: `since` for gists a test is about to make."""
    return (datetime.now(timezone.utc) - timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")


class SlowDialog(Dialog):
    """A person who answers only after `delay` seconds (a dialog left open)."""

    def __init__(self, delay: float, answer: str = "accept") -> None:
        super().__init__(answer)
        self.delay = delay

    async def __call__(self, context: Any, params: Any):
        self.calls.append(params)
        await asyncio.sleep(self.delay)
        from support import answer_for

        return answer_for(getattr(params, "requested_schema", None) or {}, self.answer)


# --------------------------------------------------------------------------- web UI


class WebSession:
    """Opengist's web UI as a logged-in person: the only way to give a gist topics (the REST
    API has no field for them)."""

    def __init__(self, env: dict[str, str], user: str = "admin") -> None:
        self.base = env["OPENGIST_E2E_URL"].rstrip("/")
        if user == "admin":
            login, password = env["OPENGIST_E2E_ADMIN_USER"], env["OPENGIST_E2E_ADMIN_PASSWORD"]
        else:
            login, password = env["OPENGIST_E2E_USER2"], env["OPENGIST_E2E_USER2_PASSWORD"]
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        page = self._post_form("/-/login", {"username": login, "password": password})
        assert "/-/login" not in page[1], f"logging in as {login} failed"

    def _csrf(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            html = response.read().decode(errors="replace")
        match = re.search(r"""name=["']_csrf["'][^>]*value=["']([^"']+)["']""", html)
        assert match, f"no _csrf on {path}"
        return match.group(1)

    def _post_form(self, path: str, fields: dict[str, Any]) -> tuple[str, str]:
        pairs = [("_csrf", self._csrf(path))]
        for key, value in fields.items():
            for v in value if isinstance(value, list) else [value]:
                pairs.append((key, v))
        data = urllib.parse.urlencode(pairs).encode()
        with self.opener.open(urllib.request.Request(self.base + path, data=data), timeout=30) as response:
            return response.read().decode(errors="replace"), response.geturl()

    def page(self, path_or_url: str) -> str:
        """The HTML Opengist serves at `path_or_url` (a path, or a full URL on this instance)
        to this logged-in person."""
        path = path_or_url.removeprefix(self.base)
        assert path.startswith("/"), f"{path_or_url} is not on {self.base}"
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode(errors="replace")

    def submit(self, form_page: str, action: str, fields: dict[str, str]) -> int:
        """POST `fields` to `action` with the CSRF token of the form on `form_page`."""
        data = urllib.parse.urlencode({**fields, "_csrf": self._csrf(form_page)}).encode()
        request = urllib.request.Request(self.base + action, data=data, method="POST")
        with self.opener.open(request, timeout=30) as response:
            return response.status

    def create(self, files: dict[str, str], topics: list[str], title: str, visibility: str = "public") -> str:
        """Create a gist through the web form, with topics; returns its uuid."""
        private = {"public": "0", "unlisted": "1", "private": "2"}[visibility]
        fields = {
            "title": title,
            "description": "",
            "topics": " ".join(topics),
            "private": private,
            "expire": "never",
            "name": list(files),
            "content": list(files.values()),
        }
        _page, url = self._post_form("/", fields)
        found = re.search(r"/([0-9a-f]{32})(?:$|[/?#])", url)
        assert found, f"creating a gist through the web form ended at {url}"
        return found.group(1)


# --------------------------------------------------------------------------- a cuttable link


@dataclass
class TcpProxy:
    """A loopback TCP proxy between opengist-mcp and the shared Opengist, owned by one test:
    `cut()` stops it (Opengist seems gone: connection refused, open connections dropped)
    without touching the Opengist other tests use; `restore()` listens again on the same
    port; `drop_write_replies` loses Opengist's answers to writes. Use as a context manager; everything it
    started ends with it."""

    upstream: str
    # When set, a write (POST, PATCH, PUT, DELETE) still reaches Opengist and takes effect
    # there, but its answer is dropped and the connection closed: a write whose outcome the
    # server cannot know. Reads pass as usual.
    drop_write_replies: bool = False
    _listener: socket.socket | None = None
    _port: int = 0
    _open: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlparse(self.upstream)
        self._target = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.restore()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def restore(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self._port))
        listener.listen(64)
        self._port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, upstream]
            last_request = {"write": False}
            threading.Thread(target=_pipe, args=(client, upstream, None, last_request), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client, self, last_request), daemon=True).start()


WRITE_METHODS = (b"POST ", b"PATCH ", b"PUT ", b"DELETE ")


def _pipe(src: socket.socket, dst: socket.socket, replies_of: TcpProxy | None, last_request: dict) -> None:
    """Copies one direction of a connection. Requests (replies_of is None) note whether the
    latest one is a write; replies to a write are dropped while the proxy says so."""
    try:
        while chunk := src.recv(65536):
            if replies_of is None:
                if chunk.startswith(b"GET ") or chunk.startswith(b"HEAD "):
                    last_request["write"] = False
                elif chunk.startswith(WRITE_METHODS):
                    # A body of exactly `{}` is the server's side-effect-free check before it
                    # asks (Opengist answers 422, changes nothing): not a write to lose.
                    last_request["write"] = not chunk.rstrip().endswith(b"\r\n\r\n{}")
            elif replies_of.drop_write_replies and last_request["write"]:
                for end in (dst, src):
                    try:
                        end.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def follow(next_call: str) -> tuple[str, dict[str, Any]]:
    """A `next_call` ("tool with key=<json>, key=<json>") as (tool, arguments), to call it
    exactly as a model reading the result would."""
    tool, _, rest = next_call.partition(" with ")
    decoder = json.JSONDecoder()
    args: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        match = re.compile(r"\s*([a-z_]+)=").match(rest, i)
        assert match, f"cannot read next_call at {rest[i:]!r}: {next_call}"
        value, end = decoder.raw_decode(rest, match.end())
        args[match.group(1)] = value
        i = end
        if rest.startswith(", ", i):
            i += 2
    return tool.strip(), args


def set_topics(env: dict[str, str], who: str, owner: str, gist: dict[str, Any], topics: list[str]) -> None:
    """Sets a gist's topics through the web UI's metadata form (the REST API cannot),
    keeping its title and description. `who` is "admin" or "user2"."""
    web = WebSession(env, who)
    page = f"/{owner}/{gist['id']}"
    web.submit(
        page + "/settings",
        page + "/metadata",
        {"title": gist["title"], "description": gist.get("description") or "", "url": "", "topics": " ".join(topics)},
    )
