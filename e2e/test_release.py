"""What a release carries, checked where it is written: the MCP registry entry (server.json at
the repository root) and the `healthcheck` subcommand the container image's HEALTHCHECK runs.

server.json:
- validates against the registry's schema, kept pinned in packaging/mcp-registry/ (the exact
  bytes of the dated schema its `$schema` names, checked by SHA-256; jsonschema, pinned in
  scripts/python-env);
- carries the workspace version (root Cargo.toml), in the entry and in each package, as every
  other package does (a mismatch fails here and in the release workflow);
- names the PyPI and npm packages this repository builds (packaging/python, packaging/npm), on
  stdio, with the ownership marks the registry checks (`mcp-name:` in the wheel's README,
  `mcpName` in the npm launcher's package.json);
- covers every variable `opengist-mcp --help` names. That it lists exactly the settings the
  server declares (`opengist_mcp::config::SETTINGS`, which `Config::from_process` reads), with
  their defaults, secrecy and descriptions, and that docs/DEPLOYMENT.md's settings table does too, is checked
  by a cargo test against that one declaration (crates/opengist-mcp/tests/settings.rs), not here by
  reading Rust sources.

Runs in the default end-to-end layer (no Opengist needed).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tomllib

import pytest
from support import target_of
from jsonschema import Draft7Validator
from support import ROOT, base_env, connect, free_port, run_to_exit

pytestmark = pytest.mark.anyio

SERVER_JSON = ROOT / "server.json"
SCHEMA = ROOT / "packaging/mcp-registry/server.schema.2025-12-11.json"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# The SHA-256 of the file served at SCHEMA_URL. Moving to a newer schema is a deliberate change:
# replace the file, this pin and the URL together (packaging/mcp-registry/README.md).
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def server_json() -> dict:
    return json.loads(SERVER_JSON.read_text(encoding="utf-8"))


def workspace() -> dict:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]


def entry_variables(package: dict) -> dict[str, dict]:
    variables = package["environmentVariables"]
    names = [v["name"] for v in variables]
    assert len(names) == len(set(names)), f"a variable is listed twice: {names}"
    return {v["name"]: v for v in variables}


# ---------------------------------------------------------------------------- the schema


def test_the_pinned_schema_is_the_dated_one_server_json_names():
    data = SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256, f"{SCHEMA} is not the pinned copy of {SCHEMA_URL}"
    assert json.loads(data)["$id"] == SCHEMA_URL
    assert server_json()["$schema"] == SCHEMA_URL


def test_server_json_validates_against_the_schema():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    errors = sorted(Draft7Validator(schema).iter_errors(server_json()), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


@pytest.mark.parametrize(
    "breakage",
    ["no version", "long description", "no transport", "version latest", "bad name"],
)
def test_the_validator_refuses_a_broken_entry(breakage):
    """The check above can fail: the same validator refuses an entry the schema does not allow."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = server_json()
    if breakage == "no version":
        del doc["version"]
    elif breakage == "long description":
        doc["description"] = "x" * 101
    elif breakage == "no transport":
        del doc["packages"][0]["transport"]
    elif breakage == "version latest":
        doc["packages"][1]["version"] = "latest"
    else:
        doc["name"] = "no-slash"
    assert list(Draft7Validator(schema).iter_errors(doc)), f"{breakage}: accepted"


# ---------------------------------------------------------------------------- version and packages


def test_the_entry_and_every_package_carry_the_workspace_version():
    version = workspace()["version"]
    doc = server_json()
    assert doc["version"] == version, f"server.json says {doc['version']}, Cargo.toml {version}"
    for package in doc["packages"]:
        assert package["version"] == version, f"{package['registryType']} package says {package['version']}"


def test_the_packages_are_the_ones_this_repository_builds():
    doc = server_json()
    by_type = {p["registryType"]: p for p in doc["packages"]}
    assert sorted(by_type) == ["npm", "pypi"], sorted(by_type)
    with open(ROOT / "packaging/python/pyproject.toml", "rb") as f:
        pypi_name = tomllib.load(f)["project"]["name"]
    npm = json.loads((ROOT / "packaging/npm/opengist-mcp/package.json").read_text(encoding="utf-8"))
    assert by_type["pypi"]["identifier"] == pypi_name
    assert by_type["npm"]["identifier"] == npm["name"]
    assert (by_type["pypi"]["runtimeHint"], by_type["npm"]["runtimeHint"]) == ("uvx", "npx")
    for package in doc["packages"]:
        assert package["transport"] == {"type": "stdio"}, package["transport"]
        # The registry accepts only the public indexes: no other base URL.
        assert "registryBaseUrl" not in package
    assert doc["repository"] == {"url": workspace()["repository"], "source": "github"}


def test_each_package_carries_the_registry_ownership_mark():
    name = server_json()["name"]
    assert name == "io.github.opengist-mcp/opengist-mcp"
    assert name.split("/", 1)[0] == "io.github." + workspace()["repository"].split("/")[-2]
    npm = json.loads((ROOT / "packaging/npm/opengist-mcp/package.json").read_text(encoding="utf-8"))
    assert npm.get("mcpName") == name, npm.get("mcpName")
    readme = (ROOT / "packaging/python/README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {name}" in readme, "the wheel's README (its PyPI description) must say mcp-name: NAME"


# ---------------------------------------------------------------------------- the variables


def test_every_variable_help_names_is_listed(opengist_mcp_binary):
    done = subprocess.run([str(opengist_mcp_binary), "--help"], env=base_env(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    named = set(re.findall(r"\[env: ([A-Z][A-Z0-9_]+)", done.stdout))
    after = done.stdout.split("Environment variables without a flag:", 1)[1]
    named |= set(re.findall(r"^  ([A-Z][A-Z0-9_]+)", after, re.MULTILINE))
    assert len(named) >= 20, f"the help's variables were not found: {sorted(named)}"
    listed = set(entry_variables(server_json()["packages"][0]))
    assert named <= listed, f"--help names {sorted(named - listed)}, which server.json lacks"


# ---------------------------------------------------------------------------- healthcheck


def healthcheck(binary, env: dict[str, str], args: list[str] | None = None):
    return run_to_exit(binary, {**base_env(), **env}, [*(args or []), "healthcheck"])


def test_healthcheck_on_stdio_has_nothing_to_probe(opengist_mcp_binary):
    done = healthcheck(opengist_mcp_binary, {})
    assert done.returncode == 0, done.stderr
    assert "nothing to probe" in done.stdout, done.stdout


async def test_healthcheck_probes_the_http_server(launcher, opengist_mcp_binary):
    server = launcher.http(opengist_mcp_binary)
    address = f"127.0.0.1:{server.port}"
    # The server requires a bearer secret (without one it would make one up): the probe sends it.
    secret = {"OPENGIST_MCP_HTTP_TOKEN": server.token}
    by_flag = healthcheck(opengist_mcp_binary, secret, ["--http", address])
    assert by_flag.returncode == 0, by_flag.stderr
    assert "/healthz answered 200" in by_flag.stdout, by_flag.stdout
    by_variable = healthcheck(opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": address, **secret})
    assert by_variable.returncode == 0, by_variable.stderr
    # The server is really up and serving MCP, which is what healthy means.
    async with connect(target_of(server), "2026-07-28") as client:
        assert len((await client.list_tools()).tools) == 14


async def test_healthcheck_sends_the_bearer_secret_and_fails_without_the_right_one(launcher, opengist_mcp_binary):
    secret = "s3cret-for-the-healthcheck-test"
    server = launcher.http(opengist_mcp_binary, env={"OPENGIST_MCP_HTTP_TOKEN": secret})
    address = f"127.0.0.1:{server.port}"
    right = healthcheck(opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": address, "OPENGIST_MCP_HTTP_TOKEN": secret})
    assert right.returncode == 0, right.stderr
    wrong = healthcheck(
        opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": address, "OPENGIST_MCP_HTTP_TOKEN": "another-secret-of-length"}
    )
    assert wrong.returncode == 1, wrong.stdout
    assert "answered 401" in wrong.stderr and "OPENGIST_MCP_HTTP_TOKEN" in wrong.stderr, wrong.stderr
    assert secret not in wrong.stderr + wrong.stdout + right.stdout + right.stderr
    missing = healthcheck(opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": address})
    assert missing.returncode == 1 and "answered 401" in missing.stderr, missing.stderr


# The server's environment in each authentication mode, as the container gives it to both the
# server and its HEALTHCHECK. Nothing here reaches Opengist or an OAuth issuer: the probe's 401
# is the gate's, answered before either would be asked.
NO_OPENGIST = "http://127.0.0.1:9"
MODES = {
    "secret": {"OPENGIST_URL": NO_OPENGIST, "OPENGIST_TOKEN": "og_unused"},
    "none": {"OPENGIST_URL": NO_OPENGIST, "OPENGIST_TOKEN": "og_unused", "OPENGIST_MCP_HTTP_NO_AUTH": "true"},
    "tokens": {"OPENGIST_URL": NO_OPENGIST, "OPENGIST_TOKEN": "og_unused"},
    "oauth": {
        "OPENGIST_URL": NO_OPENGIST,
        "OPENGIST_MCP_HTTP_AUTH": "oauth",
        "OPENGIST_MCP_OAUTH_ISSUER": "http://127.0.0.1:9/issuer",
    },
    "opengist": {"OPENGIST_URL": NO_OPENGIST, "OPENGIST_MCP_HTTP_AUTH": "opengist"},
}


def start_in_mode(launcher, binary, mode: str):
    env = dict(MODES[mode])
    if mode == "oauth":
        # The resource names the server; its port is not checked against the bound one.
        env["OPENGIST_MCP_OAUTH_RESOURCE"] = "http://127.0.0.1/mcp"
    auth = {"secret": "token", "none": "none", "tokens": "tokens", "oauth": "minted", "opengist": "minted"}[mode]
    return launcher.http(binary, env=env, auth=auth), env


@pytest.mark.parametrize("mode", list(MODES))
async def test_healthcheck_says_up_in_every_authentication_mode(launcher, opengist_mcp_binary, mode):
    server, env = start_in_mode(launcher, opengist_mcp_binary, mode)
    # The probe runs with the server's own environment, as in the container.
    probe_env = {**env, "OPENGIST_MCP_HTTP_ADDR": f"127.0.0.1:{server.port}"}
    if mode == "secret":
        probe_env["OPENGIST_MCP_HTTP_TOKEN"] = server.token
    if mode == "tokens":
        probe_env["OPENGIST_MCP_HTTP_AUTH"] = "tokens"
        probe_env["OPENGIST_MCP_HTTP_TOKENS_FILE"] = str(server.tokens_file)
    done = healthcheck(opengist_mcp_binary, probe_env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    if mode in ("secret", "none"):
        assert "/healthz answered 200" in done.stdout, done.stdout
    else:
        assert f"answered 401 to a probe without a credential, as a server with OPENGIST_MCP_HTTP_AUTH={mode} does" in done.stdout, done.stdout
    assert "og_unused" not in done.stdout + done.stderr
    # The negative control: the same probe where nothing serves says down.
    down = healthcheck(opengist_mcp_binary, {**probe_env, "OPENGIST_MCP_HTTP_ADDR": f"127.0.0.1:{free_port()}"})
    assert down.returncode == 1 and "nothing accepted the connection" in down.stderr, down.stderr
    if mode == "tokens":
        # Up means serving: a person's own token lists the tools.
        async with connect(server.as_person("alice"), "2026-07-28") as client:
            assert len((await client.list_tools()).tools) == 14


def test_healthcheck_counts_only_the_gates_401(launcher, opengist_mcp_binary):
    """A 401 without the gate's `WWW-Authenticate: Bearer` challenge (another program on the
    port) is not the server: down, in a mode where the gate's 401 would count."""
    import http.server
    import threading

    class Other(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Other)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**MODES["opengist"], "OPENGIST_MCP_HTTP_ADDR": f"127.0.0.1:{other.server_address[1]}"}
        done = healthcheck(opengist_mcp_binary, env)
        assert done.returncode == 1 and "answered 401" in done.stderr, (done.stdout, done.stderr)
    finally:
        other.shutdown()
        other.server_close()
    # The positive control: the real gate's 401 in the same mode is up.
    server, env = start_in_mode(launcher, opengist_mcp_binary, "opengist")
    done = healthcheck(opengist_mcp_binary, {**env, "OPENGIST_MCP_HTTP_ADDR": f"127.0.0.1:{server.port}"})
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_healthcheck_fails_when_nothing_serves(opengist_mcp_binary):
    address = f"127.0.0.1:{free_port()}"
    done = healthcheck(opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": address})
    assert done.returncode == 1, done.stdout
    assert address in done.stderr and "nothing accepted the connection" in done.stderr, done.stderr


def test_healthcheck_cannot_probe_port_zero(opengist_mcp_binary):
    done = healthcheck(opengist_mcp_binary, {"OPENGIST_MCP_HTTP_ADDR": "127.0.0.1:0"})
    assert done.returncode == 1 and "port 0" in done.stderr, done.stderr



# ---------------------------------------------------------------------------- the changelog


def changelog_entry(*args: str):
    return subprocess.run(["bash", str(ROOT / "scripts/changelog-entry"), *args], capture_output=True, text=True, timeout=60)


def test_the_changelog_has_this_versions_entry_for_the_release_notes():
    done = changelog_entry()
    assert done.returncode == 0, done.stderr
    assert "### Added" in done.stdout and len(done.stdout) > 500, done.stdout
    assert not done.stdout.startswith("## "), "the notes are the entry's body, without its heading"
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "Keep a Changelog" in text
    assert f"## [{workspace()['version']}] - " in text


def test_the_changelog_script_refuses_what_a_release_cannot_use():
    missing = changelog_entry("99.0.0")
    assert missing.returncode == 1 and "no entry" in missing.stderr, missing.stderr
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = re.search(rf"^## \[{re.escape(workspace()['version'])}\] - (.+)$", text, re.MULTILINE)
    assert heading, "no heading for the workspace version"
    released = changelog_entry("--release")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", heading.group(1)):
        assert released.returncode == 0, released.stderr
    else:
        # Not yet released: a tag of this version would stop at this check.
        assert released.returncode == 1 and "needs its date" in released.stderr, released.stderr
