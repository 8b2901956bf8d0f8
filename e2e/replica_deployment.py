"""Three replicas of a server built on the guard, behind a real nginx, sharing a seal key and a
real Redis: the deployment both replica suites run against (test_notes_replicas.py, with the
guard's notes example and no Opengist; test_replicas.py, with opengist-mcp and a real
Opengist).

scripts/replica-env installs redis-server and nginx (Debian packages) and starts them on
loopback with throwaway configuration and data; `Deployment` starts Redis, the replicas and
nginx and stops every one of them by PID, also when a test fails. nginx round-robins (one
worker, so one sequence) over the replicas; its second port keeps each legacy session on the
replica whose id starts its Mcp-Session-Id.

Also here: the by-hand `input_required` round (`ask`, `retry`, `answers`) and the audit-log
reading (`new_lines`, `the_line`) both suites share.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path
from typing import Any, Callable

import mcp_types as types
from support import (
    ROOT,
    SERVER_PREFIXES,
    Dialog,
    HttpTarget,
    _stop_popen,
    answer_for,
    base_env,
    dump,
    free_port,
    wait_listening,
)

REPLICAS = ("r1", "r2", "r3")
SCRIPT = ROOT / "scripts" / "replica-env"
# The keys of every audit line, whichever server writes it.
AUDIT_KEYS = {"time", "replica", "principal", "tool", "operation", "target", "route", "outcome"}


def replica_env(*args: str) -> str:
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, f"scripts/replica-env {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip()


class Deployment:
    """Redis, three replicas of `binary` and nginx, in one throwaway directory.

    `settings(deployment, replica_id)` gives the server's own variables for one replica (its
    seal key, Redis URL, audit log and replica id, under the names that server reads)."""

    def __init__(
        self,
        workdir: Path,
        binary: Path,
        settings: Callable[["Deployment", str], dict[str, str]],
    ) -> None:
        self.dir = workdir
        self.binary = binary
        self.settings = settings
        self.password = secrets.token_hex(16)
        self.redis_port = free_port()
        self.ports = {rid: free_port() for rid in REPLICAS}
        self.rr_port = free_port()
        self.affinity_port = free_port()
        self.audit_path = workdir / "audit.jsonl"
        self.seal_key = secrets.token_hex(32)
        # One bearer secret every replica requires and every client sends (through nginx too).
        self.http_token = secrets.token_hex(24)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def redis_url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.redis_port}/0"

    @property
    def rr_url(self) -> HttpTarget:
        return HttpTarget(f"http://127.0.0.1:{self.rr_port}/mcp", self.http_token)

    def replica_url(self, rid: str) -> HttpTarget:
        return HttpTarget(f"http://127.0.0.1:{self.ports[rid]}/mcp", self.http_token)

    @property
    def affinity_url(self) -> HttpTarget:
        return HttpTarget(f"http://127.0.0.1:{self.affinity_port}/mcp", self.http_token)

    def start(self) -> None:
        """Redis, then every replica, then nginx."""
        self.redis_start()
        for rid in REPLICAS:
            self.start_replica(rid)
        self.nginx_start()

    def redis_start(self) -> None:
        replica_env("redis-start", str(self.dir), str(self.redis_port), self.password)

    def redis_stop(self) -> None:
        replica_env("redis-stop", str(self.dir))

    def start_replica(self, rid: str) -> None:
        env = {**base_env(), "XDG_STATE_HOME": str(self.dir / f"{rid}-state"), **self.settings(self, rid)}
        prefix = SERVER_PREFIXES.get(self.binary.name)
        if prefix is not None:
            env.setdefault(f"{prefix}_HTTP_TOKEN", self.http_token)
        port = self.ports[rid]
        with open(self.dir / f"{rid}.stdout", "ab") as out, open(self.dir / f"{rid}.stderr", "ab") as err:
            proc = subprocess.Popen(
                [str(self.binary), "--http", f"127.0.0.1:{port}"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=self.dir,
                start_new_session=True,
            )
        self.procs[rid] = proc
        assert wait_listening(proc, port), f"replica {rid} did not listen:\n{self.stderr(rid)}"

    def stop_replica(self, rid: str) -> None:
        proc = self.procs.pop(rid, None)
        if proc is not None:
            _stop_popen(proc)

    def restart_replicas(self) -> None:
        for rid in REPLICAS:
            self.stop_replica(rid)
        for rid in REPLICAS:
            self.start_replica(rid)

    def stderr(self, rid: str) -> str:
        path = self.dir / f"{rid}.stderr"
        return path.read_text(errors="replace") if path.exists() else ""

    def nginx_start(self) -> None:
        upstreams = [f"{rid}=127.0.0.1:{port}" for rid, port in self.ports.items()]
        replica_env("nginx-start", str(self.dir), str(self.rr_port), str(self.affinity_port), *upstreams)

    def nginx_stop(self) -> None:
        replica_env("nginx-stop", str(self.dir))

    def audit(self) -> list[dict[str, Any]]:
        if not self.audit_path.exists():
            return []
        return [json.loads(line) for line in self.audit_path.read_text().splitlines() if line.strip()]

    def close(self) -> None:
        for rid in list(self.procs):
            self.stop_replica(rid)
        for stop in (self.nginx_stop, self.redis_stop):
            try:
                stop()
            except AssertionError:
                pass


class ByHand(Dialog):
    """Declares elicitation, but every answer is given by hand through requestState."""

    async def __call__(self, context, params):
        raise AssertionError("these tests answer input_required by hand; the callback must not run")


def answers(ir: types.InputRequiredResult, answer: str = "accept") -> dict[str, types.ElicitResult]:
    return {key: answer_for(req.params.requested_schema, answer) for key, req in ir.input_requests.items()}


async def ask(client, name: str, args: dict) -> types.InputRequiredResult:
    result = await client.session.call_tool(name, args, allow_input_required=True)
    assert isinstance(result, types.InputRequiredResult), f"expected input_required, got {dump(result)}"
    assert result.request_state
    return result


async def retry(client, name: str, args: dict, state: str, responses):
    return await client.session.call_tool(
        name, args, allow_input_required=True, request_state=state, input_responses=responses
    )


def new_lines(deployment: Deployment, since: int) -> list[dict[str, Any]]:
    return deployment.audit()[since:]


def the_line(lines: list[dict[str, Any]], **fields: str) -> dict[str, Any]:
    found = [line for line in lines if all(line.get(k) == v for k, v in fields.items())]
    assert len(found) == 1, f"expected one audit line with {fields}, got {found} in {lines}"
    return found[0]
