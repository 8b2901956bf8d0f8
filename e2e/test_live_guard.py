"""Every guard route against a REAL Opengist (marker `opengist`): what a person's answer, no
answer, a tampered or replayed `requestState`, or a two-call token does to the gist that
Opengist actually holds (read back through its REST API).

The routes depend on the era and the transport (a pushed dialog on a 2025-11-25 stdio or
stateful HTTP session; `input_required` on 2026-07-28), so most tests here run in all four
combinations.
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from live import DIAGONAL, SlowDialog, api, http_as, marker, ok, refused, session
from support import Dialog, connect, dump, text_of, token_in
from test_notes_mrtr import NeverAsked, answers, ask, assert_new_input_required, flip_one_char, retry

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

MODERN = "2026-07-28"

# What the server says when a guarded call did not run, by the person's answer.
NOT_RUN = {
    "decline": "declined",
    "cancel": "cancelled",
    "accept_false": "without ticking",
}


# --------------------------------------------------------------------------- dialog answers


@pytest.mark.parametrize("answer", ["accept", "decline", "cancel", "accept_false"])
async def test_dialog_answer_decides_a_file_deletion(opengist_env, live_server, era, answer):
    og = api(opengist_env)
    gist_id = og.create({"keep.txt": "k\n", "drop.txt": "d\n"}, "private", title=marker())
    dialog = Dialog(answer)
    async with session(live_server, era, dialog) as client:
        result = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["drop.txt"]})
    assert len(dialog.calls) == 1, "exactly one question"
    if answer == "accept":
        assert not result.is_error, text_of(result)
        assert result.structured_content["cleared_by"] == "dialog"
        assert og.files(gist_id) == {"keep.txt": "k\n"}
    else:
        assert result.is_error and NOT_RUN[answer] in text_of(result), text_of(result)
        assert "nothing was changed" in text_of(result).lower()
        assert og.files(gist_id) == {"keep.txt": "k\n", "drop.txt": "d\n"}


@pytest.mark.parametrize("answer", ["decline", "cancel"])
async def test_dialog_refusal_creates_nothing(opengist_env, live_server, era, answer):
    m = marker()
    dialog = Dialog(answer)
    async with session(live_server, era, dialog) as client:
        await refused(
            client,
            "create_gist",
            {"files": [{"filename": "a.txt", "content": "a\n"}], "visibility": "public", "title": m},
            NOT_RUN[answer],
        )
    assert len(dialog.calls) == 1
    assert api(opengist_env).titled(m) == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_no_answer_within_the_timeout_changes_nothing(opengist_env, live_server, transport):
    """A pushed dialog (2025-11-25) left open past OPENGIST_MCP_DIALOG_TIMEOUT_SECS: the call
    ends without running, and the late "accept" that follows does not run it either."""
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    dialog = SlowDialog(delay=2.5, answer="accept")
    async with session(live_server, "legacy", dialog, extra={"OPENGIST_MCP_DIALOG_TIMEOUT_SECS": "1"}) as client:
        text = await refused(client, "delete_gist", {"gist_id": gist_id}, "nothing was changed")
        assert og.exists(gist_id)
        await anyio.sleep(2)  # the person answers "accept", too late
        assert og.exists(gist_id), "a late answer deleted the gist"
        # The same session still works after the abandoned dialog.
        assert (await ok(client, "get_gist", {"gist_id": gist_id}))["gist"]["id"] == gist_id
    assert len(dialog.calls) == 1
    assert "time" in text.lower() or "no answer" in text.lower(), text
    assert og.exists(gist_id)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_input_required_left_unanswered_changes_nothing(opengist_env, live_server, transport):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    async with session(live_server, MODERN, NeverAsked()) as client:
        await ask(client, "delete_gist", {"gist_id": gist_id})
        await ask(client, "update_gist", {"gist_id": gist_id, "title": "never"})
    held = og.gist(gist_id)
    assert held["title"] != "never" and og.files(gist_id) == {"a.txt": "a\n"}


# --------------------------------------------------------------------------- input_required by hand


@pytest.fixture
def modern(live_server):
    """A 2026-07-28 session whose input_required rounds the test answers by hand."""
    return session(live_server, MODERN, NeverAsked())


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_input_required_answered(opengist_env, modern, answer):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "unlisted", title=marker())
    async with modern as client:
        ir = await ask(client, "delete_gist", {"gist_id": gist_id})
        done = await retry(client, "delete_gist", {"gist_id": gist_id}, state=ir.request_state, responses=answers(ir, answer))
    assert isinstance(done, types.CallToolResult), dump(done)
    if answer == "accept":
        assert not done.is_error, text_of(done)
        assert not og.exists(gist_id)
    else:
        assert done.is_error and "declined" in text_of(done), text_of(done)
        assert og.exists(gist_id)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_input_required_tampered_state_asks_again(opengist_env, modern):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
    async with modern as client:
        ir = await ask(client, "delete_gist", {"gist_id": gist_id})
        result = await retry(
            client, "delete_gist", {"gist_id": gist_id}, state=flip_one_char(ir.request_state), responses=answers(ir)
        )
        assert_new_input_required(result, ir.request_state)
        assert og.exists(gist_id), "a tampered state deleted the gist"
        missing = await retry(client, "delete_gist", {"gist_id": gist_id}, state=ir.request_state, responses=None)
        assert_new_input_required(missing, ir.request_state)
    assert og.exists(gist_id)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_input_required_replayed_does_not_write_twice(opengist_env, modern):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    args = {"gist_id": gist_id, "file_ops": [{"op": "write", "filename": "a.txt", "content": "approved once\n"}]}
    async with modern as client:
        ir = await ask(client, "update_gist", args)
        approved = answers(ir)
        done = await retry(client, "update_gist", args, state=ir.request_state, responses=approved)
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
        assert og.files(gist_id) == {"a.txt": "approved once\n"}
        og.update(gist_id, {"files": {"a.txt": {"content": "changed since\n"}}})
        commits = len(og.commits(gist_id))
        replay = await retry(client, "update_gist", args, state=ir.request_state, responses=approved)
        assert_new_input_required(replay, ir.request_state)
    assert og.files(gist_id) == {"a.txt": "changed since\n"}, "a replayed approval wrote again"
    assert len(og.commits(gist_id)) == commits


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_input_required_answered_for_another_gist(opengist_env, modern):
    og = api(opengist_env)
    asked = og.create({"a.txt": "a\n"}, "private", title=marker())
    other = og.create({"b.txt": "b\n"}, "private", title=marker())
    async with modern as client:
        ir = await ask(client, "delete_gist", {"gist_id": asked})
        result = await retry(client, "delete_gist", {"gist_id": other}, state=ir.request_state, responses=answers(ir))
        assert_new_input_required(result, ir.request_state)
        files = await retry(
            client, "delete_gist_files", {"gist_id": asked, "filenames": ["a.txt"]}, state=ir.request_state, responses=answers(ir)
        )
        assert isinstance(files, types.InputRequiredResult) or files.is_error, dump(files)
    assert og.exists(asked) and og.exists(other)
    assert og.files(asked) == {"a.txt": "a\n"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_input_required_for_other_files_of_the_same_gist(opengist_env, modern):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}, "private", title=marker())
    async with modern as client:
        ir = await ask(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt"]})
        result = await retry(
            client,
            "delete_gist_files",
            {"gist_id": gist_id, "filenames": ["a.txt", "b.txt"]},
            state=ir.request_state,
            responses=answers(ir),
        )
        assert_new_input_required(result, ir.request_state)
    assert og.files(gist_id) == {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}


# --------------------------------------------------------------------------- two-call token


TOKEN_ROUTES = {
    # The server's switch: dialogs off, even for a client that could show one.
    "elicitation-false": ({"ELICITATION": "false"}, Dialog("accept")),
    # A client that declares no elicitation capability.
    "no-dialog-client": ({}, None),
}

# Each route in each era and on each transport, every pair of values once (4 runs, not 8).
TOKEN_COMBINATIONS = pytest.mark.parametrize(
    ("transport", "era", "route"),
    [
        ("stdio", "legacy", "elicitation-false"),
        ("http", "legacy", "no-dialog-client"),
        ("stdio", MODERN, "no-dialog-client"),
        ("http", MODERN, "elicitation-false"),
    ],
)


@TOKEN_COMBINATIONS
async def test_token_issued_quoted_and_reused(opengist_env, live_server, era, route):
    extra, dialog = TOKEN_ROUTES[route]
    m = marker()
    og = api(opengist_env)
    args = {"files": [{"filename": "t.txt", "content": f"{m}\n"}], "visibility": "public", "title": m}
    async with session(live_server, era, dialog, extra=extra) as client:
        first = await client.call_tool("create_gist", args)
        assert first.is_error and "nothing was changed" in text_of(first).lower(), text_of(first)
        assert "proves only that the same call was made twice" in text_of(first), text_of(first)
        token = token_in(first)
        assert og.titled(m) == [], "the first call of the two created a gist"
        done = await ok(client, "create_gist", {**args, "confirm_token": token})
        assert done["cleared_by"] == "confirm_token"
        assert og.titled(m) == [done["gist"]["id"]]
        await refused(client, "create_gist", {**args, "confirm_token": token}, "already been used")
        await refused(client, "create_gist", {**args, "confirm_token": "v1.forged"}, "not accepted")
    assert og.titled(m) == [done["gist"]["id"]], "a reused token created a second gist"
    assert og.gist(done["gist"]["id"])["visibility"] == "public"
    if dialog is not None:
        assert dialog.calls == [], "ELICITATION=false still asked"


@TOKEN_COMBINATIONS
async def test_token_quoted_with_changed_arguments(opengist_env, live_server, era, route):
    extra, dialog = TOKEN_ROUTES[route]
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}, "private", title=marker())
    other = og.create({"a.txt": "a\n", "z.txt": "z\n"}, "private", title=marker())
    async with session(live_server, era, dialog, extra=extra) as client:
        first = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt"]})
        token = token_in(first)
        for changed in (
            {"gist_id": gist_id, "filenames": ["b.txt"]},
            {"gist_id": gist_id, "filenames": ["a.txt", "b.txt"]},
            {"gist_id": other, "filenames": ["a.txt"]},
        ):
            await refused(client, "delete_gist_files", {**changed, "confirm_token": token}, "different call")
        assert og.files(gist_id) == {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}
        assert og.files(other) == {"a.txt": "a\n", "z.txt": "z\n"}
        # The token still works for the call it was issued for (set order does not matter).
        token2 = token_in(await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["b.txt", "a.txt"]}))
        await ok(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt", "b.txt", "a.txt"], "confirm_token": token2})
    assert og.files(gist_id) == {"c.txt": "c\n"}
    assert og.files(other) == {"a.txt": "a\n", "z.txt": "z\n"}


@TOKEN_COMBINATIONS
async def test_token_for_one_file_does_not_publish_two(opengist_env, live_server, era, route):
    """create_gist's approval covers the exact content: a token for one file cannot be
    replayed with a second file attached, another body, title or visibility."""
    extra, dialog = TOKEN_ROUTES[route]
    m = marker()
    args = {"files": [{"filename": "one.txt", "content": "one\n"}], "visibility": "unlisted", "title": m}
    async with session(live_server, era, dialog, extra=extra) as client:
        token = token_in(await client.call_tool("create_gist", args))
        for changed in (
            {**args, "files": [*args["files"], {"filename": "two.txt", "content": "attached\n"}]},
            {**args, "files": [{"filename": "one.txt", "content": "other body\n"}]},
            {**args, "title": m + " other"},
            {**args, "visibility": "public"},
        ):
            await refused(client, "create_gist", {**changed, "confirm_token": token}, "different call")
    assert api(opengist_env).titled(m) == []


# --------------------------------------------------------------------------- update_gist: asks or not

# (case, starting visibility, arguments, asks)
UPDATE_CASES = [
    ("private-title", "private", {"title": "T"}, False),
    ("private-write", "private", {"file_ops": [{"op": "write", "filename": "a.txt", "content": "W\n"}]}, False),
    ("private-to-unlisted", "private", {"visibility": "unlisted"}, True),
    ("private-to-public", "private", {"visibility": "public"}, True),
    ("unlisted-to-public", "unlisted", {"visibility": "public"}, True),
    ("unlisted-description", "unlisted", {"description": "D"}, True),
    ("public-write", "public", {"file_ops": [{"op": "write", "filename": "a.txt", "content": "W\n"}]}, True),
    ("public-rename", "public", {"file_ops": [{"op": "rename", "filename": "a.txt", "new_filename": "r.txt"}]}, True),
    ("public-to-unlisted", "public", {"visibility": "unlisted"}, False),
    ("public-to-private", "public", {"visibility": "private"}, False),
    (
        "public-to-private-with-write",
        "public",
        {"visibility": "private", "file_ops": [{"op": "write", "filename": "a.txt", "content": "W\n"}]},
        False,
    ),
    ("public-to-unlisted-with-title", "public", {"visibility": "unlisted", "title": "T"}, True),
]


# Each case once; the cases take turns over the four era x transport combinations.
COMBINATIONS = [("stdio", "legacy"), ("http", MODERN), ("http", "legacy"), ("stdio", MODERN)]


@pytest.mark.parametrize(
    ("case", "start", "change", "asks", "transport", "era"),
    [(*c, *COMBINATIONS[i % 4]) for i, c in enumerate(UPDATE_CASES)],
    ids=[c[0] for c in UPDATE_CASES],
)
async def test_update_asks_only_when_it_should(opengist_env, live_server, era, case, start, change, asks):
    og = api(opengist_env)
    title = marker()
    gist_id = og.create({"a.txt": "a\n"}, start, title=title, description="")
    before = og.gist(gist_id)
    dialog = Dialog("decline")  # asking means nothing happens
    async with session(live_server, era, dialog) as client:
        result = await client.call_tool("update_gist", {"gist_id": gist_id, **change})
    after = og.gist(gist_id)
    if asks:
        assert len(dialog.calls) == 1, f"{case}: expected a question"
        assert result.is_error and "declined" in text_of(result), text_of(result)
        assert after["visibility"] == before["visibility"] and after["title"] == title
        assert og.files(gist_id) == {"a.txt": "a\n"} and after["description"] == ""
        return
    assert dialog.calls == [], f"{case}: asked without need: {dialog.calls[0].message if dialog.calls else ''}"
    assert not result.is_error, text_of(result)
    assert result.structured_content["cleared_by"] == "not_needed"
    assert after["visibility"] == change.get("visibility", start)
    assert after["title"] == change.get("title", title)
    expected_files = {"a.txt": "W\n"} if change.get("file_ops") else {"a.txt": "a\n"}
    assert og.files(gist_id) == expected_files


# --------------------------------------------------------------------------- what the question says


@DIAGONAL
async def test_the_question_states_what_opengist_holds(opengist_env, live_server, era):
    og = api(opengist_env)
    other = api(opengist_env, "user2")
    gist_id = og.create({"a.txt": "a" * 100, "b.txt": "b" * 20, "c.txt": "c" * 3}, "public", title=marker())
    og.update(gist_id, {"files": {"a.txt": {"content": "a" * 50}}})
    other.fork(gist_id)
    other.toggle_like(gist_id)
    held = og.gist(gist_id)
    total = sum(f["size"] for f in held["files"].values())
    assert total == 73 and held["fork_count"] == 1 and held["like_count"] == 1, held
    dialog = Dialog("decline")
    async with session(live_server, era, dialog) as client:
        await refused(client, "delete_gist", {"gist_id": gist_id}, "declined")
        await refused(client, "delete_gist_files", {"gist_id": gist_id, "filenames": ["a.txt", "c.txt"]}, "declined")
    whole, files = (call.message for call in dialog.calls)
    for fact in (gist_id, "(public)", "3 file(s)", "73 bytes", "1 fork(s)", "1 like(s)"):
        assert fact in whole, f"{fact!r} not in: {whole}"
    for fact in (gist_id, "2 file(s) (53 bytes)", "1 file(s) will remain"):
        assert fact in files, f"{fact!r} not in: {files}"
    assert og.exists(gist_id) and len(og.files(gist_id)) == 3


# --------------------------------------------------------------------------- callers and replicas over HTTP

# The servers below see callers by their own Authorization headers, as behind a gateway.
NO_AUTH = {"OPENGIST_MCP_HTTP_NO_AUTH": "true"}


@pytest.mark.parametrize("transport", ["http"])
async def test_input_required_of_one_caller_is_not_anothers(opengist_env, live_server, transport):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    # Callers told apart by their own Authorization headers (as behind a gateway): no shared
    # secret, which would make them one caller.
    url = live_server(extra=NO_AUTH).url
    args = {"gist_id": gist_id}
    async with connect(http_as(url, "alice"), MODERN, NeverAsked()) as alice:
        ir = await ask(alice, "delete_gist", args)
        async with connect(http_as(url, "mallory"), MODERN, NeverAsked()) as mallory:
            stolen = await retry(mallory, "delete_gist", args, state=ir.request_state, responses=answers(ir))
            assert_new_input_required(stolen, ir.request_state)
        assert og.exists(gist_id), "another caller's answer deleted the gist"
        done = await retry(alice, "delete_gist", args, state=ir.request_state, responses=answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert not og.exists(gist_id)


@pytest.mark.parametrize("transport", ["http"])
async def test_token_of_one_caller_is_not_anothers(opengist_env, live_server, era, transport):
    og = api(opengist_env)
    gist_id = og.create({"a.txt": "a\n"}, "public", title=marker())
    url = live_server(extra={"ELICITATION": "false", **NO_AUTH}).url
    async with connect(http_as(url, "alice"), era, None) as alice:
        token = token_in(await alice.call_tool("delete_gist", {"gist_id": gist_id}))
        async with connect(http_as(url, "mallory"), era, None) as mallory:
            await refused(mallory, "delete_gist", {"gist_id": gist_id, "confirm_token": token}, "not accepted")
        assert og.exists(gist_id)
        await ok(alice, "delete_gist", {"gist_id": gist_id, "confirm_token": token})
    assert not og.exists(gist_id)


@pytest.mark.parametrize("transport", ["http"])
async def test_replicas_sharing_a_seal_key_answer_each_others_questions(opengist_env, live_server, transport):
    """Two server processes behind one gateway share OPENGIST_MCP_SEAL_KEY: a question one
    asked can be answered on the other. Without the shared key it cannot."""
    og = api(opengist_env)
    key = {"OPENGIST_MCP_SEAL_KEY": "ab" * 32, **NO_AUTH}
    first, second, stranger = live_server(extra=key).url, live_server(extra=key).url, live_server(extra=NO_AUTH).url
    shared = og.create({"a.txt": "a\n", "b.txt": "b\n"}, "private", title=marker())
    args = {"gist_id": shared, "filenames": ["a.txt"]}
    async with connect(http_as(first, "alice"), MODERN, NeverAsked()) as one:
        ir = await ask(one, "delete_gist_files", args)
    async with connect(http_as(stranger, "alice"), MODERN, NeverAsked()) as other:
        unknown = await retry(other, "delete_gist_files", args, state=ir.request_state, responses=answers(ir))
        assert_new_input_required(unknown, ir.request_state)
    assert og.files(shared) == {"a.txt": "a\n", "b.txt": "b\n"}, "a server without the key accepted the seal"
    async with connect(http_as(second, "alice"), MODERN, NeverAsked()) as two:
        done = await retry(two, "delete_gist_files", args, state=ir.request_state, responses=answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert og.files(shared) == {"b.txt": "b\n"}
