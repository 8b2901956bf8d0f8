"""Writes whose answer was lost, against a REAL Opengist.

opengist-mcp talks to the real Opengist through `fault_proxy.FaultProxy`, which forwards the
write and then drops Opengist's answer (`drop`) or holds it past the request timeout
(`delay`), so Opengist really applies the write and the tool never hears back. Per write tool
(create, update, delete files, delete, fork, like), the tool must report what really happened,
found by reading back, never "try again" or "the instance may be down"; and Opengist (its own
REST API, not the tool) must hold exactly one application of the write: no duplicate gist, no
second toggle. A `refuse` fault (the write never reaches Opengist) must be reported as not
applied, with nothing changed. When the lost answer is the one to the side-effect-free check
before asking (`probe=True` rules), the tool must say only that the check could not be made,
that nothing was changed and what to do, ask no one, and send no write.
"""

from __future__ import annotations

import pytest
from support import target_of
from fault_proxy import FaultProxy, Rule
from live import TOKENS, api, gist_id_in, marker
from support import Dialog, connect, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

TIMEOUT_S = 5  # OPENGIST_MCP_REQUEST_TIMEOUT_SECS for these tests (a loaded 2-core machine can take 2 s to list gists)
HELD_S = 10.0  # how long `delay` holds the answer: past the timeout
COMBOS = [("legacy", "stdio"), ("2026-07-28", "http")]
NEVER = ("try again", "may be down", "overloaded")


@pytest.fixture
def proxy(opengist_env):
    proxy = FaultProxy(opengist_env["OPENGIST_E2E_URL"]).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def through_proxy(proxy, opengist_env, opengist_mcp_server):
    def start(token: str = "full"):
        env = {
            "OPENGIST_URL": proxy.url,
            "OPENGIST_TOKEN": opengist_env[TOKENS[token]],
            "OPENGIST_MCP_REQUEST_TIMEOUT_SECS": str(TIMEOUT_S),
        }
        return opengist_mcp_server(env=env)

    return start


def lose(proxy: FaultProxy, method: str, path: str, fault: str) -> None:
    proxy.rules.append(Rule(method, path, fault, delay_s=HELD_S))


def assert_honest(result, *must: str) -> str:
    text = text_of(result)
    for word in NEVER:
        assert word not in text.lower(), f"a write whose answer was lost says {word!r}:\n{text}"
    for word in must:
        assert word in text, f"{word!r} not in:\n{text}"
    return text


def my_gists_titled(env, title: str) -> list[str]:
    listing = api(env).get("/api/gists?per_page=100")
    assert listing.status == 200, listing
    return [g["id"] for g in listing.body if g.get("title") == title]


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_create_whose_answer_was_lost_reports_the_one_gist_made(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    lose(proxy, "POST", "/api/gists", fault)
    args = {"files": [{"filename": f"{m}.txt", "content": f"content {m}\n"}], "visibility": "private", "title": f"title {m}"}
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("create_gist", args)
    assert not result.is_error, assert_honest(result)
    reported = gist_id_in(result.structured_content)
    made = my_gists_titled(opengist_env, f"title {m}")
    assert made == [reported], f"Opengist holds {made}, the tool reported {reported}"
    assert api(opengist_env).files(reported) == {f"{m}.txt": f"content {m}\n"}
    assert proxy.writes("POST", "/api/gists") == 1, "the create was sent more than once"


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_update_whose_answer_was_lost_reports_the_new_state(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    gist_id = api(opengist_env).create({"a.txt": "old a\n", "b.txt": "old b\n"}, title=f"title {m}")
    lose(proxy, "PATCH", f"/api/gists/{gist_id}", fault)
    args = {"gist_id": gist_id, "title": f"new title {m}", "file_ops": [{"op": "write", "filename": "a.txt", "content": f"new a {m}\n"}]}
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("update_gist", args)
    assert not result.is_error, assert_honest(result)
    assert result.structured_content["revision"] != result.structured_content["previous_revision"]
    held = api(opengist_env).gist(gist_id)
    assert held["title"] == f"new title {m}", held["title"]
    assert api(opengist_env).files(gist_id) == {"a.txt": f"new a {m}\n", "b.txt": "old b\n"}


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_delete_files_whose_answer_was_lost_reports_what_remains(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    gist_id = api(opengist_env).create({"keep.txt": f"keep {m}\n", "drop.txt": f"drop {m}\n"}, title=f"title {m}")
    lose(proxy, "PATCH", f"/api/gists/{gist_id}", fault)
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("delete_gist_files", {"gist_id": gist_id, "filenames": ["drop.txt"]})
    assert not result.is_error, assert_honest(result)
    assert result.structured_content["remaining"] == ["keep.txt"], result.structured_content
    assert api(opengist_env).files(gist_id) == {"keep.txt": f"keep {m}\n"}


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_delete_whose_answer_was_lost_reports_the_gist_gone(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    gist_id = api(opengist_env).create({f"{m}.txt": "x\n"}, title=f"title {m}")
    lose(proxy, "DELETE", f"/api/gists/{gist_id}", fault)
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
    assert not result.is_error, assert_honest(result)
    assert result.structured_content["deleted"] is True
    gone = not api(opengist_env).exists(gist_id)
    assert gone, "the tool said deleted, Opengist still holds the gist"


def someone_elses_gist(env, m: str) -> str:
    return api(env, "user2").create({f"{m}.txt": f"shared {m}\n"}, visibility="public", title=f"title {m}")


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_fork_whose_answer_was_lost_reports_the_fork(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    parent = someone_elses_gist(opengist_env, m)
    lose(proxy, "POST", f"/api/gists/{parent}/forks", fault)
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("fork_gist", {"gist_id": parent})
    assert not result.is_error, assert_honest(result)
    assert result.structured_content["created"] is True, result.structured_content
    forks = api(opengist_env).get(f"/api/gists/{parent}/forks")
    assert forks.status == 200, forks
    assert [f["id"] for f in forks.body] == [result.structured_content["fork"]["id"]], forks.body


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_like_whose_answer_was_lost_reports_the_like_once(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    gist_id = someone_elses_gist(opengist_env, m)
    lose(proxy, "PUT", f"/api/gists/{gist_id}/like", fault)
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("set_gist_like", {"gist_id": gist_id, "liked": True})
    assert not result.is_error, assert_honest(result)
    assert result.structured_content["liked"] is True and result.structured_content["changed"] is True
    liked = api(opengist_env).get(f"/api/gists/{gist_id}/like").status
    assert liked == 204, f"Opengist says the like state is {liked} (204 = liked)"
    assert proxy.writes("PUT", f"/api/gists/{gist_id}/like") == 1, "the toggle was sent more than once"


# ---- the write never arrived: said plainly, nothing changed ------------------------------------


@pytest.mark.parametrize("era,transport", COMBOS)
async def test_a_create_that_never_arrived_is_reported_as_not_made(opengist_env, proxy, through_proxy, era):
    m = marker()
    lose(proxy, "POST", "/api/gists", "refuse")
    args = {"files": [{"filename": f"{m}.txt", "content": "x\n"}], "visibility": "private", "title": f"title {m}"}
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("create_gist", args)
    assert result.is_error
    assert_honest(result, "NOT applied", "list_gists")
    assert my_gists_titled(opengist_env, f"title {m}") == []


@pytest.mark.parametrize("era,transport", COMBOS)
async def test_a_delete_that_never_arrived_is_reported_as_not_done(opengist_env, proxy, through_proxy, era):
    m = marker()
    gist_id = api(opengist_env).create({f"{m}.txt": "x\n"}, title=f"title {m}")
    lose(proxy, "DELETE", f"/api/gists/{gist_id}", "refuse")
    async with connect(target_of(through_proxy()), era, Dialog("accept")) as client:
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
    assert result.is_error
    assert_honest(result, "NOT applied", f"get_gist {gist_id}")
    kept = api(opengist_env).exists(gist_id)
    assert kept


# ---- the check before asking lost its answer: nothing changed, and it says only that ----------
# The check is a `{}` request Opengist refuses before it writes anything (422). When its answer
# is lost, the tool must say that the check could not be made, that nothing was changed, and
# what to do; never that Opengist may have applied anything, and never that the call cannot
# succeed (that is not known). No one is asked, and the write itself is never sent.

CHECK_MUST = ("could not be made", "nothing was changed", "No one was asked", "opengist-mcp doctor")
CHECK_NEVER = ("may or may not", "applied", "cannot succeed")


def lose_check(proxy: FaultProxy, method: str, path: str, fault: str) -> None:
    proxy.rules.append(Rule(method, path, fault, delay_s=HELD_S, probe=True))


def assert_check_unmade(result) -> str:
    assert result.is_error, text_of(result)
    text = text_of(result)
    for word in CHECK_MUST:
        assert word in text, f"{word!r} not in:\n{text}"
    for word in CHECK_NEVER:
        assert word not in text, f"a check whose answer was lost says {word!r}:\n{text}"
    return text


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_a_create_whose_check_lost_its_answer_changes_nothing(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    lose_check(proxy, "POST", "/api/gists", fault)
    dialog = Dialog("accept")
    args = {"files": [{"filename": f"{m}.txt", "content": "x\n"}], "visibility": "public", "title": f"title {m}"}
    async with connect(target_of(through_proxy()), era, dialog) as client:
        result = await client.call_tool("create_gist", args)
    assert_check_unmade(result)
    assert "create a gist" in text_of(result)
    assert dialog.calls == [], "a person was asked although the check could not be made"
    assert proxy.probes.count(("POST", "/api/gists")) == 1, proxy.probes
    assert proxy.writes("POST", "/api/gists") == 0, "the create itself was sent"
    assert my_gists_titled(opengist_env, f"title {m}") == []


@pytest.mark.parametrize("fault", ["drop", "delay"])
@pytest.mark.parametrize("era,transport", COMBOS)
async def test_a_delete_whose_check_lost_its_answer_changes_nothing(opengist_env, proxy, through_proxy, era, fault):
    m = marker()
    gist_id = api(opengist_env).create({f"{m}.txt": f"kept {m}\n"}, title=f"title {m}")
    lose_check(proxy, "PATCH", f"/api/gists/{gist_id}", fault)
    dialog = Dialog("accept")
    async with connect(target_of(through_proxy()), era, dialog) as client:
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
    assert_check_unmade(result)
    assert "delete a gist" in text_of(result)
    assert dialog.calls == [], "a person was asked although the check could not be made"
    assert proxy.writes("DELETE", f"/api/gists/{gist_id}") == 0, "the delete itself was sent"
    assert api(opengist_env).files(gist_id) == {f"{m}.txt": f"kept {m}\n"}
    held = api(opengist_env).gist(gist_id)
    assert held["title"] == f"title {m}", held["title"]
