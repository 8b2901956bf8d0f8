"""The guard under attack, against a REAL Opengist, with raw JSON-RPC
(the attacks are what a well-behaved client never sends).

1. A cancelled call never runs: `tools/call delete_gist`, the server pushes
   `elicitation/create`, the client sends `notifications/cancelled` for the call, then answers
   the dialog accept + approve 1 s or 8 s later. The gist must still exist (Opengist's own API says so),
   and on the same session an honest delete still works.
3. A legacy HTTP session belongs to the caller that opened it: another `Authorization` header
   (or none) with alice's `Mcp-Session-Id` is refused (403), whether it answers her open
   dialog, calls a tool, opens her stream or closes (`DELETE`) her session; her gist survives
   until she herself approves. The binding is the guard framework's (`ask_first_serve`), by
   the guard's own principal rule.
4. A 2026-07-28 `requestState` retried by another principal (another `Authorization`, or none)
   is asked again and deletes nothing; alice's own retry deletes once.
"""

from __future__ import annotations

import time

import pytest
from live import TOKENS, api, marker
from raw_mcp import (
    RawHttp,
    RawStdio,
    approve,
    approving,
    call,
    cancelled,
    is_elicitation,
    is_input_required,
    is_response_to,
    per_request,
)

pytestmark = [pytest.mark.opengist]

WAIT_S = 60


def gist(env: dict[str, str], m: str) -> str:
    return api(env).create({f"{m}.txt": f"content {m}\n"}, visibility="private", title=f"title {m}")


def text(response) -> str:
    return "\n".join(block.get("text", "") for block in response["result"].get("content", []))


@pytest.fixture
def raw_session(opengist_env, live_server, opengist_mcp_binary, transport, tmp_path):
    """`raw_session()`: a raw legacy session on the test's transport, pointed at the real
    Opengist with the full token."""
    opened = []

    def open_one(authorization: str | None = None):
        if transport == "stdio":
            env = {
                "OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"],
                "OPENGIST_TOKEN": opengist_env[TOKENS["full"]],
            }
            session = RawStdio(opengist_mcp_binary, env, tmp_path / f"raw-{len(opened)}.stderr")
        else:
            if not hasattr(open_one, "server"):
                open_one.server = live_server()
            session = RawHttp(open_one.server.url, authorization or open_one.server.authorization)
        opened.append(session)
        return session

    yield open_one
    for session in opened:
        session.close()


@pytest.mark.parametrize("delay_s", [1.0, 8.0])
def test_a_dialog_approved_after_its_call_was_cancelled_deletes_nothing(opengist_env, raw_session, delay_s):
    m = marker()
    gist_id = gist(opengist_env, m)
    s = raw_session()
    s.send(call(10, "delete_gist", {"gist_id": gist_id}))
    dialog = s.must(is_elicitation, WAIT_S, "elicitation/create")
    s.send(cancelled(10))
    time.sleep(delay_s)
    s.send(approve(dialog))  # the late "approve"
    # Whatever the server does with it, give it the time to do it, then ask Opengist.
    late = s.wait_for(is_response_to(10), 3.0)
    kept = api(opengist_env).exists(gist_id)
    assert kept, f"the gist of a cancelled call was deleted (server said {late})"
    assert late is None or late["result"].get("isError"), f"a cancelled call reported success: {late}"
    # The session is still usable, and an honest approval does delete: the test can fail.
    s.send(call(11, "delete_gist", {"gist_id": gist_id}))
    dialog = s.must(lambda msg: is_elicitation(msg) and msg["id"] != dialog["id"], WAIT_S, "a second dialog")
    s.send(approve(dialog))
    done = s.must(is_response_to(11), WAIT_S, "the honest delete's result")
    assert not done["result"].get("isError"), text(done)
    gone = not api(opengist_env).exists(gist_id)
    assert gone, "the honest approval did not delete the gist"


def test_another_caller_cannot_answer_or_use_alices_session(opengist_env, launcher, opengist_mcp_binary):
    m = marker()
    gist_id = gist(opengist_env, m)
    env = {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env[TOKENS["full"]]}
    # Callers told apart by their own Authorization headers: no shared secret (which would
    # make them one caller).
    server = launcher.http(opengist_mcp_binary, env=env, auth="none")
    alice = RawHttp(server.url, "Bearer alice-credential")
    alice.send(call(20, "delete_gist", {"gist_id": gist_id}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")
    mallory = "Bearer mallory-credential"

    # Mallory answers alice's dialog, calls a tool and lists tools on her session.
    for attempt in (approve(dialog), call(21, "delete_gist", {"gist_id": gist_id}), {"jsonrpc": "2.0", "id": 22, "method": "tools/list"}):
        status, _ = alice.post(attempt, authorization=mallory)
        assert status == 403, f"HTTP {status} for {attempt.get('method', 'the dialog answer')} with another caller's credentials"
    status = alice.open_stream(authorization=mallory)
    assert status == 403, f"HTTP {status} for opening alice's stream with another caller's credentials"
    # Without any Authorization header is another caller too.
    status, _ = alice.post(approve(dialog), authorization="")
    assert status == 403, f"HTTP {status} for the dialog answer without credentials"
    status, _ = alice.post(call(23, "delete_gist", {"gist_id": gist_id}), authorization="")
    assert status == 403, f"HTTP {status} for a tool call on alice's session without credentials"
    assert alice.open_stream(authorization="") == 403, "alice's stream opened without credentials"
    # Neither may close her session.
    for intruder in (mallory, ""):
        status = alice.delete(authorization=intruder)
        assert status == 403, f"HTTP {status} for DELETE of alice's session by another caller ({intruder!r})"
    # The event, and the positive control: alice's own request, sent after all of those, is
    # answered on her session (anything it had taken from another caller it would have handled
    # first). Then the gist is still there and no answer to the other callers' calls came.
    status, _ = alice.post({"jsonrpc": "2.0", "id": 24, "method": "tools/list"})
    assert status in (200, 202), f"HTTP {status} for alice's own tools/list"
    alice.must(is_response_to(24), WAIT_S, "alice's own tools/list")
    kept = api(opengist_env).exists(gist_id)
    assert kept, "another caller's answer deleted alice's gist"
    assert alice.wait_for(is_response_to(21), 0) is None
    assert alice.wait_for(is_response_to(23), 0) is None

    # Alice's own answer is accepted.
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "alice's delete result")
    assert not done["result"].get("isError"), text(done)
    gone = not api(opengist_env).exists(gist_id)
    assert gone, "the honest approval did not delete the gist"
    assert alice.delete() == 200, "alice could not close her own session"


@pytest.mark.parametrize("intruder", ["Bearer mallory-credential", None], ids=["other-authorization", "none"])
def test_a_request_state_replayed_by_another_caller_is_asked_again(opengist_env, launcher, opengist_mcp_binary, intruder):
    m = marker()
    gist_id = gist(opengist_env, m)
    env = {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env[TOKENS["full"]]}
    server = launcher.http(opengist_mcp_binary, env=env, auth="none")
    alice = "Bearer alice-credential"
    args = {"name": "delete_gist", "arguments": {"gist_id": gist_id}}
    asked = per_request(server.url, alice, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])

    stolen = per_request(server.url, intruder, 2, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(stolen), f"another caller's retry of alice's state was not asked again: {stolen}"
    assert stolen["result"]["requestState"] != state
    assert api(opengist_env).exists(gist_id), "another caller's retry of alice's state deleted her gist"

    done = per_request(server.url, alice, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert not api(opengist_env).exists(gist_id), "alice's own retry did not delete the gist"
