"""Every person their own principal over HTTP: the notes example served with
per-person tokens (`NOTES_HTTP_AUTH=tokens`, the token file minted by the server's own
`notes tokens add NAME --file FILE`, which holds only hashes).

Alice and Bob each hold their own token. Bob, with his own valid token, cannot act on Alice's
legacy session on any route (her dialog's answer, a tool call, `GET` stream, `DELETE`: `403
session_not_yours`), a 2026-07-28 `requestState` or a `confirm_token` issued to Alice does not
run for him, and the audit log records two principals. Alice's second token (another line of
hers) is refused the same way on the first token's session, state and confirm_token: each token
is its own credential. Positive controls: Alice's own answer, state and token run, Bob's own
session works. The token file is re-read when its content changes (a person added is let in, a
person removed is refused; a same-length rewrite with the old mtime revokes too, and ends the
revoked token's open GET stream), one person cannot take every session place, a principal
header refuses to start with `tokens` or `oauth`, and the shared-secret mode says at start that
every holder of the secret is one principal.

Raw JSON-RPC (e2e/raw_mcp.py) for the attacks; the Python `mcp` client for the positive path.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import secrets
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from raw_mcp import (
    RawHttp,
    approve,
    approving,
    call,
    initialize_request,
    is_elicitation,
    is_input_required,
    is_response_to,
    per_request,
)
from support import MINTED_SECRET_LINE, TOKEN_LINE, Dialog, connect, run_to_exit

WAIT_S = 60
# How long a changed token file may take to be seen: it is checked at most once a second.
RELOAD_BOUND_S = 15
# How long a revoked token's open stream may outlive the revocation: the file looked at within
# a second, the new version settled within a fifth of one, the streams' credentials asked
# every fifth of a second.
STREAM_END_BOUND_S = 3


@pytest.fixture
def people(launcher, notes_binary, tmp_path):
    """`people(**env)`: `notes --http` with per-person tokens for alice and bob and an audit
    log (`server.audit`), stopped at the end of the test."""

    def start(**env: str):
        audit = tmp_path / f"audit-{len(launcher._http)}.jsonl"
        server = launcher.http(
            notes_binary,
            env={"NOTES_AUDIT_LOG": str(audit), **{f"NOTES_{k}": v for k, v in env.items()}},
            auth="tokens",
            people=("alice", "bob"),
        )
        server.audit = audit
        return server

    return start


def request(url: str, method: str, authorization: str | None, body: dict | None = None, headers=None):
    """One plain HTTP request; returns the status, the headers (lower-case) and the JSON body
    (or None)."""
    parts = urlsplit(url)
    sent = {"Accept": "application/json, text/event-stream", **(headers or {})}
    if body is not None:
        sent["Content-Type"] = "application/json"
    if authorization:
        sent["Authorization"] = authorization
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request(method, parts.path, body=json.dumps(body) if body is not None else None, headers=sent)
        response = connection.getresponse()
        headers_in = {k.lower(): v for k, v in response.getheaders()}
        if headers_in.get("content-type", "").startswith("text/event-stream"):
            return response.status, headers_in, None
        text = response.read().decode("utf-8", errors="replace")
    finally:
        connection.close()
    try:
        return response.status, headers_in, json.loads(text) if text else None
    except ValueError:
        return response.status, headers_in, None


def session_request(session: RawHttp, method: str, authorization: str, body: dict | None = None):
    """A request on `session` (its Mcp-Session-Id) with other credentials."""
    headers = {"Mcp-Session-Id": session.session_id or "", "Mcp-Protocol-Version": "2025-11-25"}
    return request(f"http://{session.host}:{session.port}{session.path}", method, authorization, body, headers)


def note_ids(session: RawHttp, request_id: int) -> list[str]:
    """The notes as the session's owner lists them (a real read of the server's store)."""
    session.send(call(request_id, "list_notes", {}))
    listed = session.must(is_response_to(request_id), WAIT_S, "list_notes result")
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


def list_ids(url: str, authorization: str) -> list[str]:
    listed = per_request(url, authorization, 90, {"name": "list_notes", "arguments": {}})
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


def audit_principals(path: Path) -> dict[str, set[str]]:
    """The audit log's outcomes by principal hash."""
    seen: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            seen.setdefault(record["principal"], set()).add(record["outcome"])
    return seen


def result_text(message: dict) -> str:
    return "\n".join(block.get("text", "") for block in message["result"].get("content", []))


# --- legacy sessions: every route of Alice's session refuses Bob ---------------------------


def test_bob_cannot_answer_call_stream_or_close_alices_session(people):
    server = people()
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    alice = RawHttp(server.url, alice_auth)
    bob = RawHttp(server.url, bob_auth)  # Bob is let in: his own session opens
    alice.send(call(20, "delete_note", {"note_id": "n1"}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")

    attempts = [
        ("the answer to alice's dialog", "POST", approve(dialog)),
        ("a guarded tool call", "POST", call(21, "delete_note", {"note_id": "n2"})),
        ("a reading tool call", "POST", call(22, "list_notes", {})),
        ("a GET stream", "GET", None),
        ("DELETE", "DELETE", None),
    ]
    for what, method, body in attempts:
        status, _, answer = session_request(alice, method, bob_auth, body)
        assert status == 403, f"HTTP {status} for bob's {what} on alice's session"
        assert answer is not None and answer.get("error") == "session_not_yours", answer

    # Bob's own session works (positive control: his token is good, only the session is not his).
    assert note_ids(bob, 5) == ["n1", "n2", "n3"]
    # Nothing Bob sent reached alice's session: her dialog is still open and her answer runs it.
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "alice's delete result")
    assert not done["result"].get("isError"), done
    assert done["result"]["structuredContent"] == {"deleted": "n1"}, done
    assert note_ids(alice, 31) == ["n2", "n3"], "bob's call deleted a note"
    # Bob's request ids 21 and 22 were never answered on alice's session.
    assert alice.wait_for(is_response_to(21), 0) is None and alice.wait_for(is_response_to(22), 0) is None
    assert alice.delete() == 200  # alice may close her own session
    bob.close()


# --- 2026-07-28: a requestState issued to alice is asked again for bob -----------------------


def test_alices_request_state_is_asked_again_for_bob_and_the_audit_log_has_two_principals(people):
    server = people()
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    args = {"name": "delete_note", "arguments": {"note_id": "n2"}}
    asked = per_request(server.url, alice_auth, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])

    stolen = per_request(server.url, bob_auth, 2, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(stolen), f"bob's retry of alice's state was not asked again: {stolen}"
    assert stolen["result"]["requestState"] != state
    assert list_ids(server.url, alice_auth) == ["n1", "n2", "n3"], "bob's retry deleted the note"

    done = per_request(server.url, alice_auth, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and not done["result"].get("isError"), done
    assert done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert list_ids(server.url, bob_auth) == ["n1", "n3"]

    principals = audit_principals(server.audit)
    assert len(principals) == 2, f"expected alice and bob in the audit log: {principals}"
    alice_outcomes = [outcomes for outcomes in principals.values() if "executed" in outcomes]
    assert len(alice_outcomes) == 1, principals
    bob_outcomes = [outcomes for outcomes in principals.values() if "executed" not in outcomes]
    assert len(bob_outcomes) == 1 and not ({"approved", "executed"} & bob_outcomes[0]), principals


# --- ELICITATION=false: a confirm_token issued to alice does not run for bob -----------------


@pytest.fixture
def people_without_dialogs(launcher, notes_binary, tmp_path):
    audit = tmp_path / "audit-tokens.jsonl"
    server = launcher.http(
        notes_binary,
        env={"ELICITATION": "false", "NOTES_AUDIT_LOG": str(audit)},
        auth="tokens",
        people=("alice", "bob"),
    )
    server.audit = audit
    return server


def test_a_confirm_token_issued_to_alice_does_not_run_for_bob(people_without_dialogs):
    server = people_without_dialogs
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    alice = RawHttp(server.url, alice_auth, elicitation=False)
    bob = RawHttp(server.url, bob_auth, elicitation=False)
    alice.send(call(1, "delete_note", {"note_id": "n3"}))
    first = alice.must(is_response_to(1), WAIT_S, "alice's token result")
    match = TOKEN_LINE.search(result_text(first))
    assert match is not None, first
    token = match.group(1)

    bob.send(call(2, "delete_note", {"note_id": "n3", "confirm_token": token}))
    stolen = bob.must(is_response_to(2), WAIT_S, "bob's call with alice's token")
    assert "deleted" not in (stolen["result"].get("structuredContent") or {}), f"alice's token ran for bob: {stolen}"
    assert note_ids(bob, 3) == ["n1", "n2", "n3"], "bob's call with alice's token deleted the note"

    alice.send(call(4, "delete_note", {"note_id": "n3", "confirm_token": token}))
    done = alice.must(is_response_to(4), WAIT_S, "alice's second call")
    assert done["result"].get("structuredContent") == {"deleted": "n3"}, done
    assert note_ids(alice, 5) == ["n1", "n2"]
    principals = audit_principals(server.audit)
    assert len(principals) == 2, f"expected alice and bob in the audit log: {principals}"
    alice.close()
    bob.close()


# --- the gate: who is refused, and how ----------------------------------------------------


def test_missing_and_unknown_tokens_are_refused_naming_the_setting(people):
    server = people()
    init = initialize_request()
    status, headers, body = request(server.url, "POST", None, init)
    assert status == 401 and headers.get("www-authenticate") == "Bearer", (status, headers)
    assert body["error"] == "unauthorized" and "NOTES_HTTP_TOKENS_FILE" in body["message"], body
    status, headers, body = request(server.url, "POST", "Bearer " + "0" * 64, init)
    assert status == 401 and headers.get("www-authenticate") == 'Bearer error="invalid_token"', (status, headers)
    assert body["error"] == "invalid_token", body
    # The file holds hashes: a line's hash presented as a token is not a token.
    listed_hash = server.tokens_file.read_text().split()[1]
    assert request(server.url, "POST", f"Bearer {listed_hash}", init)[0] == 401
    # Positive control: each person's own token opens a session.
    for person in ("alice", "bob"):
        status, headers, _ = request(server.url, "POST", server.authorization_of(person), init)
        assert status == 200 and headers.get("mcp-session-id"), (person, status)
    assert "per-person tokens: 2 listed in NOTES_HTTP_TOKENS_FILE" in server.stderr(), server.stderr()
    # No token reaches the server's logs.
    for token in server.tokens.values():
        assert token not in server.stderr() and token not in server.stdout()


def wait_for_status(url: str, authorization: str, wanted: int) -> int:
    """Polls until a request with `authorization` gets `wanted` (the file is re-read at most
    once a second), bounded; returns the last status."""
    deadline = time.monotonic() + RELOAD_BOUND_S
    while True:
        status = request(url, "POST", authorization, initialize_request())[0]
        if status == wanted or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def test_the_token_file_is_read_again_when_it_changes(people, launcher, notes_binary):
    server = people()
    assert server.tokens_file is not None
    # Carol is not listed yet.
    _, carol = launcher.mint_tokens(notes_binary, ["carol"], server.tokens_file.with_name("other"))
    carol_auth = f"Bearer {carol['carol']}"
    assert request(server.url, "POST", carol_auth, initialize_request())[0] == 401
    # Added with the server's own command while it runs: let in.
    _, added = launcher.mint_tokens(notes_binary, ["carol"], server.tokens_file)
    assert wait_for_status(server.url, f"Bearer {added['carol']}", 200) == 200
    # Bob's line removed (revoked): refused, while alice still gets in.
    kept = [line for line in server.tokens_file.read_text().splitlines() if not line.startswith("bob ")]
    server.tokens_file.write_text("\n".join(kept) + "\n")
    assert wait_for_status(server.url, server.authorization_of("bob"), 401) == 401
    assert request(server.url, "POST", server.authorization_of("alice"), initialize_request())[0] == 200


def test_one_person_cannot_take_every_session_place(people):
    server = people(HTTP_SESSIONS_PER_PRINCIPAL="2")
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    first = RawHttp(server.url, alice_auth)
    RawHttp(server.url, alice_auth)
    status, headers, body = request(server.url, "POST", alice_auth, initialize_request())
    assert status == 429, (status, body)
    assert body["error"] == "too_many_sessions_for_principal", body
    assert "NOTES_HTTP_SESSIONS_PER_PRINCIPAL" in body["message"] and headers.get("retry-after"), (body, headers)
    # Bob still gets a session (positive control), and alice again once she closes one.
    RawHttp(server.url, bob_auth)
    assert first.delete() == 200
    assert request(server.url, "POST", alice_auth, initialize_request())[0] == 200


@pytest.mark.anyio
async def test_the_python_client_connects_as_each_person_and_each_is_asked(people, era):
    """The real `mcp` client, each person with their own token, in both eras: both are served,
    and each one's own dialog runs their own delete."""
    server = people()
    for person, note in (("alice", "n1"), ("bob", "n2")):
        dialog = Dialog("accept")
        async with connect(server.as_person(person), era, dialog) as client:
            done = await client.call_tool("delete_note", {"note_id": note})
            assert not done.is_error and done.structured_content == {"deleted": note}, done
            assert len(dialog.calls) == 1, dialog.calls
    principals = audit_principals(server.audit)
    assert len(principals) == 2 and all("executed" in outcomes for outcomes in principals.values()), principals


# --- start-up lines -------------------------------------------------------------------------


def test_the_shared_secret_mode_says_every_holder_is_one_principal(launcher, notes_binary):
    server = launcher.http(notes_binary)  # NOTES_HTTP_TOKEN set
    assert "Every client holding this secret is ONE principal" in server.stderr(), server.stderr()
    assert "NOTES_HTTP_AUTH=tokens" in server.stderr()
    minted = launcher.http(notes_binary, auth="minted")
    assert MINTED_SECRET_LINE.search(minted.stderr()) and "ONE principal" in minted.stderr(), minted.stderr()


def test_no_credential_on_loopback_warns(launcher, notes_binary):
    for env in ({"NOTES_HTTP_NO_AUTH": "true"}, {"NOTES_HTTP_AUTH": "none"}):
        server = launcher.http(notes_binary, env=env, auth="none")
        assert "WARNING" in server.stderr() and "without authentication" in server.stderr(), server.stderr()


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"NOTES_HTTP_AUTH": "tokens"}, "NOTES_HTTP_TOKENS_FILE"),
        ({"NOTES_HTTP_AUTH": "tokens", "NOTES_HTTP_TOKENS_FILE": "/nonexistent/tokens"}, "NOTES_HTTP_TOKENS_FILE"),
        ({"NOTES_HTTP_AUTH": "people"}, "NOTES_HTTP_AUTH"),
        ({"NOTES_HTTP_AUTH": "tokens", "NOTES_HTTP_TOKENS_FILE": "f", "NOTES_HTTP_TOKEN": "x" * 32}, "NOTES_HTTP_TOKEN"),
    ],
    ids=["no-file", "missing-file", "unknown-mode", "secret-with-tokens"],
)
def test_a_bad_mode_setting_exits_1_naming_it(notes_binary, tmp_path, env, named):
    from support import free_port

    done = run_to_exit(notes_binary, {**env, "HOME": str(tmp_path)}, ["--http", f"127.0.0.1:{free_port()}"], timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert named in done.stderr, done.stderr
    assert done.stdout == ""


def test_a_malformed_token_file_exits_1_naming_the_line(notes_binary, tmp_path):
    from support import free_port

    tokens = tmp_path / "tokens"
    tokens.write_text("# people\nalice my-token-pasted-by-mistake\n")
    env = {"NOTES_HTTP_AUTH": "tokens", "NOTES_HTTP_TOKENS_FILE": str(tokens)}
    done = run_to_exit(notes_binary, env, ["--http", f"127.0.0.1:{free_port()}"], timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "NOTES_HTTP_TOKENS_FILE" in done.stderr and "line 2" in done.stderr, done.stderr
    assert "my-token-pasted" not in done.stderr, "a line's text is never echoed"


# --- one person, several tokens: each token its own credential -----------------------------


def another_token_of(launcher, notes_binary, server, person: str) -> str:
    """A second token for `person` (another line of theirs in the token file), once the server
    takes it."""
    _, minted = launcher.mint_tokens(notes_binary, [person], server.tokens_file)
    authorization = f"Bearer {minted[person]}"
    assert wait_for_status(server.url, authorization, 200) == 200, "the new line was not read"
    return authorization


def test_alices_other_token_cannot_answer_use_or_close_her_legacy_session(people, launcher, notes_binary):
    server = people()
    laptop = server.authorization_of("alice")
    phone = another_token_of(launcher, notes_binary, server, "alice")
    alice = RawHttp(server.url, laptop)
    alice.send(call(20, "delete_note", {"note_id": "n1"}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")
    for what, method, body in [
        ("the answer to the laptop's dialog", "POST", approve(dialog)),
        ("a reading tool call", "POST", call(21, "list_notes", {})),
        ("a GET stream", "GET", None),
        ("DELETE", "DELETE", None),
    ]:
        status, _, answer = session_request(alice, method, phone, body)
        assert status == 403, f"HTTP {status} for the phone's {what} on the laptop's session"
        assert answer is not None and answer.get("error") == "session_not_yours", answer
    # The phone is alice too (positive control: her token is good, her own session works).
    assert note_ids(RawHttp(server.url, phone), 5) == ["n1", "n2", "n3"]
    # The laptop's own answer runs the delete.
    alice.send(approve(dialog))
    done = alice.must(is_response_to(20), WAIT_S, "alice's delete result")
    assert done["result"]["structuredContent"] == {"deleted": "n1"}, done
    assert alice.wait_for(is_response_to(21), 0) is None, "the phone's call was served on the laptop's session"
    assert note_ids(alice, 31) == ["n2", "n3"]


def test_alices_request_state_is_asked_again_for_her_other_token(people, launcher, notes_binary):
    server = people()
    laptop = server.authorization_of("alice")
    phone = another_token_of(launcher, notes_binary, server, "alice")
    args = {"name": "delete_note", "arguments": {"note_id": "n2"}}
    asked = per_request(server.url, laptop, 1, args)
    assert is_input_required(asked), asked
    state, responses = asked["result"]["requestState"], approving(asked["result"])
    replayed = per_request(server.url, phone, 2, {**args, "requestState": state, "inputResponses": responses})
    assert is_input_required(replayed), f"the phone's replay of the laptop's state ran: {replayed}"
    assert list_ids(server.url, laptop) == ["n1", "n2", "n3"], "the phone's replay deleted the note"
    done = per_request(server.url, laptop, 3, {**args, "requestState": state, "inputResponses": responses})
    assert not is_input_required(done) and done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert list_ids(server.url, phone) == ["n1", "n3"]


def test_alices_confirm_token_does_not_run_for_her_other_token(people_without_dialogs, launcher, notes_binary):
    server = people_without_dialogs
    laptop = server.authorization_of("alice")
    phone = another_token_of(launcher, notes_binary, server, "alice")
    first = per_request(server.url, laptop, 1, {"name": "delete_note", "arguments": {"note_id": "n3"}})
    match = TOKEN_LINE.search(result_text(first))
    assert match is not None, first
    args = {"name": "delete_note", "arguments": {"note_id": "n3", "confirm_token": match.group(1)}}
    stolen = per_request(server.url, phone, 2, args)
    assert "deleted" not in (stolen["result"].get("structuredContent") or {}), f"the laptop's token ran for the phone: {stolen}"
    assert list_ids(server.url, laptop) == ["n1", "n2", "n3"]
    done = per_request(server.url, laptop, 3, args)
    assert done["result"].get("structuredContent") == {"deleted": "n3"}, done
    assert list_ids(server.url, phone) == ["n1", "n2"]


# --- revoking a token: a rewrite the file's mtime and size cannot show ----------------------


class OpenStream:
    """A session's standalone GET stream, held open on a thread; `ended` is set when the server
    ends it."""

    def __init__(self, session: RawHttp) -> None:
        self.connection = http.client.HTTPConnection(session.host, session.port, timeout=120)
        headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session.session_id or "",
            "Mcp-Protocol-Version": "2025-11-25",
            "Authorization": session.authorization or "",
        }
        self.connection.request("GET", session.path, headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.ended = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        try:
            while self.response.read1(4096):
                pass
        except (OSError, http.client.HTTPException):
            pass
        finally:
            self.ended.set()
            self.connection.close()


def test_a_same_length_rewrite_with_the_old_mtime_revokes_and_ends_the_tokens_stream(people):
    server = people()
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    alice = RawHttp(server.url, alice_auth)
    bob = RawHttp(server.url, bob_auth)
    alice.send(call(20, "delete_note", {"note_id": "n1"}))
    dialog = alice.must(is_elicitation, WAIT_S, "alice's dialog")
    stream = OpenStream(alice)
    assert stream.status == 200, stream.status
    assert not stream.ended.wait(1.5), "positive control: the stream stays open while the token is listed"

    # Alice's line gets a new token's hash: same length; then the old mtime put back (`cp -p`).
    before = server.tokens_file.stat()
    new_token = secrets.token_hex(32)
    text = server.tokens_file.read_text()
    old_hash = next(line.split()[1] for line in text.splitlines() if line.startswith("alice "))
    server.tokens_file.write_text(text.replace(old_hash, hashlib.sha256(new_token.encode()).hexdigest()))
    os.utime(server.tokens_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = server.tokens_file.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    assert stream.ended.wait(STREAM_END_BOUND_S), "the revoked token's GET stream is still open"
    assert request(server.url, "POST", alice_auth, initialize_request())[0] == 401
    status, _, _ = session_request(alice, "POST", alice_auth, approve(dialog))
    assert status == 401, f"HTTP {status}: the revoked token still answers"
    # Positive controls: the new line is in force, and bob's session is untouched.
    assert request(server.url, "POST", f"Bearer {new_token}", initialize_request())[0] == 200
    assert note_ids(bob, 40) == ["n1", "n2", "n3"], "the unanswered dialog deleted a note"


def stateless_status(url: str, authorization: str, request_id: int) -> int:
    """The HTTP status of one 2026-07-28 `tools/call` of `list_notes` (no session)."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "list_notes",
            "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}},
        },
    }
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_notes"}
    return request(url, "POST", authorization, body, headers)[0]


def test_a_file_rewritten_in_place_never_refuses_a_token_listed_before_and_after(people):
    server = people()
    alice_auth, bob_auth = server.authorization_of("alice"), server.authorization_of("bob")
    assert stateless_status(server.url, alice_auth, 1) == 200
    text = server.tokens_file.read_text()
    stop = threading.Event()

    def rewrite() -> None:
        # In place, as `>` or an editor writing over the file does: truncated, then written.
        while not stop.is_set():
            with open(server.tokens_file, "w") as file:
                file.write(text[: len(text) // 2])
                file.flush()
                file.write(text[len(text) // 2 :])

    def hammer(first: int) -> list[int]:
        statuses = []
        for i in range(first, first + 100_000):
            if stop.is_set():
                break
            statuses.append(stateless_status(server.url, alice_auth if i % 2 else bob_auth, i))
        return statuses

    writer = threading.Thread(target=rewrite, daemon=True)
    writer.start()
    results: list[list[int]] = [[] for _ in range(8)]
    threads = [threading.Thread(target=lambda n=n: results.__setitem__(n, hammer(n * 100_000)), daemon=True) for n in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(10)
    stop.set()
    for thread in threads + [writer]:
        thread.join(30)
    statuses = [status for result in results for status in result]
    refused = [status for status in statuses if status != 200]
    assert len(statuses) >= 500, f"only {len(statuses)} requests"
    assert not refused, f"{len(refused)} of {len(statuses)} requests refused: {sorted(set(refused))}"
    assert server.tokens_file.read_text() == text

    # The control: a rewrite in place that removes alice refuses her once it settled, ends her
    # open GET stream at once, and leaves bob in.
    alice = RawHttp(server.url, alice_auth)
    assert note_ids(alice, 5) == ["n1", "n2", "n3"]
    stream = OpenStream(alice)
    assert stream.status == 200, stream.status
    assert not stream.ended.wait(1.5), "positive control: the stream stays open while the token is listed"
    without_alice = "".join(line + "\n" for line in text.splitlines() if not line.startswith("alice "))
    with open(server.tokens_file, "w") as file:
        file.write(without_alice)
    assert stream.ended.wait(STREAM_END_BOUND_S), "alice's GET stream outlived her revocation"
    deadline = time.monotonic() + STREAM_END_BOUND_S
    while stateless_status(server.url, alice_auth, 7) == 200:
        assert time.monotonic() < deadline, "alice is still let in"
        time.sleep(0.05)
    assert stateless_status(server.url, alice_auth, 8) == 401
    assert stateless_status(server.url, bob_auth, 9) == 200


# --- a header cannot stand for an authenticated person ------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {"NOTES_HTTP_AUTH": "tokens"},
        {"NOTES_HTTP_AUTH": "oauth", "NOTES_OAUTH_ISSUER": "http://127.0.0.1:9/", "NOTES_OAUTH_RESOURCE": "http://127.0.0.1:9/mcp"},
    ],
    ids=["tokens", "oauth"],
)
def test_a_principal_header_in_an_authenticated_mode_refuses_to_start(launcher, notes_binary, tmp_path, env):
    from support import free_port

    if env["NOTES_HTTP_AUTH"] == "tokens":
        file, _ = launcher.mint_tokens(notes_binary, ["alice"], tmp_path / "tokens")
        env = {**env, "NOTES_HTTP_TOKENS_FILE": str(file)}
    done = run_to_exit(notes_binary, {**env, "HOME": str(tmp_path), "NOTES_PRINCIPAL_HEADER": "x-user"}, ["--http", f"127.0.0.1:{free_port()}"], timeout=30)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "NOTES_PRINCIPAL_HEADER" in done.stderr and f"NOTES_HTTP_AUTH={env['NOTES_HTTP_AUTH']}" in done.stderr, done.stderr
    # The positive control: the same settings without the header start and serve.
    if env["NOTES_HTTP_AUTH"] == "tokens":
        server = launcher.http(notes_binary, env={k: v for k, v in env.items() if k != "NOTES_HTTP_TOKENS_FILE"}, auth="tokens")
        assert request(server.url, "POST", server.authorization_of("alice"), initialize_request())[0] == 200
