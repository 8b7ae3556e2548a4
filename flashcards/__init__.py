"""Flashcards: a self-hosted, multilingual spaced-repetition service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from .config import load_secret_key, settings_from_env


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    instance = Path(app.instance_path)
    instance.mkdir(parents=True, exist_ok=True)
    app.config.update(settings_from_env(instance))
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
    )
    if config:
        app.config.update(config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = load_secret_key(instance)
    from .http.request_body import ChunkedBodyGuard

    app.wsgi_app = ChunkedBodyGuard(app.wsgi_app)  # type: ignore[method-assign]
    proxies = app.config["TRUSTED_PROXIES"]
    if proxies:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies
        )

    from .http import request_db, request_guards

    request_db.init_app(app)
    request_guards.init_app(app)

    from .api import bp as api_bp

    app.register_blueprint(api_bp)

    from .anki_sync.routes import init_app as init_anki_sync

    init_anki_sync(app)

    from .web import init_app as init_web

    init_web(app)
    return app
