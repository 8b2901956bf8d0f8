"""Helpers for the end-to-end suite: spawning servers, connecting the Python MCP client,
recording elicitation dialogs, and reading results.

The MCP client is the Python `mcp` SDK (pinned in scripts/python-env), a client no one on
this project wrote. Every server is a real process started as a user would start it; every
process a test starts is killed by its PID when the test ends, also when it fails.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import mcp_types as types
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")

# The two protocol eras the servers must serve, and the two transports.
ERAS = ("legacy", "2026-07-28")
TRANSPORTS = ("stdio", "http")

# A line `confirm_token: <TOKEN>` in a guarded result's text (the two-call token path).
TOKEN_LINE = re.compile(r"^confirm_token: ([A-Za-z0-9_.-]+)[ \t]*$", re.MULTILINE)

# Bound on how long a server may take to start listening or to exit. Not a speed
# assertion: only a guard so a broken server fails the test instead of hanging it.
STARTUP_BOUND_S = 60.0
CLIENT_READ_TIMEOUT_S = 60.0


# The tokens scripts/provision-opengist seeds, by the environment variable each is in.
TOKENS = {
    "full": "OPENGIST_E2E_TOKEN_FULL",  # admin, gist read+write, user read+write
    "read": "OPENGIST_E2E_TOKEN_READ",  # admin, gist read, user read
    "nogist": "OPENGIST_E2E_TOKEN_NOGIST",  # admin, no gist scope, user read+write
    "user2": "OPENGIST_E2E_TOKEN_USER2",  # e2e-user2, everything
}


def notes_bin() -> Path:
    """The guard framework's example server (cargo build --example notes)."""
    return Path(os.environ.get("E2E_NOTES_BIN") or TARGET / "debug" / "examples" / "notes")


def opengist_mcp_bin() -> Path:
    """The Opengist MCP server (cargo build -p opengist-mcp)."""
    return Path(os.environ.get("E2E_OPENGIST_MCP_BIN") or TARGET / "debug" / "opengist-mcp")


def require_binary(path: Path, how: str) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise AssertionError(f"server binary {path} does not exist; build it first: {how}")
    return path


# The setting prefix of each server binary: `<PREFIX>_HTTP_TOKEN`, `<PREFIX>_HTTP_NO_AUTH`.
SERVER_PREFIXES = {"notes": "NOTES", "opengist-mcp": "OPENGIST_MCP", "files": "FILES"}

# The line a server without any credential setting prints its made-up secret on.
MINTED_SECRET_LINE = re.compile(r"^\s*Authorization: Bearer ([0-9a-f]{64})\s*$", re.MULTILINE)


class HttpTarget(str):
    """A streamable HTTP URL that `connect` reaches with `Authorization: Bearer <token>`
    (no header when `token` is None). Still a plain URL string everywhere else."""

    token: str | None

    def __new__(cls, url: str, token: str | None = None) -> "HttpTarget":
        target = super().__new__(cls, url)
        target.token = token
        return target


def http_transport(url: str, bearer: str):
    """A streamable HTTP transport to `url` that sends `Authorization: Bearer <bearer>`."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"}))


def client_target(target):
    """What `mcp.Client` takes for `target`: an `HttpTarget` with a secret becomes a transport
    that sends it; anything else is unchanged."""
    if isinstance(target, HttpTarget) and target.token:
        return http_transport(str(target), target.token)
    return target


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago (loopback only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env() -> dict[str, str]:
    """A minimal environment for a spawned server: nothing of the caller's OPENGIST_*,
    ELICITATION or similar leaks in, so each test states the configuration it runs with."""
    env = {}
    for key in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


# --------------------------------------------------------------------------- processes


@dataclass
class StdioHandle:
    """A stdio server the MCP client will spawn through a tiny shell wrapper that records
    the server's PID (the wrapper `exec`s the server, so the PID is the server's own) and
    sends its stderr to a file the test can read."""

    params: StdioServerParameters
    binary: Path
    pidfile: Path
    stderr_path: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace") if self.stderr_path.exists() else ""


@dataclass
class HttpHandle:
    proc: subprocess.Popen[bytes]
    url: str
    port: int
    stdout_path: Path
    stderr_path: Path
    # The bearer secret the server requires (set by the launcher, or read from the server's
    # start-up lines when it made one up); None: the server was started without authentication.
    # With per-person tokens (`auth="tokens"`): the first person's token.
    token: str | None = None
    # With per-person tokens: each person's token, by name (minted by the server's own
    # `tokens add`, so the token file holds only their hashes).
    tokens: dict[str, str] = field(default_factory=dict)
    # With per-person tokens: the token file the server reads.
    tokens_file: Path | None = None

    @property
    def authorization(self) -> str | None:
        """The `Authorization` header value this server requires, if any."""
        return f"Bearer {self.token}" if self.token else None

    @property
    def headers(self) -> dict[str, str]:
        """The headers every request to this server needs."""
        return {"Authorization": self.authorization} if self.token else {}

    @property
    def target(self) -> HttpTarget:
        """What `connect` reaches this server with: its URL and its secret."""
        return HttpTarget(self.url, self.token)

    def minted_secret(self) -> str | None:
        """The secret the server made up at start (printed once on its stderr), if it did."""
        match = MINTED_SECRET_LINE.search(self.stderr())
        return match.group(1) if match else None

    def as_person(self, name: str) -> HttpTarget:
        """What `connect` reaches this server with as the person `name` (per-person tokens)."""
        return HttpTarget(self.url, self.tokens[name])

    def authorization_of(self, name: str) -> str:
        """The `Authorization` header value of the person `name` (per-person tokens)."""
        return f"Bearer {self.tokens[name]}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")


@dataclass
class Launcher:
    """Starts servers for one test and kills every one of them, by PID, at teardown."""

    workdir: Path
    _stdio: list[StdioHandle] = field(default_factory=list)
    _http: list[HttpHandle] = field(default_factory=list)
    _n: int = 0

    def _next(self, stem: str) -> str:
        self._n += 1
        return f"{stem}-{self._n}"

    def stdio(self, binary: Path, args: list[str] | None = None, env: dict[str, str] | None = None) -> StdioHandle:
        name = self._next(binary.name)
        # Its own state directory (the spent-answer log of a fixed seal key) unless `env` names one.
        env = {"XDG_STATE_HOME": str(self.workdir / f"{name}-state"), **(env or {})}
        pidfile = self.workdir / f"{name}.pid"
        stderr_path = self.workdir / f"{name}.stderr"
        wrapper = 'echo $$ >"$1"; err="$2"; shift 2; exec "$@" 2>"$err"'
        params = StdioServerParameters(
            command="/bin/sh",
            args=["-c", wrapper, "e2e-stdio", str(pidfile), str(stderr_path), str(binary), *(args or [])],
            env=env or {},
            cwd=str(self.workdir),
        )
        handle = StdioHandle(params=params, binary=binary, pidfile=pidfile, stderr_path=stderr_path)
        self._stdio.append(handle)
        return handle

    def mint_tokens(self, binary: Path, people: tuple[str, ...] | list[str], file: Path | None = None) -> tuple[Path, dict[str, str]]:
        """Mint a token per person with the server's own `tokens add NAME --file FILE` (it
        prints the token once and appends the person's hash line); returns the file and the
        tokens by name."""
        file = file or self.workdir / f"{self._next(binary.name)}-tokens"
        tokens = {}
        for person in people:
            done = subprocess.run(
                [str(binary), "tokens", "add", person, "--file", str(file)],
                env=base_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=STARTUP_BOUND_S,
                start_new_session=True,
            )
            assert done.returncode == 0, f"`tokens add {person}` failed ({done.returncode}): {done.stderr}"
            match = MINTED_SECRET_LINE.search(done.stdout)
            assert match is not None, f"`tokens add {person}` printed no token line: {done.stdout}"
            tokens[person] = match.group(1)
        return file, tokens

    def http(
        self,
        binary: Path,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        auth: str = "token",
        people: tuple[str, ...] = ("alice", "bob"),
        port: int | None = None,
    ) -> HttpHandle:
        """`binary --http 127.0.0.1:PORT`, with a credential: `auth="token"` (default) sets a
        random `<PREFIX>_HTTP_TOKEN` (unless `env` sets one) that `handle.target` and
        `handle.headers` send; `"none"` sets `<PREFIX>_HTTP_NO_AUTH=true`, for tests whose
        callers are told apart by their own `Authorization` headers; `"minted"` sets neither, so
        the server makes up a secret (read back from its stderr into `handle.token`); `"tokens"`
        mints a per-person token for each of `people` with the server's `tokens add` and serves
        with `<PREFIX>_HTTP_AUTH=tokens` (`handle.tokens`, `handle.as_person(name)`; `handle.token`
        is the first person's). Each server gets its own state directory (`XDG_STATE_HOME`) unless
        `env` names one. `port`: listen there (a test that must name the address in a setting
        first, from `free_port()`), else on a free port."""
        name = self._next(binary.name)
        env = dict(env or {})
        token = None
        tokens: dict[str, str] = {}
        tokens_file = None
        prefix = SERVER_PREFIXES.get(binary.name)
        if prefix is not None and auth == "tokens":
            tokens_file, tokens = self.mint_tokens(binary, people)
            env.setdefault(f"{prefix}_HTTP_AUTH", "tokens")
            env.setdefault(f"{prefix}_HTTP_TOKENS_FILE", str(tokens_file))
            token = tokens[people[0]] if people else None
        elif prefix is not None:
            token_var, no_auth_var = f"{prefix}_HTTP_TOKEN", f"{prefix}_HTTP_NO_AUTH"
            if env.get(token_var):
                token = env[token_var]
            elif env.get(no_auth_var) or auth == "minted":
                pass
            elif auth == "none":
                env[no_auth_var] = "true"
            else:
                token = secrets.token_hex(24)
                env[token_var] = token
        env.setdefault("XDG_STATE_HOME", str(self.workdir / f"{name}-state"))
        stdout_path = self.workdir / f"{name}.stdout"
        stderr_path = self.workdir / f"{name}.stderr"
        last_error = ""
        chosen = port
        for _attempt in range(3):  # a port picked free can be taken before the server binds it
            port = chosen or free_port()
            with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
                proc = subprocess.Popen(
                    [str(binary), "--http", f"127.0.0.1:{port}", *(args or [])],
                    env={**base_env(), **(env or {})},
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    cwd=self.workdir,
                    start_new_session=True,
                )
            handle = HttpHandle(
                proc, f"http://127.0.0.1:{port}/mcp", port, stdout_path, stderr_path, token, dict(tokens), tokens_file
            )
            self._http.append(handle)
            if wait_listening(proc, port):
                if auth == "minted" and token is None:
                    handle.token = handle.minted_secret()
                return handle
            last_error = handle.stderr()
            if "in use" not in last_error.lower():
                break
        raise AssertionError(
            f"{binary} --http 127.0.0.1:{port} did not start listening (exit code {proc.poll()}); stderr:\n{last_error}"
        )

    def close(self) -> None:
        """Kill every process this launcher started, by PID. Never raises for a process
        that is already gone; never signals a PID that is no longer ours."""
        for h in self._http:
            _stop_popen(h.proc)
        for s in self._stdio:
            pid = _read_pid(s.pidfile)
            if pid is not None and _is_our_session_leader(pid, s.binary):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def wait_listening(proc: subprocess.Popen[bytes], port: int) -> bool:
    deadline = time.monotonic() + STARTUP_BOUND_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def _stop_popen(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _is_our_session_leader(pid: int, binary: Path) -> bool:
    """The MCP client starts stdio servers in a new session, so a live server of ours is a
    session leader (sid == pid) running our binary. Anything else is not ours to signal."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    # Field 6 of /proc/PID/stat (after the parenthesised command name) is the session id.
    fields = stat.rsplit(")", 1)[-1].split()
    sid = int(fields[3]) if len(fields) > 3 else -1
    return sid == pid and binary.name in cmdline


def run_to_exit(
    binary: Path, env: dict[str, str], args: list[str] | None = None, timeout: float = STARTUP_BOUND_S
) -> subprocess.CompletedProcess[str]:
    """Run a server with stdin at EOF and collect its exit code and output.
    `subprocess.run` kills the child (by its PID) if it outlives the bound."""
    return subprocess.run(
        [str(binary), *(args or [])],
        env={**base_env(), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def raw_stdio_exchange(
    binary: Path, env: dict[str, str], stderr_path: Path, call: tuple[str, dict], capabilities: dict | None = None
) -> list[str]:
    """Speak raw JSON-RPC over stdio (legacy handshake declaring `capabilities`, none by
    default; tools/list as id 2, one tools/call as id 3), then close stdin, and return every
    line the server wrote on stdout until it exited by itself. Its stderr goes to `stderr_path`."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities or {},
                "clientInfo": {"name": "e2e-raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": call[0], "arguments": call[1]}},
    ]
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [str(binary)],
            env={**base_env(), **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )
    lines: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" not in request:
                continue
            # Read until the response to this request (the server may send other messages first).
            while True:
                line = proc.stdout.readline()
                assert line, f"stdout closed before the answer to request {request['id']}; got {lines}"
                lines.append(line)
                message = json.loads(line)  # a line that is not JSON fails here, naming it
                if message.get("id") == request["id"]:
                    break
        proc.stdin.close()  # EOF: the server must exit by itself
        lines.extend(proc.stdout.read().splitlines(keepends=True))
        proc.wait(timeout=STARTUP_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return lines


def jsonrpc_lines(lines: list[str]) -> dict:
    """Every non-empty stdout line must be a JSON-RPC 2.0 message; returns them by id."""
    by_id = {}
    for line in lines:
        if not line.strip():
            continue
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line
        if "id" in message:
            by_id[message["id"]] = message
    return by_id


# --------------------------------------------------------------------------- client


class Dialog:
    """An elicitation callback standing in for the person: records every question it is
    shown and answers it as told: accept (with the yes/no boolean set to true),
    accept_false (accept with the boolean false), decline, or cancel."""

    def __init__(self, answer: str = "accept") -> None:
        assert answer in ("accept", "accept_false", "decline", "cancel"), answer
        self.answer = answer
        self.calls: list[types.ElicitRequestFormParams | types.ElicitRequestURLParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.calls.append(params)
        return answer_for(getattr(params, "requested_schema", None) or {}, self.answer)


def approval_property(schema: dict[str, Any]) -> str | None:
    """The name of the single required boolean property of a yes/no question, or None."""
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    booleans = [name for name, spec in props.items() if isinstance(spec, dict) and spec.get("type") == "boolean"]
    req_bool = [name for name in booleans if name in required]
    if len(req_bool) == 1:
        return req_bool[0]
    return booleans[0] if len(booleans) == 1 else None


def answer_for(schema: dict[str, Any], answer: str) -> types.ElicitResult:
    if answer in ("decline", "cancel"):
        return types.ElicitResult(action=answer)
    prop = approval_property(schema)
    content = {prop: answer == "accept"} if prop is not None else {}
    return types.ElicitResult(action="accept", content=content)


def assert_yes_no_schema(schema: dict[str, Any]) -> str:
    """The question is a flat object with exactly one required boolean property."""
    assert schema.get("type") == "object", schema
    props = schema.get("properties") or {}
    assert len(props) == 1, f"expected exactly one property, got {schema}"
    ((name, spec),) = props.items()
    assert spec.get("type") == "boolean", schema
    assert schema.get("required") == [name], schema
    for value in props.values():
        assert "properties" not in value and value.get("type") != "object", f"nested schema: {schema}"
    return name


@asynccontextmanager
async def connect(target: StdioServerParameters | str, era: str, dialog: Dialog | None = None) -> AsyncIterator[Client]:
    """Connect the Python client in the given era. `dialog=None` means a client that does
    not declare the elicitation capability at all."""
    mode = "legacy" if era == "legacy" else era
    target = client_target(target)
    async with Client(
        target,
        mode=mode,
        elicitation_callback=dialog,
        read_timeout_seconds=CLIENT_READ_TIMEOUT_S,
        cache=None,
    ) as client:
        expected = "2026-07-28" if era == "2026-07-28" else None
        if expected is not None:
            assert client.protocol_version == expected, client.protocol_version
        else:
            assert client.protocol_version != "2026-07-28", client.protocol_version
        yield client


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def token_in(result: Any) -> str:
    text = text_of(result)
    match = TOKEN_LINE.search(text)
    assert match is not None, f"no `confirm_token: <TOKEN>` line in:\n{text}"
    return match.group(1)


def dump(obj: Any) -> str:
    """Everything a dialog carries, as one string (to search for text that must not be there)."""
    if hasattr(obj, "model_dump"):
        return json.dumps(obj.model_dump(by_alias=True, mode="json"), ensure_ascii=False)
    return json.dumps(obj, ensure_ascii=False, default=str)


def target_of(handle: StdioHandle | HttpHandle):
    """What the MCP client connects to: stdio parameters (it spawns the process; one
    process per connection) or the streamable HTTP URL (one process, many connections)."""
    return handle.params if isinstance(handle, StdioHandle) else handle.target
