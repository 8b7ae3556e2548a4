"""Deployment examples shipped with the package: the reverse proxy the service requires when
it is exposed (`nginx.conf`), with its addresses filled in by `nginx_config`."""

from __future__ import annotations

import re
from importlib import resources

from ..errors import InvalidInput

# host:port (a name, IPv4 or bracketed IPv6) or a Unix socket: anything else, and above all
# a ";" or "{", would be nginx syntax injected into the file.
UPSTREAM_RE = re.compile(r"^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$|^unix:/[\w./-]+$")
LISTEN_RE = re.compile(r"^(?:(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):)?[0-9]{1,5}$")
SERVER_NAME_RE = re.compile(r"^(?:_|[A-Za-z0-9*.-]+(?: [A-Za-z0-9*.-]+)*)$")


def nginx_template() -> str:
    return resources.files(__package__).joinpath("nginx.conf").read_text(encoding="utf-8")


def nginx_config(upstream: str, listen: str, server_name: str = "_") -> str:
    """The shipped nginx example for an app at `upstream`, listening on `listen`."""
    checks = (
        (upstream, UPSTREAM_RE, "upstream", "host:port or unix:/path"),
        (listen, LISTEN_RE, "listen", "port or address:port"),
        (server_name, SERVER_NAME_RE, "server_name", "host names separated by spaces, or _"),
    )
    for value, pattern, field, shape in checks:
        if not pattern.match(value):
            raise InvalidInput(f"{field} must be {shape}, not '{value}'", field=field)
    return (
        nginx_template()
        .replace("@UPSTREAM@", upstream)
        .replace("@LISTEN@", listen)
        .replace("@SERVER_NAME@", server_name)
    )
