"""`opengist-mcp doctor` against a REAL Opengist (marker `opengist`): the mistakes a person
makes in OPENGIST_URL are named with their fix, not only reported as "cannot be reached".

- a path too many (`https://host/opengist` when Opengist is at the root): doctor finds it
  answering without the path and says which OPENGIST_URL to set;
- the wrong scheme (https against an instance serving plain http): doctor finds it answering
  over http and says so;
- plain http to a host that is not this machine: a warning naming https, before any request.

Each mistake has its positive control: the right URL, where the same line says ok.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from support import opengist_mcp_bin

pytestmark = pytest.mark.opengist


def doctor(url: str, token: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENGIST_URL": url, "OPENGIST_TOKEN": token}
    done = subprocess.run(
        [str(opengist_mcp_bin()), "doctor"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert token[3:20] not in done.stdout + done.stderr, "the token leaked"
    return done.stdout


def line(stdout: str, name: str) -> str:
    found = [text for text in stdout.splitlines() if text[5:].startswith(f"{name}:")]
    assert len(found) == 1, stdout
    return found[0]


def test_a_path_too_many_is_named_with_the_url_to_set(opengist_env):
    url, token = opengist_env["OPENGIST_E2E_URL"].rstrip("/"), opengist_env["OPENGIST_E2E_TOKEN_FULL"]
    assert line(doctor(url, token), "reachable").startswith("ok   "), "positive control"
    reachable = line(doctor(f"{url}/opengist/gists", token), "reachable")
    assert reachable.startswith("FAIL"), reachable
    assert f"Opengist is not under {url}/opengist/gists: it answers at {url}, without the path /opengist/gists" in reachable, reachable
    assert f"fix: set OPENGIST_URL={url} " in reachable, reachable


def test_https_against_a_plain_http_instance_names_the_scheme(opengist_env):
    url, token = opengist_env["OPENGIST_E2E_URL"].rstrip("/"), opengist_env["OPENGIST_E2E_TOKEN_FULL"]
    assert url.startswith("http://"), url
    reachable = line(doctor(url.replace("http://", "https://", 1), token), "reachable")
    assert reachable.startswith("FAIL"), reachable
    assert "it speaks plain http there, not https (it answers at " in reachable, reachable
    assert f"fix: set OPENGIST_URL={url}" in reachable, reachable


def test_plain_http_to_another_host_is_a_warning_naming_https(opengist_env):
    token = opengist_env["OPENGIST_E2E_TOKEN_FULL"]
    url_line = line(doctor("http://opengist.invalid", token), "url")
    assert url_line.startswith("warn"), url_line
    assert "unencrypted" in url_line and "OPENGIST_URL=https://opengist.invalid" in url_line, url_line
    # Positive control: plain http on this machine is fine.
    assert line(doctor(opengist_env["OPENGIST_E2E_URL"], token), "url").startswith("ok   ")


def test_a_misspelt_setting_fails_doctor(opengist_env):
    """Everything else right: doctor passes; with `OPENGIST_MCP_VERIFIED_TOOL` (no S) beside
    it, the misspelt setting is a failure with its fix, and doctor exits non-zero."""
    url, token = opengist_env["OPENGIST_E2E_URL"].rstrip("/"), opengist_env["OPENGIST_E2E_TOKEN_FULL"]
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OPENGIST_URL": url, "OPENGIST_TOKEN": token}

    def run(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(opengist_mcp_bin()), "doctor"], env={**base, **extra}, capture_output=True, text=True, timeout=60, check=False
        )

    # Positive control: spelt right, every check passes.
    right = run({"OPENGIST_MCP_VERIFIED_TOOLS": "delete_gist"})
    assert right.returncode == 0 and right.stdout.rstrip().endswith("all checks passed"), right.stdout
    wrong = run({"OPENGIST_MCP_VERIFIED_TOOL": "delete_gist"})
    assert wrong.returncode == 1, wrong.stdout
    assert (
        "FAIL setting: OPENGIST_MCP_VERIFIED_TOOL is set but is no setting of this server, so it does nothing; "
        "did you mean OPENGIST_MCP_VERIFIED_TOOLS?; fix: rename it to the setting you meant, or unset it"
    ) in wrong.stdout, wrong.stdout
    assert "all checks passed" not in wrong.stdout, wrong.stdout
    assert token[3:20] not in wrong.stdout + wrong.stderr, "the token leaked"
