"""opengist-mcp against a REAL Opengist (marker `opengist`): the first scenarios.

Selected only with `-m opengist` (scripts/test does, after scripts/provision-opengist);
then a missing environment FAILS them (no skip).

Every write is checked by reading the gist back through Opengist's REST API directly
(urllib, `Authorization: Bearer`), never through the server under test.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from support import target_of
from live import api, gist_id_in
from support import Dialog, connect, dump, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

def api_get(env: dict[str, str], path: str) -> tuple[int, Any]:
    response = api(env).get(path)
    return response.status, response.body


async def create_private(client, marker: str) -> str:
    result = await client.call_tool(
        "create_gist",
        {
            "files": [{"filename": f"{marker}.txt", "content": f"content {marker}\n"}],
            "visibility": "private",
            "title": f"title {marker}",
        },
    )
    assert not result.is_error, text_of(result)
    return gist_id_in(result.structured_content)


async def test_private_create_asks_nothing_and_exists(opengist_env, live_server, era):
    marker = f"e2e-{uuid.uuid4().hex[:12]}"
    dialog = Dialog("decline")  # would refuse if asked; a private create must not ask
    async with connect(target_of(live_server()), era, dialog) as client:
        gist_id = await create_private(client, marker)
    assert dialog.calls == [], "creating a private gist must not ask"
    status, body = api_get(opengist_env, f"/api/gists/{gist_id}")
    assert status == 200, status
    assert f"content {marker}" in json.dumps(body), body


async def test_delete_accepted_removes_the_gist(opengist_env, live_server, era):
    marker = f"e2e-{uuid.uuid4().hex[:12]}"
    dialog = Dialog("accept")
    async with connect(target_of(live_server()), era, dialog) as client:
        gist_id = await create_private(client, marker)
        assert api_get(opengist_env, f"/api/gists/{gist_id}")[0] == 200
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert not result.is_error, text_of(result)
    assert len(dialog.calls) == 1, dialog.calls
    shown = dump(dialog.calls[0])
    # The question carries server-side facts only: no title, no filename, no content.
    for user_text in (f"title {marker}", f"{marker}.txt", f"content {marker}"):
        assert user_text not in shown, f"the dialog showed user-supplied text {user_text!r}: {shown}"
    assert api_get(opengist_env, f"/api/gists/{gist_id}")[0] == 404


async def test_delete_declined_keeps_the_gist(opengist_env, live_server, era):
    marker = f"e2e-{uuid.uuid4().hex[:12]}"
    dialog = Dialog("decline")
    async with connect(target_of(live_server()), era, dialog) as client:
        gist_id = await create_private(client, marker)
        result = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert result.is_error, text_of(result)
        assert "declined" in text_of(result).lower(), text_of(result)
    assert len(dialog.calls) == 1, dialog.calls
    status, body = api_get(opengist_env, f"/api/gists/{gist_id}")
    assert status == 200, status
    assert f"content {marker}" in json.dumps(body), body
