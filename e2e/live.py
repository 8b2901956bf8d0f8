"""Shared helpers for the tests against a REAL Opengist (marker `opengist`).

`OpengistApi` talks to Opengist's REST API directly (urllib), never through the server
under test: after every write a test reads back what Opengist actually holds.
`live_server` (a fixture in conftest.py) starts opengist-mcp pointed at the provisioned
instance with the token the test names.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

HEX32 = re.compile(r"^[0-9a-f]{32}$")

# Which seeded token a test runs with (see scripts/provision-opengist).
TOKENS = {
    "full": "OPENGIST_E2E_TOKEN_FULL",  # admin, gist read+write, user read+write
    "read": "OPENGIST_E2E_TOKEN_READ",  # admin, gist read, user read
    "nogist": "OPENGIST_E2E_TOKEN_NOGIST",  # admin, no gist scope, user read+write
    "user2": "OPENGIST_E2E_TOKEN_USER2",  # e2e-user2, everything
}


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


# ---- Opengist's web UI (for what its REST API cannot do, e.g. setting topics) -----------


class WebSession:
    """A logged-in browser session on the provisioned Opengist (cookie jar, CSRF forms).
    Used only to set up state the REST API cannot make; results are still read back
    through the REST API."""

    def __init__(self, base: str, username: str, password: str) -> None:
        import http.cookiejar

        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.submit("/-/login", "/-/login", {"username": username, "password": password})

    def page(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode(errors="replace")

    def submit(self, form_page: str, action: str, fields: dict[str, str]) -> int:
        import urllib.parse

        match = re.search(r"""name=["']_csrf["'][^>]*value=["']([^"']+)""", self.page(form_page))
        assert match, f"no _csrf on {form_page}"
        data = urllib.parse.urlencode({**fields, "_csrf": match.group(1)}).encode()
        with self.opener.open(urllib.request.Request(self.base + action, data=data, method="POST"), timeout=30) as r:
            return r.status


def web_session(env: dict[str, str], who: str = "admin") -> WebSession:
    """A web session as the seeded admin ("admin") or second user ("user2")."""
    if who == "admin":
        return WebSession(env["OPENGIST_E2E_URL"], env["OPENGIST_E2E_ADMIN_USER"], env["OPENGIST_E2E_ADMIN_PASSWORD"])
    return WebSession(env["OPENGIST_E2E_URL"], env["OPENGIST_E2E_USER2"], env["OPENGIST_E2E_USER2_PASSWORD"])


def set_topics(env: dict[str, str], who: str, owner: str, gist: dict[str, Any], topics: list[str]) -> None:
    """Sets a gist's topics through the web UI's metadata form (the REST API cannot),
    keeping its title and description."""
    session = web_session(env, who)
    page = f"/{owner}/{gist['id']}"
    session.submit(
        page + "/settings",
        page + "/metadata",
        {"title": gist["title"], "description": gist.get("description") or "", "url": "", "topics": " ".join(topics)},
    )
