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
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def ciba(tmp_path_factory):
    command = oidc_command()
    binary = require_binary(notes_bin(), "cargo build --example notes")
    workdir = tmp_path_factory.mktemp("ciba")
    started: list[subprocess.Popen[bytes]] = []
    try:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        issuer = start_issuer(command, workdir, "issuer", resource, workdir / "keys.json", started)
        env = {
            "NOTES_HTTP_AUTH": "oauth",
            "NOTES_OAUTH_ISSUER": issuer,
            "NOTES_OAUTH_RESOURCE": resource,
            "NOTES_APPROVAL_ROUTES": "ciba",
            "NOTES_CIBA_CLIENT_ID": "mcp-ciba",
            "NOTES_CIBA_CLIENT_SECRET": "mcp-ciba-secret",
            "XDG_STATE_HOME": str(workdir / "state"),
            "RUST_LOG": "notes=info,ask_first_serve=info,ask_first_core=info,warn",
        }
        notes = start([str(binary), "--http", f"127.0.0.1:{port}"], env, workdir, "notes", started)
        assert wait_listening(notes.proc, port), f"notes did not start:\n{notes.output()}"
        deployment = Ciba(issuer=issuer, url=resource, resource=resource, notes_output=notes.output, answered=[])
        yield deployment
        output = notes.output()
        # Nothing secret reached the server's log: no token, no client secret, no request id.
        assert deployment.answered, "the tests answered no request"
        assert "eyJ" not in output, "a token reached the server's output"
        assert "mcp-ciba-secret" not in output
        for auth_req_id in deployment.answered:
            assert auth_req_id not in output, "a request id reached the server's output"
    finally:
        for proc in started:
            _stop_popen(proc)


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
