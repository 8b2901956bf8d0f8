"""A burst of calls queues in front of a REAL Opengist instead of knocking it over (marker
`opengist`).

Each guarded call makes two or three Opengist requests before it asks; a burst of them used
to drive Opengist's SQLite into `SQLITE_BUSY` and HTTP 500. opengist-mcp now holds requests
to Opengist to a few at a time, in all and per MCP principal, and a request that waits too
long is refused with a clear "Opengist is busy ... retry" error. Here 100 calls go at once
over HTTP (reads by id and by link, and guarded `delete_gist` calls that stop at their
confirm_token, so nothing is written); every answer must be a success, the token reply, or
that busy error, never an Opengist 500; and Opengist's own log, which records every request
with its status, must hold the burst's requests (the positive control) and no 500,
`SQLITE_BUSY` or locked database among them. Nothing is timed: the figures are printed.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path

import pytest
from live import api, marker, session
from support import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.opengist]

CALLS = 100
BUSY = "Opengist is busy"
LOG_BUSY = re.compile(r"SQLITE_BUSY|database is locked", re.IGNORECASE)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def log_since(env: dict[str, str], offset: int) -> list[str]:
    """Opengist's log lines written after `offset` bytes, without colour codes."""
    with open(env["OPENGIST_E2E_LOG"], "rb") as log:
        log.seek(offset)
        return [ANSI.sub("", line) for line in log.read().decode(errors="replace").splitlines()]


def classify(tool: str, result) -> str:
    text = text_of(result)
    if not result.is_error:
        return "ok"
    if tool == "delete_gist" and "confirm_token:" in text and "Nothing was changed yet" in text:
        return "token"
    if BUSY in text and "Nothing was sent" in text and "retry" in text:
        return "busy"
    return f"other: {text[:300]}"


@pytest.mark.parametrize(("transport", "era"), [("http", "2026-07-28"), ("http", "legacy")])
async def test_a_burst_of_calls_queues_and_never_reaches_opengist_all_at_once(opengist_env, live_server, era):
    og = api(opengist_env)
    base = opengist_env["OPENGIST_E2E_URL"].rstrip("/")
    admin = opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin")
    m = marker()
    gists = [og.create({f"f{i}.txt": f"{m} {i}\n"}, "private" if i % 2 else "public", title=f"{m} {i}") for i in range(4)]
    offset = Path(opengist_env["OPENGIST_E2E_LOG"]).stat().st_size

    calls: list[tuple[str, dict]] = []
    for i in range(CALLS):
        gist = gists[i % len(gists)]
        if i % 4 == 0:
            calls.append(("delete_gist", {"gist_id": gist}))
        elif i % 4 == 1:
            calls.append(("get_gist", {"gist_id": f"{base}/{admin}/{gist}"}))
        else:
            calls.append(("get_gist", {"gist_id": gist}))

    # No dialog: the guarded calls resolve their target (reading Opengist) and stop at the token.
    async with session(live_server, era) as client:
        results = await asyncio.gather(*(client.call_tool(tool, args) for tool, args in calls))

    kinds = Counter(classify(tool, result) for (tool, _), result in zip(calls, results))
    print(f"\n{CALLS} calls over HTTP ({era}): {dict(kinds)}")
    others = [k for k in kinds if k not in ("ok", "token", "busy")]
    assert not others, f"answers that are neither a success nor the busy error: {others}"
    assert kinds["ok"] + kinds["token"] > 0, "no call got through at all"

    lines = log_since(opengist_env, offset)
    requests = [line for line in lines if "uri=" in line and any(g in line for g in gists)]
    statuses = Counter(m.group(1) for line in requests if (m := re.search(r"status=(\d+)", line)))
    print(f"Opengist logged {len(requests)} requests for the burst's gists; statuses {dict(statuses)}")
    # Positive control: the log is the one Opengist writes, and it saw the burst.
    assert len(requests) >= CALLS, f"Opengist's log shows only {len(requests)} of the burst's requests"
    assert not any(s.startswith("5") for s in statuses), f"Opengist answered {dict(statuses)}"
    assert not [line for line in lines if LOG_BUSY.search(line)], "Opengist's database was busy or locked"
    # Nothing was deleted: the guarded calls stopped at their token.
    assert all(og.exists(g) for g in gists)
