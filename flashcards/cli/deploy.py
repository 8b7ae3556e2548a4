"""`flashcards deploy`: the shipped deployment examples, filled in for this installation."""

from __future__ import annotations

import click

from ..deploy import nginx_config


@click.group("deploy")
def deploy() -> None:
    """Print configuration for what runs in front of the service."""


@deploy.command("nginx")
@click.option(
    "--upstream",
    default="127.0.0.1:5000",
    show_default=True,
    help="Where `flashcards serve` listens (host:port or unix:/path).",
)
@click.option("--listen", default="80", show_default=True, help="nginx's port or address:port.")
@click.option("--server-name", default="_", show_default=True, help="nginx's server_name.")
def nginx(upstream: str, listen: str, server_name: str) -> None:
    """The nginx site the service requires in front when it is exposed (for conf.d/)."""
    click.echo(nginx_config(upstream, listen, server_name), nl=False)


COMMANDS = [deploy]
