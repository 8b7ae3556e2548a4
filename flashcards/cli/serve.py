"""`flashcards serve`: the production WSGI server (gunicorn)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from flask import Flask


SERVER_NAME = "flashcards"  # the Server header: no server software, no version


def default_workers() -> int:
    """One more sync worker than the cores this process may run on, at most 9.

    A request here is CPU work, with the database a short local call or round trip away,
    so workers beyond the cores only take turns: gunicorn's 2 × cores + 1 answers no faster
    and adds latency. Where each request waits longer on the network (PostgreSQL on another
    host), more workers can pay.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min((cores or 1) + 1, 9)


def worker_app(threads: int) -> Flask:
    """A worker's app, built after the fork, its connection pool sized for its threads."""
    from .. import create_app

    return create_app({"THREADS": threads})


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--workers", default=None, type=click.IntRange(1, 64), help="Default: cores + 1, at most 9."
)
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(host: str, port: int, workers: int | None, threads: int) -> None:
    """Serve the app with gunicorn."""
    import gunicorn.http.wsgi
    from gunicorn.app.base import BaseApplication

    from .. import create_app
    from ..config import startup_warnings
    from ..http.request_db import CONNECTIONS_PER_THREAD

    class Server(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            options = {
                "bind": f"{host}:{port}",
                "workers": workers or default_workers(),
                "threads": threads,
                "graceful_timeout": 10,
                # Unused, and one fixed path per user would be shared by every instance.
                "control_socket_disable": True,
            }
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            # Each worker builds its own app, so no connection is shared across a fork.
            return worker_app(threads)

    # Built once here so that a bad setting is one line now, not a traceback in every worker.
    app = create_app()
    app.extensions["flashcards.engine"].dispose()
    # Every worker's pool is sized for its threads (see `request_db.init_app`).
    connections = (workers or default_workers()) * threads * CONNECTIONS_PER_THREAD
    for warning in startup_warnings(app.config, host, connections=connections):
        click.echo(f"warning: {warning}", err=True)
    # gunicorn names itself in a Server header on every response and drops one the app sets;
    # its responses read this module constant, for which it has no setting. Set before the
    # workers fork, so each inherits it.
    gunicorn.http.wsgi.SERVER = SERVER_NAME
    click.echo(f"Serving flashcards on http://{host}:{port}")
    Server().run()


COMMANDS = [serve]
