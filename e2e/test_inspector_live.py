"""MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned: scripts/inspector-env)
lists and calls opengist-mcp's tools over stdio and streamable HTTP, against a REAL Opengist
(marker `opengist`): the commands the README gives for debugging, run as a user runs them.
A private create through the Inspector is checked in Opengist directly.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from live import api, gist_id_in, marker
from support import ROOT, Launcher, opengist_mcp_bin, require_binary

pytestmark = [pytest.mark.opengist]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """`[node, launcher]`: run as `inspector + ["--cli", ...]`."""
    setup = subprocess.run(["bash", str(ROOT / "scripts" / "inspector-env"), "--print"], capture_output=True, text=True)
    if setup.returncode != 0:
        pytest.fail(f"scripts/inspector-env failed (exit {setup.returncode}):\n{setup.stderr}", pytrace=False)
    return setup.stdout.split()


def run_cli(inspector: list[str], tmp_path, *args: str) -> dict:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "MCP_CATALOG_PATH": str(tmp_path / "catalog.json"),
    }
    done = subprocess.run(
        [*inspector, "--cli", *args], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, f"inspector --cli {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_inspector_lists_and_calls_tools(opengist_env, inspector, launcher: Launcher, tmp_path, transport):
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    env = {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"]}
    if transport == "stdio":
        target = [str(binary), *[arg for name, value in env.items() for arg in ("-e", f"{name}={value}")]]
    else:
        # About the Inspector's interoperation, not credentials: no secret to pass through its CLI.
        target = [launcher.http(binary, env=env, auth="none").url]

    listed = run_cli(inspector, tmp_path, *target, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert len(names) == 14 and {"get_gist", "create_gist", "delete_gist"} <= names, names

    me = run_cli(inspector, tmp_path, *target, "--method", "tools/call", "--tool-name", "get_user")
    assert me.get("isError") is False, me
    assert me["structuredContent"]["username"] == opengist_env.get("OPENGIST_E2E_ADMIN_USER", "admin"), me

    tag = marker()
    files = json.dumps([{"filename": f"{tag}.txt", "content": f"content {tag}\n"}])
    created = run_cli(
        inspector,
        tmp_path,
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "create_gist",
        "--tool-arg",
        f"files={files}",
        "visibility=private",
    )
    assert created.get("isError") is False, created
    gist_id = gist_id_in(created["structuredContent"])
    assert api(opengist_env).files(gist_id) == {f"{tag}.txt": f"content {tag}\n"}
    assert api(opengist_env).gist(gist_id)["visibility"] == "private"
    assert api(opengist_env).delete(gist_id) in (200, 204)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_inspector_lists_and_reads_a_resource(opengist_env, inspector, launcher: Launcher, tmp_path, transport):
    """A person's first look at the resources: the Inspector lists them and reads one, which
    is the same bytes Opengist's raw endpoint serves."""
    binary = require_binary(opengist_mcp_bin(), "cargo build -p opengist-mcp")
    og = api(opengist_env)
    tag = marker()
    gist_id = og.create({f"{tag}.md": f"# {tag}\nbody\n"}, "private", title=tag)
    env = {"OPENGIST_URL": opengist_env["OPENGIST_E2E_URL"], "OPENGIST_TOKEN": opengist_env["OPENGIST_E2E_TOKEN_FULL"]}
    if transport == "stdio":
        target = [str(binary), *[arg for name, value in env.items() for arg in ("-e", f"{name}={value}")]]
    else:
        # About the Inspector's interoperation, not credentials: no secret to pass through its CLI.
        target = [launcher.http(binary, env=env, auth="none").url]

    listed = run_cli(inspector, tmp_path, *target, "--method", "resources/list")
    uri = f"opengist://gists/{gist_id}/{tag}.md"
    (resource,) = [r for r in listed["resources"] if r["uri"] == uri]
    assert resource["mimeType"] == "text/markdown" and resource["title"] == f"{tag}: {tag}.md", resource

    templates = run_cli(inspector, tmp_path, *target, "--method", "resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "opengist://gists/{gist_id}/{filename}",
        "opengist://gists/{gist_id}/{revision}/{filename}",
    ]

    read = run_cli(inspector, tmp_path, *target, "--method", "resources/read", "--uri", uri)
    (contents,) = read["contents"]
    sha = og.commits(gist_id)[0]["version"]
    served = og.request("GET", f"/api/gists/{gist_id}/files/{sha}/{tag}.md", raw=True)
    assert served.status == 200
    assert contents["text"].encode() == served.body == f"# {tag}\nbody\n".encode()
    assert contents["_meta"]["untrusted"] is True
    assert og.delete(gist_id) in (200, 204)
