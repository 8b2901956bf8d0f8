"""The guide's "Guarding an existing server", proven: `examples/memo.rs` (a plain rmcp server
over a directory of memos) and `examples/memo_guarded.rs` (the same server guarded), spawned
as processes over stdio in both eras, each write checked on the disk; and the guide's diff
between the two files, which must be exactly their diff.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from support import ROOT, TARGET, Dialog, connect, require_binary, target_of, text_of

pytestmark = pytest.mark.anyio

EXAMPLES = ROOT / "crates" / "ask-first" / "examples"
GUIDE = ROOT / "crates" / "ask-first" / "README.md"


@pytest.fixture
def memos(tmp_path: Path) -> Path:
    directory = tmp_path / "memos"
    directory.mkdir()
    (directory / "a.txt").write_text("hello")  # 5 bytes
    (directory / "b.txt").write_text("keep")
    return directory


def start(launcher, name: str, memos: Path):
    binary = require_binary(TARGET / "debug" / "examples" / name, f"cargo build --example {name}")
    return launcher.stdio(binary, args=[str(memos)])


def on_disk(directory: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


def test_the_guide_shows_exactly_the_diff_between_the_two_examples():
    before = (EXAMPLES / "memo.rs").read_text().splitlines(keepends=True)
    after = (EXAMPLES / "memo_guarded.rs").read_text().splitlines(keepends=True)
    expected = "".join(difflib.unified_diff(before, after, "examples/memo.rs", "examples/memo_guarded.rs"))
    section = GUIDE.read_text().split("## Guarding an existing server", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"```diff\n(.*?)```", section, re.DOTALL)
    assert len(shown) == 1, "the section shows one diff"
    assert expected.count("\n@@") >= 3, "positive control: the two files differ in several places"
    assert shown[0] == expected, "the guide's diff is not the examples' diff: paste this one:\n" + expected


async def test_the_plain_server_deletes_and_writes_without_asking(launcher, memos, era):
    person = Dialog("decline")
    async with connect(target_of(start(launcher, "memo", memos)), era, person) as client:
        result = await client.call_tool("delete_memo", {"name": "a"})
        assert not result.is_error, text_of(result)
        result = await client.call_tool("write_memo", {"name": "b", "text": "replaced"})
        assert not result.is_error, text_of(result)
    assert person.calls == [], "the plain server asks no one"
    assert on_disk(memos) == {"b.txt": "replaced"}


async def test_the_guarded_delete_runs_only_after_yes(launcher, memos, era):
    declining = Dialog("decline")
    async with connect(target_of(start(launcher, "memo_guarded", memos)), era, declining) as client:
        result = await client.call_tool("delete_memo", {"name": "a"})
        assert result.is_error and "declined" in text_of(result), text_of(result)
    assert [call.message for call in declining.calls] == ["This will delete memo a (5 bytes)."]
    assert on_disk(memos) == {"a.txt": "hello", "b.txt": "keep"}

    accepting = Dialog("accept")
    async with connect(target_of(start(launcher, "memo_guarded", memos)), era, accepting) as client:
        result = await client.call_tool("delete_memo", {"name": "a"})
        assert not result.is_error, text_of(result)
        missing = await client.call_tool("delete_memo", {"name": "a"})
        assert missing.is_error and "There is no memo a." in text_of(missing), text_of(missing)
    assert len(accepting.calls) == 1, "an unknown memo is refused before anyone is asked"
    assert on_disk(memos) == {"b.txt": "keep"}


async def test_the_guarded_write_runs_only_after_yes(launcher, memos, era):
    accepting = Dialog("accept")
    async with connect(target_of(start(launcher, "memo_guarded", memos)), era, accepting) as client:
        result = await client.call_tool("write_memo", {"name": "b", "text": "replaced"})
        assert not result.is_error, text_of(result)
    assert [call.message for call in accepting.calls] == ["This will replace memo b (4 bytes) with 8 bytes."]
    assert on_disk(memos) == {"a.txt": "hello", "b.txt": "replaced"}


class ChangingDialog(Dialog):
    """The person is asked; while the dialog is open, someone else rewrites the memo; the
    person says yes to what they saw."""

    def __init__(self, path: Path) -> None:
        super().__init__("accept")
        self.path = path

    async def __call__(self, context, params):
        if not self.calls:
            self.path.write_text("rewritten meanwhile")
        return await super().__call__(context, params)


async def test_a_memo_changed_during_the_dialog_is_not_overwritten(launcher, memos):
    """2025-11-25 (a pushed dialog): `WriteMemo::recheck` reads nothing after the yes; the
    compare-and-swap in `write_approved` is what refuses the stale write."""
    person = ChangingDialog(memos / "b.txt")
    async with connect(target_of(start(launcher, "memo_guarded", memos)), "legacy", person) as client:
        result = await client.call_tool("write_memo", {"name": "b", "text": "replaced"})
        assert result.is_error, f"the changed memo was overwritten: {text_of(result)}"
        assert "changed since you were asked. Nothing was changed." in text_of(result), text_of(result)
    assert len(person.calls) == 1
    assert on_disk(memos) == {"a.txt": "hello", "b.txt": "rewritten meanwhile"}
