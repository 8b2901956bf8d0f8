"""The six writing tools against a REAL Opengist (marker `opengist`): each write's outcome
is read back through Opengist's REST API directly, never through the server under test.

Guarded calls here are approved by a recording `Dialog("accept")`; how the guard itself
behaves (declines, tokens, replays) is test_live_guard.py's subject. Unguarded writes run
once per transport and era (`DIAGONAL`); writes that ask run in all four combinations.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from live import DIAGONAL, api, marker, ok, refused, session
from support import Dialog

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

VISIBILITIES = ("private", "unlisted", "public")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --------------------------------------------------------------------------- create_gist


@DIAGONAL
@pytest.mark.parametrize("visibility", VISIBILITIES)
async def test_create_every_visibility(opengist_env, live_server, era, visibility):
    m = marker()
    dialog = Dialog("accept")
    files = [{"filename": "one.txt", "content": f"{m} one\n"}, {"filename": "two.md", "content": "# two\n"}]
    async with session(live_server, era, dialog) as client:
        created = await ok(
            client,
            "create_gist",
            {"files": files, "visibility": visibility, "title": f"{m} title", "description": f"{m} description"},
        )
    held = api(opengist_env).gist(created["gist"]["id"])
    assert held["visibility"] == visibility and created["gist"]["visibility"] == visibility
    assert held["title"] == f"{m} title" and held["description"] == f"{m} description"
    assert {n: f["content"] for n, f in held["files"].items()} == {f["filename"]: f["content"] for f in files}
    assert created["files"] == ["one.txt", "two.md"]
    assert len(dialog.calls) == (0 if visibility == "private" else 1), "only a gist that is not private asks"
    assert created["cleared_by"] == ("not_needed" if visibility == "private" else "dialog"), created
    assert api(opengist_env).titled(m) == [created["gist"]["id"]], "created more than once"


# Each preset once, the presets spread over both transports and both eras.
@pytest.mark.parametrize(
    ("preset", "hours", "transport", "era"),
    [
        ("1hour", 1, "stdio", "legacy"),
        ("12hours", 12, "http", "2026-07-28"),
        ("1day", 24, "http", "legacy"),
        ("7days", 168, "stdio", "2026-07-28"),
        ("15days", 360, "stdio", "legacy"),
    ],
)
async def test_create_with_an_expiry_preset(opengist_env, live_server, era, preset, hours):
    async with session(live_server, era) as client:
        created = await ok(
            client,
            "create_gist",
            {"files": [{"filename": "e.txt", "content": "x\n"}], "visibility": "private", "expire": preset, "title": marker()},
        )
    held = api(opengist_env).gist(created["gist"]["id"])
    expected = datetime.now(timezone.utc) + timedelta(hours=hours)
    assert abs((parse_time(held["expires_at"]) - expected).total_seconds()) < 120, (preset, held["expires_at"])


@DIAGONAL
async def test_create_with_expires_at_and_never(opengist_env, live_server, era):
    at = (datetime.now(timezone.utc) + timedelta(days=3)).replace(microsecond=0)
    async with session(live_server, era) as client:
        dated = await ok(
            client,
            "create_gist",
            {
                "files": [{"filename": "e.txt", "content": "x\n"}],
                "visibility": "private",
                "expires_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "title": marker(),
            },
        )
        never = await ok(
            client,
            "create_gist",
            {"files": [{"filename": "n.txt", "content": "x\n"}], "visibility": "private", "expire": "never", "title": marker()},
        )
        past = marker()
        await refused(
            client,
            "create_gist",
            {"files": [{"filename": "p.txt", "content": "x\n"}], "visibility": "private", "expires_at": "2001-01-01T00:00:00Z", "title": past},
            "nothing was created",
        )
    og = api(opengist_env)
    assert abs((parse_time(og.gist(dated["gist"]["id"])["expires_at"]) - at).total_seconds()) < 61
    assert not og.gist(never["gist"]["id"]).get("expires_at")
    assert og.titled(past) == []


@DIAGONAL
async def test_create_refuses_bad_files_and_changes_nothing(opengist_env, live_server, era):
    m = marker()
    async with session(live_server, era) as client:
        await refused(client, "create_gist", {"files": [], "visibility": "private", "title": m}, "files")
        await refused(
            client, "create_gist", {"files": [{"filename": "e.txt", "content": ""}], "visibility": "private", "title": m}, "content"
        )
        await refused(client, "create_gist", {"files": [{"filename": "a.txt", "content": "x"}], "title": m}, "visibility")
        await refused(
            client,
            "create_gist",
            {"files": [{"filename": "a.txt", "content": "x"}], "visibility": "secret", "title": m},
            "visibility",
        )
        dup = [{"filename": "a.txt", "content": "x"}, {"filename": "a.txt", "content": "y"}]
        await refused(client, "create_gist", {"files": dup, "visibility": "private", "title": m}, "file #2", "once")
    assert api(opengist_env).titled(m) == []


@DIAGONAL
async def test_filenames_round_trip_or_are_refused(opengist_env, live_server, era):
    """Names Opengist stores as given come back byte for byte, through get_gist_file too;
    names it would mangle (paths, control characters, edge white space, 256+ bytes) are
    refused before anything is created."""
    m = marker()
    kept = ["UPPER.TXT", "upper.txt", "noext", ".hidden", "q?#%&=+.txt", "ünï €.md"]
    async with session(live_server, era) as client:
        created = await ok(
            client,
            "create_gist",
            {"files": [{"filename": n, "content": f"{n}\r\nline\n"} for n in kept], "visibility": "private", "title": m},
        )
        windows = {n: await ok(client, "get_gist_file", {"gist_id": created["gist"]["id"], "filename": n}) for n in kept}
        for bad, why in (
            ("dir/x.txt", "path separator"),
            ("../up.txt", "path separator"),
            ("back\\slash.txt", "path separator"),
            (" spaced.txt", "white space"),
            ("tab\tname.txt", "control character"),
            ("a" * 256, "too long"),
        ):
            await refused(
                client,
                "create_gist",
                {"files": [{"filename": bad, "content": "x"}], "visibility": "private", "title": f"{m} bad"},
                why,
                "nothing was created",
            )
    og = api(opengist_env)
    assert og.files(created["gist"]["id"]) == {n: f"{n}\r\nline\n" for n in kept}
    assert {n: w["content"] for n, w in windows.items()} == {n: f"{n}\r\nline\n" for n in kept}
    assert og.titled(f"{m} bad") == []


# --------------------------------------------------------------------------- update_gist


@DIAGONAL
async def test_update_metadata_of_a_private_gist(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    before = og.commits(gist_id)[0]["version"]
    async with session(live_server, era, Dialog("decline")) as client:
        updated = await ok(client, "update_gist", {"gist_id": gist_id, "title": "new title", "description": "new description"})
    held = og.gist(gist_id)
    assert held["title"] == "new title" and held["description"] == "new description"
    assert held["visibility"] == "private" and og.files(gist_id) == {"a.txt": "a\n"}
    assert updated["previous_revision"] == before


@DIAGONAL
async def test_update_writes_and_renames_keeping_the_previous_revision(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "old a\n", "b.txt": "old b\n", "c.txt": "c\n"}, "private", title=marker())
    before = og.commits(gist_id)[0]["version"]
    ops = [
        {"op": "write", "filename": "a.txt", "content": "new a\n"},
        {"op": "rename", "filename": "b.txt", "new_filename": "renamed.txt"},
        {"op": "rename", "filename": "c.txt", "new_filename": "c2.txt", "content": "c changed\n"},
    ]
    async with session(live_server, era) as client:
        updated = await ok(client, "update_gist", {"gist_id": gist_id, "file_ops": ops})
        old = await ok(client, "get_gist", {"gist_id": gist_id, "sha": updated["previous_revision"]})
    assert og.files(gist_id) == {"a.txt": "new a\n", "renamed.txt": "old b\n", "c2.txt": "c changed\n"}
    assert updated["previous_revision"] == before and updated["revision"] != before
    assert {f["filename"]: f["content"] for f in old["files"]} == {"a.txt": "old a\n", "b.txt": "old b\n", "c.txt": "c\n"}


@DIAGONAL
async def test_update_new_file_needs_allow_create(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    commits = len(og.commits(gist_id))
    new = {"op": "write", "filename": "new.txt", "content": "new\n"}
    async with session(live_server, era) as client:
        await refused(client, "update_gist", {"gist_id": gist_id, "file_ops": [new]}, "new.txt", "allow_create")
        assert og.files(gist_id) == {"a.txt": "a\n"} and len(og.commits(gist_id)) == commits
        await ok(client, "update_gist", {"gist_id": gist_id, "file_ops": [new], "allow_create": True})
    assert og.files(gist_id) == {"a.txt": "a\n", "new.txt": "new\n"}


@DIAGONAL
async def test_update_names_a_near_match_and_changes_nothing(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"Report.md": "r\n"}, "private", title=marker())
    commits = len(og.commits(gist_id))
    async with session(live_server, era) as client:
        await refused(
            client,
            "update_gist",
            {"gist_id": gist_id, "file_ops": [{"op": "write", "filename": "report.MD", "content": "x\n"}]},
            '"Report.md"',
            "allow_create",
        )
        await refused(
            client,
            "update_gist",
            {"gist_id": gist_id, "file_ops": [{"op": "rename", "filename": "report.md", "new_filename": "x.md"}]},
            '"Report.md"',
        )
    assert og.files(gist_id) == {"Report.md": "r\n"} and len(og.commits(gist_id)) == commits


@DIAGONAL
async def test_update_refuses_a_rename_onto_another_file(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n", "b.txt": "b\n"}, "private", title=marker())
    async with session(live_server, era) as client:
        await refused(
            client,
            "update_gist",
            {"gist_id": gist_id, "file_ops": [{"op": "rename", "filename": "a.txt", "new_filename": "b.txt"}]},
            "overwrite",
        )
        await refused(client, "update_gist", {"gist_id": gist_id}, "nothing")
    assert og.files(gist_id) == {"a.txt": "a\n", "b.txt": "b\n"}


async def test_update_widen_asks_and_narrow_does_not(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        await ok(client, "update_gist", {"gist_id": gist_id, "visibility": "public"})
        assert len(dialog.calls) == 1 and og.gist(gist_id)["visibility"] == "public"
        await ok(client, "update_gist", {"gist_id": gist_id, "visibility": "private"})
    assert len(dialog.calls) == 1, "narrowing asked"
    assert og.gist(gist_id)["visibility"] == "private" and og.files(gist_id) == {"a.txt": "a\n"}


# --------------------------------------------------------------------------- delete_gist_files, delete_gist


async def test_delete_files_removes_exactly_those(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"keep.txt": "k\n", "drop1.txt": "1\n", "drop2.txt": "2\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        done = await ok(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["drop2.txt", "drop1.txt", "drop1.txt"]})
    assert og.files(gist_id) == {"keep.txt": "k\n"}
    assert sorted(done["deleted"]) == ["drop1.txt", "drop2.txt"] and done["remaining"] == ["keep.txt"]
    assert len(dialog.calls) == 1 and "2 file(s)" in dialog.calls[0].message, dialog.calls[0].message


@DIAGONAL
async def test_delete_files_refuses_all_and_unknown_before_asking(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n", "b.txt": "b\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        await refused(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt", "b.txt"]}, "delete_gist")
        await refused(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["nope.txt"]}, "nope.txt")
        await refused(client, "delete_gist_files", {"gist_id": gist_id, "filenames": []}, "filenames")
    assert dialog.calls == [], "an input error asked a person"
    assert og.files(gist_id) == {"a.txt": "a\n", "b.txt": "b\n"}


async def test_delete_gist_removes_it_with_its_revisions(opengist_env, live_server, era):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    og.update(gist_id, {"files": {"a.txt": {"content": "b\n"}}})
    old = og.commits(gist_id)[-1]["version"]
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        done = await ok(client, "delete_gist", {"gist_id": gist_id})
        again = await refused(client, "delete_gist", {"gist_id": gist_id}, "does not exist or is not visible")
    assert done["deleted"] is True and done["gist_id"] == gist_id
    assert not og.exists(gist_id) and og.get(f"/api/gists/{gist_id}/{old}").status == 404
    assert len(dialog.calls) == 1, "the second call on a deleted gist asked"
    assert "deleted" not in again.lower(), "a 404 must not claim the gist was deleted"
    shown = dialog.calls[0].message
    assert gist_id in shown and "2" in shown, shown


# --------------------------------------------------------------------------- fork_gist, set_gist_like


@DIAGONAL
async def test_fork_creates_once_then_finds_the_existing_fork(opengist_env, live_server, era):
    m = marker()
    parent = api(opengist_env, "user2").create({"p.txt": f"{m}\n"}, "public", title=m)
    og = api(opengist_env)
    async with session(live_server, era, Dialog("decline")) as client:
        first = await ok(client, "fork_gist", {"gist_id": parent})
        second = await ok(client, "fork_gist", {"gist_id": parent})
        own = og.create({"o.txt": "o\n"}, "public", title=marker())
        await refused(client, "fork_gist", {"gist_id": own}, "own")
    assert first["created"] is True and second["created"] is False
    assert first["fork"]["id"] == second["fork"]["id"] != parent
    fork = og.gist(first["fork"]["id"])
    assert fork["owner"]["username"] == "admin" and og.files(fork["id"]) == {"p.txt": f"{m}\n"}
    assert og.forks(parent) == [fork["id"]], "a second fork was made"
    assert og.forks(own) == []


@DIAGONAL
async def test_like_and_unlike_twice_each(opengist_env, live_server, era):
    gist_id = api(opengist_env, "user2").create({"l.txt": "l\n"}, "public", title=marker())
    og = api(opengist_env)
    async with session(live_server, era) as client:
        steps = []
        for liked in (True, True, False, False):
            result = await ok(client, "set_gist_like", {"gist_id": gist_id, "liked": liked})
            steps.append((result["liked"], result["changed"], og.liked(gist_id)))
    assert steps == [(True, True, True), (True, False, True), (False, True, False), (False, False, False)], steps
    assert og.gist(gist_id)["like_count"] == 0
