"""A link names the gist Opengist shows at it, against a REAL Opengist
(marker `opengist`).

Opengist finds the gist at `<base>/<user>/<x>` by the user and `x` together: that user's
gist whose uuid starts with `x` or whose custom URL is `x`. Another user may give a public
gist the custom URL `X`, where `X` is the token owner's private gist id; the link
`<base>/<that user>/X` then shows THEIR gist, and the server must read that one (or refuse to
delete it, since the token's account does not own it), never the token owner's private gist
`X`. A question's link to the gist's page is `<base>/<owner>/<uuid>` for the same reason:
the owner's name scopes it, and the uuid is Opengist's, never a custom URL someone chose.
Every outcome is read back through Opengist's REST API directly.
"""

from __future__ import annotations

import json

import pytest
from live import DIAGONAL, WebSession, api, gist_id_in, marker, ok, refused, session
from support import Dialog

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]


def give_custom_url(env: dict[str, str], who: str, owner: str, gist_id: str, url: str, title: str) -> None:
    """Sets a gist's custom URL through Opengist's web form (its REST API has no field for
    it), as `who` ("admin" or "user2") logged in."""
    web = WebSession(env, who)
    page = f"/{owner}/{gist_id}"
    web.submit(page + "/settings", page + "/metadata", {"title": title, "description": "", "url": url, "topics": ""})


def decoy(env: dict[str, str]) -> tuple[str, str, str, str]:
    """The admin's private gist X and user2's public gist whose custom URL is X:
    (base, user2's name, X, user2's gist id)."""
    base = env["OPENGIST_E2E_URL"].rstrip("/")
    user2 = env.get("OPENGIST_E2E_USER2", "e2e-user2")
    m = marker()
    private_id = api(env).create({"secret.txt": f"admin secret {m}\n"}, "private", title=m)
    theirs = api(env, "user2")
    their_id = theirs.create({"public.txt": f"user2 public {m}\n"}, "public", title=m)
    give_custom_url(env, "user2", user2, their_id, private_id, m)
    # Opengist itself now shows user2's gist at <base>/user2/X.
    assert theirs.gist(their_id)["slug_url"] == private_id, "the custom URL was not set"
    return base, user2, private_id, their_id


@DIAGONAL
async def test_a_link_reads_the_gist_opengist_shows_there(opengist_env, live_server, era):
    base, user2, private_id, their_id = decoy(opengist_env)
    admin = opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin")
    async with session(live_server, era) as client:
        theirs = await ok(client, "get_gist", {"gist_id": f"{base}/{user2}/{private_id}"})
        mine = await ok(client, "get_gist", {"gist_id": f"{base}/{admin}/{private_id}"})
        by_prefix = await ok(client, "get_gist", {"gist_id": f"{base}/{admin}/{private_id[:10].upper()}"})
        by_id = await ok(client, "get_gist", {"gist_id": private_id})
    assert gist_id_in(theirs) == their_id, theirs
    assert "user2 public" in json.dumps(theirs) and "admin secret" not in json.dumps(theirs)
    # Positive controls: the admin's own link, a uuid prefix (as Opengist accepts) and the id.
    for result in (mine, by_prefix, by_id):
        assert gist_id_in(result) == private_id, result
        assert "admin secret" in json.dumps(result)


@DIAGONAL
async def test_delete_through_such_a_link_never_touches_the_owners_private_gist(opengist_env, live_server, era):
    base, user2, private_id, their_id = decoy(opengist_env)
    admin = opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin")
    og = api(opengist_env)
    dialog = Dialog("decline")
    async with session(live_server, era, dialog) as client:
        # user2's gist is what the link names; the token's account does not own it.
        await refused(client, "delete_gist", {"gist_id": f"{base}/{user2}/{private_id}"}, "another account")
        assert dialog.calls == [], "a gist the token cannot delete was asked about"
        # The admin's own link to the same id is asked about, naming the owner.
        await refused(client, "delete_gist", {"gist_id": f"{base}/{admin}/{private_id}"}, "declined")
    assert len(dialog.calls) == 1, dialog.calls
    question = dialog.calls[0].message
    assert private_id in question and f"It belongs to the Opengist user {admin}." in question, question
    # The question links the gist's own page: the owner's name and the uuid, never user2's
    # decoy, though user2's custom URL is that uuid; Opengist shows the admin's gist there.
    link = f"{base}/{admin}/{private_id}"
    assert f"Its page on this Opengist: {link} (open it" in question, question
    shown = WebSession(opengist_env, "admin").page(link)
    assert "admin secret" in shown and "user2 public" not in shown, shown[:2000]
    # Nothing was deleted: both gists are still there, as Opengist holds them.
    assert og.exists(private_id)
    assert api(opengist_env, "user2").exists(their_id)


@DIAGONAL
async def test_a_link_whose_user_does_not_own_the_id_is_an_input_error_naming_both(opengist_env, live_server, era):
    base = opengist_env["OPENGIST_E2E_URL"].rstrip("/")
    user2 = opengist_env.get("OPENGIST_E2E_USER2", "e2e-user2")
    admin = opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin")
    og = api(opengist_env)
    gist_id = og.create({"mine.txt": "mine\n"}, "private", title=marker())
    dialog = Dialog("accept")
    async with session(live_server, era, dialog) as client:
        for tool in ("get_gist", "delete_gist"):
            text = await refused(client, tool, {"gist_id": f"{base}/{user2}/{gist_id}"}, user2, admin, gist_id)
            assert "Nothing was read or changed" in text, text
    assert dialog.calls == [], "an input error asked a person"
    assert og.exists(gist_id)


@DIAGONAL
async def test_questions_name_the_owner_and_link_the_gists_page(opengist_env, live_server, era):
    base = opengist_env["OPENGIST_E2E_URL"].rstrip("/")
    admin = opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin")
    og = api(opengist_env)
    title = marker()
    gist_id = og.create({"a.txt": "a\n", "b.txt": "b\n"}, "private", title=title)
    # A custom URL is the owner's free text: the question's link never uses it.
    slug = f"approve-{title}"
    give_custom_url(opengist_env, "admin", admin, gist_id, slug, title)
    assert og.gist(gist_id)["slug_url"] == slug, "the custom URL was not set"
    dialog = Dialog("decline")
    async with session(live_server, era, dialog) as client:
        await refused(client, "delete_gist_files", {"gist_id": f"{base}/{admin}/{slug}", "filenames": ["b.txt"]}, "declined")
        await refused(client, "update_gist", {"gist_id": gist_id, "visibility": "public"}, "declined")
        await refused(client, "delete_gist", {"gist_id": gist_id}, "declined")
    assert len(dialog.calls) == 3, dialog.calls
    link = f"{base}/{admin}/{gist_id}"
    for call in dialog.calls:
        assert f"It belongs to the Opengist user {admin}." in call.message, call.message
        assert f"Its page on this Opengist: {link} (open it" in call.message, call.message
        assert slug not in call.message, call.message
    # The link opens this gist on the instance (its title is on the page).
    assert title in WebSession(opengist_env, "admin").page(link)
    assert og.files(gist_id) == {"a.txt": "a\n", "b.txt": "b\n"}
    assert og.gist(gist_id)["visibility"] == "private"
