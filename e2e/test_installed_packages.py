"""The packages as a user installs them (marker `packages`): the Python wheel and the npm
launcher with its platform package, built by scripts/package-python and scripts/package-npm
into target/packages/, installed into fresh places, and the installed `opengist-mcp` driven
through the Python MCP client as an MCP client configuration would start it.

Installs, each offline from the built files only:
  venv  a fresh virtualenv, `pip install --no-index <wheel>`, then `<venv>/bin/opengist-mcp`
  uvx   `uvx --from <wheel> opengist-mcp` (uv pinned in scripts/packaging-env)
  pipx  `pipx run --spec <wheel> opengist-mcp`
  npm   `npm install --offline <launcher.tgz> <platform.tgz>` into a scratch directory, then
        `node_modules/.bin/opengist-mcp`
  npx   `npx --offline --yes --package <launcher.tgz> --package <platform.tgz> -- opengist-mcp`
        (what `npx -y @opengist-mcp/opengist-mcp` does with the registry's copies)

Selected only with `-m packages` (the layer "installed packages" in scripts/test builds the
packages first). The tests marked `packages_opengist` also need a provisioned Opengist
(scripts/provision-opengist; env.sh sourced) and FAIL without one; the layer deselects them,
loudly, where no Opengist is installed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from live import api, gist_id_in, marker
from support import ROOT, TARGET, STARTUP_BOUND_S, Dialog, base_env, connect, text_of
from test_opengist_mcp_offline import ALL_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.packages]

PACKAGES = Path(os.environ.get("E2E_PACKAGES_DIR") or TARGET / "packages").resolve()
TOOLS_VENV = TARGET / "packaging-venv" / "bin"
KINDS = ("venv", "uvx", "pipx", "npm", "npx")
# The npm launcher's name (packaging/npm/opengist-mcp/package.json): scoped, since the bare
# npm name `opengist-mcp` is another project's.
LAUNCHER = json.loads((ROOT / "packaging/npm/opengist-mcp/package.json").read_text())["name"]


def tarball_stem(package: str) -> str:
    """What `npm pack` names a package's tarball, before `-VERSION.tgz`: a scoped
    `@scope/name` becomes `scope-name`."""
    return package.removeprefix("@").replace("/", "-")
INSTALL_BOUND_S = 300.0  # a guard against a hung installer, not a speed test


def workspace_version() -> str:
    """The one place the version is written: [workspace.package] in the root Cargo.toml."""
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def only(directory: Path, pattern: str, how: str) -> Path:
    found = sorted(directory.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {directory}, found {[p.name for p in found]}; build it: {how}"
    return found[0]


def this_platform() -> str:
    """node's name for this machine (`${process.platform}-${process.arch}`), the key of
    packaging/npm/opengist-mcp/platforms.json."""
    done = subprocess.run(["node", "-p", "process.platform + '-' + process.arch"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def platform_entry() -> dict[str, str]:
    platforms = json.loads((ROOT / "packaging/npm/opengist-mcp/platforms.json").read_text())
    assert this_platform() in platforms, f"no npm platform package for {this_platform()}: {sorted(platforms)}"
    return platforms[this_platform()]


@pytest.fixture(scope="session")
def wheel() -> Path:
    """The wheel for this machine's architecture (E2E_PACKAGES_DIR may hold several, as
    scripts/build-release's target/dist does)."""
    directory = PACKAGES / "python" if (PACKAGES / "python").is_dir() else PACKAGES
    return only(directory, f"opengist_mcp-*_{platform.machine()}*.whl", "scripts/package-python")


@dataclass
class NpmTarballs:
    launcher: Path
    platform: Path


@pytest.fixture(scope="session")
def npm_tarballs() -> NpmTarballs:
    npm = PACKAGES / "npm" if (PACKAGES / "npm").is_dir() else PACKAGES
    package = only(npm, f"{tarball_stem(platform_entry()['package'])}-[0-9]*.tgz", "scripts/package-npm")
    launcher = only(npm, f"{tarball_stem(LAUNCHER)}-[0-9]*.tgz", "scripts/package-npm")
    return NpmTarballs(launcher=launcher, platform=package)


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = INSTALL_BOUND_S):
    """Run an installer or the installed command to its end (stdin at EOF, bounded) and
    return its exit code and output; `must` fails the test, with that output, unless it is 0."""
    return subprocess.run(
        cmd,
        env={**base_env(), **(env or {})},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def must(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{done.args} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done


@dataclass
class Installed:
    """How a client configuration starts the installed server: a command, its leading
    arguments, and the environment the launcher needs (caches in the test's scratch)."""

    command: Path
    args: list[str]
    env: dict[str, str]

    def argv(self, *extra: str) -> list[str]:
        return [str(self.command), *self.args, *extra]


def npm_install(scratch: Path, tarballs: list[Path], *flags: str) -> subprocess.CompletedProcess[str]:
    scratch.mkdir(parents=True)
    (scratch / "package.json").write_text('{"private": true}\n')
    cache = scratch.parent / f"{scratch.name}-npm-cache"  # a fresh cache: nothing but the tarballs
    return run(
        ["npm", "install", "--offline", "--no-audit", "--no-fund", "--cache", str(cache), *flags, *map(str, tarballs)],
        cwd=scratch,
    )


@pytest.fixture(scope="session")
def installs(tmp_path_factory, wheel: Path, npm_tarballs: NpmTarballs) -> dict[str, Installed]:
    """Every install kind, each made once for the session from the built files only."""
    root = tmp_path_factory.mktemp("installs")
    made: dict[str, Installed] = {}

    venv = root / "venv"
    must(run([sys.executable, "-m", "venv", str(venv)]))
    must(run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--disable-pip-version-check", str(wheel)]))
    made["venv"] = Installed(venv / "bin" / "opengist-mcp", [], {})

    uv_env = {
        "UV_CACHE_DIR": str(root / "uv-cache"),
        "UV_TOOL_DIR": str(root / "uv-tools"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_OFFLINE": "1",
        "UV_NO_CONFIG": "1",
    }
    made["uvx"] = Installed(TOOLS_VENV / "uvx", ["--from", str(wheel), "opengist-mcp"], uv_env)

    pipx_env = {
        "PIPX_HOME": str(root / "pipx-home"),
        "PIPX_BIN_DIR": str(root / "pipx-bin"),
        "PIP_NO_INDEX": "1",
    }
    made["pipx"] = Installed(TOOLS_VENV / "pipx", ["run", "--spec", str(wheel), "opengist-mcp"], pipx_env)

    scratch = root / "npm"
    must(npm_install(scratch, [npm_tarballs.launcher, npm_tarballs.platform]))
    made["npm"] = Installed(scratch / "node_modules" / ".bin" / "opengist-mcp", [], {})

    npx_args = ["--offline", "--yes", "--cache", str(root / "npx-cache")]
    for tarball in (npm_tarballs.launcher, npm_tarballs.platform):
        npx_args += ["--package", str(tarball)]
    made["npx"] = Installed(Path(shutil.which("npx") or "npx"), [*npx_args, "--", "opengist-mcp"], {})

    # The first run of uvx, pipx and npx installs into their caches; do it here, bounded, so
    # a broken install fails with the installer's output rather than as a client timeout.
    for kind in ("uvx", "pipx", "npx"):
        must(run(made[kind].argv("--version"), env=made[kind].env))
    return made


# --------------------------------------------------------------------------- one version


def test_every_package_carries_the_workspace_version(wheel: Path, npm_tarballs: NpmTarballs):
    version = workspace_version()
    # The wheel: its name and its metadata.
    assert wheel.name.startswith(f"opengist_mcp-{version}-"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(f"opengist_mcp-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata, metadata[:400]
    # The npm packages: the launcher, the platform package, and the versions the launcher
    # asks for in its optionalDependencies.
    manifests = {}
    for tgz in (npm_tarballs.launcher, npm_tarballs.platform):
        with tarfile.open(tgz) as t:
            member = t.extractfile("package/package.json")
            assert member is not None, tgz
            manifest = json.load(member)
        manifests[manifest["name"]] = manifest
        assert manifest["version"] == version, (tgz.name, manifest["version"])
    launcher = manifests[LAUNCHER]
    optional = launcher["optionalDependencies"]
    assert set(optional.values()) == {version}, optional
    platforms = json.loads((ROOT / "packaging/npm/opengist-mcp/platforms.json").read_text())
    assert set(optional) == {entry["package"] for entry in platforms.values()}, optional
    # No second place a version could be written and drift: the sources carry none.
    with open(ROOT / "packaging/python/pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert "version" not in project and "version" in project.get("dynamic", []), project
    assert "version" not in json.loads((ROOT / "packaging/npm/opengist-mcp/package.json").read_text())


def test_built_packages_carry_the_mcp_registry_ownership_mark(wheel: Path, npm_tarballs: NpmTarballs):
    """The MCP registry lists server.json's packages only when each names the entry: PyPI's
    description (the wheel's README) says `mcp-name: NAME`, npm's package.json has `mcpName`."""
    name = json.loads((ROOT / "server.json").read_text())["name"]
    version = workspace_version()
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(f"opengist_mcp-{version}.dist-info/METADATA").decode()
    assert f"mcp-name: {name}" in metadata, "the wheel's description lacks the mcp-name line"
    with tarfile.open(npm_tarballs.launcher) as t:
        member = t.extractfile("package/package.json")
        assert member is not None
        assert json.load(member).get("mcpName") == name


def test_wheel_carries_the_binary_and_no_python(wheel: Path):
    version = workspace_version()
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        script = f"opengist_mcp-{version}.data/scripts/opengist-mcp"
        assert script in names, names
        assert z.read(script)[:4] == b"\x7fELF", "the wheel's opengist-mcp should be the native binary"
    assert not [n for n in names if n.endswith(".py")], names


@pytest.mark.parametrize("kind", KINDS)
def test_installed_command_reports_the_workspace_version(installs, kind):
    installed = installs[kind]
    done = must(run(installed.argv("--version"), env=installed.env))
    assert done.stdout.strip() == f"opengist-mcp {workspace_version()}", done.stdout


# --------------------------------------------------------------------------- MCP through each install


def stdio_target(launcher, installed: Installed, env: dict[str, str] | None = None):
    handle = launcher.stdio(installed.command, args=installed.args, env={**installed.env, **(env or {})})
    return handle


@pytest.mark.parametrize("kind", KINDS)
async def test_installed_command_serves_mcp(installs, launcher, era, kind):
    """Handshake, the whole tool list, and one call (unconfigured: it answers with the
    setup instructions, and asks nobody)."""
    handle = stdio_target(launcher, installs[kind])
    dialog = Dialog("decline")
    async with connect(handle.params, era, dialog) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == ALL_TOOLS, sorted(tool.name for tool in listed.tools)
        result = await client.call_tool("list_gists", {})
        assert result.is_error, text_of(result)
        assert "OPENGIST_URL" in text_of(result), text_of(result)
    assert dialog.calls == []


@pytest.mark.packages_opengist
@pytest.mark.parametrize("kind", KINDS)
async def test_installed_command_creates_a_gist_in_real_opengist(installs, launcher, opengist_env, era, kind):
    """One write through the installed command, checked in what Opengist holds."""
    word = marker()
    handle = stdio_target(
        launcher,
        installs[kind],
        {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"]},
    )
    dialog = Dialog("decline")  # a private create must not ask
    rest = api(opengist_env)
    async with connect(handle.params, era, dialog) as client:
        result = await client.call_tool(
            "create_gist",
            {"files": [{"filename": f"{word}.txt", "content": f"installed {kind} {word}\n"}], "visibility": "private"},
        )
        assert not result.is_error, text_of(result)
        gist_id = gist_id_in(result.structured_content)
    try:
        assert rest.files(gist_id) == {f"{word}.txt": f"installed {kind} {word}\n"}
        assert rest.gist(gist_id).get("visibility") == "private", rest.gist(gist_id)
    finally:
        rest.delete(gist_id)
    assert dialog.calls == []


# --------------------------------------------------------------------------- the npm launcher itself


def native_binary(installs) -> Path:
    entry = platform_entry()
    return installs["npm"].command.parent.parent / entry["package"] / "bin" / entry["binary"]


def test_npm_launcher_passes_arguments_and_exit_code_through(installs):
    native = run([str(native_binary(installs)), "--no-such-flag"], timeout=STARTUP_BOUND_S)
    launched = run(installs["npm"].argv("--no-such-flag"), timeout=STARTUP_BOUND_S)
    assert native.returncode not in (0, 1), native  # clap's usage error, not the launcher's 1
    assert launched.returncode == native.returncode, (launched, native)
    assert "--no-such-flag" in launched.stderr, launched.stderr


def test_npm_launcher_exits_when_the_client_closes_stdin(installs):
    """stdin at EOF before any message: the server ends by itself (exit 0, saying why, as
    every server on the framework does), and the launcher ends with it, with its exit code."""
    native = run([str(native_binary(installs))], timeout=STARTUP_BOUND_S)
    launched = run(installs["npm"].argv(), timeout=STARTUP_BOUND_S)
    assert launched.returncode == native.returncode == 0, (launched, native)
    assert "stdin closed before the first request" in launched.stderr, launched.stderr
    assert launched.stdout == "", launched.stdout


def _alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_npm_launcher_forwards_sigterm_to_the_server(installs):
    """A client stops the server by signalling the process it started: the launcher. The
    native server must stop too, and the launcher end as the server ended."""
    native = native_binary(installs).resolve()
    proc = subprocess.Popen(
        installs["npm"].argv(),
        env=base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        server = None
        deadline = time.monotonic() + STARTUP_BOUND_S
        while server is None and time.monotonic() < deadline and proc.poll() is None:
            for pid in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
                try:
                    if Path(f"/proc/{pid}/exe").resolve() == native:
                        server = int(pid)
                except OSError:
                    pass
            time.sleep(0.05)
        assert server is not None, f"the launcher never started {native} (exit code {proc.poll()})"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=STARTUP_BOUND_S)
        deadline = time.monotonic() + STARTUP_BOUND_S
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server), f"the server (pid {server}) outlived its launcher after SIGTERM"
        assert proc.returncode in (0, -signal.SIGTERM), proc.returncode
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_npm_launcher_names_an_unsupported_platform(installs, tmp_path):
    preload = tmp_path / "pretend-aix.cjs"
    preload.write_text('Object.defineProperty(process, "platform", { value: "aix" });\n')
    script = installs["npm"].command.resolve()
    done = run(["node", "-r", str(preload), str(script), "--version"], timeout=STARTUP_BOUND_S)
    assert done.returncode == 1, done
    assert "no prebuilt binary for this platform (aix-" in done.stderr, done.stderr
    assert "cargo install" in done.stderr, "the error should say how to get the server anyway"
    assert done.stdout == ""


def test_npm_launcher_names_the_missing_platform_package(npm_tarballs, tmp_path):
    """Installed with --omit=optional: the launcher is there, the binary is not."""
    scratch = tmp_path / "npm-no-optional"
    must(npm_install(scratch, [npm_tarballs.launcher], "--omit=optional"))
    done = run([str(scratch / "node_modules" / ".bin" / "opengist-mcp"), "--version"], timeout=STARTUP_BOUND_S)
    assert done.returncode == 1, done
    assert f"the package {platform_entry()['package']}" in done.stderr and "not installed" in done.stderr, done.stderr
    assert "--omit=optional" in done.stderr, "the error should name the fix"
