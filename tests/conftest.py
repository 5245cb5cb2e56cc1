"""Fixtures shared by several test modules (defined once here, so a session fixture is
built once per run, or once per xdist worker)."""

from tests.arena_db import played_fixture  # noqa: F401 (the ``played`` fixture)
from tests.pg import postgres_server_fixture  # noqa: F401 (``postgres_server_url``)
