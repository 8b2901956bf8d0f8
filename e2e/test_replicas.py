"""Three opengist-mcp replicas behind a real nginx, sharing OPENGIST_MCP_SEAL_KEY and a real
Redis, against the real Opengist (markers `opengist` and `replicas`).

scripts/replica-env installs redis-server and nginx (Debian packages) and starts them on
loopback with throwaway config and data; the module fixture starts Redis, the replicas and
nginx and stops every one of them by PID, also when a test fails. nginx round-robins (one
worker, so one sequence) over the replicas; its second port keeps each legacy session on the
replica whose id starts its Mcp-Session-Id.

Each approval must be used once across every replica and every restart: what each step did
is read from Opengist's REST API directly, and which replica did it from the shared audit log.
"""

from __future__ import annotations

import os
from typing import Any

import mcp_types as types
import pytest
from live import api, marker
from replica_deployment import (
    AUDIT_KEYS,
    REPLICAS,
    ByHand,
    Deployment,
    answers,
    ask,
    new_lines,
    replica_env,
    retry,
    the_line,
)
from support import Dialog, connect, dump, opengist_mcp_bin, require_binary, text_of, token_in

pytestmark = [pytest.mark.opengist, pytest.mark.replicas, pytest.mark.anyio]

ERA = "2026-07-28"


def opengist_mcp_settings(opengist: dict[str, str]):
    """opengist-mcp's variables for one replica: the real Opengist, and the shared seal key,
    Redis and audit log of the deployment."""

    def settings(d: Deployment, rid: str) -> dict[str, str]:
        return {
            "OPENGIST_URL": opengist["OPENGIST_E2E_URL"],
            "OPENGIST_TOKEN": opengist["OPENGIST_E2E_TOKEN_FULL"],
            "OPENGIST_MCP_SEAL_KEY": d.seal_key,
            "OPENGIST_MCP_REDIS_URL": d.redis_url,
            "OPENGIST_MCP_AUDIT_LOG": str(d.audit_path),
            "OPENGIST_MCP_REPLICA_ID": rid,
            # Behind nginx the Host header is the gateway's address.
            "OPENGIST_MCP_ALLOWED_HOSTS": "127.0.0.1",
        }

    return settings


@pytest.fixture(scope="module")
def opengist() -> dict[str, str]:
    missing = [n for n in ("OPENGIST_E2E_URL", "OPENGIST_E2E_TOKEN_FULL") if not os.environ.get(n)]
    if missing:
        pytest.fail(
            "the replica tests need a provisioned Opengist: run scripts/provision-opengist and source "
            f"target/opengist/run/env.sh (missing: {', '.join(missing)})",
            pytrace=False,
        )
    return {k: v for k, v in os.environ.items() if k.startswith("OPENGIST_E2E_")}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, opengist: dict[str, str]):
    replica_env("install")
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    d = Deployment(tmp_path_factory.mktemp("replicas"), binary, opengist_mcp_settings(opengist))
    try:
        d.start()
        yield d
    finally:
        d.close()


@pytest.fixture
def rest(opengist):
    return api(opengist)


def titled(rest, title: str) -> list[dict[str, Any]]:
    """The token owner's gists with this title, as Opengist holds them (every page)."""
    found: list[dict[str, Any]] = []
    for page in range(1, 51):
        response = rest.get(f"/api/gists?per_page=100&page={page}")
        assert response.status == 200, response
        found += [g for g in response.body if g.get("title") == title]
        pages = int(response.headers.get("X-Total-Pages") or response.headers.get("x-total-pages") or 1)
        if page >= pages or not response.body:
            return found
    raise AssertionError("more than 50 pages of gists: the seeded Opengist is not a throwaway one")


def public_create_args(title: str) -> dict[str, Any]:
    return {"title": title, "visibility": "public", "files": [{"filename": f"{title}.txt", "content": "once"}]}


async def test_asked_on_one_replica_answered_on_another_runs_once_and_a_replay_is_asked_again(deployment, rest):
    title = marker()
    args = public_create_args(title)
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        mark = len(deployment.audit())
        ir = await ask(client, "create_gist", args)
        done = await retry(client, "create_gist", args, ir.request_state, answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
        assert len(titled(rest, title)) == 1
        lines = new_lines(deployment, mark)
        asked = the_line(lines, tool="create_gist", outcome="asked", route="input_required")
        approved = the_line(lines, tool="create_gist", outcome="approved", route="input_required")
        executed = the_line(lines, tool="create_gist", outcome="executed", route="input_required")
        assert asked["replica"] != approved["replica"], "nginx sent the answer to the replica that asked"
        assert executed["replica"] == approved["replica"]

        mark = len(deployment.audit())
        replay = await retry(client, "create_gist", args, ir.request_state, answers(ir))
        assert isinstance(replay, types.InputRequiredResult), f"a replayed state ran again: {dump(replay)}"
        assert replay.request_state != ir.request_state
        assert len(titled(rest, title)) == 1, "a replay on another replica made a second public gist"
        lines = new_lines(deployment, mark)
        refused = the_line(lines, tool="create_gist", outcome="replay_refused")
        assert refused["replica"] != approved["replica"], lines
        assert not [line for line in lines if line["outcome"] == "executed"], lines

    # The same replay sent to each replica directly, the third one included: asked again.
    third = (set(REPLICAS) - {asked["replica"], approved["replica"]}).pop()
    for rid in (third, *REPLICAS):
        async with connect(deployment.replica_url(rid), ERA, ByHand()) as direct:
            mark = len(deployment.audit())
            replay = await retry(direct, "create_gist", args, ir.request_state, answers(ir))
            assert isinstance(replay, types.InputRequiredResult), f"replica {rid} ran a spent state: {dump(replay)}"
            assert the_line(new_lines(deployment, mark), outcome="replay_refused")["replica"] == rid
    assert len(titled(rest, title)) == 1, "a replay on another replica made a second public gist"


async def test_a_declined_state_re_answered_on_another_replica_changes_nothing(deployment, rest):
    gist_id = rest.create({"keep.txt": "still here"})
    args = {"gist_id": gist_id}
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        mark = len(deployment.audit())
        ir = await ask(client, "delete_gist", args)
        declined = await retry(client, "delete_gist", args, ir.request_state, answers(ir, "decline"))
        assert isinstance(declined, types.CallToolResult) and declined.is_error, dump(declined)
        assert "declined" in text_of(declined).lower()
        assert rest.exists(gist_id)
        flipped = await retry(client, "delete_gist", args, ir.request_state, answers(ir, "accept"))
        assert isinstance(flipped, types.InputRequiredResult), f"a declined state was re-answered: {dump(flipped)}"
        assert rest.exists(gist_id), "a declined question, re-answered on another replica, deleted the gist"
        lines = new_lines(deployment, mark)
        no = the_line(lines, tool="delete_gist", outcome="declined")
        replayed = the_line(lines, tool="delete_gist", outcome="replay_refused")
        assert no["replica"] != replayed["replica"], lines
    assert rest.delete(gist_id) == 204


async def test_a_spent_state_still_changes_nothing_after_every_replica_restarts(deployment, rest):
    title = marker()
    args = public_create_args(title)
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        ir = await ask(client, "create_gist", args)
        done = await retry(client, "create_gist", args, ir.request_state, answers(ir))
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert len(titled(rest, title)) == 1
    deployment.restart_replicas()
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        for _ in REPLICAS:  # one try on each replica
            replay = await retry(client, "create_gist", args, ir.request_state, answers(ir))
            assert isinstance(replay, types.InputRequiredResult), f"restart reopened a spent state: {dump(replay)}"
    assert len(titled(rest, title)) == 1, "after a restart a spent state made a second gist"


async def test_the_token_path_runs_once_across_replicas_and_restarts(deployment, rest):
    title = marker()
    args = public_create_args(title)
    async with connect(deployment.rr_url, ERA, dialog=None) as client:
        mark = len(deployment.audit())
        first = await client.session.call_tool("create_gist", args, allow_input_required=True)
        assert isinstance(first, types.CallToolResult) and first.is_error, dump(first)
        token = token_in(first)
        assert titled(rest, title) == []
        done = await client.session.call_tool("create_gist", {**args, "confirm_token": token}, allow_input_required=True)
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
        assert len(titled(rest, title)) == 1
        again = await client.session.call_tool("create_gist", {**args, "confirm_token": token}, allow_input_required=True)
        assert again.is_error and "already been used" in text_of(again), text_of(again)
        assert len(titled(rest, title)) == 1, "a spent token ran again on another replica"
        lines = new_lines(deployment, mark)
        issued = [line for line in lines if line["outcome"] == "asked" and line["route"] == "token"]
        approved = the_line(lines, tool="create_gist", outcome="approved", route="token")
        refused = the_line(lines, tool="create_gist", outcome="replay_refused", route="token")
        the_line(lines, tool="create_gist", outcome="executed", route="token")
        assert issued[0]["replica"] != approved["replica"], "nginx sent the token back to the replica that issued it"
        assert refused["replica"] != approved["replica"], lines
    for rid in REPLICAS:  # the spent token, quoted to each replica directly
        async with connect(deployment.replica_url(rid), ERA, dialog=None) as direct:
            again = await direct.session.call_tool(
                "create_gist", {**args, "confirm_token": token}, allow_input_required=True
            )
            assert again.is_error and "already been used" in text_of(again), f"{rid}: {text_of(again)}"
    assert len(titled(rest, title)) == 1, "a spent token ran again on another replica"
    deployment.restart_replicas()
    async with connect(deployment.rr_url, ERA, dialog=None) as client:
        for _ in REPLICAS:
            again = await client.session.call_tool(
                "create_gist", {**args, "confirm_token": token}, allow_input_required=True
            )
            assert again.is_error and "already been used" in text_of(again), text_of(again)
    assert len(titled(rest, title)) == 1, "after a restart a spent token ran again"


async def test_without_redis_guarded_calls_fail_closed_reads_work_and_recovery_is_automatic(deployment, rest):
    gist_id = rest.create({"doomed.txt": "delete me later"})
    args = {"gist_id": gist_id}
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        ir = await ask(client, "delete_gist", args)
        deployment.redis_stop()
        try:
            mark = len(deployment.audit())
            for _ in REPLICAS:
                refused = await retry(client, "delete_gist", args, ir.request_state, answers(ir))
                assert isinstance(refused, types.CallToolResult) and refused.is_error, dump(refused)
                text = text_of(refused)
                assert "Redis" in text and "OPENGIST_MCP_REDIS_URL" in text and "Nothing was changed" in text, text
                assert deployment.password not in text
                assert rest.exists(gist_id), "a guarded call ran without its store"
            stores = [line for line in new_lines(deployment, mark) if line["outcome"] == "store_unavailable"]
            assert {line["replica"] for line in stores} == set(REPLICAS)
            read = await client.call_tool("get_gist", {"gist_id": gist_id})
            assert not read.is_error, text_of(read)
        finally:
            deployment.redis_start()
        # Redis is back: the same, never spent, answer now goes through, without a restart.
        done = None
        for _ in range(10):
            done = await retry(client, "delete_gist", args, ir.request_state, answers(ir))
            if isinstance(done, types.CallToolResult) and not done.is_error:
                break
        assert isinstance(done, types.CallToolResult) and not done.is_error, dump(done)
    assert not rest.exists(gist_id)


async def test_legacy_sessions_through_nginx_with_session_affinity(deployment, rest):
    gist_id = rest.create({"legacy.txt": "bye"})
    dialog = Dialog("accept")
    mark = len(deployment.audit())
    async with connect(deployment.affinity_url, "legacy", dialog) as client:
        listed = await client.list_tools()
        assert any(tool.name == "delete_gist" for tool in listed.tools)
        done = await client.call_tool("delete_gist", {"gist_id": gist_id})
        assert not done.is_error, text_of(done)
    assert len(dialog.calls) == 1, "the person was asked exactly once, in a pushed dialog"
    assert not rest.exists(gist_id)
    lines = new_lines(deployment, mark)
    asked = the_line(lines, tool="delete_gist", outcome="asked", route="dialog")
    approved = the_line(lines, tool="delete_gist", outcome="approved", route="dialog")
    executed = the_line(lines, tool="delete_gist", outcome="executed", route="dialog")
    assert asked["replica"] == approved["replica"] == executed["replica"], "the session stayed on its replica"


async def test_the_audit_log_covers_every_route_and_holds_no_content(deployment, rest):
    title = marker()
    filename = f"{title}-secret-name.txt"
    content = f"{title}-secret-content"
    mark = len(deployment.audit())
    async with connect(deployment.rr_url, ERA, ByHand()) as client:
        private = await client.call_tool(
            "create_gist", {"title": title, "visibility": "private", "files": [{"filename": filename, "content": content}]}
        )
        assert not private.is_error, text_of(private)
        created = titled(rest, title)
        assert len(created) == 1 and created[0]["visibility"] == "private", created
        gist_id = created[0]["uuid"] if "uuid" in created[0] else created[0]["id"]
        ir = await ask(client, "delete_gist", {"gist_id": gist_id})
        cancelled = await retry(client, "delete_gist", {"gist_id": gist_id}, ir.request_state, answers(ir, "cancel"))
        assert cancelled.is_error, dump(cancelled)
        assert rest.exists(gist_id)
    lines = new_lines(deployment, mark)
    the_line(lines, tool="create_gist", route="exempt", outcome="executed")
    the_line(lines, tool="delete_gist", route="input_required", outcome="cancelled")
    for line in deployment.audit():
        assert set(line) == AUDIT_KEYS, line
    log = deployment.audit_path.read_text()
    for secret in (title, filename, content, ir.request_state, deployment.seal_key, deployment.password):
        assert secret not in log, f"the audit log holds {secret!r}"
    assert "This will" not in log, "the audit log holds a question"
    assert rest.delete(gist_id) == 204
