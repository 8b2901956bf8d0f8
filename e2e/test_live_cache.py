"""The gist cache against a REAL Opengist (marker `opengist`): it is used, and it never
serves a gist that changed.

The server runs with `RUST_LOG=opengist_mcp::opengist=debug`, which logs one line per
Opengist request (method, path, status; never a token or content), so a test can tell
whether a search read a gist from Opengist or from the cache. Changes are made through
Opengist's REST API directly (or through the server, then checked there), and every answer
is compared with what Opengist holds.

Opengist keeps `updated_at` in whole seconds, and the cache keeps only reads that began a
full second after the gist's `updated_at`: the tests wait that out where they need a read
to be kept, and also change a gist twice within one second on purpose.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from support import target_of
from live import api, marker, search_until_found, set_topics
from support import Dialog, connect, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

DEBUG_LOG = {"RUST_LOG": "warn,opengist_mcp::opengist=debug"}
# Long enough that a read begun now provably starts after the gist's updated_at second, even
# when the read itself takes over a second on a loaded machine (its round trip is subtracted).
SETTLE_SECONDS = 3.5


def detail_reads(stderr_path: Path, gist_id: str) -> int:
    """How many times the server read this gist in full (GET /api/gists/<id>) so far."""
    text = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    return len(re.findall(rf"/api/gists/{gist_id}(?![/0-9a-f])", text))


def since_arg(started: datetime) -> str:
    """A `since` that keeps the search to this test's gists and the few others changed
    meanwhile."""
    return (started - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")


async def search(client, query: str, since: str, fields: list[str] | None = None) -> dict:
    args = {"query": query, "since": since}
    if fields is not None:
        args["fields"] = fields
    return await search_until_found(client, args)


def ids_of(out: dict) -> list[str]:
    return [m["id"] for m in out["matches"]]


async def test_search_and_reads_never_serve_a_changed_gist(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    started = datetime.now(timezone.utc)
    since = since_arg(started)
    filename = f"{m}-one.txt"
    gist_id = og.create({filename: f"first line\nold-{m} here\n"}, title=f"cache {m}")
    time.sleep(SETTLE_SECONDS)
    handle = live_server(extra=DEBUG_LOG)
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        out = await search(client, f"old-{m}", since, ["content"])
        assert ids_of(out) == [gist_id], out
        assert out["matches"][0]["snippets"][0]["text"] == f"old-{m} here"
        reads = detail_reads(handle.stderr_path, gist_id)
        assert reads == 1, f"the first search reads the gist once: {reads}"

        # Unchanged: the repeated search is served from the cache, not from Opengist.
        again = await search(client, f"old-{m}", since, ["content"])
        assert ids_of(again) == [gist_id], again
        assert detail_reads(handle.stderr_path, gist_id) == reads, "a repeated search read the gist again"

        # Changed directly in Opengist (not through the server): the next search and reads
        # see the change at once.
        patched = og.request("PATCH", f"/api/gists/{gist_id}", {"files": {filename: {"content": f"new-{m} now\n"}}})
        assert patched.status == 200, patched
        assert og.files(gist_id) == {filename: f"new-{m} now\n"}
        assert ids_of(await search(client, f"old-{m}", since, ["content"])) == []
        new = await search(client, f"new-{m}", since, ["content"])
        assert ids_of(new) == [gist_id], new
        assert detail_reads(handle.stderr_path, gist_id) > reads, "the changed gist was not read again"

        result = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": filename})
        assert not result.is_error, text_of(result)
        assert result.structured_content["content"] == f"new-{m} now\n"
        result = await client.call_tool("get_gist", {"gist_id": gist_id})
        assert not result.is_error, text_of(result)
        files = {f["filename"]: f.get("content") for f in result.structured_content["files"]}
        assert files == og.files(gist_id), files

        # A rename is a change too: filename search follows it.
        renamed = f"{m}-renamed.txt"
        patched = og.request("PATCH", f"/api/gists/{gist_id}", {"files": {filename: {"filename": renamed}}})
        assert patched.status == 200, patched
        assert list(og.files(gist_id)) == [renamed]
        assert ids_of(await search(client, f"{m}-one", since, ["filenames"])) == []
        assert ids_of(await search(client, f"{m}-renamed", since, ["filenames"])) == [gist_id]


async def test_two_changes_within_one_second_are_both_seen(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_arg(datetime.now(timezone.utc))
    filename = f"{m}.txt"
    gist_id = og.create({filename: f"v1-{m}\n"})
    handle = live_server(extra=DEBUG_LOG)
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        await search(client, m, since, ["content"])  # starts the connection
        for version in range(2, 6):
            # Change, read through the server, change again: the two changes may share one
            # updated_at second; the read in between must not be kept under it.
            patched = og.request("PATCH", f"/api/gists/{gist_id}", {"files": {filename: {"content": f"v{version}-{m}\n"}}})
            assert patched.status == 200, patched
            seen = await search(client, f"v{version}-{m}", since, ["content"])
            assert ids_of(seen) == [gist_id], (version, seen)
            patched = og.request(
                "PATCH", f"/api/gists/{gist_id}", {"files": {filename: {"content": f"w{version}-{m}\n"}}}
            )
            assert patched.status == 200, patched
            assert og.files(gist_id) == {filename: f"w{version}-{m}\n"}
            seen = await search(client, f"w{version}-{m}", since, ["content"])
            assert ids_of(seen) == [gist_id], (version, seen)
            assert ids_of(await search(client, f"v{version}-{m}", since, ["content"])) == []


async def test_the_servers_own_writes_drop_what_they_touch(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_arg(datetime.now(timezone.utc))
    filename = f"{m}.txt"
    gist_id = og.create({filename: f"before-{m}\n"})
    first_sha = og.gist(gist_id)["commits"][0]["version"]
    time.sleep(SETTLE_SECONDS)
    handle = live_server(extra=DEBUG_LOG)
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        assert ids_of(await search(client, f"before-{m}", since, ["content"])) == [gist_id]
        # A revision read by full sha: kept, and the same bytes whatever happens later.
        result = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": filename, "sha": first_sha})
        assert not result.is_error, text_of(result)
        assert result.structured_content["content"] == f"before-{m}\n"

        # A private gist stays private: update_gist asks nothing.
        result = await client.call_tool(
            "update_gist",
            {"gist_id": gist_id, "file_ops": [{"op": "write", "filename": filename, "content": f"after-{m}\n"}]},
        )
        assert not result.is_error, text_of(result)
        assert og.files(gist_id) == {filename: f"after-{m}\n"}, "Opengist does not hold the update"
        assert ids_of(await search(client, f"before-{m}", since, ["content"])) == []
        assert ids_of(await search(client, f"after-{m}", since, ["content"])) == [gist_id]

        # The old revision still reads as it was (Opengist agrees), the latest as it is now.
        old = og.get(f"/api/gists/{gist_id}/{first_sha}").body["files"][filename]["content"]
        result = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": filename, "sha": first_sha})
        assert result.structured_content["content"] == old == f"before-{m}\n"
        result = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": filename})
        assert result.structured_content["content"] == f"after-{m}\n"

        # Deleted through Opengist: the search stops finding it (the list no longer has it).
        assert og.delete(gist_id) == 204
        assert not og.exists(gist_id)
        assert ids_of(await search(client, f"after-{m}", since, ["content"])) == []


def topic_lookups(stderr_path: Path, owner: str) -> int:
    """How many times the server read the owner's list to learn a gist's topics so far."""
    text = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    return len(re.findall(rf"/api/users/{owner}/gists(?![/0-9a-zA-Z])", text))


async def topics_of(client, gist_id: str) -> list[str]:
    result = await client.call_tool("get_gist", {"gist_id": gist_id})
    assert not result.is_error, text_of(result)
    return result.structured_content["gist"]["topics"]


def listed_topics(og, gist_id: str) -> list[str]:
    """The topics Opengist holds, from its list (its single-gist answer never carries them)."""
    for page in range(1, 50):
        response = og.get(f"/api/gists?per_page=100&page={page}")
        assert response.status == 200, response
        for gist in response.body:
            if gist["id"] == gist_id:
                return gist["topics"]
        if len(response.body) < 100:
            break
    raise AssertionError(f"gist {gist_id} is not in its owner's list")


async def test_get_gist_topics_are_kept_and_follow_every_change(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    gist_id = og.create({f"{m}.txt": f"topics {m}\n"}, title=f"topics {m}")
    set_topics(opengist_env, "admin", "admin", og.gist(gist_id), ["alpha", "beta"])
    assert listed_topics(og, gist_id) == ["alpha", "beta"]
    time.sleep(SETTLE_SECONDS)
    handle = live_server(extra=DEBUG_LOG)
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        assert await topics_of(client, gist_id) == ["alpha", "beta"]
        lookups = topic_lookups(handle.stderr_path, "admin")
        assert lookups >= 1, "the first get_gist did not read the list for the topics"
        # Unchanged: the topics come from the cache, the gist itself from Opengist.
        reads = detail_reads(handle.stderr_path, gist_id)
        assert await topics_of(client, gist_id) == ["alpha", "beta"]
        assert topic_lookups(handle.stderr_path, "admin") == lookups, "unchanged topics were read again"
        assert detail_reads(handle.stderr_path, gist_id) == reads + 1, "get_gist must always read the gist"

        # Changed directly in Opengist, twice in quick succession (likely within one second,
        # sharing one updated_at): each get_gist shows what Opengist holds at that moment.
        for topics in (["gamma"], ["delta", "epsilon"], []):
            set_topics(opengist_env, "admin", "admin", og.gist(gist_id), topics)
            assert listed_topics(og, gist_id) == topics
            assert await topics_of(client, gist_id) == topics


async def test_a_listed_page_answers_get_gist_topics(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    gist_id = og.create({f"{m}.txt": f"listed {m}\n"}, title=f"listed {m}")
    set_topics(opengist_env, "admin", "admin", og.gist(gist_id), ["listed"])
    time.sleep(SETTLE_SECONDS)
    handle = live_server(extra=DEBUG_LOG)
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        result = await client.call_tool("list_gists", {"per_page": 100})
        assert not result.is_error, text_of(result)
        shown = [g for g in result.structured_content["gists"] if g["id"] == gist_id]
        assert shown and shown[0]["topics"] == ["listed"], result.structured_content
        assert await topics_of(client, gist_id) == ["listed"] == listed_topics(og, gist_id)
        assert topic_lookups(handle.stderr_path, "admin") == 0, "the list just read already showed the topics"


def git_head_reads(stderr_path: Path) -> int:
    """How many times the server asked git for a gist's head (smart-HTTP ref advertisement)."""
    text = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    return text.count("opengist git request")


async def test_a_head_git_had_to_tell_is_asked_once_per_change(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    filename = f"{m}.txt"
    gist_id = og.create({filename: f"head {m}\n"}, title=f"head {m}")
    # A title change moves updated_at without a commit: the newest listed commit is older
    # than the gist's updated_at, which an unlisted head commit would explain too.
    time.sleep(1.2)
    patched = og.request("PATCH", f"/api/gists/{gist_id}", {"title": f"head {m} renamed"})
    assert patched.status == 200, patched
    held = og.gist(gist_id)
    head = held["commits"][0]["version"]
    assert held["commits"][0]["committed_at"] < held["updated_at"], held
    time.sleep(SETTLE_SECONDS)
    handle = live_server(extra=DEBUG_LOG)
    since = since_arg(datetime.now(timezone.utc) - timedelta(seconds=30))
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        # A search reads only files: it never asks git.
        assert ids_of(await search(client, f"head {m}", since, ["content"])) == [gist_id]
        assert git_head_reads(handle.stderr_path) == 0, "a search asked git for a head"

        async def revision() -> str:
            result = await client.call_tool("get_gist", {"gist_id": gist_id})
            assert not result.is_error, text_of(result)
            return result.structured_content["revision"]

        assert await revision() == head
        asked = git_head_reads(handle.stderr_path)
        assert asked == 1, f"git was asked {asked} times for the first read"
        assert await revision() == head
        assert git_head_reads(handle.stderr_path) == asked, "an unchanged gist's head was asked again"

        # A new commit made directly in Opengist is seen at once.
        patched = og.request("PATCH", f"/api/gists/{gist_id}", {"files": {filename: {"content": f"moved {m}\n"}}})
        assert patched.status == 200, patched
        new_head = og.gist(gist_id)["commits"][0]["version"]
        assert new_head != head
        assert await revision() == new_head
        result = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": filename})
        assert not result.is_error, text_of(result)
        assert result.structured_content["content"] == f"moved {m}\n" == og.files(gist_id)[filename]


def revision_reads(stderr_path: Path, gist_id: str, sha: str) -> int:
    """How many times the server read this gist at revision `sha` (GET /api/gists/<id>/<sha>)."""
    text = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    return len(re.findall(rf"/api/gists/{gist_id}/{sha}(?![0-9a-f/])", text))


def commit_pages(stderr_path: Path, gist_id: str) -> int:
    """How many pages of this gist's commits the server asked for (its re-validations)."""
    text = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    return len(re.findall(rf"/api/gists/{gist_id}/commits", text))


async def test_a_deleted_gist_is_not_served_from_the_cache_at_a_revision(opengist_env, live_server, era):
    """A revision never changes, so the cache keeps it; whether Opengist still shows the gist
    does change. `get_gist_file` with `sha` and `resources/read` at a revision re-validate
    every cached read: once the owner deleted the gist, both say it is not found."""
    from mcp.shared.exceptions import MCPError

    m = marker()
    og = api(opengist_env)
    filename = f"{m}-kept.txt"
    content = f"revision content {m}\n"
    gist_id = og.create({filename: content}, title=f"cache revision {m}")
    sha = og.commits(gist_id)[0]["version"]
    assert len(sha) == 40, sha
    handle = live_server(extra={**DEBUG_LOG, "OPENGIST_MCP_RESOURCES": "true"})
    resource = f"opengist://gists/{gist_id}/{sha}/{filename}"
    args = {"gist_id": gist_id, "filename": filename, "sha": sha}
    async with connect(target_of(handle), era, Dialog("decline")) as client:
        # The positive control: read at the revision, then again from the cache (Opengist is
        # not asked for the revision a second time), each re-validated with a page of commits.
        for _ in range(2):
            result = await client.call_tool("get_gist_file", args)
            assert not result.is_error, text_of(result)
            assert result.structured_content["content"] == content
        assert revision_reads(handle.stderr_path, gist_id, sha) == 1, "the second read did not come from the cache"
        assert commit_pages(handle.stderr_path, gist_id) >= 1, "a cached read was not re-validated"
        read = await client.read_resource(resource)
        assert read.contents[0].text == content
        assert revision_reads(handle.stderr_path, gist_id, sha) == 1

        assert og.delete(gist_id) == 204
        assert not og.exists(gist_id), "Opengist still has the deleted gist"

        result = await client.call_tool("get_gist_file", args)
        assert result.is_error, f"a deleted gist was served: {text_of(result)}"
        assert f"gist {gist_id} does not exist or is not visible to this token" in text_of(result), text_of(result)
        with pytest.raises(MCPError) as caught:
            await client.read_resource(resource)
        assert caught.value.code in (-32002, -32602), caught.value
        assert content not in str(caught.value)
