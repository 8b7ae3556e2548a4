"""Running Alembic with the app's engine: the only way the schema is made or changed."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

# An installed package carries a copy of the migrations (setup.py); a checkout reads its own.
MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
if not MIGRATIONS_DIR.is_dir():
    MIGRATIONS_DIR = MIGRATIONS_DIR.parents[1] / "migrations"


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # ConfigParser interpolates %; URL-encoded options (e.g. search_path) contain it.
    url = engine.url.render_as_string(hide_password=False).replace("%", "%%")
    config.set_main_option("sqlalchemy.url", url)
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def revision(engine: Engine, message: str) -> None:
    """Autogenerate a migration from the difference between the models and `engine`."""
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.revision(config, message=message, autogenerate=True)
