"""Gists as MCP resources against a REAL Opengist (marker `opengist`), through the Python
`mcp` 2.3.0 client over stdio and streamable HTTP, in both eras.

Each test makes its own gists (titles carry a `marker()`) directly through Opengist's REST
API, and every read is compared byte for byte with what Opengist's raw file endpoint
(`GET /api/gists/:uuid/files/:sha/:filename`) serves directly. Other tests run in parallel
against the same instance, so a list is checked for what must be in it, never for being
exactly one test's gists.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pytest
from live import DIAGONAL, TcpProxy, WebSession, api, follow, marker, ok, since_now
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from support import CLIENT_READ_TIMEOUT_S, client_target

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

HEAD_TEMPLATE = "opengist://gists/{gist_id}/{filename}"
REVISION_TEMPLATE = "opengist://gists/{gist_id}/{revision}/{filename}"
NOT_FOUND = (-32002, -32602)  # legacy RESOURCE_NOT_FOUND; 2026-07-28 sends invalid params


def enc(part: str) -> str:
    """RFC 6570 simple expansion of one variable: every byte outside unreserved as %XX."""
    return urllib.parse.quote(part, safe="-._~")


def uri(gist_id: str, filename: str, revision: str | None = None) -> str:
    if revision is None:
        return f"opengist://gists/{enc(gist_id)}/{enc(filename)}"
    return f"opengist://gists/{enc(gist_id)}/{enc(revision)}/{enc(filename)}"


def raw(og, gist_id: str, sha: str, filename: str) -> bytes:
    """The file as Opengist's raw endpoint serves it, directly."""
    response = og.request("GET", f"/api/gists/{gist_id}/files/{sha}/{urllib.parse.quote(filename)}", raw=True)
    assert response.status == 200, f"raw {filename}: {response.status}"
    return response.body


def head(og, gist_id: str) -> str:
    return og.commits(gist_id)[0]["version"]


@asynccontextmanager
async def resource_client(live_server, era: str, token: str | None = "full", extra=None, handler=None) -> AsyncIterator[Client]:
    """A client session; `handler` sees every message the server sends on its own."""
    from support import target_of

    mode = "legacy" if era == "legacy" else era
    async with Client(
        client_target(target_of(live_server(token=token, extra=extra))),
        mode=mode,
        message_handler=handler,
        read_timeout_seconds=CLIENT_READ_TIMEOUT_S,
        cache=None,
    ) as client:
        yield client


def contents_bytes(result: types.ReadResourceResult) -> bytes:
    first = result.contents[0]
    if isinstance(first, types.BlobResourceContents):
        return base64.b64decode(first.blob)
    return first.text.encode()


def meta_of(item: Any) -> dict[str, Any]:
    return dict(getattr(item, "meta", None) or {})


async def read_error(client: Client, target: str) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(target)
    return caught.value


# --------------------------------------------------------------------------- list


@DIAGONAL
async def test_list_pages_newest_first_and_matches_opengist(opengist_env, live_server, era):
    og = api(opengist_env)
    m = marker()
    # More than one page (30 gists) of this test's own gists, so paging is certain.
    made = [og.create({f"{m}-{i:02d}.py": f"print({i})\n"}, "private", title=f"{m} {i}") for i in range(32)]
    found: dict[str, types.Resource] = {}
    others: list[str] = []
    pages = 0
    async with resource_client(live_server, era) as client:
        cursor = None
        for _ in range(60):
            page = await client.list_resources(cursor=cursor)
            pages += 1
            assert meta_of(page).get("untrusted") is True, page
            for resource in page.resources:
                if resource.name.startswith(m):
                    assert resource.uri not in found, f"listed twice: {resource.uri}"
                    found[resource.uri] = resource
            cursor = page.next_cursor
            if not others:
                # Someone writes while this client pages: two new gists push every listed one
                # down Opengist's numbered pages; the next page must still resume after the
                # last gist listed, listing none twice and passing none over.
                others = [og.create({f"{marker()}.txt": "meanwhile"}, "private") for _ in range(2)]
            if len(found) == len(made) or cursor is None:
                break
    for gist_id in others:
        assert og.delete(gist_id) == 204
    assert pages >= 2, "the test's gists alone are more than one page"
    assert len(found) == len(made), f"found {len(found)} of {len(made)}"
    held = {g["id"]: g for g in og.mine()}
    for gist_id in made:
        (filename,) = og.files(gist_id)
        resource = found[uri(gist_id, filename)]
        assert resource.mime_type == "text/x-python"
        assert resource.size == len(raw(og, gist_id, head(og, gist_id), filename))
        assert resource.title == f"{held[gist_id]['title']}: {filename}"
        assert meta_of(resource)["gist_id"] == gist_id and meta_of(resource)["untrusted"] is True
    listed = [meta_of(r)["gist_id"] for r in found.values()]
    times = [held[g]["updated_at"] for g in listed]
    assert times == sorted(times, reverse=True), "newest first"


@DIAGONAL
async def test_a_cursor_not_handed_out_is_refused(opengist_env, live_server, era):
    async with resource_client(live_server, era) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_resources(cursor="page-two-please")
    assert caught.value.code == -32602 and "nextCursor" in caught.value.message


@DIAGONAL
async def test_templates_offer_head_and_revision(opengist_env, live_server, era):
    async with resource_client(live_server, era) as client:
        listed = await client.list_resource_templates()
    assert [t.uri_template for t in listed.resource_templates] == [HEAD_TEMPLATE, REVISION_TEMPLATE]


# --------------------------------------------------------------------------- read


@DIAGONAL
async def test_read_at_head_and_at_an_old_revision(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"notes.md": "# first\n"}, "private", title=marker())
    og.update(gist_id, {"files": {"notes.md": {"content": "# second\nnaïve 🙂\n"}}})
    newest, oldest = og.commits(gist_id)[0]["version"], og.commits(gist_id)[-1]["version"]
    assert newest != oldest
    async with resource_client(live_server, era) as client:
        now = await client.read_resource(uri(gist_id, "notes.md"))
        then = await client.read_resource(uri(gist_id, "notes.md", oldest))
    assert contents_bytes(now) == raw(og, gist_id, newest, "notes.md") == "# second\nnaïve 🙂\n".encode()
    assert contents_bytes(then) == raw(og, gist_id, oldest, "notes.md") == b"# first\n"
    (item,) = now.contents
    assert item.mime_type == "text/markdown" and item.uri == uri(gist_id, "notes.md")
    assert meta_of(item)["untrusted"] is True and meta_of(item)["source"] == "opengist"
    assert meta_of(item)["revision"] == newest and meta_of(then.contents[0])["revision"] == oldest


@DIAGONAL
async def test_a_binary_file_is_base64_of_the_same_bytes(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"blob.png": "\x00\x01\x02\x03binary\x00" * 20, "ok.txt": "text\n"}, "private", title=marker())
    async with resource_client(live_server, era) as client:
        result = await client.read_resource(uri(gist_id, "blob.png"))
    (item,) = result.contents
    assert isinstance(item, types.BlobResourceContents), item
    assert item.mime_type == "image/png"
    assert base64.b64decode(item.blob) == raw(og, gist_id, head(og, gist_id), "blob.png")


@DIAGONAL
async def test_a_file_over_the_ceiling_says_so_and_get_gist_file_reads_the_rest(opengist_env, live_server, era):
    og = api(opengist_env)
    body = "".join(f"line {i:05d} \"quoted\"\n" for i in range(1200))  # ~25 KB, escapes count
    gist_id = og.create({"big.txt": body}, "private", title=marker())
    whole = raw(og, gist_id, head(og, gist_id), "big.txt")
    assert whole == body.encode()
    async with resource_client(live_server, era, extra={"OPENGIST_MCP_MAX_RESULT_BYTES": "8192"}) as client:
        result = await client.read_resource(uri(gist_id, "big.txt"))
        first, note = result.contents
        shown = first.text.encode()
        assert 0 < len(shown) < len(whole) and whole.startswith(shown)
        assert meta_of(first)["truncated"] is True and meta_of(first)["bytes_returned"] == len(shown)
        assert "cut short" in note.text and f"is {len(whole)} bytes" in note.text, note.text
        call = re.search(r"get_gist_file with [^\n]*?offset=\d+", note.text)
        assert call, note.text
        tool, args = follow(call.group(0))
        assert tool == "get_gist_file" and args["offset"] == len(shown)
        rest = b""
        for _ in range(200):
            window = await ok(client, tool, args)
            rest += window["content"].encode()
            if not window["truncated"]:
                break
            tool, args = follow(window["next_call"])
    assert shown + rest == whole


@DIAGONAL
async def test_another_users_public_gist_through_the_templates(opengist_env, live_server, era):
    theirs = api(opengist_env, "user2")
    user2 = opengist_env.get("OPENGIST_E2E_USER2", "e2e-user2")
    m = marker()
    gist_id = theirs.create({"shared.rs": "fn shared() {}\n"}, "public", title=m)
    slug = f"slug-{m}"
    web = WebSession(opengist_env, "user2")
    page = f"/{user2}/{gist_id}"
    web.submit(page + "/settings", page + "/metadata", {"title": m, "description": "", "url": slug, "topics": ""})
    base = opengist_env["OPENGIST_E2E_URL"].rstrip("/")
    sha = head(theirs, gist_id)
    expected = raw(theirs, gist_id, sha, "shared.rs")
    async with resource_client(live_server, era) as client:
        by_id = await client.read_resource(HEAD_TEMPLATE.format(gist_id=enc(gist_id), filename=enc("shared.rs")))
        by_link = await client.read_resource(uri(f"{base}/{user2}/{gist_id}", "shared.rs"))
        by_custom_url = await client.read_resource(uri(f"{base}/{user2}/{slug}", "shared.rs", sha[:8]))
    for result in (by_id, by_link, by_custom_url):
        assert contents_bytes(result) == expected == b"fn shared() {}\n"
        assert meta_of(result.contents[0])["gist_id"] == gist_id


# --------------------------------------------------------------------------- errors


@DIAGONAL
async def test_errors_name_the_problem_and_the_fix(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"present.txt": "x\n"}, "private", title=marker())
    async with resource_client(live_server, era) as client:
        bad = await read_error(client, "opengist://gists/only-one-part")
        assert bad.code == -32602 and "<gist_id>/<filename>" in bad.message, bad.message
        foreign = await read_error(client, "https://example.com/secret")
        assert foreign.code == -32602 and "not a resource of this server" in foreign.message
        assert "secret" not in foreign.message, "the URI is never echoed"
        unknown = await read_error(client, uri("0" * 32, "a.txt"))
        assert unknown.code in NOT_FOUND and "does not exist or is not visible" in unknown.message, unknown.message
        missing = await read_error(client, uri(gist_id, "absent.txt"))
        assert missing.code in NOT_FOUND, missing.message
        assert '"absent.txt"' in missing.message and '"present.txt"' in missing.message, missing.message
        head_word = await read_error(client, uri(gist_id, "present.txt", "HEAD"))
        assert head_word.code == -32602 and "commits[0].version" in head_word.message


@DIAGONAL
async def test_a_token_without_gist_read_is_named(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"private.txt": "mine\n"}, "private", title=marker())
    async with resource_client(live_server, era, token="nogist") as client:
        error = await read_error(client, uri(gist_id, "private.txt"))
    assert error.code in NOT_FOUND
    assert "gist:read" in error.message and "Access Tokens" in error.message, error.message


@DIAGONAL
async def test_opengist_unreachable_is_named(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    with TcpProxy(opengist_env["OPENGIST_E2E_URL"]) as proxy:
        from support import target_of

        handle = live_server(extra={"OPENGIST_URL": proxy.url, "OPENGIST_MCP_REQUEST_TIMEOUT_SECS": "5"})
        mode = "legacy" if era == "legacy" else era
        async with Client(client_target(target_of(handle)), mode=mode, read_timeout_seconds=CLIENT_READ_TIMEOUT_S, cache=None) as client:
            assert contents_bytes(await client.read_resource(uri(gist_id, "a.txt"))) == b"a\n"
            proxy.cut()
            error = await read_error(client, uri(gist_id, "b.txt"))
            listing = None
            with pytest.raises(MCPError) as caught:
                listing = await client.list_resources()
    assert listing is None
    for e in (error, caught.value):
        assert e.code == -32603, e.message
        # Refused, or (a pooled connection cut under it) no answer: both name the instance and the fix.
        unreachable = "could not connect to the Opengist instance" in e.message or "no answer from 127.0.0.1" in e.message
        assert unreachable and "OPENGIST_URL" in e.message, e.message


@DIAGONAL
async def test_resources_can_be_turned_off(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    async with resource_client(live_server, era, extra={"OPENGIST_MCP_RESOURCES": "false"}) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_resources()
        assert caught.value.code == -32601
        result = await client.call_tool("get_gist", {"gist_id": gist_id})
        assert not any(block.type == "resource_link" for block in result.content)
        assert len((await client.list_tools()).tools) == 14
    async with resource_client(live_server, era, extra={"OPENGIST_DENY_TOOLS": "get_gist_file"}) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri(gist_id, "a.txt"))
        assert caught.value.code == -32601, "denying get_gist_file turns resources off too"
    async with resource_client(live_server, era, extra={"OPENGIST_READ_ONLY": "true"}) as client:
        assert contents_bytes(await client.read_resource(uri(gist_id, "a.txt"))) == b"a\n"


# --------------------------------------------------------------------------- completion


def ref(template: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=template)


@DIAGONAL
async def test_completion_of_gist_ids_filenames_and_revisions(opengist_env, live_server, era):
    og = api(opengist_env)
    m = marker()
    gist_id = og.create({"alpha.py": "a\n", "alphabet.txt": "b\n", "beta.md": "c\n"}, "private", title=f"Zebra quartz {m}")
    og.update(gist_id, {"files": {"beta.md": {"content": "c2\n"}}})
    versions = [c["version"] for c in og.commits(gist_id)]
    assert len(versions) == 2
    async with resource_client(live_server, era) as client:
        by_prefix = await client.complete(ref(HEAD_TEMPLATE), {"name": "gist_id", "value": gist_id[:7].upper()})
        by_title = await client.complete(ref(HEAD_TEMPLATE), {"name": "gist_id", "value": f"zebra QUAR {m}"})
        names = await client.complete(ref(HEAD_TEMPLATE), {"name": "filename", "value": "ALP"}, {"gist_id": gist_id})
        names_then = await client.complete(
            ref(REVISION_TEMPLATE), {"name": "filename", "value": ""}, {"gist_id": gist_id, "revision": versions[-1]}
        )
        revisions = await client.complete(ref(REVISION_TEMPLATE), {"name": "revision", "value": ""}, {"gist_id": gist_id})
        one = await client.complete(ref(REVISION_TEMPLATE), {"name": "revision", "value": versions[1][:5]}, {"gist_id": gist_id})
        nothing_yet = await client.complete(ref(HEAD_TEMPLATE), {"name": "filename", "value": "a"})
        with pytest.raises(MCPError) as caught:
            await client.complete(ref("opengist://other/{x}"), {"name": "x", "value": ""})
    assert gist_id in by_prefix.completion.values
    assert all(v.startswith(gist_id[:7]) for v in by_prefix.completion.values)
    assert by_title.completion.values == [gist_id], "the one gist whose title has these words"
    assert names.completion.values == ["alpha.py", "alphabet.txt"]
    assert sorted(names_then.completion.values) == sorted(og.files(gist_id)) == ["alpha.py", "alphabet.txt", "beta.md"]
    assert revisions.completion.values == versions, "newest first, as Opengist lists them"
    assert versions[1] in one.completion.values
    assert nothing_yet.completion.values == []
    assert caught.value.code == -32602 and HEAD_TEMPLATE in caught.value.message


# --------------------------------------------------------------------------- links from tools


@DIAGONAL
async def test_resource_links_in_tool_results_read_back_the_same_bytes(opengist_env, live_server, era):
    og = api(opengist_env)
    m = marker()
    # The search below reads file contents within a 2 MiB budget: from this test's start on
    # only, so the gists other tests made before (some of 300 KiB) are not what it reads.
    since = since_now()
    gist_id = og.create({"one.txt": f"{m} one\n", "two.json": '{"k": 2}\n'}, "private", title=m)
    og.update(gist_id, {"files": {"one.txt": {"content": f"{m} one, again\n"}}})
    oldest = og.commits(gist_id)[-1]["version"]
    async with resource_client(live_server, era) as client:
        shown = await client.call_tool("get_gist", {"gist_id": gist_id})
        pinned = await client.call_tool("get_gist", {"gist_id": gist_id, "sha": oldest})
        found = await client.call_tool("search_gists", {"query": f"{m} one", "fields": ["content"], "limit": 5, "since": since})
        listed = await client.call_tool("list_gists", {"per_page": 5})
        reads = {}
        for result in (shown, pinned, found):
            for link in (b for b in result.content if b.type == "resource_link"):
                reads[link.uri] = (link, await client.read_resource(link.uri))
    import json as _json

    for result in (shown, pinned, found, listed):
        assert not result.is_error
        (text,) = [b for b in result.content if b.type == "text"]
        assert _json.loads(text.text) == result.structured_content, "the text block is unchanged"
    head_links = [b.uri for b in shown.content if b.type == "resource_link"]
    assert head_links == [uri(gist_id, "one.txt"), uri(gist_id, "two.json")]
    pinned_links = [b.uri for b in pinned.content if b.type == "resource_link"]
    assert pinned_links == [uri(gist_id, "one.txt", oldest), uri(gist_id, "two.json", oldest)]
    search_links = [b.uri for b in found.content if b.type == "resource_link"]
    assert search_links == [uri(gist_id, "one.txt")]
    assert not any(b.type == "resource_link" for b in listed.content), "list_gists names no file"
    newest = head(og, gist_id)
    for link_uri, (link, read) in reads.items():
        sha = oldest if f"/{oldest}/" in link_uri else newest
        assert contents_bytes(read) == raw(og, gist_id, sha, link.name), link_uri
        assert link.size in (None, len(raw(og, gist_id, sha, link.name)))


# --------------------------------------------------------------------------- list changed


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_list_changed_after_this_servers_own_write(opengist_env, live_server, transport):
    og = api(opengist_env)
    m = marker()
    changed = anyio.Event()

    async def handler(message: Any) -> None:
        inner = getattr(message, "root", message)
        if isinstance(inner, types.ResourceListChangedNotification):
            changed.set()

    async with resource_client(live_server, "legacy", handler=handler) as client:
        await client.list_resources()
        created = await ok(
            client, "create_gist", {"files": [{"filename": f"{m}.txt", "content": f"{m}\n"}], "visibility": "private", "title": m}
        )
        with anyio.fail_after(20):
            await changed.wait()
        gist_id = created["gist"]["id"]
        assert og.files(gist_id) == {f"{m}.txt": f"{m}\n"}
        first = await client.list_resources()
    assert uri(gist_id, f"{m}.txt") in [r.uri for r in first.resources], "the new gist is listed first"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_list_changed_on_a_listen_stream_after_this_servers_own_write(opengist_env, live_server, transport):
    """2026-07-28 has no sessions to push to: a client opens `subscriptions/listen` asking for
    `resourcesListChanged`, and this server's write sends it on that stream."""
    from mcp.client.subscriptions import ResourcesListChanged

    og = api(opengist_env)
    m = marker()
    async with resource_client(live_server, "2026-07-28") as client:
        async with client.listen(resources_list_changed=True, tools_list_changed=True) as sub:
            assert sub.honored.resources_list_changed is True
            assert not sub.honored.tools_list_changed, "only what the server can keep"
            created = await ok(
                client,
                "create_gist",
                {"files": [{"filename": f"{m}.txt", "content": f"{m}\n"}], "visibility": "private", "title": m},
            )
            with anyio.fail_after(20):
                event = await sub.__anext__()
            assert isinstance(event, ResourcesListChanged), event
        gist_id = created["gist"]["id"]
        assert og.files(gist_id) == {f"{m}.txt": f"{m}\n"}
        first = await client.list_resources()
    assert uri(gist_id, f"{m}.txt") in [r.uri for r in first.resources]
