"""Passkeys a person, and a team, can live with; verified tools that fail closed.

- The team trap: a passkey enrolled for one principal (alice) does not send the others (bob)
  to a page they cannot use. Over HTTP with per-person tokens (`notes` example), alice's
  guarded call gets the approval page's link while bob's gets the form dialog, in both eras,
  and bob's yes runs his call; a verified tool is refused for bob naming the command that
  enrols his passkey, and offered on the page to alice.
- `passkeys list` / `passkeys remove`: a removal counts at once on a running server (alice's
  next call gets the form, her open page says which principal it needs and the command).
- `passkeys` is a proper subcommand of both binaries (`--help`, `help passkeys`).
- A verified tool's schema offers no `confirm_token`; its description says the route.
- A misspelt `<PREFIX>_VERIFIED_TOOLS` entry refuses the start (notes, opengist-mcp) and fails
  `doctor`, naming the guarded tools; the right name starts (positive control).
- A browser without a passkey for the page's principal is told which principal and the
  command, not a raw WebAuthn error (headless Chromium, virtual authenticators).

The guard offers the page by who has a passkey, so most of these plant `passkeys.json`
entries (their keys are placeholders: nothing here approves with them; the browser test
enrols a real one through `notes passkeys add`).
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from cdp import Browser
from raw_mcp import RawHttp, approve, approving, call, is_elicitation, is_input_required, is_response_to, per_request
from support import base_env, connect, run_to_exit, text_of

WAIT_S = 60
NOTES_GUARDED = "delete_note, write_note"
OPENGIST_GUARDED = "create_gist, update_gist, delete_gist_files, delete_gist"


def plant(state: Path, *people: tuple[str, str]) -> None:
    """`passkeys.json` with one placeholder passkey per (principal, name)."""
    state.mkdir(parents=True, exist_ok=True)
    entries = [
        {
            "principal": principal,
            "name": name,
            "added_at": 1_760_000_000,
            "credential_id": f"{name}-{index}-credential",
            "user_handle": "dQ",
            "static_state": "AA",
            "dynamic_state": "AA",
            "aaguid": "01020304-0506-0708-0102-030405060708",
        }
        for index, (principal, name) in enumerate(people)
    ]
    (state / "passkeys.json").write_text(json.dumps(entries))


def notes_cli(binary: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args],
        env={**base_env(), "NOTES_STATE_DIR": str(state)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        start_new_session=True,
    )


def result_text(message: dict) -> str:
    return "\n".join(block.get("text", "") for block in message["result"].get("content", []))


def pending_url(message: dict) -> str | None:
    """The approval page's link in a result answering "approval pending", else None."""
    result = message["result"]
    facts = result.get("structuredContent") or (result.get("_meta") or {}).get("ask-first/token_reply") or {}
    if facts.get("status") != "approval_pending":
        return None
    return facts["approval_url"]


def ids(url: str, authorization: str, request_id: int = 90) -> list[str]:
    listed = per_request(url, authorization, request_id, {"name": "list_notes", "arguments": {}})
    return sorted(note["id"] for note in listed["result"]["structuredContent"]["notes"])


def tools_of(session: RawHttp, request_id: int) -> dict[str, dict]:
    session.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    listed = session.must(is_response_to(request_id), WAIT_S, "tools/list")
    return {tool["name"]: tool for tool in listed["result"]["tools"]}


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def team(launcher, notes_binary, tmp_path):
    """`team(**env)`: `notes --http` with per-person tokens for alice and bob and a passkey
    planted for alice only; `server.state` is its state directory."""

    def start(**env: str):
        state = tmp_path / f"state-{len(launcher._http)}"
        plant(state, ("token:alice", "alice-laptop"))
        server = launcher.http(
            notes_binary, env={"NOTES_STATE_DIR": str(state), **env}, auth="tokens", people=("alice", "bob")
        )
        server.state = state
        return server

    return start


# --- the team trap ----------------------------------------------------------------------------


def test_alice_with_a_passkey_gets_the_page_and_bob_without_one_the_form_dialog(team):
    server = team()
    alice, bob = server.authorization_of("alice"), server.authorization_of("bob")

    # 2026-07-28, form declared: alice is handed the page's link, nothing runs.
    asked = per_request(server.url, alice, 1, {"name": "delete_note", "arguments": {"note_id": "n1"}})
    assert not is_input_required(asked), asked
    assert "/approve/" in (pending_url(asked) or ""), asked
    # bob is asked in the form dialog, and his yes runs his call.
    args = {"name": "delete_note", "arguments": {"note_id": "n2"}}
    form = per_request(server.url, bob, 2, args)
    assert is_input_required(form), form
    question = form["result"]["inputRequests"]["approval"]["params"]
    assert "requestedSchema" in question and question.get("mode", "form") == "form", question
    done = per_request(
        server.url,
        bob,
        3,
        {**args, "requestState": form["result"]["requestState"], "inputResponses": approving(form["result"])},
    )
    assert done["result"]["structuredContent"] == {"deleted": "n2"}, done
    assert ids(server.url, alice) == ["n1", "n3"], "alice's call ran without her passkey, or bob's did not run"

    # Legacy sessions, the same: alice's result carries the link, bob gets the dialog.
    alice_session, bob_session = RawHttp(server.url, alice), RawHttp(server.url, bob)
    alice_session.send(call(10, "delete_note", {"note_id": "n1"}))
    answer = alice_session.must(is_response_to(10), WAIT_S, "alice's result")
    assert "/approve/" in (pending_url(answer) or ""), answer
    assert alice_session.wait_for(is_elicitation, 0) is None, "alice was shown a dialog"
    bob_session.send(call(11, "delete_note", {"note_id": "n3"}))
    dialog = bob_session.must(is_elicitation, WAIT_S, "bob's dialog")
    assert dialog["params"].get("mode", "form") == "form", dialog
    bob_session.send(approve(dialog))
    ran = bob_session.must(is_response_to(11), WAIT_S, "bob's delete")
    assert ran["result"]["structuredContent"] == {"deleted": "n3"}, ran
    assert ids(server.url, bob) == ["n1"]

    # What each is told agrees with what each got.
    told_alice = tools_of(alice_session, 12)["delete_note"]["description"]
    told_bob = tools_of(bob_session, 13)["delete_note"]["description"]
    assert "approval page" in told_alice and "approval page" not in told_bob, (told_alice, told_bob)
    assert "asked first" in told_bob, told_bob


def test_a_verified_tool_is_refused_for_bob_naming_his_enrol_command_and_offered_to_alice(team):
    server = team(NOTES_VERIFIED_TOOLS="delete_note")
    alice, bob = server.authorization_of("alice"), server.authorization_of("bob")
    refused = per_request(server.url, bob, 1, {"name": "delete_note", "arguments": {"note_id": "n1"}})
    assert refused["result"].get("isError") and not is_input_required(refused), refused
    text = result_text(refused)
    assert "no passkey is enrolled for `token:bob`" in text, text
    assert "notes passkeys add --principal token:bob" in text, text
    # Over a legacy session that would accept any dialog: no dialog is shown, nothing runs.
    bob_session = RawHttp(server.url, bob)
    bob_session.send(call(2, "delete_note", {"note_id": "n1"}))
    answer = bob_session.must(is_response_to(2), WAIT_S, "bob's refusal")
    assert answer["result"].get("isError") and bob_session.wait_for(is_elicitation, 0) is None, answer
    assert ids(server.url, bob) == ["n1", "n2", "n3"]
    # Positive control: alice, with her passkey, is sent to the page.
    asked = per_request(server.url, alice, 3, {"name": "delete_note", "arguments": {"note_id": "n1"}})
    assert "/approve/" in (pending_url(asked) or ""), asked

    # The schema of the verified tool offers no confirm_token, for either; write_note's does.
    for who, session in (("alice", RawHttp(server.url, alice)), ("bob", bob_session)):
        tools = tools_of(session, 20)
        delete, write = tools["delete_note"], tools["write_note"]
        assert "confirm_token" not in delete["inputSchema"].get("properties", {}), (who, delete)
        assert delete.get("_meta", {}).get("ask-first/person_required") is True, (who, delete)
        assert "confirm_token" in write["inputSchema"]["properties"], (who, write)
        assert "confirm_token" not in delete["description"], (who, delete["description"])
        expected = "approval page" if who == "alice" else "refused and changes nothing"
        assert expected in delete["description"], (who, delete["description"])


# --- list and remove, honoured at once -------------------------------------------------------


def test_passkeys_list_and_remove_and_a_removal_counts_at_once(team, notes_binary):
    server = team()
    alice = server.authorization_of("alice")
    listed = notes_cli(notes_binary, server.state, "passkeys", "list")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"token:alice  alice-laptop  id alice-laptop  aaguid 01020304-", listed.stdout), listed.stdout

    url = pending_url(per_request(server.url, alice, 1, {"name": "delete_note", "arguments": {"note_id": "n1"}}))
    assert url and "/approve/" in url, url
    status, page = fetch(url)
    assert status == 200, (status, page[:300])
    hint = "notes passkeys add --principal token:alice"
    # The hint waits hidden for the browser to find no passkey: the server knows one is enrolled.
    assert re.search(r'<p id="enrol" hidden>[^<]*token:alice[^<]*' + re.escape(hint), page), page

    wrong = notes_cli(notes_binary, server.state, "passkeys", "remove", "--principal", "token:bob", "alice-laptop")
    assert wrong.returncode == 1 and "no passkey of `token:bob`" in wrong.stderr, wrong
    removed = notes_cli(notes_binary, server.state, "passkeys", "remove", "--principal", "token:alice", "alice-laptop")
    assert removed.returncode == 0 and "Removed passkey `alice-laptop` of `token:alice`" in removed.stdout, removed
    assert json.loads((server.state / "passkeys.json").read_text()) == [], "the file still holds it"

    # At once, with no restart: the open page says whom it needs, and alice's next call is
    # asked in the form dialog, the page being no longer hers.
    status, page = fetch(url)
    assert status == 200 and re.search(r'<p id="enrol">[^<]*' + re.escape(hint), page), page
    asked = per_request(server.url, alice, 2, {"name": "delete_note", "arguments": {"note_id": "n2"}})
    assert is_input_required(asked), asked
    again = notes_cli(notes_binary, server.state, "passkeys", "remove", "--principal", "token:alice", "alice-laptop")
    assert again.returncode == 1 and "passkeys: none" in again.stderr, again
    assert "No passkey is enrolled" in notes_cli(notes_binary, server.state, "passkeys", "list").stdout


# --- the command lines -----------------------------------------------------------------------


@pytest.mark.parametrize("binary_name", ["notes", "opengist-mcp"])
def test_passkeys_is_a_subcommand_with_help(binary_name, notes_binary, opengist_mcp_binary, tmp_path):
    binary = notes_binary if binary_name == "notes" else opengist_mcp_binary
    env = {"NOTES_STATE_DIR": str(tmp_path), "OPENGIST_MCP_STATE_DIR": str(tmp_path)}
    top = run_to_exit(binary, env, ["--help"])
    assert top.returncode == 0 and re.search(r"^\s+passkeys\s", top.stdout, re.M), top.stdout
    for args in (["help", "passkeys"], ["passkeys", "--help"], ["passkeys", "remove", "--help"]):
        shown = run_to_exit(binary, env, args)
        assert shown.returncode == 0, (args, shown.stdout, shown.stderr)
        assert "unrecognized" not in shown.stdout + shown.stderr, (args, shown.stderr)
    assert "add" in run_to_exit(binary, env, ["passkeys", "--help"]).stdout
    # A usage error is one (exit 2), naming what is missing.
    missing = run_to_exit(binary, env, ["passkeys", "remove"])
    assert missing.returncode == 2 and "NAME_OR_ID" in missing.stderr, missing.stderr
    listed = run_to_exit(binary, env, ["passkeys", "list"])
    assert listed.returncode == 0 and "No passkey is enrolled" in listed.stdout, listed


# --- verified tools fail closed --------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("DELETE_NOTE", "did you mean `delete_note`?"),
        ("delete_notes", "`delete_notes` is not a guarded tool"),
        ("delete*", "patterns are not accepted"),
        ("list_notes", "`list_notes` is not a guarded tool"),
    ],
)
def test_a_misspelt_verified_tool_refuses_the_notes_start(entry, says, notes_binary, tmp_path):
    env = {"NOTES_STATE_DIR": str(tmp_path), "NOTES_VERIFIED_TOOLS": f"delete_note,{entry}"}
    done = run_to_exit(notes_binary, env)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "NOTES_VERIFIED_TOOLS" in done.stderr and says in done.stderr, done.stderr
    assert f"its guarded tools are: {NOTES_GUARDED}" in done.stderr, done.stderr
    assert "serving MCP" not in done.stderr, done.stderr
    # Positive control: the right name starts (stdin at EOF ends it normally).
    right = run_to_exit(notes_binary, {**env, "NOTES_VERIFIED_TOOLS": "delete_note"})
    assert right.returncode == 0 and "serving MCP on stdio" in right.stderr, right.stderr


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("DELETE_GIST", "did you mean `delete_gist`?"),
        ("delete_gists", "`delete_gists` is not a guarded tool"),
        ("delete*", "patterns are not accepted"),
    ],
)
def test_a_misspelt_verified_tool_refuses_opengist_mcp_and_fails_doctor(entry, says, opengist_mcp_binary, tmp_path):
    env = {"OPENGIST_MCP_STATE_DIR": str(tmp_path), "OPENGIST_MCP_VERIFIED_TOOLS": entry}
    for args in ([], ["doctor"]):
        done = run_to_exit(opengist_mcp_binary, env, args)
        assert done.returncode == 1, (args, done.returncode, done.stdout, done.stderr)
        assert "OPENGIST_MCP_VERIFIED_TOOLS" in done.stderr and says in done.stderr, done.stderr
        assert f"the guarded tools are: {OPENGIST_GUARDED}" in done.stderr, done.stderr
    # Positive control: the right name is read, and doctor reports it (doctor itself fails
    # here only for the missing OPENGIST_URL).
    right = run_to_exit(opengist_mcp_binary, {**env, "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}, ["doctor"])
    assert "not a guarded tool" not in right.stderr, right.stderr
    assert re.search(r"^warn verified tools: delete_gist: .*passkeys add --principal", right.stdout, re.M), right.stdout
    assert re.search(r"^warn routes: for local .*delete_gist \(verified\) -- no dialog: refused", right.stdout, re.M)


def test_doctor_reports_passkeys_per_principal_and_each_clients_route(opengist_mcp_binary, tmp_path):
    plant(tmp_path, ("token:alice", "alice-laptop"), ("token:alice", "alice-key"), ("local", "ops"))
    env = {"OPENGIST_MCP_STATE_DIR": str(tmp_path), "OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"}
    done = run_to_exit(opengist_mcp_binary, env, ["doctor"])
    out = done.stdout
    assert re.search(
        r"^ok   passkeys: 3 in .*by principal: local: `ops` \(ops-2-creden\); "
        r"token:alice: `alice-laptop` \(alice-laptop\), `alice-key` \(alice-key-1-\)",
        out,
        re.M,
    ), out
    assert re.search(r"^ok   verified tools: delete_gist: only the approval page or CIBA", out, re.M), out
    # stdio: local has a passkey, so every kind of client gets the page.
    routes = [line for line in out.splitlines() if line[5:].startswith("routes:")]
    assert len(routes) == 1 and routes[0].startswith("ok   routes: for local"), routes
    assert "2026-07-28 form and URL: approval page (input_required)" in routes[0], routes
    assert ": form dialog" not in routes[0] and ": two-call" not in routes[0], routes


# --- the browser without a passkey -----------------------------------------------------------

LINK = re.compile(r"(http://localhost:\d+/enrol/[A-Za-z0-9_-]+)")


def enrol_local(binary: Path, state: Path, browser: Browser) -> None:
    command = subprocess.Popen(
        [str(binary), "passkeys", "add", "--valid-for-secs", "120"],
        env={**base_env(), "NOTES_STATE_DIR": str(state)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert command.stdout is not None
        link = next((m.group(1) for line in command.stdout if (m := LINK.search(line))), None)
        assert link, "passkeys add printed no link"
        browser.open(link)
        assert browser.click("enrol")["state"] == "done"
        out, err = command.communicate(timeout=30)
        assert command.returncode == 0, (out, err)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()


@pytest.mark.anyio
async def test_a_browser_without_the_passkey_is_told_the_principal_and_the_command(
    launcher, notes_binary, browser, tmp_path
):
    state = tmp_path / "state"
    enrol_local(notes_binary, state, browser)
    server = launcher.stdio(notes_binary, env={"NOTES_STATE_DIR": str(state)})
    stranger = Browser(tmp_path / "stranger")
    try:
        stranger.add_authenticator()
        async with connect(server.params, "legacy") as client:
            first = await client.call_tool("delete_note", {"note_id": "n1"})
            facts = first.structured_content or (first.meta or {}).get("ask-first/token_reply") or {}
            url = facts["approval_url"]
            await anyio.to_thread.run_sync(stranger.open, url)
            hidden = await anyio.to_thread.run_sync(stranger.evaluate, "document.getElementById('enrol').hidden")
            assert hidden is True, "the server knows a passkey is enrolled for local"
            outcome = await anyio.to_thread.run_sync(stranger.click, "approve")
            assert outcome["state"] == "refused", outcome
            assert "No passkey answered" in outcome["text"], outcome
            assert "NotAllowedError" not in outcome["text"] and "The operation" not in outcome["text"], outcome
            shown = await anyio.to_thread.run_sync(
                stranger.evaluate,
                "(() => { const n = document.getElementById('enrol'); return [n.hidden, n.textContent]; })()",
            )
            assert shown[0] is False and "`local`" in shown[1], shown
            assert "notes passkeys add --principal local" in shown[1], shown
            assert "n1" in {n["id"] for n in (await client.call_tool("list_notes", {})).structured_content["notes"]}
            # Positive control: the enrolled authenticator approves on the same page.
            await anyio.to_thread.run_sync(browser.open, url)
            assert (await anyio.to_thread.run_sync(browser.click, "approve"))["state"] == "done"
            ran = await client.call_tool("delete_note", {"note_id": "n1"})
            assert not ran.is_error, text_of(ran)
            listed = await client.call_tool("list_notes", {})
            assert "n1" not in {n["id"] for n in listed.structured_content["notes"]}
    finally:
        stranger.close()
