"""CIBA through the operator's identity provider (`ciba` in `<PREFIX>_APPROVAL_ROUTES`), against
a real authorization server nobody here wrote: oidc-provider 9.13.3 (pinned by
scripts/oidc-env, configured by e2e/oidc/server.mjs) with CIBA (poll mode) and Rich
Authorization Requests enabled. The notes example serves in OAuth mode (callers `alice` and
`bob` with client_credentials tokens; a token's `sub` is the client id, a user at the
provider too) with `NOTES_APPROVAL_ROUTES=ciba` and its CIBA client `mcp-ciba`.

The test plays the person's device through the provider's loopback test endpoint, which calls
`provider.backchannelResult` (approve, deny) or expires the request. Every outcome is read back
from the server's notes (`list_notes`), never from the guarded tool's own word:

- approve: the identical retry runs the delete once; before the approval, repeating the call
  (a model alone) never runs it; replaying the same retry after it ran does not run it again;
- deny: nothing runs; expiry: nothing runs, and a new call asks afresh;
- a token whose authorization_details name other fingerprints, or issued for another subject:
  refused, nothing runs;
- without OAuth (no caller subject) the route is unavailable and the refusal names the
  settings that enable it.

Each negative stands beside a positive control (the same call approved as asked runs).
Where oidc-provider cannot be installed, every test here is NOT RUN (skipped with the reason).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from raw_mcp import per_request
from support import ERAS, HttpTarget, _stop_popen, connect, free_port, notes_bin, require_binary, text_of, wait_listening
from test_oauth import oidc_command, start, start_issuer

pytestmark = [pytest.mark.anyio, pytest.mark.oauth]

TIMEOUT_S = 30


@dataclass
class Ciba:
    issuer: str
    url: str
    resource: str
    notes_output: object
    answered: list[str]
    audit: Path | None = None

    def bearer(self, client: str = "alice") -> str:
        return f"Bearer {self.token(client)}"

    def received(self) -> dict[str, int]:
        """How many requests each user's device was sent, as the provider counts them."""
        with urllib.request.urlopen(f"{self.issuer}/test/ciba/received", timeout=TIMEOUT_S) as response:
            return json.load(response)

    def executed(self, tool: str = "delete_note") -> int:
        """How many guarded calls of `tool` ran, as the audit log records them."""
        if self.audit is None or not self.audit.exists():
            return 0
        lines = [json.loads(line) for line in self.audit.read_text().splitlines() if line.strip()]
        return sum(1 for line in lines if line.get("tool") == tool and line.get("outcome") == "executed")

    def token(self, client: str = "alice") -> str:
        form = {
            "grant_type": "client_credentials",
            "client_id": client,
            "client_secret": f"{client}-secret",
            "resource": self.resource,
        }
        request = urllib.request.Request(
            f"{self.issuer}/token", data=urllib.parse.urlencode(form).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return json.load(response)["access_token"]

    def requests(self) -> list[dict]:
        """The requests waiting on the person's device."""
        with urllib.request.urlopen(f"{self.issuer}/test/ciba/requests", timeout=TIMEOUT_S) as response:
            return json.load(response)

    def request_for(self, code: str) -> dict:
        found = [r for r in self.requests() if r["binding_message"] == code]
        assert len(found) == 1, (code, self.requests())
        return found[0]

    def device(self, code: str, action: str, **extra) -> dict:
        """The person's device answers the request showing `code`; the request it answered."""
        request = self.request_for(code)
        self.answered.append(request["auth_req_id"])
        body = json.dumps({"auth_req_id": request["auth_req_id"], "action": action, **extra}).encode()
        answer = urllib.request.Request(
            f"{self.issuer}/test/ciba/answer", data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(answer, timeout=TIMEOUT_S) as response:
            assert json.load(response) == {"done": action}
        return request


@contextmanager
def deployed(workdir: Path, notes_env: dict[str, str] | None = None, oidc_env: dict[str, str] | None = None):
    """A provider and the notes server in OAuth mode with the ciba route, both stopped after;
    the server's output must hold no token, client secret or request id."""
    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    started: list[subprocess.Popen[bytes]] = []
    try:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        issuer = start_issuer(command, workdir, "issuer", resource, workdir / "keys.json", started, oidc_env)
        env = {
            "NOTES_HTTP_AUTH": "oauth",
            "NOTES_OAUTH_ISSUER": issuer,
            "NOTES_OAUTH_RESOURCE": resource,
            "NOTES_APPROVAL_ROUTES": "ciba",
            "NOTES_CIBA_CLIENT_ID": "mcp-ciba",
            "NOTES_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
            "NOTES_AUDIT_LOG": str(workdir / "audit.jsonl"),
            "XDG_STATE_HOME": str(workdir / "state"),
            "RUST_LOG": "notes=info,ask_first_serve=info,ask_first_core=info,warn",
            **(notes_env or {}),
        }
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, workdir, "notes", started)
        assert wait_listening(notes.proc, port), f"notes did not start:\n{notes.output()}"
        deployment = Ciba(
            issuer=issuer, url=resource, resource=resource, notes_output=notes.output, answered=[],
            audit=workdir / "audit.jsonl",
        )
        yield deployment
        output = notes.output()
        # Nothing secret reached the server's log: no token, no client secret, no request id.
        assert "eyJ" not in output, "a token reached the server's output"
        assert "mcp-ciba-secret" not in output
        for auth_req_id in deployment.answered:
            assert auth_req_id not in output, "a request id reached the server's output"
    finally:
        for proc in started:
            _stop_popen(proc)


@pytest.fixture(scope="module")
def ciba(tmp_path_factory):
    # The tests of this module ask alice's device more often than the default bound allows in
    # a minute; the bound itself is tested on a server of its own.
    with deployed(tmp_path_factory.mktemp("ciba"), {"NOTES_CIBA_REQUESTS_PER_MINUTE": "1000"}) as deployment:
        yield deployment
        assert deployment.answered, "the tests answered no request"


async def notes_of(client) -> dict[str, str]:
    listed = await client.call_tool("list_notes", {})
    assert not listed.is_error, text_of(listed)
    return {note["id"]: note["text"] for note in listed.structured_content["notes"]}


async def make_note(client, note_id: str) -> None:
    written = await client.call_tool("write_note", {"note_id": note_id, "text": f"text of {note_id}", "shared": False})
    assert not written.is_error, text_of(written)


def pending_code(result, tool: str = "delete_note") -> str:
    """The binding code of a pending result; checks what the text says the route proves."""
    assert result.is_error, text_of(result)
    # A tool with an outputSchema carries these facts in `_meta` instead.
    structured = result.structured_content or (result.meta or {}).get("ask-first/token_reply") or {}
    assert structured.get("status") == "approval_pending", (structured, text_of(result))
    code = structured["binding_code"]
    text = text_of(result)
    assert f"Pending, code {code}: approve on your device" in text, text
    assert f"call `{tool}` again with exactly the same arguments" in text, text
    assert "identity provider" in text and "on their device" in text, text
    return code


async def ask(client, note_id: str) -> str:
    return pending_code(await client.call_tool("delete_note", {"note_id": note_id}))


@pytest.mark.parametrize("era", ERAS)
async def test_approved_on_the_device_it_runs_once_and_never_on_repeats_alone(ciba: Ciba, era: str) -> None:
    note = f"approve-{era}"
    async with connect(HttpTarget(ciba.url, ciba.token("alice")), era, dialog=None) as client:
        await make_note(client, note)
        code = await ask(client, note)
        request = ciba.request_for(code)
        # What the provider was asked: the caller's subject, the code, one approval naming the
        # tool, the operation and both fingerprints.
        assert request["login_hint"] == "alice"
        [details] = request["authorization_details"]
        assert details["type"] == "ask_first_approval"
        assert details["tool"] == details["operation"] == "delete_note"
        assert len(details["target"]) == len(details["question"]) == 64
        assert note in details["description"]
        # A model alone, repeating the identical call: still pending, the same code, nothing ran.
        for _ in range(3):
            assert await ask(client, note) == code
        assert note in await notes_of(client)
        # The person approves on their device; the identical retry runs, once.
        ciba.device(code, "approve")
        done = await client.call_tool("delete_note", {"note_id": note})
        assert not done.is_error, text_of(done)
        assert done.structured_content == {"deleted": note}
        assert note not in await notes_of(client)
        # The same note again, byte for byte: the spent approval does not delete it; replaying
        # the retry asks afresh (a new request, a new code) and nothing runs.
        await make_note(client, note)
        again = await ask(client, note)
        assert again != code
        assert ciba.request_for(again)["auth_req_id"] != request["auth_req_id"]
        assert note in await notes_of(client)


async def test_declined_on_the_device_nothing_runs(ciba: Ciba) -> None:
    async with connect(HttpTarget(ciba.url, ciba.token("alice")), "2026-07-28", dialog=None) as client:
        await make_note(client, "deny")
        ciba.device(await ask(client, "deny"), "deny")
        declined = await client.call_tool("delete_note", {"note_id": "deny"})
        assert declined.is_error and "declined on their device" in text_of(declined), text_of(declined)
        assert "deny" in await notes_of(client)
        # Control: asked afresh and approved, the same call runs.
        ciba.device(await ask(client, "deny"), "approve")
        done = await client.call_tool("delete_note", {"note_id": "deny"})
        assert done.structured_content == {"deleted": "deny"}, text_of(done)
        assert "deny" not in await notes_of(client)


async def test_expired_nothing_runs_and_a_new_call_asks_afresh(ciba: Ciba) -> None:
    async with connect(HttpTarget(ciba.url, ciba.token("alice")), "legacy", dialog=None) as client:
        await make_note(client, "expire")
        code = await ask(client, "expire")
        ciba.device(code, "expire")
        expired = await client.call_tool("delete_note", {"note_id": "expire"})
        assert expired.is_error and "expired" in text_of(expired), text_of(expired)
        assert "expire" in await notes_of(client)
        # A new call asks afresh, and once approved it runs (control).
        fresh = await ask(client, "expire")
        assert fresh != code
        ciba.device(fresh, "approve")
        done = await client.call_tool("delete_note", {"note_id": "expire"})
        assert done.structured_content == {"deleted": "expire"}, text_of(done)
        assert "expire" not in await notes_of(client)


@pytest.mark.parametrize(
    "forged",
    [
        pytest.param({"target": "0" * 64}, id="other-target-fingerprint"),
        pytest.param({"question": "0" * 64}, id="other-question-fingerprint"),
        pytest.param({"tool": "list_notes"}, id="other-tool"),
        pytest.param({"sub": "bob"}, id="another-subject"),
    ],
)
async def test_a_token_for_something_else_is_refused(ciba: Ciba, forged: dict) -> None:
    note = f"forged-{next(iter(forged))}"
    async with connect(HttpTarget(ciba.url, ciba.token("alice")), "2026-07-28", dialog=None) as client:
        await make_note(client, note)
        code = await ask(client, note)
        request = ciba.request_for(code)
        if "sub" in forged:
            ciba.device(code, "approve", sub=forged["sub"])
        else:
            details = [{**request["authorization_details"][0], **forged}]
            ciba.device(code, "approve", authorization_details=details)
        refused = await client.call_tool("delete_note", {"note_id": note})
        assert refused.is_error, text_of(refused)
        assert "answer was refused" in text_of(refused), text_of(refused)
        assert note in await notes_of(client)
        # Control: the same call, asked afresh and approved exactly as asked, runs.
        ciba.device(await ask(client, note), "approve")
        done = await client.call_tool("delete_note", {"note_id": note})
        assert done.structured_content == {"deleted": note}, text_of(done)
        assert note not in await notes_of(client)


async def test_another_callers_approval_does_not_run_mine(ciba: Ciba) -> None:
    async with connect(HttpTarget(ciba.url, ciba.token("alice")), "2026-07-28", dialog=None) as alice:
        await make_note(alice, "shared-id")
        alice_code = await ask(alice, "shared-id")
        async with connect(HttpTarget(ciba.url, ciba.token("bob")), "2026-07-28", dialog=None) as bob:
            bob_code = await ask(bob, "shared-id")
            assert ciba.request_for(bob_code)["login_hint"] == "bob"
            # Alice approves hers: bob's identical call still waits on bob.
            ciba.device(alice_code, "approve")
            assert await ask(bob, "shared-id") == bob_code
            assert "shared-id" in await notes_of(bob)
        done = await alice.call_tool("delete_note", {"note_id": "shared-id"})
        assert done.structured_content == {"deleted": "shared-id"}, text_of(done)


async def test_without_oauth_the_route_is_unavailable_and_says_how_to_enable_it(launcher, notes_binary) -> None:
    env = {
        "NOTES_APPROVAL_ROUTES": "ciba",
        "NOTES_CIBA_CLIENT_ID": "mcp-ciba",
        "NOTES_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
    }
    server = launcher.stdio(notes_binary, env=env)
    async with connect(server.params, "2026-07-28", dialog=None) as client:
        refused = await client.call_tool("delete_note", {"note_id": "n1"})
        text = text_of(refused)
        assert refused.is_error and "Nothing was changed" in text, text
        for setting in ("NOTES_HTTP_AUTH=oauth", "NOTES_CIBA_CLIENT_ID", "NOTES_CIBA_CLIENT_SECRET", "NOTES_APPROVAL_ROUTES"):
            assert setting in text, (setting, text)
        assert "n1" in await notes_of(client)
    # Control: the same server with the token route allowed runs the same call (token twice).
    server = launcher.stdio(notes_binary, env={**env, "NOTES_APPROVAL_ROUTES": "ciba,token"})
    async with connect(server.params, "2026-07-28", dialog=None) as client:
        first = await client.call_tool("delete_note", {"note_id": "n1"})
        token = ((first.meta or {}).get("ask-first/token_reply") or first.structured_content)["confirm_token"]
        done = await client.call_tool("delete_note", {"note_id": "n1", "confirm_token": token})
        assert done.structured_content == {"deleted": "n1"}, text_of(done)
        assert "n1" not in await notes_of(client)


# --- a model alone cannot wear the person down --------------------------------------------

FLOOD_CALLS = 2000
FLOOD_SECONDS = 20
FLOOD_NOTES = 30


def call_tool(ciba: Ciba, authorization: str, request_id: int, name: str, arguments: dict) -> dict:
    """One stateless 2026-07-28 `tools/call`: the JSON-RPC answer."""
    return per_request(ciba.url, authorization, request_id, {"name": name, "arguments": arguments})


def answer_text(message: dict) -> str:
    return "\n".join(block.get("text", "") for block in message["result"].get("content", []))


def structured(message: dict) -> dict:
    result = message["result"]
    return result.get("structuredContent") or (result.get("_meta") or {}).get("ask-first/token_reply") or {}


def listed(ciba: Ciba, authorization: str) -> set[str]:
    answer = call_tool(ciba, authorization, 1, "list_notes", {})
    return {note["id"] for note in answer["result"]["structuredContent"]["notes"]}


def test_2000_calls_in_20_seconds_raise_at_most_the_bound_on_the_persons_device(tmp_path) -> None:
    with deployed(tmp_path) as ciba:
        alice = ciba.bearer("alice")
        notes = [f"flood-{i}" for i in range(FLOOD_NOTES)]
        for note in notes:
            written = call_tool(ciba, alice, 2, "write_note", {"note_id": note, "text": "x", "shared": False})
            assert not written["result"].get("isError"), written
        start = time.monotonic()

        def one(i: int) -> dict:
            # Paced: 2000 calls spread over the 20 seconds, identical and new targets mixed.
            delay = start + i * FLOOD_SECONDS / FLOOD_CALLS - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            return call_tool(ciba, alice, 100 + i, "delete_note", {"note_id": notes[i % FLOOD_NOTES]})

        with ThreadPoolExecutor(max_workers=32) as pool:
            answers = list(pool.map(one, range(FLOOD_CALLS)))
        elapsed = time.monotonic() - start
        # What the provider received, counted there.
        received = ciba.received().get("alice", 0)
        assert 1 <= received <= 10, f"alice's device was sent {received} requests"
        codes = {structured(a).get("binding_code") for a in answers} - {None}
        assert len(codes) == received, (codes, received)
        refused = [answer_text(a) for a in answers if "binding_code" not in structured(a)]
        assert refused, "no call was refused"
        assert all("NOTES_CIBA_REQUESTS_PER_MINUTE" in text and "call again in" in text for text in refused), refused[:3]
        assert elapsed < FLOOD_SECONDS + 15, f"the calls took {elapsed:.0f} s"
        # Nothing ran: every note is still there.
        assert listed(ciba, alice) >= set(notes)
        assert ciba.executed() == 0
        # The control: the bound is per person; bob's device is still asked.
        bob = ciba.bearer("bob")
        call_tool(ciba, bob, 3, "write_note", {"note_id": "bobs", "text": "x", "shared": False})
        asked = call_tool(ciba, bob, 4, "delete_note", {"note_id": "bobs"})
        assert structured(asked).get("binding_code"), asked
        assert ciba.received().get("bob") == 1


def test_open_questions_are_bounded_per_person_and_the_refusal_says_what_to_do(tmp_path) -> None:
    with deployed(tmp_path, {"NOTES_CIBA_REQUESTS_PER_MINUTE": "1000"}) as ciba:
        alice = ciba.bearer("alice")
        for i in range(21):
            call_tool(ciba, alice, 2, "write_note", {"note_id": f"open-{i}", "text": "x", "shared": False})
        codes = []
        for i in range(20):
            asked = call_tool(ciba, alice, 10 + i, "delete_note", {"note_id": f"open-{i}"})
            codes.append(structured(asked)["binding_code"])
        refused = call_tool(ciba, alice, 40, "delete_note", {"note_id": "open-20"})
        text = answer_text(refused)
        assert "binding_code" not in structured(refused), refused
        assert "20 questions are waiting for their answer already" in text, text
        assert "answer (approve or decline) the open ones, or wait until those expire" in text, text
        assert ciba.received().get("alice") == 20, ciba.received()
        # The control: another person is not affected.
        bob = ciba.bearer("bob")
        call_tool(ciba, bob, 3, "write_note", {"note_id": "bobs", "text": "x", "shared": False})
        assert structured(call_tool(ciba, bob, 4, "delete_note", {"note_id": "bobs"})).get("binding_code")
        # An answer frees a place: alice declines one on her device, the model is told, and the
        # next question is asked.
        ciba.device(codes[0], "deny")
        declined = call_tool(ciba, alice, 41, "delete_note", {"note_id": "open-0"})
        assert "declined on their device" in answer_text(declined), declined
        asked = call_tool(ciba, alice, 42, "delete_note", {"note_id": "open-20"})
        assert structured(asked).get("binding_code"), asked
        assert ciba.received().get("alice") == 21
        assert ciba.executed() == 0


def test_after_expires_in_the_retry_says_the_first_request_expired(tmp_path) -> None:
    ttl = 3
    with deployed(tmp_path, oidc_env={"OIDC_CIBA_TTL": str(ttl)}) as ciba:
        alice = ciba.bearer("alice")
        call_tool(ciba, alice, 1, "write_note", {"note_id": "late", "text": "x", "shared": False})
        first = structured(call_tool(ciba, alice, 2, "delete_note", {"note_id": "late"}))
        assert first["expires_in_seconds"] <= ttl, first
        time.sleep(ttl + 1.5)
        again = call_tool(ciba, alice, 3, "delete_note", {"note_id": "late"})
        code = structured(again)["binding_code"]
        assert code != first["binding_code"]
        text = answer_text(again)
        assert f"earlier request (code {first['binding_code']}) before it expired" in text, text
        # The person's next prompt says so too (what the device shows).
        [details] = ciba.request_for(code)["authorization_details"]
        assert f"(code {first['binding_code']}) expired unanswered" in details["description"], details
        assert ciba.received().get("alice") == 2
        # The control: approved as asked, it runs, once.
        ciba.device(code, "approve")
        done = call_tool(ciba, alice, 4, "delete_note", {"note_id": "late"})
        assert structured(done) == {"deleted": "late"}, done
        assert "late" not in listed(ciba, alice)
        assert ciba.executed() == 1


def assert_a_twin(answer: dict, note: str, approved: str) -> None:
    """What an identical retry that did not run may say: that its twin, made at the same time,
    used the approval (it shared the one poll, or began before the approval was used); that the
    note is gone (it came after the delete ran); or, when the server saw it only after the
    approval was used, a new question under a new code (a new call, asked afresh). Never that
    the approval was already used or refused, never the approved request as still pending."""
    text = answer_text(answer)
    fresh = structured(answer).get("binding_code")
    assert (
        "identical call made at the same time" in text
        or f"no note with id {note}" in text
        or (fresh is not None and fresh != approved)
    ), text


def test_concurrent_retries_after_one_approval_run_the_call_once_and_never_lose_the_yes(ciba: Ciba) -> None:
    alice = ciba.bearer("alice")
    rounds, retries = 6, 6
    before = ciba.executed()
    for round_ in range(rounds):
        note = f"race-{round_}"
        call_tool(ciba, alice, 1, "write_note", {"note_id": note, "text": "x", "shared": False})
        code = structured(call_tool(ciba, alice, 2, "delete_note", {"note_id": note}))["binding_code"]
        ciba.device(code, "approve")
        barrier = threading.Barrier(retries)

        def retry(i: int, note: str = note, barrier: threading.Barrier = barrier) -> dict:
            barrier.wait()
            return call_tool(ciba, alice, 10 + i, "delete_note", {"note_id": note})

        with ThreadPoolExecutor(max_workers=retries) as pool:
            answers = list(pool.map(retry, range(retries)))
        ran = [a for a in answers if structured(a) == {"deleted": note}]
        assert len(ran) == 1, f"round {round_}: {[answer_text(a) for a in answers]}"
        for other in answers:
            if other is not ran[0]:
                assert_a_twin(other, note, code)
        # What the backend holds: the note is gone, and the delete ran once this round.
        assert note not in listed(ciba, alice)
        assert ciba.executed() == before + round_ + 1, f"round {round_}"


@pytest.mark.replicas
def test_concurrent_retries_on_two_replicas_sharing_redis_run_the_call_once(tmp_path) -> None:
    """Two replicas of the notes example sharing a seal key and a real Redis (the approval
    records there), one provider: the identical retry sent at once to both, round after round.
    The provider gives the token to one replica's poll; the other's poll gets `invalid_grant`,
    which is not a refusal. Each replica keeps its notes in its own memory, so which one ran the
    delete is seen directly: exactly one replica lost the note each round."""
    from replica_deployment import replica_env

    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    started: list[subprocess.Popen[bytes]] = []
    redis_port, password = free_port(), "replica-test-password"
    replica_env("redis-start", str(tmp_path), str(redis_port), password)
    try:
        ports = [free_port(), free_port()]
        resource = f"http://127.0.0.1:{ports[0]}/mcp"
        issuer = start_issuer(command, tmp_path, "issuer", resource, tmp_path / "keys.json", started)
        urls = []
        for n, port in enumerate(ports):
            env = {
                "NOTES_HTTP_AUTH": "oauth",
                "NOTES_OAUTH_ISSUER": issuer,
                "NOTES_OAUTH_RESOURCE": resource,
                "NOTES_APPROVAL_ROUTES": "ciba",
                "NOTES_CIBA_CLIENT_ID": "mcp-ciba",
                "NOTES_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
                "NOTES_SEAL_KEY": "ab" * 32,
                "NOTES_REDIS_URL": f"redis://:{password}@127.0.0.1:{redis_port}/0",
                "NOTES_REPLICA_ID": f"r{n}",
                "NOTES_AUDIT_LOG": str(tmp_path / f"audit-{n}.jsonl"),
                "XDG_STATE_HOME": str(tmp_path / f"state-{n}"),
            }
            replica = start([str(binary), "--http", f"127.0.0.1:{port}"], env, tmp_path, f"notes-{n}", started)
            assert wait_listening(replica.proc, port), f"replica {n} did not start:\n{replica.output()}"
            urls.append(f"http://127.0.0.1:{port}/mcp")
        replicas = [
            Ciba(issuer=issuer, url=url, resource=resource, notes_output=None, answered=[], audit=tmp_path / f"audit-{n}.jsonl")
            for n, url in enumerate(urls)
        ]
        alice = replicas[0].bearer("alice")
        for round_ in range(5):
            note = f"pair-{round_}"
            for replica in replicas:
                call_tool(replica, alice, 1, "write_note", {"note_id": note, "text": "x", "shared": False})
            code = structured(call_tool(replicas[0], alice, 2, "delete_note", {"note_id": note}))["binding_code"]
            replicas[0].device(code, "approve")
            barrier = threading.Barrier(6)

            def retry(i: int, note: str = note, barrier: threading.Barrier = barrier) -> dict:
                barrier.wait()
                return call_tool(replicas[i % 2], alice, 10 + i, "delete_note", {"note_id": note})

            with ThreadPoolExecutor(max_workers=6) as pool:
                answers = list(pool.map(retry, range(6)))
            ran = [a for a in answers if structured(a) == {"deleted": note}]
            assert len(ran) == 1, f"round {round_}: {[answer_text(a) for a in answers]}"
            for other in answers:
                if other is not ran[0]:
                    assert_a_twin(other, note, code)
            # What each replica holds: exactly one of them deleted the note.
            holding = [note in listed(replica, alice) for replica in replicas]
            assert holding.count(False) == 1, f"round {round_}: {holding}"
            assert sum(replica.executed() for replica in replicas) == round_ + 1
        # One request per round, and one more for each retry the server saw only after the
        # approval was used.
        assert replicas[0].received().get("alice") >= 5
    finally:
        for proc in started:
            _stop_popen(proc)
        replica_env("redis-stop", str(tmp_path))
