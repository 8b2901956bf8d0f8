"""A real gateway for the end-to-end suite: fastmcp's proxy (pinned in scripts/gateway-env),
in front of a running opengist-mcp over streamable HTTP.

    target/gateway-venv/bin/python e2e/gateway/fastmcp_proxy.py BACKEND_URL PORT

serves the proxy over streamable HTTP at http://127.0.0.1:PORT/mcp. By default the proxy
mirrors each front connection's era to the backend, and it declares elicitation upstream
whatever its own client declared: a client without dialogs behind it makes the pushed
dialog fail with an error, which the guard must turn into the two-call token.
"""

from __future__ import annotations

import sys

from fastmcp.server import create_proxy


def main() -> None:
    backend, port = sys.argv[1], int(sys.argv[2])
    proxy = create_proxy(backend, name="fastmcp-gateway")
    proxy.run(transport="http", host="127.0.0.1", port=port, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
