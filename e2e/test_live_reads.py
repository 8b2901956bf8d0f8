"""The eight reading tools against a REAL Opengist (marker `opengist`), through the Python
`mcp` client over stdio and streamable HTTP, in both eras.

Each test makes its own gists (titles carry a `marker()`), directly through Opengist's REST
API, and compares what the tool shows with what Opengist holds. Other tests run in
parallel against the same instance, so a list is checked for what must and must not be in
it, never for being exactly one test's gists.
"""

from __future__ import annotations

import json
import time

import pytest
from live import DIAGONAL, WebSession, api, follow, marker, ok, refused, search_until_found, session, since_now

pytestmark = [pytest.mark.anyio, pytest.mark.opengist, DIAGONAL]


def ids(listing: dict, key: str = "gists") -> list[str]:
    return [g["id"] for g in listing[key]]


async def all_pages(client, args: dict) -> list[str]:
    """Every id list_gists shows, following `next_call` to the end."""
    seen: list[str] = []
    tool = "list_gists"
    for _ in range(50):
        page = await ok(client, tool, args)
        assert len(page["gists"]) <= page["per_page"], page
        seen += ids(page)
        if not page["has_more"]:
            assert page.get("next_call") is None, page
            return seen
        tool, args = follow(page["next_call"])
        assert tool == "list_gists", page["next_call"]
    raise AssertionError("list_gists never reached the last page")


# --------------------------------------------------------------------------- list_gists


async def test_list_mine_pages_through_since(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    # A second apart: Opengist orders by updated_at in whole seconds, and gists of one second
    # may come in another order from one request to the next.
    made = set()
    for i in range(3):
        made.add(og.create({f"{m}-{i}.txt": f"{m} {i}\n"}, "private", title=f"{m} {i}"))
        time.sleep(1.1)
    async with session(live_server, era) as client:
        first = await ok(client, "list_gists", {"since": since, "per_page": 2})
        assert first["page"] == 1 and first["per_page"] == 2, first
        assert len(first["gists"]) == 2 and first["has_more"], first
        assert first["next_call"], first
        # Other tests make, change and delete gists in the same window meanwhile (some within
        # one second, whose order Opengist may change), and no walk over numbered pages is exact
        # while they do: what is checked is this test's own gists, in a walk no such change
        # disturbed (up to three walks).
        for _ in range(3):
            seen = await all_pages(client, {"since": since, "per_page": 2})
            ours = [gist for gist in seen if gist in made]
            if len(ours) == len(set(ours)) and made <= set(seen):
                break
    assert len(ours) == len(set(ours)), f"a gist shown on two pages: {seen}"
    assert made <= set(seen), f"missing {made - set(seen)}"
    held = {g["id"]: g for g in og.mine()}
    for gist_id in made:
        assert held[gist_id]["visibility"] == "private"


async def test_a_gist_made_between_two_pages_shifts_nothing_twice(opengist_env, live_server, era):
    """Opengist pages by number: a gist made while a client pages pushes the next page down by
    one. The next page resumes after the last gist listed (`after` in next_call), so nothing is
    listed twice; the gist made meanwhile is newer than the first page and is not on this
    walk, as in any newest-first listing. Opengist orders by `updated_at` in whole seconds, so
    the gists are made a second apart: their order is then Opengist's, not a tie's."""
    m = marker()
    og = api(opengist_env)
    since = since_now()
    made = []
    for i in range(4):
        made.append(og.create({f"{m}-{i}.txt": f"{m} {i}\n"}, "private", title=f"{m} {i}"))
        time.sleep(1.1)
    async with session(live_server, era) as client:
        # Other tests change gists in the same window too; up to three walks, each with a gist
        # made mid-walk, until one no other change disturbed.
        for _ in range(3):
            first = await ok(client, "list_gists", {"since": since, "per_page": 2})
            tool, args = follow(first["next_call"])
            assert args["after"] == ids(first)[-1], first["next_call"]
            late = og.create({f"{m}-late.txt": "late\n"}, "private", title=f"{m} late")
            seen = ids(first) + await all_pages(client, args)
            # The control: the shift happened: the late gist, made after every gist the walk
            # began with, stands before all of this test's gists.
            now = await all_pages(client, {"since": since, "per_page": 100})
            assert now.index(late) < min(now.index(gist) for gist in made), (made, now)
            ours = [gist for gist in seen if gist in made]
            if len(ours) == len(set(ours)) and set(made) <= set(seen):
                break
            time.sleep(1.1)
    assert len(ours) == len(set(ours)), f"a gist shown on two pages: {seen}"
    assert set(made) <= set(seen), f"missing {set(made) - set(seen)}"


async def test_list_summary_matches_opengist(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    gist_id = og.create({"a.txt": "x\n"}, "unlisted", title=f"{m} title", description=f"{m} description")
    async with session(live_server, era) as client:
        listing = await ok(client, "list_gists", {"since": since, "per_page": 100})
    (shown,) = [g for g in listing["gists"] if g["id"] == gist_id]
    held = og.gist(gist_id)
    assert shown["title"] == held["title"] == f"{m} title"
    assert shown["description"] == held["description"]
    assert shown["visibility"] == "unlisted" and shown["owner"] == "admin"
    assert shown["html_url"] == held["html_url"]
    assert listing["untrusted"] is True and listing["source"] == "opengist"


async def test_list_public_scope_leaves_out_private_and_unlisted(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    public = og.create({"p.txt": "p\n"}, "public", title=f"{m} public")
    private = og.create({"q.txt": "q\n"}, "private", title=f"{m} private")
    unlisted = og.create({"u.txt": "u\n"}, "unlisted", title=f"{m} unlisted")
    async with session(live_server, era) as client:
        seen = await all_pages(client, {"scope": "public", "since": since, "per_page": 100})
    assert public in seen
    assert private not in seen and unlisted not in seen


async def test_list_another_users_gists_shows_their_public_ones(opengist_env, live_server, era):
    m = marker()
    other = api(opengist_env, "user2")
    since = since_now()
    public = other.create({"p.txt": "p\n"}, "public", title=f"{m} public")
    private = other.create({"q.txt": "q\n"}, "private", title=f"{m} private")
    async with session(live_server, era) as client:
        seen = await all_pages(client, {"username": opengist_env["OPENGIST_E2E_USER2"], "since": since})
        mine = await all_pages(client, {"since": since, "per_page": 100})
    assert public in seen and private not in seen
    assert public not in mine, "user2's gist listed among the token owner's own"


async def test_list_liked_and_forked_scopes(opengist_env, live_server, era):
    m = marker()
    other = api(opengist_env, "user2")
    og = api(opengist_env)
    liked = other.create({"l.txt": "l\n"}, "public", title=f"{m} liked")
    not_liked = other.create({"n.txt": "n\n"}, "public", title=f"{m} not liked")
    forked_from = other.create({"f.txt": "f\n"}, "public", title=f"{m} forked")
    og.toggle_like(liked)
    fork = og.fork(forked_from)
    async with session(live_server, era) as client:
        liked_list = await all_pages(client, {"scope": "liked", "per_page": 100})
        forked_list = await all_pages(client, {"scope": "forked", "per_page": 100})
    assert liked in liked_list and not_liked not in liked_list
    assert fork in forked_list and forked_from not in forked_list, "`forked` lists the token owner's forks"
    assert og.liked(liked) and not og.liked(not_liked)


async def test_list_rejects_a_bad_since_naming_the_format(live_server, era):
    async with session(live_server, era) as client:
        await refused(client, "list_gists", {"since": "yesterday"}, "since", "RFC 3339")


# --------------------------------------------------------------------------- search_gists


async def test_search_titles_descriptions_and_owners(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    by_title = og.create({"a.txt": "a\n"}, "private", title=f"alpha {m} omega")
    by_description = og.create({"b.txt": "b\n"}, "private", title="plain", description=f"about {m} here")
    other = api(opengist_env, "user2").create({"c.txt": "c\n"}, "public", title=f"{m} by user2")
    async with session(live_server, era) as client:
        found = await ok(client, "search_gists", {"query": m, "fields": ["title", "description"], "since": since})
        by_owner = await ok(
            client,
            "search_gists",
            {"query": opengist_env["OPENGIST_E2E_USER2"], "fields": ["owner"], "scope": "public", "since": since, "limit": 100},
        )
    matches = {g["id"]: g["matched_fields"] for g in found["matches"]}
    assert matches.get(by_title) == ["title"], found
    assert matches.get(by_description) == ["description"], found
    assert other not in matches, "search over `mine` found another user's gist"
    assert other in {g["id"] for g in by_owner["matches"]}, by_owner
    assert all(g["owner"] == opengist_env["OPENGIST_E2E_USER2"] for g in by_owner["matches"]), by_owner
    assert found["untrusted"] is True and found["stopped_early"] is False, found


async def test_search_filenames_and_content_with_snippets(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    named = og.create({f"{m}.py": "print('hi')\n"}, "private", title="untitled one")
    inside = og.create({"notes.md": f"line one\nthe {m} is here\nline three\n"}, "private", title="untitled two")
    async with session(live_server, era) as client:
        default = await search_until_found(client, {"query": m, "since": since})
        content = await search_until_found(client, {"query": m, "fields": ["content"], "since": since})
    assert {g["id"] for g in default["matches"]} == {named}, "default fields: filenames, not content"
    assert default["matches"][0]["matched_fields"] == ["filenames"]
    (hit,) = content["matches"]
    assert hit["id"] == inside and hit["matched_fields"] == ["content"], content
    assert hit["snippets"] == [{"filename": "notes.md", "line_number": 2, "text": f"the {m} is here"}], hit
    assert content["scanned"]["content_bytes_read"] > 0, content


async def test_a_search_without_match_says_the_contents_were_not_searched(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    inside = og.create({"notes.md": f"the {m} is here\n"}, "private", title="untitled")
    async with session(live_server, era) as client:
        default = await ok(client, "search_gists", {"query": m, "since": since})
        content = await search_until_found(client, {"query": m, "fields": ["title", "content"], "since": since})
    # The word is in the gist's file, which the default fields do not search: no match, and
    # the result says so and how to search it.
    assert default["matches"] == [], default
    (note,) = [n for n in default.get("notes", []) if "contents were not searched" in n]
    assert note.startswith("No match in title, description, topics, owner, filenames: "), note
    assert 'fields including "content"' in note, note
    # Positive control: with content, found, and nothing said of unsearched contents.
    assert [g["id"] for g in content["matches"]] == [inside], content
    assert not [n for n in content.get("notes", []) if "contents were not searched" in n], content


async def test_search_topics(opengist_env, live_server, era):
    m = marker()
    since = since_now()
    gist_id = WebSession(opengist_env).create({"t.txt": "t\n"}, [m, "other-topic"], title="topics only")
    async with session(live_server, era) as client:
        found = await ok(client, "search_gists", {"query": m, "fields": ["topics"], "since": since})
        listed = await ok(client, "list_gists", {"since": since, "per_page": 100})
    assert [(g["id"], g["matched_fields"]) for g in found["matches"]] == [(gist_id, ["topics"])], found
    (summary,) = [g for g in listed["gists"] if g["id"] == gist_id]
    assert sorted(summary["topics"]) == sorted([m, "other-topic"]), summary


async def test_search_limit_stops_early_and_next_call_goes_on(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    made = {og.create({"x.txt": "x\n"}, "private", title=f"{m} {i}") for i in range(3)}
    async with session(live_server, era) as client:
        first = await ok(client, "search_gists", {"query": m, "fields": ["title"], "since": since, "limit": 1})
        assert len(first["matches"]) == 1 and first["stopped_early"] is True, first
        assert "limit" in first["stop_reason"], first
        found = {first["matches"][0]["id"]}
        call = first["next_call"]
        for _ in range(5):
            tool, args = follow(call)
            assert tool == "search_gists" and args["query"] == m, call
            more = await ok(client, tool, args)
            found |= {g["id"] for g in more["matches"]}
            call = more.get("next_call")
            if not call:
                break
    assert found == made, f"next_call lost or repeated gists: {found} vs {made}"


async def test_search_next_call_survives_deletions_before_it(opengist_env, live_server, era):
    """Lists are newest first, so a gist deleted ahead of where a search stopped shifts the
    rest back by one: a resume by position alone would pass over a match. `next_call` names
    the last gist examined, and the search goes on right after it."""
    m = marker()
    og = api(opengist_env)
    since = since_now()
    made = {og.create({"x.txt": "x\n"}, "private", title=f"{m} {i}") for i in range(3)}
    # Opengist keeps updated_at in whole seconds: a second later, this gist is listed ahead of
    # the three (setup, not evidence).
    time.sleep(1.1)
    ahead = og.create({"x.txt": "x\n"}, "private", title=f"other {marker()}")
    async with session(live_server, era) as client:
        first = await ok(client, "search_gists", {"query": m, "fields": ["title"], "since": since, "limit": 1})
        found = [g["id"] for g in first["matches"]]
        assert len(found) == 1 and found[0] in made, first
        tool, args = follow(first["next_call"])
        assert args.get("after") == found[0], first["next_call"]
        deleted = og.request("DELETE", f"/api/gists/{ahead}")
        assert deleted.status in (200, 204), deleted
        assert og.request("GET", f"/api/gists/{ahead}").status == 404
        for _ in range(5):
            more = await ok(client, tool, args)
            found += [g["id"] for g in more["matches"]]
            if not more.get("next_call"):
                break
            tool, args = follow(more["next_call"])
    assert sorted(found) == sorted(made), f"a deletion made next_call pass over or repeat a gist: {found}"


async def test_search_budgets_are_bounded_and_reported(live_server, era):
    async with session(live_server, era) as client:
        result = await ok(client, "search_gists", {"query": marker(), "fields": ["title"], "max_pages": 1})
        await refused(client, "search_gists", {"query": "x", "max_pages": 0}, "max_pages")
        await refused(client, "search_gists", {"query": "x", "max_pages": 21}, "max_pages")
        await refused(client, "search_gists", {"query": "x", "limit": 1000}, "limit")
        await refused(client, "search_gists", {"query": "x", "fields": []}, "fields")
    assert result["matches"] == [] and result["scanned"]["pages"] == 1, result
    assert result["scanned"]["gists_with_files_read"] == 0, "a title-only search read files"


# --------------------------------------------------------------------------- get_gist


async def test_get_gist_contents_commits_forks_clone_urls(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "alpha\n", "b.py": "print(2)\n"}, "public", title=f"{m}")
    fork = api(opengist_env, "user2").fork(gist_id)
    async with session(live_server, era) as client:
        shown = await ok(
            client,
            "get_gist",
            {"gist_id": gist_id, "include_commits": True, "include_forks": True, "include_clone_urls": True},
        )
    held = og.gist(gist_id)
    assert {f["filename"]: f["content"] for f in shown["files"]} == og.files(gist_id)
    assert shown["revision"] == held["commits"][0]["version"]
    assert [c["version"] for c in shown["commits"]] == [c["version"] for c in held["commits"]]
    assert [f["id"] for f in shown["forks"]] == [fork]
    assert shown["clone_urls"]["http"].endswith(f"{gist_id}.git"), shown["clone_urls"]
    assert shown["gist"]["fork_count"] == 1 and shown["untrusted"] is True


async def test_get_gist_caps_and_without_content(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"long.txt": "0123456789" * 50}, "private", title=marker())
    async with session(live_server, era) as client:
        capped = await ok(client, "get_gist", {"gist_id": gist_id, "max_file_bytes": 100})
        bare = await ok(client, "get_gist", {"gist_id": gist_id, "include_content": False})
        (note,) = capped["notes"]
        # The note names the call that gets the rest; that call works and gives the rest.
        assert "get_gist_file" in note and "offset=100" in note, note
        rest = await ok(
            client,
            "get_gist_file",
            {"gist_id": gist_id, "filename": "long.txt", "sha": capped["revision"], "offset": 100},
        )
    (file,) = capped["files"]
    assert file["truncated"] is True and file["content"] == ("0123456789" * 50)[:100] and file["size"] == 500
    assert file["content"] + rest["content"] == "0123456789" * 50
    (bare_file,) = bare["files"]
    assert bare_file.get("content") is None and bare_file["size"] == 500, bare_file


async def test_get_gist_at_an_older_sha(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "first\n"}, "private", title=marker())
    old = og.commits(gist_id)[0]["version"]
    og.update(gist_id, {"files": {"a.txt": {"content": "second\n"}}})
    async with session(live_server, era) as client:
        then = await ok(client, "get_gist", {"gist_id": gist_id, "sha": old})
        now = await ok(client, "get_gist", {"gist_id": gist_id})
        await refused(client, "get_gist", {"gist_id": gist_id, "sha": "not-a-sha"}, "sha")
    assert then["files"][0]["content"] == "first\n" and then["revision"] == old
    assert now["files"][0]["content"] == "second\n" and now["revision"] != old


async def test_get_gist_missing_says_not_visible_and_takes_links(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "x\n"}, "private", title=marker())
    link = f"{opengist_env['OPENGIST_E2E_URL']}/admin/{gist_id}"
    async with session(live_server, era) as client:
        by_link = await ok(client, "get_gist", {"gist_id": link})
        text = await refused(client, "get_gist", {"gist_id": "0" * 32}, "does not exist or is not visible")
        await refused(client, "get_gist", {"gist_id": f"https://elsewhere.example/admin/{gist_id}"}, "only links")
    assert by_link["gist"]["id"] == gist_id
    assert "deleted" not in text.lower()


# --------------------------------------------------------------------------- get_gist_file


async def test_get_gist_file_pages_join_to_the_file(opengist_env, live_server, era):
    og = api(opengist_env)
    body = "".join(f"line {i:05d}\n" for i in range(1000))  # 11000 bytes
    gist_id = og.create({"big.txt": body}, "private", title=marker())
    parts: list[str] = []
    async with session(live_server, era) as client:
        args = {"gist_id": gist_id, "filename": "big.txt", "max_bytes": 4096}
        for _ in range(10):
            window = await ok(client, "get_gist_file", args)
            parts.append(window["content"])
            assert window["bytes_returned"] == len(window["content"].encode())
            if not window["truncated"]:
                assert window.get("next_offset") is None, window
                break
            tool, args = follow(window["next_call"])
            assert tool == "get_gist_file" and args["offset"] == window["next_offset"], window
    assert "".join(parts) == body == og.files(gist_id)["big.txt"]
    assert len(parts) == 3


async def test_get_gist_file_unicode_name_and_content(opengist_env, live_server, era):
    og = api(opengist_env)
    name = "café ünïcødé 文件.txt"
    content = "naïve 日本語 🙂 text\n" * 3
    gist_id = og.create({name: content}, "private", title=marker())
    async with session(live_server, era) as client:
        window = await ok(client, "get_gist_file", {"gist_id": gist_id, "filename": name})
        shown = await ok(client, "get_gist", {"gist_id": gist_id})
    assert window["content"] == content == og.files(gist_id)[name]
    assert window["filename"] == name and shown["files"][0]["filename"] == name


async def test_get_gist_file_never_splits_a_character(opengist_env, live_server, era):
    og = api(opengist_env)
    content = "é" * 3000  # 2 bytes each
    gist_id = og.create({"e.txt": content}, "private", title=marker())
    async with session(live_server, era) as client:
        first = await ok(client, "get_gist_file", {"gist_id": gist_id, "filename": "e.txt", "max_bytes": 4097})
        rest = await ok(client, "get_gist_file", follow(first["next_call"])[1])
    assert first["content"] + rest["content"] == content
    assert first["bytes_returned"] % 2 == 0


async def test_get_gist_file_binary_is_omitted(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"blob.bin": "\x00\x01\x02\x03binary\x00" * 20, "ok.txt": "text\n"}, "private", title=marker())
    async with session(live_server, era) as client:
        window = await ok(client, "get_gist_file", {"gist_id": gist_id, "filename": "blob.bin"})
        shown = await ok(client, "get_gist", {"gist_id": gist_id})
    assert window.get("content") is None and window["omitted"], window
    files = {f["filename"]: f for f in shown["files"]}
    assert files["blob.bin"].get("content") is None and files["blob.bin"]["omitted"], files
    assert files["ok.txt"]["content"] == "text\n"


async def test_get_gist_file_over_512_kib(opengist_env, live_server, era):
    """Opengist's gist endpoint cuts file contents at 512 KiB; the raw file is whole."""
    og = api(opengist_env)
    body = "".join(f"{i:07d}\n" for i in range(70_000))  # 560,000 bytes
    gist_id = og.create({"huge.txt": body}, "private", title=marker())
    async with session(live_server, era) as client:
        tail = await ok(
            client, "get_gist_file", {"gist_id": gist_id, "filename": "huge.txt", "offset": 530_000, "max_bytes": 65536}
        )
        shown = await ok(client, "get_gist", {"gist_id": gist_id, "max_file_bytes": 1000})
    assert tail["content"] == body[530_000:] and tail["truncated"] is False, {k: v for k, v in tail.items() if k != "content"}
    assert tail["total_bytes"] == len(body)
    (file,) = shown["files"]
    assert file["size"] == len(body) and file["truncated"] is True


async def test_get_gist_file_unknown_name_names_the_files(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"present.txt": "x\n"}, "private", title=marker())
    async with session(live_server, era) as client:
        await refused(client, "get_gist_file", {"gist_id": gist_id, "filename": "absent.txt"}, "absent.txt")


# --------------------------------------------------------------------------- commits, forks


async def test_list_gist_commits_pages_newest_first(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "1\n"}, "private", title=marker())
    for n in (2, 3):
        og.update(gist_id, {"files": {"a.txt": {"content": f"{n}\n"}}})
    held = [c["version"] for c in og.commits(gist_id)]
    assert len(held) == 3
    seen: list[str] = []
    async with session(live_server, era) as client:
        args = {"gist_id": gist_id, "per_page": 2}
        for _ in range(5):
            page = await ok(client, "list_gist_commits", args)
            seen += [c["version"] for c in page["commits"]]
            if not page["has_more"]:
                break
            tool, args = follow(page["next_call"])
            assert tool == "list_gist_commits"
    assert seen == held


async def test_list_gist_forks_pages(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "x\n"}, "public", title=marker())
    fork = api(opengist_env, "user2").fork(gist_id)
    async with session(live_server, era) as client:
        first = await ok(client, "list_gist_forks", {"gist_id": gist_id, "per_page": 1})
        second = await ok(client, "list_gist_forks", {"gist_id": gist_id, "per_page": 1, "page": 2})
    assert [f["id"] for f in first["forks"]] == [fork] == og.forks(gist_id)
    assert first["forks"][0]["owner"] == opengist_env["OPENGIST_E2E_USER2"]
    assert second["forks"] == [] and second["has_more"] is False


# --------------------------------------------------------------------------- get_user, likes


async def test_get_user_self_other_and_by_id(opengist_env, live_server, era):
    user2 = opengist_env["OPENGIST_E2E_USER2"]
    async with session(live_server, era) as client:
        me = await ok(client, "get_user", {})
        other = await ok(client, "get_user", {"username": user2})
        by_id = await ok(client, "get_user", {"user_id": other["id"]})
        await refused(client, "get_user", {"username": "no-such-user-" + marker()}, "does not exist")
        await refused(client, "get_user", {"username": user2, "user_id": 1}, "username", "user_id")
    held = api(opengist_env).get("/api/user").body
    assert me["username"] == held["username"] == "admin" and me["own_account"] is True and me["id"] == held["id"]
    assert other["username"] == user2 and other["own_account"] is False
    assert by_id["username"] == user2 and by_id["id"] == other["id"]
    assert "email" not in other, "another user's profile leaked an email"


async def test_check_gist_like_tells_not_liked_from_not_visible(opengist_env, live_server, era):
    og = api(opengist_env)
    other = api(opengist_env, "user2")
    liked = other.create({"a.txt": "a\n"}, "public", title=marker())
    hidden = other.create({"b.txt": "b\n"}, "private", title=marker())
    async with session(live_server, era) as client:
        before = await ok(client, "check_gist_like", {"gist_id": liked})
        og.toggle_like(liked)
        after = await ok(client, "check_gist_like", {"gist_id": liked})
        await refused(client, "check_gist_like", {"gist_id": hidden}, "not visible", "cannot be told")
    assert before == {"gist_id": liked, "liked": False, "visible": True}, before
    assert after["liked"] is True and after["visible"] is True and og.liked(liked)


async def test_search_visibility_filter(opengist_env, live_server, era):
    m = marker()
    og = api(opengist_env)
    since = since_now()
    made = {v: og.create({"v.txt": "v\n"}, v, title=f"{m} {v}") for v in ("private", "unlisted", "public")}
    async with session(live_server, era) as client:
        found = {
            v: {g["id"] for g in (await ok(client, "search_gists", {"query": m, "fields": ["title"], "visibility": v, "since": since}))["matches"]}
            for v in made
        }
    assert found == {v: {gist_id} for v, gist_id in made.items()}, found


# --------------------------------------------------------------------------- the result-size ceiling


def call_in(note: str) -> tuple[str, dict]:
    """The `get_gist_file with ...` call a note names."""
    start = note.index("get_gist_file with ")
    return follow(note[start:])


async def test_result_ceiling_holds_and_every_cut_can_be_read(opengist_env, live_server, era):
    ceiling = 16384
    og = api(opengist_env)
    files = {f"f{i}.txt": "".join(f"{i}:{n:05d}\n" for n in range(900)) for i in range(3)}  # ~8 KB each
    gist_id = og.create(files, "private", title=marker())
    async with session(live_server, era, extra={"OPENGIST_MCP_MAX_RESULT_BYTES": str(ceiling)}) as client:
        result = await client.call_tool("get_gist", {"gist_id": gist_id})
        assert not result.is_error, result
        shown = result.structured_content
        assert len(json.dumps(shown, ensure_ascii=False).encode()) <= ceiling
        whole: dict[str, str] = {}
        for file in shown["files"]:
            if file.get("content") is not None and not file["truncated"]:
                whole[file["filename"]] = file["content"]
        for note in shown["notes"]:
            if "get_gist_file with " not in note:
                continue
            tool, args = call_in(note)
            name = args["filename"]
            (partial,) = [f for f in shown["files"] if f["filename"] == name]
            text = partial.get("content") or ""
            for _ in range(20):
                window = await client.call_tool(tool, args)
                assert not window.is_error, window
                assert len(json.dumps(window.structured_content, ensure_ascii=False).encode()) <= ceiling
                text += window.structured_content["content"]
                if not window.structured_content["truncated"]:
                    break
                tool, args = follow(window.structured_content["next_call"])
            whole[name] = text
        assert len(whole) == 3 and any("get_gist_file with " in n for n in shown["notes"]), shown["notes"]
    assert whole == og.files(gist_id) == files


async def test_past_the_end_and_unknown_revisions(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "abcdef"}, "private", title=marker())
    async with session(live_server, era) as client:
        beyond = await ok(client, "list_gists", {"page": 100000, "per_page": 100})
        end = await ok(client, "get_gist_file", {"gist_id": gist_id, "filename": "a.txt", "offset": 999})
        commits = await ok(client, "list_gist_commits", {"gist_id": gist_id, "page": 50})
        await refused(client, "get_gist", {"gist_id": gist_id, "sha": "0000000000"}, "revision 0000000000", "not visible")
        await refused(client, "get_gist_file", {"gist_id": gist_id, "filename": "a.txt", "sha": "0000000"}, "revision")
        await refused(client, "list_gists", {"username": "no-such-" + marker()}, "does not exist or is not visible")
    assert beyond["gists"] == [] and beyond["has_more"] is False and beyond.get("next_call") is None, beyond
    assert end["content"] == "" and end["total_bytes"] == 6 and "past the end" in end["note"], end
    assert commits["commits"] == [] and commits["has_more"] is False
