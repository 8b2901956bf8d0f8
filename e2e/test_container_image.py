"""The container image (packaging/container/Containerfile), as `scripts/container-test build`
built it with podman (marker `container`; selected only with -m container).

Checked: the image's configuration as `podman image inspect` reports it (a non-root user, the
binary as entrypoint with no command, so stdio by default, the HEALTHCHECK, the labels with the
workspace version and the source, the environment), its file system as `podman export` gives
it (the static binary and the CA bundle, nothing else), and the binary taken out of the image,
driven through the Python MCP client over stdio in both eras and probed by its own healthcheck
over HTTP. Then the image itself is run with `podman run`: as podman is configured, then with
lowered file and process limits, then on runc with them (some nested containers refuse crun's
rlimits or cgroups; scripts/container-test installs runc too). Where a way works, the image is
driven over stdio and its HEALTHCHECK run in the container (`podman healthcheck run`), healthy
and unhealthy; where every way is refused, those tests print NOT RUN with podman's reasons and
are skipped, never passed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from support import ROOT, TARGET, base_env, connect, run_to_exit, text_of
from test_opengist_mcp_offline import ALL_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.container]

STATE = TARGET / "container" / "test"
BINARY_IN_IMAGE = "usr/local/bin/opengist-mcp"
CA_IN_IMAGE = "etc/ssl/certs/ca-certificates.crt"
RUN_BOUND_S = 120.0


@pytest.fixture(scope="module")
def state() -> dict:
    path = STATE / "state.json"
    if not path.is_file():
        pytest.fail(f"no built image: run scripts/container-test build first ({path} is missing)", pytrace=False)
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def config(state) -> dict:
    (image,) = json.loads((STATE / state["inspect"]).read_text())
    return image


@pytest.fixture(scope="module")
def rootfs(state) -> Path:
    return STATE / state["rootfs"]


@pytest.fixture
def exported(rootfs) -> Path:
    binary = rootfs / BINARY_IN_IMAGE
    assert binary.is_file() and os.access(binary, os.X_OK), f"no executable {BINARY_IN_IMAGE} in the image"
    return binary


def workspace() -> dict:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]


# ---------------------------------------------------------------------------- configuration


def test_runs_as_an_unprivileged_user(config):
    user = config["Config"].get("User", "")
    uid = user.split(":", 1)[0]
    assert uid.isdigit() and int(uid) >= 1000, f"image user {user!r}: must be a non-root numeric uid"


def test_entrypoint_is_the_binary_and_stdio_is_the_default(config):
    assert config["Config"]["Entrypoint"] == ["/usr/local/bin/opengist-mcp"]
    assert not config["Config"].get("Cmd"), f"a command would change the default (stdio): {config['Config'].get('Cmd')}"


def test_healthcheck_runs_the_binarys_own_probe(config):
    # podman reports it next to Config, Docker inside it.
    check = config["Config"].get("Healthcheck") or config.get("Healthcheck")
    assert check, "the image has no HEALTHCHECK (built in OCI format?)"
    assert check["Test"] == ["CMD", "/usr/local/bin/opengist-mcp", "healthcheck"], check["Test"]
    assert check.get("Interval") and check.get("Timeout") and check.get("Retries"), check


def test_labels_name_the_version_and_the_source(state, config):
    labels = config["Config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == workspace()["version"] == state["version"]
    assert labels["org.opencontainers.image.source"] == workspace()["repository"]
    assert labels["org.opencontainers.image.licenses"] == workspace()["license"]
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", labels["org.opencontainers.image.revision"])
    server = json.loads((ROOT / "server.json").read_text())
    assert labels["io.modelcontextprotocol.server.name"] == server["name"]


def test_environment_holds_the_trust_roots_and_no_setting(state, config):
    env = dict(item.split("=", 1) for item in config["Config"].get("Env") or [])
    assert env.get("SSL_CERT_FILE") == "/" + CA_IN_IMAGE, env
    baked = [name for name in env if name.startswith("OPENGIST") or name == "ELICITATION"]
    assert not baked, f"the image must not fix a setting: {baked}"
    assert config["Architecture"] == state["arch"]


def test_file_system_is_the_binary_and_the_ca_bundle(rootfs):
    files = sorted(str(p.relative_to(rootfs)) for p in rootfs.rglob("*") if p.is_file() or p.is_symlink())
    # podman export adds the mount points a container gets (empty dirs and the resolver files
    # it writes at run time); the image's own content is these two files.
    own = [f for f in files if f not in {"etc/hosts", "etc/resolv.conf", "etc/hostname", "run/.containerenv"}]
    assert own == sorted([BINARY_IN_IMAGE, CA_IN_IMAGE]), files
    assert (rootfs / CA_IN_IMAGE).stat().st_size > 10_000, "the CA bundle is empty"
    assert b"BEGIN CERTIFICATE" in (rootfs / CA_IN_IMAGE).read_bytes()[:100_000]


def test_the_binary_is_static(exported):
    data = exported.read_bytes()
    assert data[:4] == b"\x7fELF"
    assert b"/lib64/ld-linux" not in data[:4096] and b"/lib/ld-" not in data[:4096], "it names a dynamic loader"


# ---------------------------------------------------------------------------- the binary out of the image


def test_the_binary_reports_the_workspace_version(exported):
    done = run_to_exit(exported, {}, ["--version"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"opengist-mcp {workspace()['version']}", done.stdout


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_the_binary_serves_mcp_over_stdio(exported, tmp_path, era):
    params = StdioServerParameters(command=str(exported), args=[], env=base_env(), cwd=str(tmp_path))
    async with connect(params, era) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == ALL_TOOLS, sorted(tools)
        # A call that needs no Opengist: without one configured it answers how to set it up.
        result = await client.call_tool("list_gists", {})
        assert result.is_error and "OPENGIST_URL" in text_of(result), text_of(result)


async def test_the_binarys_healthcheck_probes_its_http_server(exported, launcher):
    server = launcher.http(exported)
    env = {"OPENGIST_MCP_HTTP_ADDR": f"127.0.0.1:{server.port}", "OPENGIST_MCP_HTTP_TOKEN": server.token}
    done = run_to_exit(exported, env, ["healthcheck"])
    assert done.returncode == 0, done.stderr
    assert "answered 200" in done.stdout, done.stdout


# ---------------------------------------------------------------------------- the image itself


REFUSED = re.compile(r"OCI runtime|OCI permission|crun|runc|cgroup|setrlimit|rlimit|Operation not permitted", re.IGNORECASE)
# The limits a nested container may still set (raising RLIMIT_NPROC/NOFILE to the host's is
# refused in some sandboxes; lowering them is not).
LOW_LIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
# How `podman run` is tried, in order: as configured, then with lowered limits, then on runc.
ATTEMPTS = [
    ("podman's default runtime", []),
    ("podman's default runtime, limits lowered", LOW_LIMITS),
    ("runc, limits lowered", ["--runtime", "runc", *LOW_LIMITS]),
]
SECRET = "container-test-bearer-secret"


def podman(state, *args: str, timeout: float = RUN_BOUND_S, stdin: str | None = None):
    return subprocess.run([*state["podman"], *args], input=stdin, capture_output=True, text=True, timeout=timeout)


def error_line(stderr: str) -> str:
    errors = [line.strip() for line in stderr.splitlines() if line.strip().startswith("Error:")]
    return errors[-1] if errors else (stderr.strip().splitlines() or ["(no output)"])[-1]


def say(request: pytest.FixtureRequest, text: str) -> None:
    """Print past pytest's capture: what the run did or did not prove must show under -q too."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(text, flush=True)


@pytest.fixture(scope="module")
def run_args(request, state) -> tuple[list[str] | None, list[str]]:
    """The `podman run` options under which the image runs here (None: NOT RUN), and each
    refused attempt with podman's reason."""
    refusals: list[str] = []
    for name, extra in ATTEMPTS:
        if "runc" in extra and shutil.which("runc") is None:
            refusals.append(f"{name}: runc is not installed")
            continue
        done = podman(state, "run", "--rm", "--no-healthcheck", "--network", "none", *extra, state["image"], "--version")
        if done.returncode == 0:
            assert done.stdout.strip() == f"opengist-mcp {workspace()['version']}", done.stdout
            if refusals:
                say(request, f"\n#### CONTAINER RUN: the image runs with {name}; refused before: {'; '.join(refusals)}")
            return extra, refusals
        assert REFUSED.search(done.stderr), f"podman run failed for another reason than the runtime's:\n{done.stderr}"
        refusals.append(f"{name}: {error_line(done.stderr)}")
    banner = "#" * 78
    lines = "\n".join(f"#  {r}" for r in refusals)
    say(
        request,
        f"\n{banner}\n#  CONTAINER RUN: NOT RUN: podman run is refused on this machine:\n{lines}\n"
        f"#  (the image was built and inspected, and its binary driven; the image itself was not run)\n{banner}",
    )
    return None, refusals


def need_run(run_args) -> list[str]:
    extra, refusals = run_args
    if extra is None:
        pytest.skip("NOT RUN: podman run is refused on this machine: " + "; ".join(refusals))
    return extra


async def test_the_image_runs_and_serves_mcp_on_stdio(state, run_args):
    """`podman run -i --rm IMAGE` is what an MCP client's configuration starts."""
    extra = need_run(run_args)
    params = StdioServerParameters(
        command=state["podman"][0],
        args=[*state["podman"][1:], "run", "-i", "--rm", "--no-healthcheck", "--network", "none", *extra, state["image"]],
        env=base_env(),
    )
    async with connect(params, "2026-07-28") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == ALL_TOOLS, sorted(tools)
        result = await client.call_tool("list_gists", {})
        assert result.is_error and "OPENGIST_URL" in text_of(result), text_of(result)


def health(state, container: str, tries: int = 50) -> subprocess.CompletedProcess[str]:
    """`podman healthcheck run` (the image's HEALTHCHECK, executed in the container) until it
    passes or `tries` runs have failed; the server needs a moment to bind. Not a speed test."""
    for _ in range(tries):
        done = podman(state, "healthcheck", "run", container)
        if done.returncode == 0:
            return done
        time.sleep(0.2)
    return done


@pytest.mark.parametrize("case", ["serving", "wrong port", "serving a team"])
def test_the_images_healthcheck_probes_its_http_server(state, run_args, case):
    extra = need_run(run_args)
    env = ["-e", "OPENGIST_MCP_HTTP_ADDR=0.0.0.0:8765", "-e", f"OPENGIST_MCP_HTTP_TOKEN={SECRET}"]
    if case == "serving a team":
        # Each person brings their own Opengist token: the probe has none, and the gate's
        # 401 counts as up (no Opengist is reached for it).
        env = ["-e", "OPENGIST_MCP_HTTP_ADDR=0.0.0.0:8765", "-e", "OPENGIST_MCP_HTTP_AUTH=opengist"]
        env += ["-e", "OPENGIST_URL=http://127.0.0.1:9"]
    # "wrong port": the server serves 8766 (the flag wins over the variable) while the
    # healthcheck, which sees only the environment, probes 8765: it must report unhealthy.
    args = ["--http", "0.0.0.0:8766"] if case == "wrong port" else []
    started = podman(state, "run", "-d", "--network", "none", *extra, *env, state["image"], *args)
    assert started.returncode == 0, started.stderr
    container = started.stdout.strip().splitlines()[-1]
    try:
        if case.startswith("serving"):
            done = health(state, container)
            assert done.returncode == 0, f"unhealthy: {done.stdout}{done.stderr}"
            logs = podman(state, "logs", container)
            assert "serving MCP over streamable HTTP" in logs.stdout + logs.stderr
            assert SECRET not in logs.stdout + logs.stderr
        else:
            done = health(state, container, tries=3)
            assert done.returncode != 0, "a healthcheck probing a port nothing serves said healthy"
            assert "unhealthy" in done.stdout + done.stderr, done.stdout + done.stderr
    finally:
        podman(state, "rm", "--force", container)
