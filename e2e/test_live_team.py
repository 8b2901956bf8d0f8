"""opengist-mcp serving a team (`OPENGIST_MCP_HTTP_AUTH=opengist`) against a REAL Opengist with
two accounts (marker `opengist`): each person connects with their own Opengist access token as
the HTTP bearer, and acts as their own account.

A is the provisioned admin (its full token), B the second account `e2e-user2` (its full token).
Several tokens of one account are told apart as credentials of one person: another token of A
cannot answer, replay or use what A's first token was asked, and four tokens of A hold one
person's caps; a token without `user:read` is refused.
Every negative check has a positive control beside it: the same request by the right person,
or with a good token, succeeds. After every write, what Opengist holds is read back through its
own REST API with each person's token, never through the server under test. No `OPENGIST_TOKEN`
is given to the server.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from typing import Any

import mcp.types as types
import pytest
from live import TcpProxy, api, marker, ok, since_now
from mcp.shared.exceptions import MCPError
from raw_mcp import (
    RawHttp,
    approve,
    approving,
    call,
    initialize_request,
    is_elicitation,
    is_input_required,
    is_response_to,
    per_request,
)
from support import Dialog, HttpTarget, base_env, connect, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

HEAD_TEMPLATE = "opengist://gists/{gist_id}/{filename}"
WAIT_S = 60
A, B = "full", "user2"
TOKEN_VARS = {A: "OPENGIST_E2E_TOKEN_FULL", B: "OPENGIST_E2E_TOKEN_USER2"}


@pytest.fixture
def team_server(launcher, opengist_mcp_binary, opengist_env):
    """`team_server(url=None, extra=None)`: opengist-mcp --http for a team, pointed at the
    provisioned Opengist (or at `url`), with no token of its own."""

    def start(url: str | None = None, extra: dict[str, str] | None = None):
        env = {
            "OPENGIST_URL": url or opengist_env["OPENGIST_E2E_URL"],
            "OPENGIST_MCP_HTTP_AUTH": "opengist",
            **(extra or {}),
        }
        # "minted": the launcher sets no shared secret; this mode takes none.
        return launcher.http(opengist_mcp_binary, env=env, auth="minted")

    return start


def token_of(env: dict[str, str], who: str) -> str:
    return env[TOKEN_VARS[who]]


def as_person(server, token: str) -> HttpTarget:
    """What a person's MCP client connects with: the server's URL, their own Opengist token."""
    return HttpTarget(server.url, token)


def dump(value: Any) -> str:
    return json.dumps(value, default=str)


def raw_post(url: str, message: dict, authorization: str | None) -> tuple[int, dict[str, str], str]:
    """One POST of `message` to the MCP endpoint with `authorization` (or none): the status, the
    headers (lowercase) and the body's first 64 KiB."""
    parts = urllib.parse.urlsplit(url)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request("POST", parts.path, body=json.dumps(message), headers=headers)
        response = connection.getresponse()
        body = response.read(65536).decode(errors="replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def uri(gist_id: str, filename: str) -> str:
    return f"opengist://gists/{gist_id}/{urllib.parse.quote(filename, safe='-._~')}"


def revision_uri(gist_id: str, sha: str, filename: str) -> str:
    return f"opengist://gists/{gist_id}/{sha}/{urllib.parse.quote(filename, safe='-._~')}"


def ref(template: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=template)


async def listed_uris(client, wanted: str | None = None, max_pages: int = 4) -> list[str]:
    """Resource URIs of the first pages of `resources/list` (stops early once `wanted`, a gist
    id, has been seen)."""
    uris: list[str] = []
    cursor = None
    for _ in range(max_pages):
        page = await client.list_resources(cursor=cursor)
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor or (wanted and any(wanted in u for u in uris)):
            break
    return uris


# --------------------------------------------------------------------------- tokens in the web UI


class _LoopbackSecureCookies(http.cookiejar.DefaultCookiePolicy):
    """Opengist marks its flash cookie `Secure` even over plain http, and the one place a new
    token is shown is that flash: send Secure cookies back to a loopback instance."""

    def return_ok_secure(self, cookie, request) -> bool:  # noqa: D102
        return True


class TokenSettings:
    """Opengist's Settings -> Access Tokens page as a logged-in person: mints and deletes
    tokens as the person would (the REST API cannot)."""

    def __init__(self, env: dict[str, str], who: str) -> None:
        self.base = env["OPENGIST_E2E_URL"].rstrip("/")
        if who == A:
            login, password = env["OPENGIST_E2E_ADMIN_USER"], env["OPENGIST_E2E_ADMIN_PASSWORD"]
        else:
            login, password = env["OPENGIST_E2E_USER2"], env["OPENGIST_E2E_USER2_PASSWORD"]
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar(_LoopbackSecureCookies()))
        )
        _html, url = self._post("/-/login", {"username": login, "password": password})
        assert "/-/login" not in url, f"logging in as {login} failed"

    def _get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode(errors="replace")

    def _post(self, path: str, fields: dict[str, str], form_page: str | None = None) -> tuple[str, str]:
        html = self._get(form_page or path)
        match = re.search(r"""name=["']_csrf["'][^>]*value=["']([^"']+)["']""", html)
        assert match, f"no _csrf on {form_page or path}"
        data = urllib.parse.urlencode({**fields, "_csrf": match.group(1)}).encode()
        with self.opener.open(urllib.request.Request(self.base + path, data=data), timeout=30) as response:
            return response.read().decode(errors="replace"), response.geturl()

    def mint(self, name: str, scope_user: str = "2") -> str:
        """A new token with gist read+write and `scope_user` (0 none, 1 read, 2 read+write);
        the plain token, shown once."""
        fields = {"name": name, "scope_gist": "2", "scope_user": scope_user, "expires_at": ""}
        html, _ = self._post("/-/settings/access-tokens", fields)
        found = re.search(r"og_[0-9a-f]{64}", html)
        assert found, f"minting token {name}: no og_... token on the page after creation"
        return found.group(0)

    def delete(self, name: str) -> None:
        """Deletes the token named `name` through its form on the settings page."""
        html = self._get("/-/settings/access-tokens")
        # Each token's row carries its name and a form that deletes it.
        at = html.find(name)
        assert at >= 0, f"token {name} is not listed on the settings page"
        form = re.search(r"""<form[^>]*action=["']([^"']*access-tokens/\d+[^"']*)["'][^>]*>(.*?)</form>""", html[at:], re.S)
        assert form, f"no delete form after token {name}"
        fields = dict(re.findall(r"""<input[^>]*name=["']([^"']+)["'][^>]*value=["']([^"']*)["']""", form.group(2)))
        fields.pop("_csrf", None)
        self._post(urllib.parse.urlsplit(form.group(1)).path, fields, form_page="/-/settings/access-tokens")


def opengist_accepts(env: dict[str, str], token: str) -> bool:
    """Whether Opengist itself accepts `token` (GET /api/user: 200, or 401)."""
    status = api(env, None).__class__(env["OPENGIST_E2E_URL"], token).get("/api/user").status
    assert status in (200, 401), status
    return status == 200


# --------------------------------------------------------------------------- who sees what


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_each_person_sees_only_their_own_gists_even_with_the_cache_warm(team_server, opengist_env, era):
    env = opengist_env
    a_api, b_api = api(env, A), api(env, B)
    admin = env["OPENGIST_E2E_ADMIN_USER"]
    m = marker()
    needle = f"needle{uuid.uuid4().hex[:10]}"
    since = since_now()
    a_private = a_api.create({"a.txt": f"{needle} A private\n"}, "private", title=f"Teamcheck alpha {m}")
    a_unlisted = a_api.create({"u.txt": f"{needle} A unlisted\n"}, "unlisted", title=f"Teamcheck alpha unlisted {m}")
    b_private = b_api.create({"b.txt": f"{needle} B private\n"}, "private", title=f"Teamcheck beta {m}")
    a_ids, b_ids = (a_private, a_unlisted), (b_private,)
    # A full revision sha: what the cache serves files at without asking Opengist again.
    a_sha = a_api.commits(a_private)[0]["version"]
    assert len(a_sha) == 40
    server = team_server()

    # A first: every read path, which also warms the server's cache with A's files.
    async with connect(as_person(server, token_of(env, A)), era) as a:
        mine = dump(await ok(a, "list_gists", {"since": since}))
        assert all(g in mine for g in a_ids) and b_private not in mine
        found = dump(await ok(a, "search_gists", {"query": needle, "fields": ["content"], "since": since}))
        assert all(g in found for g in a_ids) and b_private not in found
        by_name = dump(await ok(a, "search_gists", {"query": needle, "fields": ["content"], "username": admin, "since": since}))
        assert all(g in by_name for g in a_ids)
        got = await ok(a, "get_gist", {"gist_id": a_private})
        assert "A private" in dump(got)
        assert "A private" in dump(await ok(a, "get_gist_file", {"gist_id": a_private, "filename": "a.txt"}))
        read = await a.read_resource(uri(a_private, "a.txt"))
        assert "A private" in read.contents[0].text
        at_sha = {"gist_id": a_private, "filename": "a.txt", "sha": a_sha}
        assert "A private" in dump(await ok(a, "get_gist_file", at_sha))
        assert "A private" in dump(await ok(a, "get_gist", {"gist_id": a_private, "sha": a_sha}))
        read = await a.read_resource(revision_uri(a_private, a_sha, "a.txt"))
        assert "A private" in read.contents[0].text
        uris = await listed_uris(a, wanted=a_private)
        assert any(a_private in u for u in uris) and not any(b_private in u for u in uris)
        completed = await a.complete(ref(HEAD_TEMPLATE), {"name": "gist_id", "value": f"teamcheck alpha {m}"})
        assert set(completed.completion.values) == set(a_ids)

    # Then B, on the same server, with A's reads in its cache.
    async with connect(as_person(server, token_of(env, B)), era) as b:
        mine = dump(await ok(b, "list_gists", {"since": since}))
        assert b_private in mine, "positive control: B lists B's own private gist"
        assert not any(g in mine for g in a_ids), "B's list shows A's gist"
        found = dump(await ok(b, "search_gists", {"query": needle, "fields": ["content"], "since": since}))
        assert b_private in found and not any(g in found for g in a_ids)
        # A's own list, as B may see it: A's private and unlisted gists are not in it.
        by_name = dump(await ok(b, "search_gists", {"query": needle, "fields": ["content"], "username": admin, "since": since}))
        assert not any(g in by_name for g in a_ids), "B's search of A's list shows A's non-public gist"
        # A's private gist, by id: every read path says it is not there for B.
        result = await b.call_tool("get_gist", {"gist_id": a_private})
        assert result.is_error and "A private" not in text_of(result), text_of(result)
        result = await b.call_tool("get_gist_file", {"gist_id": a_private, "filename": "a.txt"})
        assert result.is_error and "A private" not in text_of(result), text_of(result)
        with pytest.raises(MCPError):
            await b.read_resource(uri(a_private, "a.txt"))
        # At the revision A's reads kept in the cache: still asked of Opengist, as B.
        result = await b.call_tool("get_gist_file", {"gist_id": a_private, "filename": "a.txt", "sha": a_sha})
        assert result.is_error and "A private" not in text_of(result), text_of(result)
        result = await b.call_tool("get_gist", {"gist_id": a_private, "sha": a_sha})
        assert result.is_error and "A private" not in text_of(result), text_of(result)
        with pytest.raises(MCPError):
            await b.read_resource(revision_uri(a_private, a_sha, "a.txt"))
        assert "B private" in (await b.read_resource(uri(b_private, "b.txt"))).contents[0].text, "positive control"
        uris = await listed_uris(b, wanted=b_private)
        assert any(b_private in u for u in uris), "positive control: B's own gist is a resource"
        assert not any(g in u for u in uris for g in a_ids), "B's resources list A's gist"
        completed = await b.complete(ref(HEAD_TEMPLATE), {"name": "gist_id", "value": f"teamcheck alpha {m}"})
        assert completed.completion.values == [], "B's completion offers A's gist"
        own = await b.complete(ref(HEAD_TEMPLATE), {"name": "gist_id", "value": f"teamcheck beta {m}"})
        assert own.completion.values == [b_private], "positive control: B's own gist completes"
        names = await b.complete(ref(HEAD_TEMPLATE), {"name": "filename", "value": ""}, {"gist_id": a_private})
        assert names.completion.values == [], "B's filename completion reads A's private gist"

    # A again, after B: still everything of A's (the positive control of B's misses).
    async with connect(as_person(server, token_of(env, A)), era) as a:
        assert "A private" in dump(await ok(a, "get_gist", {"gist_id": a_private}))
        assert "A private" in dump(await ok(a, "get_gist_file", {"gist_id": a_private, "filename": "a.txt", "sha": a_sha}))
        names = await a.complete(ref(HEAD_TEMPLATE), {"name": "filename", "value": ""}, {"gist_id": a_private})
        assert names.completion.values == ["a.txt"]


# --------------------------------------------------------------------------- writes


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_writes_land_in_each_persons_own_account(team_server, opengist_env, era):
    env = opengist_env
    a_api, b_api = api(env, A), api(env, B)
    m = marker()
    server = team_server()
    async with connect(as_person(server, token_of(env, A)), era) as a:
        made = await ok(a, "create_gist", {"title": f"by A {m}", "visibility": "private", "files": [{"filename": "a.md", "content": "from A\n"}]})
    async with connect(as_person(server, token_of(env, B)), era) as b:
        made_b = await ok(b, "create_gist", {"title": f"by B {m}", "visibility": "private", "files": [{"filename": "b.md", "content": "from B\n"}]})
        # B may not change A's gist: Opengist refuses, as B.
        a_gist = a_api.titled(m)
        assert len(a_gist) == 1, a_gist
        refused = await b.call_tool("update_gist", {"gist_id": a_gist[0], "title": f"changed by B {m}"})
        assert refused.is_error, text_of(refused)

    (a_id,), (b_id,) = a_api.titled(m), b_api.titled(m)
    assert a_id in dump(made) and b_id in dump(made_b)
    a_held, b_held = a_api.gist(a_id), b_api.gist(b_id)
    assert a_held["owner"]["username"] == env["OPENGIST_E2E_ADMIN_USER"]
    assert b_held["owner"]["username"] == env["OPENGIST_E2E_USER2"]
    assert a_api.files(a_id) == {"a.md": "from A\n"} and b_api.files(b_id) == {"b.md": "from B\n"}
    assert a_held["title"] == f"by A {m}", "B's update reached A's gist"
    # Each private gist is its owner's alone.
    assert not b_api.exists(a_id) and not a_api.exists(b_id)


# --------------------------------------------------------------------------- dialogs


async def test_a_dialog_answers_only_to_its_person_on_a_legacy_session(team_server, opengist_env):
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"dialog {marker()}")
    server = team_server()
    bearer_a, bearer_b = f"Bearer {token_of(env, A)}", f"Bearer {token_of(env, B)}"
    alice = RawHttp(server.url, bearer_a)
    alice.send(call(20, "delete_gist", {"gist_id": gist_id}))
    dialog = alice.must(is_elicitation, WAIT_S, "A's dialog")

    for what, attempt in [
        ("the dialog answer", approve(dialog)),
        ("a tool call", call(21, "list_gists", {})),
    ]:
        status, _ = alice.post(attempt, authorization=bearer_b)
        assert status == 403, f"HTTP {status} for B's {what} on A's session"
    assert alice.open_stream(authorization=bearer_b) == 403, "B's GET stream on A's session"
    assert alice.delete(authorization=bearer_b) == 403, "B's DELETE of A's session"
    # B's tool call on A's session was never served, and the gist is still there.
    assert alice.wait_for(is_response_to(21), 0.5) is None
    assert a_api.exists(gist_id), "B's answer deleted A's gist"

    # Positive control: A's own answer runs the delete.
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "A's delete result")
    assert not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)
    assert alice.delete() == 200


async def test_a_request_state_runs_only_for_its_person(team_server, opengist_env):
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"state {marker()}")
    server = team_server()
    bearer_a, bearer_b = f"Bearer {token_of(env, A)}", f"Bearer {token_of(env, B)}"
    args = {"name": "delete_gist", "arguments": {"gist_id": gist_id}}
    asked = per_request(server.url, bearer_a, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])

    stolen = per_request(server.url, bearer_b, 2, {**args, "requestState": state, "inputResponses": responses})
    assert stolen.get("result", {}).get("resultType") != "complete" or stolen["result"].get("isError"), stolen
    assert a_api.exists(gist_id), "B's retry with A's approval deleted A's gist"

    done = per_request(server.url, bearer_a, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)


async def test_a_confirm_token_runs_only_for_its_person(team_server, opengist_env):
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"token {marker()}")
    server = team_server(extra={"ELICITATION": "false"})
    async with connect(as_person(server, token_of(env, A)), "legacy") as a:
        first = await a.call_tool("delete_gist", {"gist_id": gist_id})
        found = re.search(r"confirm_token[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9_\-.~+/=]{16,})", dump(first.model_dump()))
        assert found, text_of(first)
        token = found.group(1)
        async with connect(as_person(server, token_of(env, B)), "legacy") as b:
            stolen = await b.call_tool("delete_gist", {"gist_id": gist_id, "confirm_token": token})
            assert stolen.is_error, text_of(stolen)
        assert a_api.exists(gist_id), "B used A's confirm_token"
        done = await a.call_tool("delete_gist", {"gist_id": gist_id, "confirm_token": token})
        assert not done.is_error, text_of(done)
    assert not a_api.exists(gist_id)


# --------------------------------------------------------------------------- refused tokens


async def test_missing_wrong_and_revoked_tokens_are_refused_before_anything_runs(team_server, opengist_env):
    env = opengist_env
    a_api = api(env, A)
    server = team_server()
    hello = initialize_request()

    status, headers, body = raw_post(server.url, hello, None)
    assert status == 401 and headers.get("www-authenticate", "").lower().startswith("bearer"), (status, headers)
    assert "OPENGIST_MCP_HTTP_AUTH" in body and "Authorization: Bearer" in body, body

    made_up = "og_" + "0" * 64
    status, headers, body = raw_post(server.url, hello, f"Bearer {made_up}")
    assert status == 401 and "invalid_token" in headers.get("www-authenticate", ""), (status, headers)
    assert "Access Tokens" in body and made_up not in body, body

    # Nothing runs for a refused token: a create with it makes no gist...
    m = marker()
    create = {"name": "create_gist", "arguments": {"title": f"refused {m}", "visibility": "private", "files": [{"filename": "r.md", "content": "r\n"}]}}
    refused = per_request_status(server.url, f"Bearer {made_up}", create)
    assert refused == 401
    assert a_api.titled(m) == []
    # ...and the positive control: the same create with A's token makes exactly one.
    done = per_request(server.url, f"Bearer {token_of(env, A)}", 7, create)
    assert not done["result"].get("isError"), done
    assert len(a_api.titled(m)) == 1
    status, _, _ = raw_post(server.url, hello, f"Bearer {token_of(env, A)}")
    assert status == 200

    # A token deleted in Opengist before the server ever saw it: refused at once.
    settings = TokenSettings(env, B)
    name = f"team-{uuid.uuid4().hex[:8]}"
    early = settings.mint(name)
    assert opengist_accepts(env, early), "positive control: Opengist takes the new token"
    settings.delete(name)
    assert not opengist_accepts(env, early)
    status, headers, _ = raw_post(server.url, hello, f"Bearer {early}")
    assert status == 401, status

    # A token the server has checked and remembers, deleted later: the first call with it runs
    # nothing at Opengist (Opengist refuses it), and from then on the gate refuses it.
    name = f"team-{uuid.uuid4().hex[:8]}"
    late = settings.mint(name)
    b_api = api(env, B)
    async with connect(as_person(server, late), "2026-07-28") as b:
        assert "gists" in dump(await ok(b, "list_gists", {"per_page": 1})), "positive control: the new token works"
        settings.delete(name)
        m2 = marker()
        result = await b.call_tool("create_gist", {"title": f"late {m2}", "visibility": "private", "files": [{"filename": "l.md", "content": "l\n"}]})
        assert result.is_error, text_of(result)
        assert b_api.titled(m2) == [], "a revoked token wrote"
    status, _, _ = raw_post(server.url, hello, f"Bearer {late}")
    assert status == 401, "the gate still takes a token Opengist has rejected"
    logged = server.stderr()
    for token in (made_up, early, late, token_of(env, A)):
        assert token not in logged, "a token reached the server's log"
    assert "refused an HTTP request whose Opengist token Opengist rejected" in logged, "positive control: the log is read"


def per_request_status(url: str, authorization: str, params: dict) -> int:
    """The HTTP status of one 2026-07-28 `tools/call`."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(
            "POST",
            parts.path,
            body=json.dumps(body),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": params["name"],
                "Authorization": authorization,
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


async def test_opengist_unreachable_is_503_and_back_again(team_server, opengist_env):
    env = opengist_env
    hello = initialize_request()
    with TcpProxy(env["OPENGIST_E2E_URL"]) as proxy:
        server = team_server(url=proxy.url)
        proxy.cut()
        status, headers, body = raw_post(server.url, hello, f"Bearer {token_of(env, A)}")
        assert status == 503, (status, body)
        assert proxy.url.split("//")[1] in body and token_of(env, A) not in body, body
        # Positive control: the same request once Opengist can be reached again.
        proxy.restore()
        status, _, body = raw_post(server.url, hello, f"Bearer {token_of(env, A)}")
        assert status == 200, (status, body)


async def test_no_opengist_token_is_needed_and_none_is_used(team_server, opengist_env):
    """The server runs without OPENGIST_TOKEN; a client tool call with no dialog capability
    still lists the caller's own gists (and a client without elicitation gets the token path)."""
    env = opengist_env
    server = team_server()
    assert "OPENGIST_TOKEN" not in server.stderr() or "not used" in server.stderr()
    async with connect(as_person(server, token_of(env, B)), "legacy", Dialog()) as b:
        who = await ok(b, "get_user", {})
        assert env["OPENGIST_E2E_USER2"] in dump(who)
    async with connect(as_person(server, token_of(env, A)), "legacy", Dialog()) as a:
        who = await ok(a, "get_user", {})
        assert env["OPENGIST_E2E_ADMIN_USER"] in dump(who)


# --------------------------------------------------------------------------- the framework's modes


async def test_per_person_tokens_serve_one_account_with_confirmations_per_person(launcher, opengist_mcp_binary, opengist_env, tmp_path):
    """`OPENGIST_MCP_HTTP_AUTH=tokens`: one Opengist account (OPENGIST_TOKEN) for everyone, each
    person their own principal, so a dialog answers only to whoever was asked."""
    env = opengist_env
    a_api = api(env, A)
    tokens_file = tmp_path / "tokens"
    minted = {}
    for name in ("alice", "bob"):
        done = subprocess.run(
            [str(opengist_mcp_binary), "tokens", "add", name, "--file", str(tokens_file)],
            capture_output=True,
            text=True,
            timeout=30,
            env=base_env(),
        )
        assert done.returncode == 0, done.stderr
        minted[name] = re.search(r"^\s+([0-9a-f]{64})\s*$", done.stdout, re.M).group(1)
    assert minted["alice"] not in tokens_file.read_text(), "the file keeps hashes only"
    server = launcher.http(
        opengist_mcp_binary,
        env={
            "OPENGIST_URL": env["OPENGIST_E2E_URL"],
            "OPENGIST_TOKEN": token_of(env, A),
            "OPENGIST_MCP_HTTP_AUTH": "tokens",
            "OPENGIST_MCP_HTTP_TOKENS_FILE": str(tokens_file),
        },
        auth="minted",
    )
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"tokens {marker()}")
    alice = RawHttp(server.url, f"Bearer {minted['alice']}")
    alice.send(call(20, "delete_gist", {"gist_id": gist_id}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")
    status, _ = alice.post(approve(dialog), authorization=f"Bearer {minted['bob']}")
    assert status == 403, f"HTTP {status} for bob's answer to alice's dialog"
    status, _, _ = raw_post(server.url, initialize_request(), f"Bearer {token_of(env, A)}")
    assert status == 401, "an Opengist token is no per-person token here"
    assert a_api.exists(gist_id)
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "alice's delete result")
    assert not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)


async def test_list_changed_goes_only_to_the_writers_own_sessions(team_server, opengist_env):
    """`notifications/resources/list_changed` after a write reaches the writer's sessions, never
    another person's (their lists did not change, and they must not learn when others write)."""
    import anyio
    from mcp.client import Client
    from support import CLIENT_READ_TIMEOUT_S, client_target

    env = opengist_env
    a_api, b_api = api(env, A), api(env, B)
    server = team_server()
    heard = {A: 0, B: 0}
    events = {A: anyio.Event(), B: anyio.Event()}

    def handler_for(who: str):
        async def handler(message: Any) -> None:
            inner = getattr(message, "root", message)
            if isinstance(inner, types.ResourceListChangedNotification):
                heard[who] += 1
                events[who].set()

        return handler

    def person(who: str):
        target = client_target(as_person(server, token_of(env, who)))
        return Client(target, mode="legacy", message_handler=handler_for(who), read_timeout_seconds=CLIENT_READ_TIMEOUT_S, cache=None)

    m = marker()
    async with person(A) as a, person(B) as b:
        # A is remembered first, so a notification for A would be sent before B's.
        await a.list_resources()
        await b.list_resources()
        await ok(b, "create_gist", {"files": [{"filename": "b.txt", "content": "b\n"}], "visibility": "private", "title": f"B {m}"})
        with anyio.fail_after(20):
            await events[B].wait()
        await a.list_resources()  # one more round trip on A's session
        assert heard[A] == 0, "A was told of B's write"
        # Positive control: A's own write reaches A.
        await ok(a, "create_gist", {"files": [{"filename": "a.txt", "content": "a\n"}], "visibility": "private", "title": f"A {m}"})
        with anyio.fail_after(20):
            await events[A].wait()
    assert len(a_api.titled(m)) == 1 and len(b_api.titled(m)) == 1


async def test_a_token_without_user_read_is_refused_naming_the_scope(team_server, opengist_env):
    """A token that cannot name its account could be anyone's, and each would count as a person
    for the caps: refused with a 401 that names `user:read`, before anything runs."""
    env = opengist_env
    b_api = api(env, B)
    settings = TokenSettings(env, B)
    narrow_name, reader_name = (f"team-narrow-{uuid.uuid4().hex[:8]}" for _ in range(2))
    narrow = settings.mint(narrow_name, scope_user="0")
    reader = settings.mint(reader_name, scope_user="1")
    try:
        # Positive control: Opengist takes the narrow token (its gists; its account it may not read).
        as_narrow = api(env, None).__class__(env["OPENGIST_E2E_URL"], narrow)
        assert as_narrow.get("/api/gists").status == 200 and as_narrow.get("/api/user").status == 403
        server = team_server()
        status, headers, body = raw_post(server.url, initialize_request(), f"Bearer {narrow}")
        assert status == 401 and "invalid_token" in headers.get("www-authenticate", ""), (status, headers)
        assert "user:read" in body and narrow not in body, body
        m = marker()
        create = {"name": "create_gist", "arguments": {"title": f"narrow {m}", "visibility": "private", "files": [{"filename": "n.md", "content": "n\n"}]}}
        assert per_request_status(server.url, f"Bearer {narrow}", create) == 401
        assert b_api.titled(m) == [], "the narrow token wrote"
        # Positive control: a token with user:read (and nothing more of the user) is served.
        status, _, _ = raw_post(server.url, initialize_request(), f"Bearer {reader}")
        assert status == 200
        done = per_request(server.url, f"Bearer {reader}", 8, create)
        assert not done["result"].get("isError"), done
        assert len(b_api.titled(m)) == 1
    finally:
        settings.delete(narrow_name)
        settings.delete(reader_name)


# --------------------------------------------------------------------------- one account, several tokens


@pytest.fixture
def second_full_token(opengist_env):
    """Another full token of A's account (gist and user read+write), deleted afterwards."""
    settings = TokenSettings(opengist_env, A)
    name = f"team-second-{uuid.uuid4().hex[:8]}"
    token = settings.mint(name)
    yield token
    settings.delete(name)


async def test_another_token_of_the_account_cannot_answer_use_or_close_a_legacy_session(team_server, opengist_env, second_full_token):
    """The issue's attack: a second token of the same account posts `accept` on the first
    token's session while a delete is pending."""
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"second {marker()}")
    server = team_server()
    first, second = f"Bearer {token_of(env, A)}", f"Bearer {second_full_token}"
    session = RawHttp(server.url, first)
    session.send(call(20, "delete_gist", {"gist_id": gist_id}))
    dialog = session.must(is_elicitation, WAIT_S, "the first token's dialog")
    for what, attempt in [("the dialog answer", approve(dialog)), ("a tool call", call(21, "list_gists", {}))]:
        status, _ = session.post(attempt, authorization=second)
        assert status == 403, f"HTTP {status} for the second token's {what} on the first token's session"
    assert session.open_stream(authorization=second) == 403
    assert session.delete(authorization=second) == 403
    # The read-only token of the same account too.
    status, _ = session.post(approve(dialog), authorization=f"Bearer {env['OPENGIST_E2E_TOKEN_READ']}")
    assert status == 403, f"HTTP {status} for the read-only token's answer"
    assert a_api.exists(gist_id), "another token of the account answered the dialog"
    # Positive control: the second token is good on a session of its own.
    assert "gists" in dump(per_request(server.url, second, 9, {"name": "list_gists", "arguments": {"per_page": 1}}))
    # The first token's own answer runs the delete.
    session.send(approve(dialog))
    done = session.must(is_response_to(20), WAIT_S, "the delete result")
    assert not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)


async def test_another_token_of_the_account_cannot_replay_a_request_state(team_server, opengist_env, second_full_token):
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"second state {marker()}")
    server = team_server()
    first, second = f"Bearer {token_of(env, A)}", f"Bearer {second_full_token}"
    args = {"name": "delete_gist", "arguments": {"gist_id": gist_id}}
    asked = per_request(server.url, first, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    replayed = per_request(server.url, second, 2, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(replayed), f"the second token's replay ran: {replayed}"
    assert a_api.exists(gist_id), "the second token's replay deleted the gist"
    done = per_request(server.url, first, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)


async def test_another_token_of_the_account_cannot_use_a_confirm_token(team_server, opengist_env, second_full_token):
    env = opengist_env
    a_api = api(env, A)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"second token {marker()}")
    server = team_server(extra={"ELICITATION": "false"})
    first, second = f"Bearer {token_of(env, A)}", f"Bearer {second_full_token}"
    issued = per_request(server.url, first, 1, {"name": "delete_gist", "arguments": {"gist_id": gist_id}})
    found = re.search(r"confirm_token[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9_\-.~+/=]{16,})", dump(issued))
    assert found, issued
    args = {"name": "delete_gist", "arguments": {"gist_id": gist_id, "confirm_token": found.group(1)}}
    stolen = per_request(server.url, second, 2, args)
    assert stolen["result"].get("isError"), stolen
    assert a_api.exists(gist_id), "the second token used the first token's confirm_token"
    done = per_request(server.url, first, 3, args)
    assert not done["result"].get("isError"), done
    assert not a_api.exists(gist_id)


async def test_a_token_revoked_in_opengist_cannot_answer_its_own_dialog(team_server, opengist_env):
    """Deleted in Opengist while its dialog waits: its answer is refused (the gate re-checks
    every request's token, remembering a check a few seconds at most) and nothing is deleted."""
    env = opengist_env
    a_api = api(env, A)
    settings = TokenSettings(env, A)
    name = f"team-revoked-{uuid.uuid4().hex[:8]}"
    token = settings.mint(name)
    gist_id = a_api.create({"x.txt": "keep me\n"}, "private", title=f"revoked {marker()}")
    server = team_server()
    session = RawHttp(server.url, f"Bearer {token}")
    session.send(call(20, "delete_gist", {"gist_id": gist_id}))
    dialog = session.must(is_elicitation, WAIT_S, "the dialog")
    settings.delete(name)
    assert not opengist_accepts(env, token)
    # The event waited on: the gate refuses a harmless request with the revoked token.
    deadline = time.monotonic() + 30
    while (status := session.post({"jsonrpc": "2.0", "id": 30, "method": "ping"})[0]) != 401 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == 401, f"HTTP {status}: the gate still takes a token deleted in Opengist"
    status, _ = session.post(approve(dialog))
    assert status == 401, f"HTTP {status} for the revoked token's answer"
    assert a_api.exists(gist_id), "a revoked token's answer deleted the gist"
    # Positive control: the account's other token is served.
    assert "gists" in dump(per_request(server.url, f"Bearer {token_of(env, A)}", 9, {"name": "list_gists", "arguments": {"per_page": 1}}))


async def test_four_tokens_of_one_account_hold_one_persons_caps(team_server, opengist_env):
    env = opengist_env
    a_api = api(env, A)
    settings = TokenSettings(env, A)
    names = [f"team-cap-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    minted = [settings.mint(name) for name in names]
    try:
        tokens = [f"Bearer {t}" for t in (token_of(env, A), *minted, env["OPENGIST_E2E_TOKEN_NOGIST"])]
        server = team_server(extra={"OPENGIST_MCP_HTTP_SESSIONS_PER_PRINCIPAL": "3", "OPENGIST_MCP_HTTP_DIALOGS_PER_PRINCIPAL": "2"})
        gists = [a_api.create({"x.txt": "keep me\n"}, "private", title=f"cap {marker()}") for _ in range(3)]
        sessions = [RawHttp(server.url, token) for token in tokens[:3]]
        # The fourth token of the same account: past the person's session cap.
        status, headers, body = raw_post(server.url, initialize_request(), tokens[3])
        assert status == 429 and "too_many_sessions_for_principal" in body, (status, body)
        assert "OPENGIST_MCP_HTTP_SESSIONS_PER_PRINCIPAL" in body and headers.get("retry-after"), (body, headers)
        # Two dialogs with two tokens, the third with a third token: past the person's dialog cap.
        for index in (0, 1):
            sessions[index].send(call(10 + index, "delete_gist", {"gist_id": gists[index]}))
            sessions[index].must(is_elicitation, WAIT_S, f"dialog {index}")
        sessions[2].send(call(12, "delete_gist", {"gist_id": gists[2]}))
        answer = sessions[2].must(lambda m: is_elicitation(m) or is_response_to(12)(m), WAIT_S, "the third call")
        assert not is_elicitation(answer), f"a dialog was pushed past the person's cap: {answer}"
        assert answer["result"].get("isError") and "OPENGIST_MCP_HTTP_DIALOGS_PER_PRINCIPAL" in dump(answer), answer
        # Positive control: another person opens a session and is asked.
        b_api = api(env, B)
        b_gist = b_api.create({"x.txt": "keep me\n"}, "private", title=f"cap B {marker()}")
        other = RawHttp(server.url, f"Bearer {token_of(env, B)}")
        other.send(call(13, "delete_gist", {"gist_id": b_gist}))
        other.must(is_elicitation, WAIT_S, "B's dialog")
        assert all(a_api.exists(gist) for gist in gists) and b_api.exists(b_gist)
        for session in (*sessions, other):
            session.close()
    finally:
        for name in names:
            settings.delete(name)
