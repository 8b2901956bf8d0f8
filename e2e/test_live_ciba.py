"""CIBA in opengist-mcp against a REAL Opengist (marker `opengist`) and a real OpenID provider
(oidc-provider with CIBA and RAR, e2e/oidc/server.mjs): adopted through settings only
(`OPENGIST_MCP_HTTP_AUTH=oauth`, `OPENGIST_MCP_CIBA_*`, `OPENGIST_MCP_APPROVAL_ROUTES`), with
`delete_gist` verified, a delete runs only after the person's device approved, once; repeating
the call (a model alone, even with the token route listed) or a decline deletes nothing. Every
outcome is read back through Opengist's REST API."""

from __future__ import annotations

import subprocess

import pytest
from live import api, marker
from support import HttpTarget, _stop_popen, connect, free_port, opengist_mcp_bin, require_binary, text_of, wait_listening
from test_ciba import Ciba, pending_code
from test_oauth import oidc_command, start, start_issuer

pytestmark = [pytest.mark.anyio, pytest.mark.opengist, pytest.mark.oauth]


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_verified_delete_runs_once_after_the_device_approved(era, opengist_env, tmp_path):
    command = oidc_command()
    binary = require_binary(opengist_mcp_bin(), "cargo build --bin opengist-mcp")
    started: list[subprocess.Popen[bytes]] = []
    try:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        issuer = start_issuer(command, tmp_path, "issuer", resource, tmp_path / "keys.json", started)
        env = {
            "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
            "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
            "OPENGIST_MCP_HTTP_AUTH": "oauth",
            "OPENGIST_MCP_OAUTH_ISSUER": issuer,
            "OPENGIST_MCP_OAUTH_RESOURCE": resource,
            "OPENGIST_MCP_CIBA_CLIENT_ID": "mcp-ciba",
            "OPENGIST_MCP_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
            # The token route is listed, but a verified tool never takes it.
            "OPENGIST_MCP_APPROVAL_ROUTES": "ciba,form,token",
            "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist,delete_gist_files",
            "XDG_STATE_HOME": str(tmp_path / "state"),
        }
        server = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "opengist-mcp", started)
        assert wait_listening(server.proc, port), f"opengist-mcp did not start:\n{server.output()}"
        ciba = Ciba(issuer=issuer, url=resource, resource=resource, notes_output=server.output, answered=[])
        og = api(opengist_env)
        gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
        async with connect(HttpTarget(resource, ciba.token("alice")), era, dialog=None) as client:
            call = {"gist_id": gist_id}
            code = pending_code(await client.call_tool("delete_gist", call), "delete_gist")
            # A model alone repeating the call: still pending, nothing deleted.
            assert pending_code(await client.call_tool("delete_gist", call), "delete_gist") == code
            assert og.exists(gist_id)
            # Declined on the device: nothing deleted.
            ciba.device(code, "deny")
            declined = await client.call_tool("delete_gist", call)
            assert declined.is_error and "declined on their device" in text_of(declined), text_of(declined)
            assert og.exists(gist_id)
            # Asked afresh and approved: the delete runs, once.
            ciba.device(pending_code(await client.call_tool("delete_gist", call), "delete_gist"), "approve")
            ran = await client.call_tool("delete_gist", call)
            assert not ran.is_error, text_of(ran)
            assert not og.exists(gist_id), "Opengist still holds the gist"
            # A file deleted the same way: Opengist holds the rest, and the result says who
            # cleared it.
            two = og.create({"a.txt": "a\n", "b.txt": "b\n"}, "private", title=marker())
            files = {"gist_id": two, "filenames": ["a.txt"]}
            code = pending_code(await client.call_tool("delete_gist_files", files), "delete_gist_files")
            assert set(og.files(two)) == {"a.txt", "b.txt"}
            ciba.device(code, "approve")
            ran = await client.call_tool("delete_gist_files", files)
            assert not ran.is_error, text_of(ran)
            assert set(og.files(two)) == {"b.txt"}
            assert ran.structured_content["cleared_by"] == "identity_provider", ran.structured_content
        output = server.output()
        assert "mcp-ciba-secret" not in output and "eyJ" not in output
    finally:
        for proc in started:
            _stop_popen(proc)


def test_six_concurrent_retries_after_one_yes_delete_the_gist_once(opengist_env, tmp_path):
    """The identical `delete_gist` sent six times at once after the person approved on their
    device, round after round: the delete runs exactly once a round and the yes is never lost
    (no retry answers that the approval was used or refused while nothing ran). What Opengist
    holds is read through its REST API; how many deletes ran, from the audit log."""
    import json
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from test_ciba import call_tool, structured

    command = oidc_command()
    binary = require_binary(opengist_mcp_bin(), "cargo build --bin opengist-mcp")
    started: list[subprocess.Popen[bytes]] = []
    audit = tmp_path / "audit.jsonl"
    try:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        issuer = start_issuer(command, tmp_path, "issuer", resource, tmp_path / "keys.json", started)
        env = {
            "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
            "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"],
            "OPENGIST_MCP_HTTP_AUTH": "oauth",
            "OPENGIST_MCP_OAUTH_ISSUER": issuer,
            "OPENGIST_MCP_OAUTH_RESOURCE": resource,
            "OPENGIST_MCP_CIBA_CLIENT_ID": "mcp-ciba",
            "OPENGIST_MCP_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
            "OPENGIST_MCP_APPROVAL_ROUTES": "ciba",
            "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist,delete_gist_files",
            "OPENGIST_MCP_AUDIT_LOG": str(audit),
            "XDG_STATE_HOME": str(tmp_path / "state"),
        }
        server = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, "opengist-mcp", started)
        assert wait_listening(server.proc, port), f"opengist-mcp did not start:\n{server.output()}"
        ciba = Ciba(issuer=issuer, url=resource, resource=resource, notes_output=server.output, answered=[], audit=audit)
        alice = ciba.bearer("alice")
        og = api(opengist_env)
        for round_ in range(4):
            gist_id = og.create({"a.txt": "a\n"}, "private", title=marker())
            code = structured(call_tool(ciba, alice, 1, "delete_gist", {"gist_id": gist_id}))["binding_code"]
            ciba.device(code, "approve")
            barrier = threading.Barrier(6)

            def retry(i: int, gist_id: str = gist_id, barrier: threading.Barrier = barrier) -> dict:
                barrier.wait()
                return call_tool(ciba, alice, 10 + i, "delete_gist", {"gist_id": gist_id})

            with ThreadPoolExecutor(max_workers=6) as pool:
                answers = list(pool.map(retry, range(6)))
            ran = [a for a in answers if not a["result"].get("isError")]
            assert len(ran) == 1, f"round {round_}: {[structured(a) or a for a in answers]}"
            for other in answers:
                if other is not ran[0]:
                    # Its twin ran: told so, or (resolved while or after Opengist deleted the
                    # gist) Opengist's own answer about a gist that is going or gone; never that
                    # the approval was used up or refused while nothing ran.
                    text = "\n".join(b.get("text", "") for b in other["result"].get("content", []))
                    assert other["result"].get("isError"), text
                    assert "already used" not in text and "answer was refused" not in text, text
                    assert structured(other).get("binding_code") != code, text
            assert not og.exists(gist_id), f"round {round_}: Opengist still holds the gist"
            lines = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]
            executed = [line for line in lines if line.get("tool") == "delete_gist" and line.get("outcome") == "executed"]
            assert len(executed) == round_ + 1, f"round {round_}: {len(executed)} deletes ran"
    finally:
        for proc in started:
            _stop_popen(proc)
