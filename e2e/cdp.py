"""A small client of the Chrome DevTools protocol: a headless Chromium (Debian's `chromium`,
`scripts/browser-env`) driven over its websocket, with a virtual WebAuthn authenticator, for the
approval page's tests. Only what those tests use."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from contextlib import ExitStack
from pathlib import Path

from websockets.sync.client import connect

from support import ROOT

# Resolves when the page's status line reaches a final state; what it says then.
WAIT_OUT = """new Promise(resolve => {
  const out = document.getElementById('out');
  const done = () => ['done', 'refused'].includes(out.dataset.state);
  if (done()) return resolve({state: out.dataset.state, text: out.textContent});
  new MutationObserver(() => { if (done()) resolve({state: out.dataset.state, text: out.textContent}); })
    .observe(out, {attributes: true, childList: true, characterData: true, subtree: true});
})"""


def chromium() -> str:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "browser-env")], check=True, capture_output=True, text=True
    ).stdout.strip()


class Browser:
    """One headless Chromium with one page and (once added) one virtual authenticator."""

    def __init__(self, profile: Path) -> None:
        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        assert self.process.stderr is not None
        for line in self.process.stderr:
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                port = int(match.group(1))
                break
        assert port, "chromium did not open its DevTools port"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self.stack = ExitStack()
        self.ws = self.stack.enter_context(connect(pages[0]["webSocketDebuggerUrl"], max_size=None))
        self.next_id = 0
        self.events: list[dict] = []
        self.send("Page.enable")
        self.authenticator: str | None = None

    def send(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        sent = self.next_id
        self.ws.send(json.dumps({"id": sent, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def add_authenticator(self, user_verified: bool = True) -> str:
        """A platform authenticator holding passkeys, that verifies its user (or says it did not)."""
        self.send("WebAuthn.enable", {"enableUI": False})
        answer = self.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "ctap2Version": "ctap2_1",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": user_verified,
                    "automaticPresenceSimulation": True,
                }
            },
        )
        self.authenticator = answer["authenticatorId"]
        return self.authenticator

    def remove_authenticator(self) -> None:
        if self.authenticator:
            self.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": self.authenticator})
            self.authenticator = None

    def set_user_verified(self, verified: bool) -> None:
        self.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": self.authenticator, "isUserVerified": verified},
        )

    def open(self, url: str) -> None:
        """Navigates and waits for the load event."""
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=60)))

    def evaluate(self, expression: str):
        answer = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(answer["exceptionDetails"])
        return answer["result"].get("value")

    def click(self, button: str) -> dict:
        """Clicks a button of the page and waits for its status line's final state."""
        return self.evaluate(f"document.getElementById({json.dumps(button)}).click(); {WAIT_OUT}")

    def close(self) -> None:
        try:
            self.stack.close()
        finally:
            self.process.terminate()
            self.process.wait(timeout=10)
