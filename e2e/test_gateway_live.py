"""opengist-mcp behind a real gateway, fastmcp's proxy (pinned: scripts/gateway-env), against a
REAL Opengist (markers `opengist` and `gateway`; scripts/test runs them in their own layer).

The Python client talks to the proxy over streamable HTTP; the proxy talks to opengist-mcp over
streamable HTTP and mirrors the client's era. The proxy declares elicitation upstream whatever
its own client declared, so:

- 2025-11-25, a client without dialogs: the server's pushed dialog fails at the proxy (an
  error answer, "elicitation not supported"); the guard hands out the two-call token and says
  the dialog failed. The second call with the token runs. Opengist is checked directly.
- a client that can show dialogs, both eras: the question passes through the proxy and the
  answer decides (accept runs, decline changes nothing).
- 2026-07-28, a client without dialogs: the proxy's declaration reaches the server, which returns
  input_required; the client cannot answer it and refuses locally. Nothing changes in Opengist
  (what the gateway declares is all the server can know).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from live import api, gist_id_in, marker
from support import ROOT, TARGET, Dialog, Launcher, connect, free_port, opengist_mcp_bin, require_binary, text_of, token_in, wait_listening

pytestmark = [pytest.mark.anyio, pytest.mark.opengist, pytest.mark.gateway]

GATEWAY_PYTHON = TARGET / "gateway-venv" / "bin" / "python"
PROXY_SCRIPT = Path(__file__).parent / "gateway" / "fastmcp_proxy.py"


@pytest.fixture
def gateway(opengist_env, launcher: Launcher, tmp_path: Path) -> Iterator[str]:
    """opengist-mcp (full token) behind fastmcp's proxy; yields the proxy's URL."""
    # The pinned gateway, installed by the project's script (idempotent: quick once stamped).
    setup = subprocess.run(["bash", str(ROOT / "scripts" / "gateway-env")], capture_output=True, text=True)
    if setup.returncode != 0 or not GATEWAY_PYTHON.exists():
        pytest.fail(f"scripts/gateway-env failed (exit {setup.returncode}):\n{setup.stderr}", pytrace=False)
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    backend = launcher.http(
        binary,
        env={"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"]},
    )
    port = free_port()
    log = tmp_path / "gateway.log"
    with open(log, "wb") as out:
        proxy = subprocess.Popen(
            [str(GATEWAY_PYTHON), str(PROXY_SCRIPT), backend.url, str(port)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")},
            start_new_session=True,
        )
    try:
        assert wait_listening(proxy, port), f"the proxy did not listen; log:\n{log.read_text(errors='replace')}"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proxy.kill()
        proxy.wait(timeout=30)


def public_gist(tag: str) -> dict:
    return {
        "files": [{"filename": f"{tag}.txt", "content": f"content {tag}\n"}],
        "visibility": "public",
        "title": f"title {tag}",
    }


def gists_titled(env: dict[str, str], title: str) -> list[dict]:
    response = api(env).get("/api/gists?per_page=100")
    assert response.status == 200, response
    return [g for g in response.body if g.get("title") == title]


async def test_legacy_without_dialogs_gets_a_token_through_the_gateway(opengist_env, gateway):
    tag = marker()
    async with connect(gateway, "legacy") as client:
        first = await client.call_tool("create_gist", public_gist(tag))
        text = text_of(first)
        assert first.is_error, text
        assert "the approval dialog failed" in text, text
        assert "not supported" in text, text
        token = token_in(first)
        # create_gist has an outputSchema: the token's facts travel in _meta, not structuredContent.
        assert first.structured_content is None, first.structured_content
        assert (first.meta or {})["ask-first/token_reply"]["confirm_token"] == token, first.meta
        assert gists_titled(opengist_env, f"title {tag}") == [], "the first call changed nothing"

        second = await client.call_tool("create_gist", {**public_gist(tag), "confirm_token": token})
        assert not second.is_error, text_of(second)
        gist_id = gist_id_in(second.structured_content)
    held = api(opengist_env).gist(gist_id)
    assert held["visibility"] == "public", held
    assert api(opengist_env).files(gist_id) == {f"{tag}.txt": f"content {tag}\n"}

    # Deleting through the gateway: the same path, and Opengist no longer has it.
    async with connect(gateway, "legacy") as client:
        first = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert first.is_error and "the approval dialog failed" in text_of(first), text_of(first)
        assert api(opengist_env).exists(gist_id)
        second = await client.call_tool("delete_gist", {"gist_id": gist_id, "confirm_token": token_in(first)})
        assert not second.is_error, text_of(second)
    assert not api(opengist_env).exists(gist_id)


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_dialog_passes_through_the_gateway(opengist_env, gateway, era, answer):
    tag = marker()
    dialog = Dialog(answer)
    async with connect(gateway, era, dialog) as client:
        result = await client.call_tool("create_gist", public_gist(tag))
    assert len(dialog.calls) == 1, dialog.calls
    found = gists_titled(opengist_env, f"title {tag}")
    if answer == "accept":
        assert not result.is_error, text_of(result)
        gist_id = gist_id_in(result.structured_content)
        assert api(opengist_env).gist(gist_id)["visibility"] == "public"
        assert len(found) == 1, found
        assert api(opengist_env).delete(gist_id) in (200, 204)
    else:
        assert result.is_error, text_of(result)
        assert "declined" in text_of(result), text_of(result)
        assert found == [], found


async def test_modern_without_dialogs_behind_the_gateway_changes_nothing(opengist_env, gateway):
    tag = marker()
    async with connect(gateway, "2026-07-28") as client:
        with pytest.raises(Exception) as refused:
            await client.call_tool("create_gist", public_gist(tag))
    assert "not supported" in str(refused.value).lower(), refused.value
    assert gists_titled(opengist_env, f"title {tag}") == []
