"""Issue 8 against a REAL Opengist 1.15.1 (marker `opengist`), both eras, both transports:
what a new user met, each a test that failed before its fix.

1. Guarded tools ask only about calls that can succeed: ownership, token, scopes and
   reachability are checked before anyone is asked, and no confirm_token is handed out.
2. `doctor` tells the truth about each scope, writing nothing; lists carry the gist:read
   note only when the token may lack it.
3. `get_user` knows the token's own account by name and id.
4. `get_gist` shows real topics; writes that make Opengist drop topics say so.
5. Gists created with 11+ files can be paged (head revision from git).
6. `max_total_bytes` keeps file order and names the true reason.
7. Search counters agree; punctuation; rename onto itself; the liked list's gap.

Every write is checked through Opengist's REST API directly, never through the server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from support import target_of
from live import api, gist_id_in, marker, set_topics
from support import Dialog, connect, opengist_mcp_bin, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

ADMIN = "admin"


def listed(env: dict[str, str], owner: str, gist_id: str, token: str = "full") -> dict[str, Any] | None:
    """The gist as its owner's list shows it (the list carries topics; the single-gist
    answer never does)."""
    for page in range(1, 20):
        response = api(env, token).get(f"/api/users/{owner}/gists?per_page=100&page={page}")
        assert response.status == 200, response
        for gist in response.body:
            if gist["id"] == gist_id:
                return gist
        if len(response.body) < 100:
            return None
    return None


def assert_asked_nobody(result: Any, dialog: Dialog | None, *expected: str) -> str:
    text = text_of(result)
    assert result.is_error, text
    assert "no one was asked" in text, text
    for word in expected:
        assert word in text, f"{word!r} not in: {text}"
    assert "confirm_token" not in text, f"a token was handed out for a call that cannot succeed: {text}"
    if dialog is not None:
        assert dialog.calls == [], f"a person was asked: {dialog.calls}"
    return text


# ---- 1. check before asking ------------------------------------------------------------


@pytest.mark.parametrize("with_dialog", [True, False], ids=["dialog", "no-dialog"])
async def test_admin_token_on_another_users_gist_asks_nobody(opengist_env, live_server, era, with_dialog):
    word = marker()
    other = api(opengist_env, "user2")
    gist_id = other.create({"a.txt": f"a {word}", "b.txt": f"b {word}"}, "public", title=f"t {word}")
    before = other.gist(gist_id)
    dialog = Dialog("accept") if with_dialog else None
    async with connect(target_of(live_server("full")), era, dialog) as client:
        for name, args in (
            ("delete_gist", {"gist_id": gist_id}),
            ("delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt"]}),
            ("update_gist", {"gist_id": gist_id, "title": f"changed {word}"}),
        ):
            result = await client.call_tool(name, args)
            assert_asked_nobody(result, dialog, "belongs to another account", gist_id)
    after = other.gist(gist_id)
    assert after["title"] == before["title"] and sorted(after["files"]) == ["a.txt", "b.txt"]
    assert other.delete(gist_id) == 204


@pytest.mark.parametrize("token", ["read", "nogist"])
async def test_tokens_without_gist_write_ask_nobody(opengist_env, live_server, era, token):
    word = marker()
    owner = api(opengist_env, "full")
    gist_id = owner.create({"a.txt": f"a {word}", "b.txt": f"b {word}"}, "public", title=f"t {word}")
    dialog = Dialog("accept")
    async with connect(target_of(live_server(token)), era, dialog) as client:
        created = await client.call_tool(
            "create_gist",
            {"files": [{"filename": "n.txt", "content": word}], "visibility": "public", "title": f"new {word}"},
        )
        assert_asked_nobody(created, dialog, "gist:write", "Nothing was created")
        for name, args in (
            ("update_gist", {"gist_id": gist_id, "title": f"changed {word}"}),
            ("delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt"]}),
            ("delete_gist", {"gist_id": gist_id}),
        ):
            assert_asked_nobody(await client.call_tool(name, args), dialog, "gist:write", "Nothing was changed")
    after = owner.gist(gist_id)
    assert after["title"] == f"t {word}" and sorted(after["files"]) == ["a.txt", "b.txt"]
    # Other tests create gists in parallel: look for this one by its unique title.
    assert owner.titled(f"new {word}") == [], "a gist was created"
    assert owner.delete(gist_id) == 204


async def test_a_token_known_to_lack_gist_write_is_refused_at_once(opengist_env, live_server, era):
    """A list first makes the server learn the token's scopes; the create is then refused
    from that knowledge, asking no one."""
    dialog = Dialog("accept")
    title = f"new {marker()}"
    async with connect(target_of(live_server("read")), era, dialog) as client:
        listed_page = await client.call_tool("list_gists", {"per_page": 1})
        assert not listed_page.is_error, text_of(listed_page)
        result = await client.call_tool(
            "create_gist",
            {"files": [{"filename": "n.txt", "content": "x"}], "visibility": "unlisted", "title": title},
        )
        assert_asked_nobody(result, dialog, "gist:write", "Nothing was created")
    assert api(opengist_env).titled(title) == []


async def test_a_rejected_token_asks_nobody(opengist_env, live_server, era):
    word = marker()
    dialog = Dialog("accept")
    bad = {"OPENGIST_TOKEN": "og_" + "0" * 64}
    async with connect(target_of(live_server(None, extra=bad)), era, dialog) as client:
        result = await client.call_tool(
            "create_gist",
            {"files": [{"filename": "n.txt", "content": word}], "visibility": "public", "title": f"new {word}"},
        )
        assert_asked_nobody(result, dialog, "rejected the access token")
    assert api(opengist_env).titled(f"new {word}") == []


async def test_an_unreachable_opengist_asks_nobody(opengist_env, live_server, era):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dialog = Dialog("accept")
    down = {"OPENGIST_URL": f"http://127.0.0.1:{port}"}
    async with connect(target_of(live_server("full", extra=down)), era, dialog) as client:
        result = await client.call_tool(
            "create_gist", {"files": [{"filename": "n.txt", "content": "x"}], "visibility": "public"}
        )
        assert_asked_nobody(result, dialog, f"127.0.0.1:{port}")


async def test_a_call_that_can_succeed_is_still_asked_and_runs(opengist_env, live_server, era):
    """The preflight changes nothing it checks: a public create still asks, then runs."""
    word = marker()
    dialog = Dialog("accept")
    async with connect(target_of(live_server("full")), era, dialog) as client:
        result = await client.call_tool(
            "create_gist", {"files": [{"filename": f"{word}.txt", "content": word}], "visibility": "public"}
        )
        assert not result.is_error, text_of(result)
    assert len(dialog.calls) == 1
    gist_id = gist_id_in(result.structured_content)
    assert api(opengist_env).files(gist_id) == {f"{word}.txt": word}
    assert api(opengist_env).delete(gist_id) == 204


# ---- 2. doctor and the gist:read note ----------------------------------------------------


def doctor(env: dict[str, str], token: str) -> subprocess.CompletedProcess[str]:
    from live import TOKENS

    run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENGIST_URL": env["OPENGIST_E2E_URL"]}
    run_env["OPENGIST_TOKEN"] = env[TOKENS[token]]
    return subprocess.run(
        [str(opengist_mcp_bin()), "doctor"], env=run_env, capture_output=True, text=True, timeout=60, check=False
    )


def scope_lines(stdout: str) -> dict[str, str]:
    lines = {}
    for line in stdout.splitlines():
        match = re.match(r"^(ok  |warn|FAIL|skip) (gist:read|gist:write|user:read|user:write): (.*)$", line)
        if match:
            lines[match.group(2)] = match.group(1).strip()
    return lines


EXPECTED = {
    "full": ({"gist:read": "ok", "gist:write": "ok", "user:read": "ok", "user:write": "ok"}, 0),
    "user2": ({"gist:read": "ok", "gist:write": "ok", "user:read": "ok", "user:write": "ok"}, 0),
    # Missing user scopes only warn (their fix names both ways); a read-only token fails the
    # write tools, its fix naming OPENGIST_READ_ONLY=true.
    "read": ({"gist:write": "FAIL", "user:read": "ok", "user:write": "warn"}, 1),
    "nogist": ({"gist:write": "FAIL", "user:read": "ok", "user:write": "ok"}, 1),
}


@pytest.mark.parametrize("token", list(EXPECTED))
def test_doctor_tells_each_scope_and_writes_nothing(opengist_env, token):
    full = api(opengist_env, "full")
    gists_before = {g["id"] for g in full.mine(within_minutes=4)}
    me_before = api(opengist_env, token).get("/api/user").body
    run = doctor(opengist_env, token)
    lines = scope_lines(run.stdout)
    assert set(lines) == {"gist:read", "gist:write", "user:read", "user:write"}, run.stdout
    expected, code = EXPECTED[token]
    for scope, status in expected.items():
        assert lines[scope] == status, f"{scope}: {lines[scope]} != {status}\n{run.stdout}"
    if token == "nogist":
        # Opengist answers a token without gist:read with public gists only: never "ok".
        assert lines["gist:read"] != "ok", run.stdout
    assert run.returncode == code, run.stdout
    if token == "read":
        assert "OPENGIST_READ_ONLY=true" in run.stdout, run.stdout
        assert "OPENGIST_DENY_TOOLS=get_user,set_gist_like" in run.stdout, run.stdout
    assert "version" in run.stdout
    assert opengist_env["OPENGIST_E2E_TOKEN_FULL"][3:20] not in run.stdout + run.stderr
    # Other tests create gists in parallel (each titled with its marker); a gist made by
    # doctor would be one without such a title.
    made = [g for g in full.mine(within_minutes=4) if g["id"] not in gists_before]
    assert all("e2e-" in (g.get("title") or "") or g.get("title") for g in made), made
    assert not [g for g in made if "doctor" in (g.get("title") or "").lower()], made
    assert api(opengist_env, token).get("/api/user").body == me_before


async def test_the_gist_read_note_follows_the_token(opengist_env, live_server, era):
    async with connect(target_of(live_server("full")), era) as client:
        result = await client.call_tool("list_gists", {"per_page": 1})
        assert not result.is_error, text_of(result)
        assert "gist:read" not in (result.structured_content.get("note") or ""), result.structured_content
    async with connect(target_of(live_server("nogist")), era) as client:
        result = await client.call_tool("list_gists", {"per_page": 1})
        assert not result.is_error, text_of(result)
        assert "gist:read" in (result.structured_content.get("note") or ""), result.structured_content

    # search_gists lists the same way, so it carries the note on the same terms.
    search = {"query": marker(), "fields": ["title"], "max_pages": 1}
    async with connect(target_of(live_server("full")), era) as client:
        result = await client.call_tool("search_gists", search)
        assert not result.is_error, text_of(result)
        assert not any("gist:read" in n for n in result.structured_content.get("notes", [])), result.structured_content
    async with connect(target_of(live_server("nogist")), era) as client:
        result = await client.call_tool("search_gists", search)
        assert not result.is_error, text_of(result)
        assert any("gist:read" in n for n in result.structured_content.get("notes", [])), result.structured_content


# ---- 3. own_account -------------------------------------------------------------------------


async def test_get_user_knows_the_own_account_by_name_and_id(opengist_env, live_server, era):
    me = api(opengist_env).get("/api/user").body
    async with connect(target_of(live_server("full")), era) as client:
        for args in ({"username": me["username"]}, {"user_id": me["id"]}, {}):
            result = await client.call_tool("get_user", args)
            assert not result.is_error, text_of(result)
            assert result.structured_content["own_account"] is True, (args, result.structured_content)
        other = await client.call_tool("get_user", {"username": opengist_env["OPENGIST_E2E_USER2"]})
        assert other.structured_content["own_account"] is False, other.structured_content


# ---- 4. topics ------------------------------------------------------------------------------


def gist_with_topics(env: dict[str, str], word: str, visibility: str = "public") -> str:
    full = api(env)
    gist_id = full.create({"a.txt": f"a {word}", "b.txt": f"b {word}"}, visibility, title=f"t {word}")
    set_topics(env, "admin", ADMIN, full.gist(gist_id), ["alpha", "beta"])
    assert listed(env, ADMIN, gist_id)["topics"] == ["alpha", "beta"]
    return gist_id


async def test_get_gist_shows_the_real_topics(opengist_env, live_server, era):
    word = marker()
    gist_id = gist_with_topics(opengist_env, word)
    assert api(opengist_env).gist(gist_id)["topics"] == []  # what Opengist's own answer says
    async with connect(target_of(live_server("full")), era) as client:
        result = await client.call_tool("get_gist", {"gist_id": gist_id})
        assert not result.is_error, text_of(result)
        assert result.structured_content["gist"]["topics"] == ["alpha", "beta"], result.structured_content
    assert api(opengist_env).delete(gist_id) == 204


async def test_narrowing_without_a_question_says_it_dropped_the_topics(opengist_env, live_server, era):
    word = marker()
    gist_id = gist_with_topics(opengist_env, word)
    dialog = Dialog("decline")
    async with connect(target_of(live_server("full")), era, dialog) as client:
        result = await client.call_tool("update_gist", {"gist_id": gist_id, "visibility": "private"})
        assert not result.is_error, text_of(result)
    assert dialog.calls == []
    said = result.structured_content.get("topics_removed") or ""
    assert "2 topic(s)" in said and '"alpha"' in said, result.structured_content
    # What the result says is what Opengist did.
    assert api(opengist_env).gist(gist_id)["visibility"] == "private"
    assert listed(opengist_env, ADMIN, gist_id)["topics"] == []
    assert api(opengist_env).delete(gist_id) == 204


async def test_questions_that_drop_topics_count_them(opengist_env, live_server, era):
    word = marker()
    gist_id = gist_with_topics(opengist_env, word)
    dialog = Dialog("accept")
    async with connect(target_of(live_server("full")), era, dialog) as client:
        result = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["b.txt"]})
        assert not result.is_error, text_of(result)
    assert len(dialog.calls) == 1
    shown = json.dumps(dialog.calls[0].model_dump(mode="json"))
    assert "2 topic(s)" in shown, shown
    assert "alpha" not in shown, "a question never names a topic"
    assert "2 topic(s)" in (result.structured_content.get("topics_removed") or ""), result.structured_content
    assert sorted(api(opengist_env).files(gist_id)) == ["a.txt"]
    assert listed(opengist_env, ADMIN, gist_id)["topics"] == []
    assert api(opengist_env).delete(gist_id) == 204


# ---- 5. eleven files --------------------------------------------------------------------------


CALL = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|-?\d+|true|false)')


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    tool, _, rest = text.partition(" with ")
    return tool, {name: json.loads(value) for name, value in CALL.findall(rest)}


@pytest.mark.parametrize("visibility", ["private", "public"])
async def test_a_gist_created_with_eleven_files_can_be_paged(opengist_env, live_server, era, visibility):
    word = marker()
    files = {f"f{i:02}.txt": f"{word} line {i}\n" * 40 for i in range(11)}
    full = api(opengist_env)
    gist_id = full.create(files, visibility, title=f"t {word}")
    assert full.get(f"/api/gists/{gist_id}/commits").body == []  # Opengist lists no commit for it
    async with connect(target_of(live_server("full")), era) as client:
        shown = await client.call_tool("get_gist", {"gist_id": gist_id, "max_file_bytes": 100})
        assert not shown.is_error, text_of(shown)
        revision = shown.structured_content["revision"]
        assert revision and re.fullmatch(r"[0-9a-f]{40}", revision), shown.structured_content
        calls = [n.split(": ", 1)[1] for n in shown.structured_content["notes"] if "get_gist_file with" in n]
        assert calls, shown.structured_content["notes"]
        for call in calls:
            tool, args = parse_call(call[call.index("get_gist_file") :])
            window = await client.call_tool(tool, args)
            assert not window.is_error, (call, text_of(window))
            assert window.structured_content["content"] == files[args["filename"]][args["offset"] :][
                : len(window.structured_content["content"])
            ]
        plain = await client.call_tool("get_gist_file", {"gist_id": gist_id, "filename": "f03.txt"})
        assert not plain.is_error, text_of(plain)
        assert plain.structured_content["content"] == files["f03.txt"]
        commits = await client.call_tool("list_gist_commits", {"gist_id": gist_id})
        assert not commits.is_error, text_of(commits)
        assert commits.structured_content["head_revision"] == revision, commits.structured_content
    assert full.delete(gist_id) == 204


# ---- 6. max_total_bytes -------------------------------------------------------------------------


async def test_max_total_bytes_keeps_file_order_with_a_true_reason(opengist_env, live_server, era):
    word = marker()
    files = {"big.txt": "b" * 5000, "mid.txt": "m" * 1500, "small.txt": "s"}
    full = api(opengist_env)
    gist_id = full.create(files, "private", title=f"t {word}")
    async with connect(target_of(live_server("full")), era) as client:
        result = await client.call_tool(
            "get_gist", {"gist_id": gist_id, "max_file_bytes": 100, "max_total_bytes": 1000}
        )
        assert not result.is_error, text_of(result)
    out = result.structured_content
    shown = {f["filename"]: len(f.get("content") or "") for f in out["files"]}
    assert shown == {"big.txt": 100, "mid.txt": 100, "small.txt": 1}, out
    assert not any("earlier files" in n for n in out["notes"]), out["notes"]
    assert full.delete(gist_id) == 204


# ---- 7. smaller ---------------------------------------------------------------------------------


async def test_search_counters_agree(opengist_env, live_server, era):
    word = marker()
    since = (datetime.now(timezone.utc) - timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    full = api(opengist_env)
    # 300 KiB each: the 2 MiB content budget is crossed inside the 7th gist.
    body = f"{word}\n" + "z" * (300 * 1024)
    ids = [full.create({f"{i}.txt": body}, "private", title=f"item {i}") for i in range(9)]
    async with connect(target_of(live_server("full")), era) as client:
        result = await client.call_tool("search_gists", {"query": word, "fields": ["content"], "since": since})
        assert not result.is_error, text_of(result)
    out = result.structured_content
    scanned = out["scanned"]
    assert scanned["gists_with_files_read"] <= scanned["gists"], scanned
    assert len(out["matches"]) >= 7, (scanned, len(out["matches"]))
    assert out["stopped_early"] and "content byte budget" in out["stop_reason"], out
    # The bytes read pass the budget by the gist that crossed it, and the reason says so
    # with the same figure the counter shows.
    assert scanned["content_bytes_read"] >= 2 * 1024 * 1024, scanned
    assert f"({scanned['content_bytes_read']} bytes" in out["stop_reason"], (scanned, out["stop_reason"])
    for gist_id in ids:
        assert full.delete(gist_id) == 204


async def test_near_match_punctuation_and_a_rename_onto_itself(opengist_env, live_server, era):
    word = marker()
    full = api(opengist_env)
    gist_id = full.create({"c.txt": f"c {word}", "d.txt": f"d {word}"}, "private", title=f"t {word}")
    async with connect(target_of(live_server("full")), era, Dialog("accept")) as client:
        wrong = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["C.TXT"]})
        text = text_of(wrong)
        assert wrong.is_error and 'Did you mean "c.txt" for "C.TXT"?' in text, text
        assert "?." not in text, text
        same = await client.call_tool(
            "update_gist",
            {"gist_id": gist_id, "file_ops": [{"op": "rename", "filename": "c.txt", "new_filename": "c.txt"}]},
        )
        text = text_of(same)
        assert same.is_error and "its own name" in text and "overwrite" not in text, text
    assert full.files(gist_id) == {"c.txt": f"c {word}", "d.txt": f"d {word}"}
    assert full.delete(gist_id) == 204


async def test_the_liked_list_says_it_leaves_out_unlisted_gists(opengist_env, live_server, era):
    word = marker()
    other = api(opengist_env, "user2")
    gist_id = other.create({"a.txt": word}, "unlisted", title=f"t {word}")
    async with connect(target_of(live_server("full")), era) as client:
        liked = await client.call_tool("set_gist_like", {"gist_id": gist_id, "liked": True})
        assert not liked.is_error, text_of(liked)
        result = await client.call_tool("list_gists", {"scope": "liked", "per_page": 100})
        assert not result.is_error, text_of(result)
        assert "unlisted" in (result.structured_content.get("note") or ""), result.structured_content
        # The note is true: Opengist left the liked unlisted gist out.
        assert gist_id not in [g["id"] for g in result.structured_content["gists"]]
        assert api(opengist_env).get(f"/api/gists/{gist_id}/like").status == 204
        await client.call_tool("set_gist_like", {"gist_id": gist_id, "liked": False})
    assert other.delete(gist_id) == 204
