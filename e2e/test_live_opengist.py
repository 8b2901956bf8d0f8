"""Opengist's own behaviour, as a user meets it through the server (marker `opengist`):
another account's gists, tokens with fewer scopes or none that work, topics, a gist with
more than ten files, liked unlisted gists, and Opengist going away in the middle of a
session.

What the server does about some of these before asking a person is tested in
test_live_defects.py; the tests here hold what reads and writes do.
"""

from __future__ import annotations

import pytest
from live import DIAGONAL, TcpProxy, WebSession, api, marker, ok, refused, session, since_now
from support import Dialog

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

WRONG_TOKEN = "og_" + "0" * 64


# --------------------------------------------------------------------------- another account


@DIAGONAL
async def test_another_accounts_gists_read_fork_like_but_not_narrow(opengist_env, live_server, era):
    other = api(opengist_env, "user2")
    public = other.create({"p.txt": "p\n"}, "public", title=marker())
    unlisted = other.create({"u.txt": "u\n"}, "unlisted", title=marker())
    private = other.create({"q.txt": "q\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        shown = await ok(client, "get_gist", {"gist_id": public})
        by_link = await ok(client, "get_gist", {"gist_id": unlisted})
        await refused(client, "get_gist", {"gist_id": private}, "does not exist or is not visible")
        await refused(client, "get_gist_file", {"gist_id": private, "filename": "q.txt"}, "not visible")
        await refused(
            client, "update_gist", {"gist_id": public, "visibility": "private"}, "belongs to another account", "fork"
        )
    assert shown["gist"]["owner"] == opengist_env["OPENGIST_E2E_USER2"] and shown["files"][0]["content"] == "p\n"
    assert by_link["files"][0]["content"] == "u\n", "an unlisted gist is readable with its link"
    assert dialog.calls == [], "narrowing another account's gist asked"
    assert other.gist(public)["visibility"] == "public"
    assert other.gist(private)["visibility"] == "private"


# --------------------------------------------------------------------------- tokens


@DIAGONAL
async def test_read_only_token_reads_everything_and_writes_nothing(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    private = og.create({"a.txt": "private\n"}, "private", title=m)
    parent = api(opengist_env, "user2").create({"p.txt": "p\n"}, "public", title=marker())
    async with session(live_server, era, Dialog("accept"), token="read") as client:
        shown = await ok(client, "get_gist", {"gist_id": private})
        listed = await ok(client, "list_gists", {"since": since, "per_page": 100})
        me = await ok(client, "get_user", {})
        await refused(
            client,
            "create_gist",
            {"files": [{"filename": "n.txt", "content": "n\n"}], "visibility": "private", "title": f"{m} new"},
            "gist:write",
            "access-tokens",
        )
        await refused(client, "fork_gist", {"gist_id": parent}, "gist:write")
        await refused(client, "set_gist_like", {"gist_id": parent, "liked": True}, "user:write")
        like = await ok(client, "check_gist_like", {"gist_id": parent})
    assert shown["files"][0]["content"] == "private\n"
    assert me["username"] == "admin"
    assert private in {g["id"] for g in listed["gists"]}, "gist:read lists the owner's private gists"
    assert all(g["owner"] == "admin" for g in listed["gists"])
    assert og.titled(f"{m} new") == [] and og.forks(parent) == [] and not og.liked(parent)
    assert like["liked"] is False and like["visible"] is True


@DIAGONAL
async def test_token_without_gist_scope_sees_public_only(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    public = og.create({"a.txt": "a\n"}, "public", title=f"{m} public")
    private = og.create({"b.txt": "b\n"}, "private", title=f"{m} private")
    async with session(live_server, era, token="nogist") as client:
        listed = await ok(client, "list_gists", {"since": since, "per_page": 100})
        await refused(client, "get_gist", {"gist_id": private}, "not visible")
        await refused(
            client,
            "create_gist",
            {"files": [{"filename": "n.txt", "content": "n\n"}], "visibility": "private", "title": f"{m} new"},
            "gist:write",
        )
        me = await ok(client, "get_user", {})
    seen = {g["id"] for g in listed["gists"]}
    assert public in seen and private not in seen, "Opengist hides private gists from a token without gist:read"
    assert "gist:read" in listed["note"], listed
    assert me["username"] == "admin"
    assert og.titled(f"{m} new") == []


@DIAGONAL
async def test_wrong_token_is_named_and_nothing_is_written(opengist_env, live_server, era):
    m = marker()
    public = api(opengist_env).create({"a.txt": "a\n"}, "public", title=marker())
    async with session(live_server, era, extra={"OPENGIST_TOKEN": WRONG_TOKEN}) as client:
        for name, args in (
            ("list_gists", {}),
            ("get_gist", {"gist_id": public}),
            ("get_user", {}),
            ("create_gist", {"files": [{"filename": "n.txt", "content": "n\n"}], "visibility": "private", "title": m}),
            ("set_gist_like", {"gist_id": public, "liked": True}),
        ):
            text = await refused(client, name, args, "rejected the access token", "401", "access-tokens")
            assert WRONG_TOKEN not in text, "the token was echoed"
    assert api(opengist_env).titled(m) == []
    assert api(opengist_env).gist(public)["like_count"] == 0


@pytest.mark.parametrize("transport", ["stdio"])
async def test_url_without_token_does_what_its_warning_says(opengist_env, live_server, transport):
    from support import target_of
    from support import connect

    public = api(opengist_env).create({"a.txt": "anon\n"}, "public", title=marker())
    private = api(opengist_env).create({"b.txt": "b\n"}, "private", title=marker())
    handle = live_server(token=None)
    async with connect(target_of(handle), "legacy") as client:
        shown = await client.call_tool("get_gist", {"gist_id": public})
        hidden = await client.call_tool("get_gist", {"gist_id": private})
    assert hidden.is_error, "a private gist was shown without a token"
    warned = handle.stderr()
    promises_reads = "only public gists can be read" in warned
    assert promises_reads != ("every tool call answers with setup instructions" in warned), warned
    if promises_reads:
        assert not shown.is_error and shown.structured_content["files"][0]["content"] == "anon\n", shown


# --------------------------------------------------------------------------- topics, many files


@DIAGONAL
async def test_topics_show_in_lists_and_survive_a_read(opengist_env, live_server, era):
    m = marker()
    since = since_now()
    gist_id = WebSession(opengist_env).create({"t.txt": "t\n"}, [m, "rust"], title=f"{m} topics")
    async with session(live_server, era) as client:
        listed = await ok(client, "list_gists", {"since": since, "per_page": 100})
        await ok(client, "get_gist", {"gist_id": gist_id})
        public = await ok(client, "list_gists", {"scope": "public", "since": since, "per_page": 100})
    for listing in (listed, public):
        (summary,) = [g for g in listing["gists"] if g["id"] == gist_id]
        assert sorted(summary["topics"]) == sorted([m, "rust"]), summary
    held = [g for g in api(opengist_env).mine() if g["id"] == gist_id][0]
    assert sorted(held["topics"]) == sorted([m, "rust"]), "a read changed the topics"


@DIAGONAL
async def test_gist_with_twelve_files_reads_and_writes(opengist_env, live_server, era):
    """Opengist lists no commit for a commit that touches 11 or more files; reading it whole and writing to it work today."""
    files = {f"f{i:02d}.txt": f"content {i}\n" for i in range(12)}
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        created = await ok(
            client,
            "create_gist",
            {"files": [{"filename": n, "content": c} for n, c in files.items()], "visibility": "private", "title": marker()},
        )
        gist_id = created["gist"]["id"]
        og = api(opengist_env)
        assert og.files(gist_id) == files
        shown = await ok(client, "get_gist", {"gist_id": gist_id})
        assert {f["filename"]: f["content"] for f in shown["files"]} == files
        assert shown["files_truncated"] is False
        await ok(client, "update_gist", {"gist_id": gist_id, "file_ops": [{"op": "write", "filename": "f03.txt", "content": "new\n"}]})
        assert og.files(gist_id) == {**files, "f03.txt": "new\n"}
        await ok(client, "delete_gist", {"gist_id": gist_id})
    assert not og.exists(gist_id)
    assert len(dialog.calls) == 1


async def test_liking_an_unlisted_gist_of_another_user(opengist_env, live_server, era):
    unlisted = api(opengist_env, "user2").create({"u.txt": "u\n"}, "unlisted", title=marker())
    og = api(opengist_env)
    async with session(live_server, era) as client:
        done = await ok(client, "set_gist_like", {"gist_id": unlisted, "liked": True})
        check = await ok(client, "check_gist_like", {"gist_id": unlisted})
        assert og.liked(unlisted) and og.gist(unlisted)["like_count"] == 1
        undone = await ok(client, "set_gist_like", {"gist_id": unlisted, "liked": False})
    assert done == {"gist_id": unlisted, "liked": True, "changed": True}
    assert check == {"gist_id": unlisted, "liked": True, "visible": True}
    assert undone["changed"] is True and not og.liked(unlisted)


# --------------------------------------------------------------------------- Opengist goes away


@DIAGONAL
async def test_opengist_stopped_mid_session(opengist_env, live_server, era):
    """Opengist goes away between two calls of one session (a proxy of this test's own is
    cut; the shared instance keeps running for the other tests) and comes back."""
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    m = marker()
    with TcpProxy(opengist_env["OPENGIST_E2E_URL"]) as proxy:
        dialog = Dialog("accept")
        async with session(live_server, era, dialog, extra={"OPENGIST_URL": proxy.url}) as client:
            before = await ok(client, "get_gist", {"gist_id": gist_id})
            proxy.cut()
            for name, args in (
                ("list_gists", {}),
                ("get_gist", {"gist_id": gist_id}),
                ("search_gists", {"query": "x", "fields": ["title"]}),
                ("create_gist", {"files": [{"filename": "n.txt", "content": "n\n"}], "visibility": "private", "title": m}),
                ("delete_gist", {"gist_id": gist_id}),
                ("set_gist_like", {"gist_id": gist_id, "liked": True}),
            ):
                result = await client.call_tool(name, args)
                text = result.content[0].text if result.content else ""
                assert result.is_error, f"{name} succeeded with Opengist gone: {text}"
                assert "could not connect" in text or "stopped early" in text or "failed" in text, text
                if name != "search_gists":
                    assert "connection refused" in text and "OPENGIST_URL" in text, text
            assert dialog.calls == [], "a call that cannot reach Opengist asked a person"
            proxy.restore()
            after = await ok(client, "get_gist", {"gist_id": gist_id})
    assert before["files"] == after["files"]
    assert og.exists(gist_id) and og.titled(m) == [] and not og.liked(gist_id)


WRITES_WHOSE_ANSWER_IS_LOST = {
    "create_gist": lambda gist_id, m: {
        "files": [{"filename": "n.txt", "content": "n\n"}],
        "visibility": "private",
        "title": m,
    },
    "update_gist": lambda gist_id, m: {"gist_id": gist_id, "title": m},
    "delete_gist": lambda gist_id, m: {"gist_id": gist_id},
}


@DIAGONAL
@pytest.mark.parametrize("tool", sorted(WRITES_WHOSE_ANSWER_IS_LOST))
async def test_write_whose_answer_is_lost_is_not_try_again(opengist_env, live_server, era, tool):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    m = marker()
    with TcpProxy(opengist_env["OPENGIST_E2E_URL"]) as proxy:
        async with session(live_server, era, Dialog("accept"), extra={"OPENGIST_URL": proxy.url}) as client:
            proxy.drop_write_replies = True
            result = await client.call_tool(tool, WRITES_WHOSE_ANSWER_IS_LOST[tool](gist_id, m))
    text = result.content[0].text if result.content else ""
    # What Opengist holds: the write happened.
    if tool == "create_gist":
        assert len(og.titled(m)) == 1
    elif tool == "update_gist":
        assert og.gist(gist_id)["title"] == m
    else:
        assert not og.exists(gist_id)
    assert "try again" not in text.lower(), text
    assert result.is_error is False or "unknown" in text.lower() or "may have been" in text.lower(), text
