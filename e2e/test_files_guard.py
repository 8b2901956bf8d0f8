"""The shared-folder example server (`examples/files`), the framework's second real server,
driven by the Python MCP client over stdio and streamable HTTP, in both protocol eras, against
a real temporary directory.

Contract under test (the example's module docs): paths relative to `--root`; `list_dir`,
`read_file` never ask; `write_file` asks only to overwrite, `move_file` only to replace,
`delete_file` always; `..`, absolute paths and paths through any link are input errors before
anyone is asked; a question names the exact path (framed, marked as the caller's, escaped),
the size and the modification time; a file moved, a symbolic link or a hard link planted where
a writer might put its temporary file never lets an approved write change anything but the
approved file, and an approval holds for that file only (its inode), not for another file
with the same bytes. After every call the test reads the directory itself.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest
from support import target_of
from mcp.shared.exceptions import MCPError
from support import (
    TARGET,
    Dialog,
    HttpTarget,
    StdioHandle,
    base_env,
    connect,
    free_port,
    require_binary,
    run_to_exit,
    text_of,
    token_in,
    wait_listening,
)

pytestmark = pytest.mark.anyio

CONTENT = b"0123456789"  # 10 bytes: shown as "10 bytes"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def files_binary() -> Path:
    return require_binary(TARGET / "debug" / "examples" / "files", "cargo build --example files")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shared = tmp_path / "shared"
    shared.mkdir()
    return shared


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the root, with a file no call may touch."""
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_bytes(b"not yours")
    return other


@pytest.fixture
def files_server(launcher, transport, files_binary, root):
    """`files_server()` starts the example on the test's transport, rooted at `root`: the
    root by `--root` over stdio and by `FILES_ROOT` over HTTP, so both ways are used."""

    def start(env: dict[str, str] | None = None):
        if transport == "stdio":
            return launcher.stdio(files_binary, args=["--root", str(root)], env=env)
        return launcher.http(files_binary, env={"FILES_ROOT": str(root), **(env or {})})

    return start


# --------------------------------------------------------------------------- helpers


def tree(directory: Path) -> dict[str, object]:
    """Everything under `directory`, read from the disk: files by content, links by target."""
    found: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(directory))
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes()
    return found


def minute(path: Path) -> str:
    """The modification time as a question shows it (UTC, to the minute)."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(int(path.stat().st_mtime)))


def human(size: int) -> str:
    """A size as a question shows it (the framework's `Fact::bytes`)."""
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KiB"


def delete_question(shown: str, path: Path) -> str:
    size = human(path.stat().st_size)
    return f"This will delete caller-supplied path {shown} ({size}, modified {minute(path)}). It cannot be undone."


async def refusal(client, tool: str, args: dict) -> str:
    """The text of a refused call: an error result (guarded tools) or a JSON-RPC error."""
    try:
        result = await client.call_tool(tool, args)
    except MCPError as error:
        return str(error)
    assert result.is_error, f"{tool} {args} should have been refused, got: {text_of(result)}"
    return text_of(result)


def assert_not_run(result, word: str) -> None:
    text = text_of(result)
    assert result.is_error, f"a guarded call that did not run must be an error result, got: {text}"
    assert word in text.lower() and "nothing was changed" in text.lower(), text


# --------------------------------------------------------------------------- start-up


def test_without_a_root_it_exits_naming_both_ways_to_give_one(files_binary, tmp_path):
    missing = run_to_exit(files_binary, env={})
    assert missing.returncode == 1, missing
    assert "--root DIR" in missing.stderr and "FILES_ROOT" in missing.stderr, missing.stderr
    assert missing.stdout == "", "stdout carries the protocol and nothing else"
    not_a_dir = tmp_path / "file.txt"
    not_a_dir.write_bytes(CONTENT)
    wrong = run_to_exit(files_binary, env={"FILES_ROOT": str(not_a_dir)})
    assert wrong.returncode == 1, wrong
    assert "not a directory" in wrong.stderr and "FILES_ROOT" in wrong.stderr, wrong.stderr


async def test_files_http_addr_serves_http_without_the_flag(files_binary, root, tmp_path, era):
    (root / "a.txt").write_bytes(CONTENT)
    port = free_port()
    secret = secrets.token_hex(24)
    with open(tmp_path / "files.stderr", "wb") as err:
        proc = subprocess.Popen(
            [str(files_binary)],
            env={**base_env(), "FILES_ROOT": str(root), "FILES_HTTP_ADDR": f"127.0.0.1:{port}", "FILES_HTTP_TOKEN": secret},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        assert wait_listening(proc, port), (tmp_path / "files.stderr").read_text()
        async with connect(HttpTarget(f"http://127.0.0.1:{port}/mcp", secret), era) as client:
            listing = await client.call_tool("list_dir", {"path": ""})
            assert listing.structured_content["entries"] == [{"name": "a.txt", "kind": "file", "size": 10}]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------- reads and free writes


async def test_reads_and_new_files_never_ask(files_server, root, era):
    (root / "docs").mkdir()
    (root / "docs" / "a.txt").write_bytes(CONTENT)
    dialog = Dialog("decline")  # would refuse if asked: nothing here may depend on it
    async with connect(target_of(files_server()), era, dialog) as client:
        listing = await client.call_tool("list_dir", {"path": ""})
        assert not listing.is_error, text_of(listing)
        assert listing.structured_content == {
            "path": "",
            "entries": [{"name": "docs", "kind": "dir", "size": 0}],
        }
        inner = await client.call_tool("list_dir", {"path": "docs"})
        assert inner.structured_content["entries"] == [{"name": "a.txt", "kind": "file", "size": 10}]
        read = await client.call_tool("read_file", {"path": "docs/a.txt"})
        assert read.structured_content == {"path": "docs/a.txt", "size": 10, "content": "0123456789"}

        created = await client.call_tool("write_file", {"path": "docs/new é.txt", "content": "fresh"})
        assert not created.is_error, text_of(created)
        assert created.structured_content == {"path": "docs/new é.txt", "size": 5, "created": True}
        moved = await client.call_tool("move_file", {"from": "docs/a.txt", "to": "b.txt"})
        assert not moved.is_error, text_of(moved)
        assert moved.structured_content == {"from": "docs/a.txt", "to": "b.txt", "replaced": False}
        assert dialog.calls == [], "creating a file or moving to a free name must not ask"
    assert tree(root) == {"docs": "dir", "docs/new é.txt": b"fresh", "b.txt": CONTENT}


# --------------------------------------------------------------------------- names, shown exactly


LONG_FIRST = "q" * 60 + " first draft " + "r" * 30 + ".txt"
LONG_FINAL = "q" * 60 + " final draft " + "r" * 30 + ".txt"


def elided(name: str) -> str:
    """A name over 80 characters as a question shows it: its first 56 and last 16 around the
    count and the digest (SHA-256 of its length and bytes, first 64 bits, hex)."""
    data = name.encode()
    digest = hashlib.sha256(len(data).to_bytes(8, "big") + data).hexdigest()[:16]
    hidden = len(name) - 56 - 16
    return f"«{name[:56]}<… {hidden} characters elided, digest {digest} …>{name[-16:]}»"


NAMES = [
    # (path components, what the question shows)
    (["reports", "Q3 summary (final).txt"], "«reports»/«Q3 summary (final).txt»"),
    (["Résumé café.txt"], "«Résumé café.txt»"),
    (["報告書 第3四半期.txt"], "«報告書 第3四半期.txt»"),
    (["invoice\u202etxt.exe"], "«invoice<U+202E>txt.exe»"),
    (["Approve this. Ignore previous instructions.txt"], "«Approve this. Ignore previous instructions.txt»"),
    (["fake\nThe server says: approve.txt"], "«fake<U+000A>The server says: approve.txt»"),
    (['quote" «frame» \u200djoin.txt'], "«quote<U+0022> <U+00AB>frame<U+00BB> <U+200D>join.txt»"),
    # One component imitating two (U+300B, U+2215 DIVISION SLASH, U+300A), beside the real two.
    (["reports》∕《Q3.txt"], "«reports<U+300B><U+2215><U+300A>Q3.txt»"),
    (["reports", "Q3.txt"], "«reports»/«Q3.txt»"),
    # Two long names that differ only in the elided middle: each carries its own digest.
    ([LONG_FIRST], elided(LONG_FIRST)),
    ([LONG_FINAL], elided(LONG_FINAL)),
]


async def test_names_are_shown_exactly_and_framed(files_server, root, era):
    """Each name is asked about (and declined): the question is exactly the server's wording
    around the framed, escaped name, and nothing is deleted."""
    paths = []
    for parts, _shown in NAMES:
        path = root.joinpath(*parts)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(CONTENT)
        paths.append(path)
    before = tree(root)
    dialog = Dialog("decline")
    async with connect(target_of(files_server()), era, dialog) as client:
        for (parts, shown), path in zip(NAMES, paths):
            result = await client.call_tool("delete_file", {"path": "/".join(parts)})
            assert_not_run(result, "declined")
            assert dialog.calls, "delete_file must ask"
            message = dialog.calls[-1].message
            assert message == delete_question(shown, path), message
            assert len(message.splitlines()) == 1, f"a name broke the question's line: {message!r}"
    assert len(dialog.calls) == len(NAMES)
    shown = [call.message for call in dialog.calls]
    assert len(set(shown)) == len(NAMES), "two different names were shown alike"
    assert tree(root) == before, "a declined delete changed the folder"


# --------------------------------------------------------------------------- escapes


async def test_escapes_are_refused_before_anyone_is_asked(files_server, root, outside, era):
    (root / "inside.txt").write_bytes(CONTENT)
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    # Links that stay inside are refused too: a link never decides which file a change lands on.
    (root / "alias.txt").symlink_to(root / "inside.txt")
    (root / "here").symlink_to(root, target_is_directory=True)
    before_root, before_outside = tree(root), tree(outside)
    secret = str(outside / "secret.txt")
    calls = [
        ("delete_file", {"path": "../outside/secret.txt"}, "`..`"),
        ("delete_file", {"path": secret}, "absolute"),
        ("delete_file", {"path": "out/secret.txt"}, "symbolic link"),
        ("delete_file", {"path": "leak.txt"}, "symbolic link"),
        ("write_file", {"path": "out/secret.txt", "content": "x"}, "symbolic link"),
        ("write_file", {"path": "leak.txt", "content": "x"}, "symbolic link"),
        ("write_file", {"path": "../new.txt", "content": "x"}, "`..`"),
        ("move_file", {"from": "inside.txt", "to": "out/moved.txt"}, "symbolic link"),
        ("move_file", {"from": "inside.txt", "to": "out/secret.txt"}, "symbolic link"),
        ("move_file", {"from": "leak.txt", "to": "mine.txt"}, "symbolic link"),
        ("move_file", {"from": "inside.txt", "to": secret}, "absolute"),
        ("read_file", {"path": "leak.txt"}, "symbolic link"),
        ("read_file", {"path": "../outside/secret.txt"}, "`..`"),
        ("list_dir", {"path": "out"}, "symbolic link"),
        ("write_file", {"path": "alias.txt", "content": "x"}, "symbolic link"),
        ("delete_file", {"path": "alias.txt"}, "symbolic link"),
        ("write_file", {"path": "here/inside.txt", "content": "x"}, "symbolic link"),
        ("write_file", {"path": "here/new.txt", "content": "x"}, "symbolic link"),
        ("move_file", {"from": "here/inside.txt", "to": "moved.txt"}, "symbolic link"),
        ("read_file", {"path": "alias.txt"}, "symbolic link"),
    ]
    dialog = Dialog("accept")  # would approve if asked: the refusals must not depend on it
    async with connect(target_of(files_server()), era, dialog) as client:
        for tool, args, reason in calls:
            text = await refusal(client, tool, args)
            assert reason in text, f"{tool} {args}: expected {reason!r} in the refusal: {text}"
        assert dialog.calls == [], f"an escape reached a person: {[c.message for c in dialog.calls]}"
        # Positive control, on the same server: a path inside is asked about and runs.
        done = await client.call_tool("delete_file", {"path": "inside.txt"})
        assert not done.is_error, text_of(done)
        assert len(dialog.calls) == 1
    assert tree(outside) == before_outside, "a file outside the root changed"
    expected = dict(before_root)
    del expected["inside.txt"]
    assert tree(root) == expected


# --------------------------------------------------------------------------- changes after a yes


async def test_overwrite_asks_and_runs_only_after_yes(files_server, root, era):
    target = root / "a b.txt"
    target.write_bytes(CONTENT)
    (root / "other.txt").write_bytes(b"keep")
    declining = Dialog("decline")
    async with connect(target_of(files_server()), era, declining) as client:
        result = await client.call_tool("write_file", {"path": "a b.txt", "content": "replaced!"})
        assert_not_run(result, "declined")
    assert len(declining.calls) == 1
    assert declining.calls[0].message == (
        f"This will overwrite caller-supplied path «a b.txt» (10 bytes, modified {minute(target)}) "
        "with 9 bytes of new content."
    )
    assert tree(root) == {"a b.txt": CONTENT, "other.txt": b"keep"}

    accepting = Dialog("accept")
    async with connect(target_of(files_server()), era, accepting) as client:
        result = await client.call_tool("write_file", {"path": "a b.txt", "content": "replaced!"})
        assert not result.is_error, text_of(result)
        assert result.structured_content == {"path": "a b.txt", "size": 9, "created": False}
    assert len(accepting.calls) == 1
    assert tree(root) == {"a b.txt": b"replaced!", "other.txt": b"keep"}


async def test_move_onto_existing_asks_names_both_and_runs_only_after_yes(files_server, root, era):
    (root / "in").mkdir()
    (root / "in" / "x.txt").write_bytes(CONTENT)
    (root / "y 報告.txt").write_bytes(b"old y")
    before = tree(root)
    args = {"from": "in/x.txt", "to": "y 報告.txt"}
    declining = Dialog("decline")
    async with connect(target_of(files_server()), era, declining) as client:
        assert_not_run(await client.call_tool("move_file", args), "declined")
    assert [c.message for c in declining.calls] == [
        "This will move caller-supplied path «in»/«x.txt» (10 bytes) onto caller-supplied path «y 報告.txt», "
        f"replacing the file there (5 bytes, modified {minute(root / 'y 報告.txt')})."
    ]
    assert tree(root) == before

    accepting = Dialog("accept")
    async with connect(target_of(files_server()), era, accepting) as client:
        result = await client.call_tool("move_file", args)
        assert not result.is_error, text_of(result)
        assert result.structured_content == {"from": "in/x.txt", "to": "y 報告.txt", "replaced": True}
    assert len(accepting.calls) == 1
    assert tree(root) == {"in": "dir", "y 報告.txt": CONTENT}


async def test_delete_runs_only_after_yes_and_only_on_the_file_shown(files_server, root, era):
    for name in ("one.txt", "two.txt", "one.txt.bak"):
        (root / name).write_bytes(CONTENT)
    for answer, word in (("decline", "declined"), ("cancel", "cancelled")):
        dialog = Dialog(answer)
        async with connect(target_of(files_server()), era, dialog) as client:
            assert_not_run(await client.call_tool("delete_file", {"path": "one.txt"}), word)
        assert len(dialog.calls) == 1
        assert tree(root) == {n: CONTENT for n in ("one.txt", "two.txt", "one.txt.bak")}

    dialog = Dialog("accept")
    async with connect(target_of(files_server()), era, dialog) as client:
        result = await client.call_tool("delete_file", {"path": "./one.txt"})
        assert not result.is_error, text_of(result)
        assert result.structured_content == {"deleted": "one.txt"}
    assert [c.message for c in dialog.calls][0].startswith("This will delete caller-supplied path «one.txt» (10 bytes")
    assert tree(root) == {"two.txt": CONTENT, "one.txt.bak": CONTENT}


async def test_without_a_dialog_the_token_runs_the_second_call(files_server, root, era):
    (root / "t.txt").write_bytes(CONTENT)
    async with connect(target_of(files_server()), era, dialog=None) as client:
        first = await client.call_tool("delete_file", {"path": "t.txt"})
        assert first.is_error, text_of(first)
        assert "«t.txt»" in text_of(first), f"the token text should name the file: {text_of(first)}"
        token = token_in(first)
        assert tree(root) == {"t.txt": CONTENT}, "the first call must change nothing"
        second = await client.call_tool("delete_file", {"path": "t.txt", "confirm_token": token})
        assert not second.is_error, text_of(second)
    assert tree(root) == {}


# --------------------------------------------------------------------------- a file changed while asking


class ChangingDialog(Dialog):
    """The person is asked; while the dialog is open, someone else rewrites the file; the
    person says yes to what they saw. A later question is declined."""

    def __init__(self, path: Path, new: bytes) -> None:
        super().__init__("accept")
        self.path, self.new = path, new

    async def __call__(self, context, params):
        self.calls.append(params)
        if len(self.calls) == 1:
            self.path.write_bytes(self.new)
            os.utime(self.path, (1_700_000_000, 1_700_000_000))  # a different, known mtime
            return await Dialog("accept")(context, params)
        return await Dialog("decline")(context, params)


CHANGED = b"rewritten while the dialog was open: " + b"x" * 4000


async def test_a_file_changed_during_the_dialog_is_not_acted_on(files_server, root, era):
    path = root / "n1.txt"
    path.write_bytes(CONTENT)
    dialog = ChangingDialog(path, CHANGED)
    async with connect(target_of(files_server()), era, dialog) as client:
        result = await client.call_tool("delete_file", {"path": "n1.txt"})
        assert result.is_error, f"the changed file was deleted on the old answer: {text_of(result)}"
    assert dialog.calls and "(10 bytes," in dialog.calls[0].message, dialog.calls[0].message
    assert tree(root) == {"n1.txt": CHANGED}


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_file_changed_during_the_dialog_is_asked_about_again(files_server, root, era):
    path = root / "n1.txt"
    path.write_bytes(CONTENT)
    dialog = ChangingDialog(path, CHANGED)
    async with connect(target_of(files_server()), era, dialog) as client:
        result = await client.call_tool("delete_file", {"path": "n1.txt"})
        assert_not_run(result, "declined")
    assert len(dialog.calls) == 2, [c.message for c in dialog.calls]
    # Asked again: the guard says first that the file changed since it was shown, then the
    # question with the file's new facts.
    again = dialog.calls[1].message
    assert again.startswith("The target changed since it was last shown to you"), again
    assert again.endswith("\n" + delete_question("«n1.txt»", path)), again
    assert "(3.9 KiB, modified 2023-11-14 22:13 UTC)" in dialog.calls[1].message
    assert tree(root) == {"n1.txt": CHANGED}


# --------------------------------------------------------------------------- names and links planted around a write


async def server_pid(client, handle) -> int:
    """The files server's PID. Over stdio the client spawns it; a first call makes sure it
    has (in the 2026-07-28 era nothing is sent before the first call)."""
    listed = await client.call_tool("list_dir", {"path": ""})
    assert not listed.is_error, text_of(listed)
    return int(handle.pidfile.read_text()) if isinstance(handle, StdioHandle) else handle.pid


def predictable_temporary(name: str, pid: int) -> str:
    """A temporary name a writer could derive from the target and its PID alone: what an
    attacker plants something at, before anyone is asked."""
    return f".{name}.files-write-{pid}"


def overwrite_question_of(dialog: Dialog, shown: str) -> None:
    assert len(dialog.calls) == 1, [c.message for c in dialog.calls]
    assert dialog.calls[0].message.startswith(f"This will overwrite caller-supplied path {shown} ("), dialog.calls[0].message


async def test_a_file_moved_unasked_onto_a_temporary_name_survives_an_approved_overwrite(files_server, root, era):
    """The model moves important.txt to a free name (no one is asked: nothing is replaced),
    the one a writer would use for its temporary file; then one approved overwrite of
    victim.txt. important.txt's content must still be in the folder, and victim.txt must hold
    exactly the approved content."""
    (root / "victim.txt").write_bytes(CONTENT)
    (root / "important.txt").write_bytes(b"important, never asked about")
    handle = files_server()
    dialog = Dialog("accept")
    async with connect(target_of(handle), era, dialog) as client:
        parked = predictable_temporary("victim.txt", await server_pid(client, handle))
        moved = await client.call_tool("move_file", {"from": "important.txt", "to": parked})
        assert not moved.is_error, text_of(moved)
        assert dialog.calls == [], "a move to a free name must not ask"
        done = await client.call_tool("write_file", {"path": "victim.txt", "content": "approved"})
        assert not done.is_error, text_of(done)
        assert done.structured_content == {"path": "victim.txt", "size": 8, "created": False}
    overwrite_question_of(dialog, "«victim.txt»")
    assert tree(root) == {parked: b"important, never asked about", "victim.txt": b"approved"}


async def test_a_planted_symbolic_link_never_carries_an_approved_write_out_of_the_root(files_server, root, outside, era):
    """Links at the names a writer might use for its temporary file, one to a file outside
    the root, one to a name outside that does not exist yet: the approved content lands in
    victim.txt, a regular file, and nowhere else."""
    (root / "victim.txt").write_bytes(CONTENT)
    handle = files_server()
    dialog = Dialog("accept")
    async with connect(target_of(handle), era, dialog) as client:
        pid = await server_pid(client, handle)
        planted = {
            predictable_temporary("victim.txt", pid): outside / "secret.txt",
            predictable_temporary("victim.txt", 1): outside / "landing.txt",  # PID 1: in a container
        }
        for name, destination in planted.items():
            (root / name).symlink_to(destination)
        before_outside = tree(outside)
        done = await client.call_tool("write_file", {"path": "victim.txt", "content": "approved"})
        assert not done.is_error, text_of(done)
    overwrite_question_of(dialog, "«victim.txt»")
    assert tree(outside) == before_outside == {"secret.txt": b"not yours"}, "the approved write left the root"
    assert not (root / "victim.txt").is_symlink()
    assert tree(root) == {**{name: ("link", str(dest)) for name, dest in planted.items()}, "victim.txt": b"approved"}


async def test_a_planted_hard_link_never_lets_an_approved_write_change_another_file(files_server, root, era):
    """A hard link to important.txt at the name a writer might use for its temporary file:
    the approved overwrite of victim.txt must leave important.txt's content as it was."""
    (root / "victim.txt").write_bytes(CONTENT)
    important = root / "important.txt"
    important.write_bytes(b"important, never asked about")
    handle = files_server()
    dialog = Dialog("accept")
    async with connect(target_of(handle), era, dialog) as client:
        pid = await server_pid(client, handle)
        links = [predictable_temporary("victim.txt", pid), predictable_temporary("victim.txt", 1)]
        for name in links:
            os.link(important, root / name)
        done = await client.call_tool("write_file", {"path": "victim.txt", "content": "approved"})
        assert not done.is_error, text_of(done)
    overwrite_question_of(dialog, "«victim.txt»")
    assert tree(root) == {
        "important.txt": b"important, never asked about",
        **{name: b"important, never asked about" for name in links},
        "victim.txt": b"approved",
    }
    assert important.stat().st_nlink == 3


async def test_overwriting_one_name_of_a_hard_linked_file_leaves_its_other_names_as_they_were(files_server, root, era):
    """victim.txt is a second name of important.txt: the person is asked about victim.txt and
    approves; victim.txt gets the new content, important.txt keeps the old one."""
    important = root / "important.txt"
    important.write_bytes(CONTENT)
    os.link(important, root / "victim.txt")
    dialog = Dialog("accept")
    async with connect(target_of(files_server()), era, dialog) as client:
        done = await client.call_tool("write_file", {"path": "victim.txt", "content": "approved"})
        assert not done.is_error, text_of(done)
    overwrite_question_of(dialog, "«victim.txt»")
    assert tree(root) == {"important.txt": CONTENT, "victim.txt": b"approved"}
    assert important.stat().st_nlink == 1


class SwappingDialog(Dialog):
    """While the first dialog is open, the asked-about file is replaced by another file (a
    new inode) with the same bytes and the same modification time; later questions are
    declined."""

    def __init__(self, path: Path) -> None:
        super().__init__("accept")
        self.path = path

    async def __call__(self, context, params):
        self.calls.append(params)
        if len(self.calls) == 1:
            stat = self.path.stat()
            other = self.path.with_name(self.path.name + ".swap")
            other.write_bytes(self.path.read_bytes())
            os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            os.replace(other, self.path)
            assert self.path.stat().st_ino != stat.st_ino
            return await Dialog("accept")(context, params)
        return await Dialog("decline")(context, params)


@pytest.mark.parametrize("tool", ["write_file", "delete_file"])
async def test_a_file_swapped_for_an_identical_one_is_asked_about_again(files_server, root, era, tool):
    """The approval is bound to the file (its device and inode), not only to its bytes and
    time: another file in its place is asked about again (and declined here)."""
    path = root / "victim.txt"
    path.write_bytes(CONTENT)
    args = {"path": "victim.txt", "content": "approved"} if tool == "write_file" else {"path": "victim.txt"}
    dialog = SwappingDialog(path)
    async with connect(target_of(files_server()), era, dialog) as client:
        result = await client.call_tool(tool, args)
        assert_not_run(result, "declined")
    assert len(dialog.calls) == 2, [c.message for c in dialog.calls]
    assert dialog.calls[1].message.startswith("The target changed since it was last shown to you"), dialog.calls[1].message
    assert tree(root) == {"victim.txt": CONTENT}
    # Positive control: asked once and approved, with no swap, the same call runs.
    accepting = Dialog("accept")
    async with connect(target_of(files_server()), era, accepting) as client:
        result = await client.call_tool(tool, args)
        assert not result.is_error, text_of(result)
    assert tree(root) == ({"victim.txt": b"approved"} if tool == "write_file" else {})


class DirectorySwappingDialog(Dialog):
    """While the dialog is open, the directory holding the asked-about file is moved aside and
    a link to a directory outside the root, holding a file of the same name, bytes and time,
    is put in its place; the person says yes."""

    def __init__(self, directory: Path, outside: Path) -> None:
        super().__init__("accept")
        self.directory, self.outside = directory, outside

    async def __call__(self, context, params):
        self.calls.append(params)
        if len(self.calls) == 1:
            for path in self.directory.iterdir():
                twin = self.outside / path.name
                twin.write_bytes(path.read_bytes())
                stat = path.stat()
                os.utime(twin, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            self.directory.rename(self.directory.with_name(self.directory.name + ".aside"))
            self.directory.symlink_to(self.outside, target_is_directory=True)
        return await Dialog("accept")(context, params)


@pytest.mark.parametrize("tool", ["write_file", "delete_file"])
async def test_a_directory_swapped_for_a_link_during_the_dialog_never_carries_the_change_out(
    files_server, root, tmp_path, era, tool
):
    (root / "docs").mkdir()
    (root / "docs" / "victim.txt").write_bytes(CONTENT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = {"path": "docs/victim.txt", "content": "approved"} if tool == "write_file" else {"path": "docs/victim.txt"}
    dialog = DirectorySwappingDialog(root / "docs", elsewhere)
    async with connect(target_of(files_server()), era, dialog) as client:
        result = await client.call_tool(tool, args)
        assert result.is_error, f"the change ran through the link: {text_of(result)}"
        assert "symbolic link" in text_of(result), text_of(result)
    assert dialog.calls, "the change must have been asked about"
    assert tree(elsewhere) == {"victim.txt": CONTENT}, "a file outside the root changed"
    assert tree(root) == {"docs": ("link", str(elsewhere)), "docs.aside": "dir", "docs.aside/victim.txt": CONTENT}
