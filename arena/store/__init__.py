"""Storage: the shape of a finished game and the database that keeps it.

:mod:`~arena.store.records` (results, faults, the action log, per-seat and spectator
views; no trio), :mod:`~arena.store.faults` (fault kinds and labels),
:mod:`~arena.store.tables` (the tables a run uses, SQLAlchemy Core),
:mod:`~arena.store.schema` (the server's accounts, ORM rows on the same metadata;
:mod:`~arena.store.accounts` and :mod:`~arena.store.limits` query them),
:mod:`~arena.store.engine` (connecting, locks,
migrations) and :mod:`~arena.store.database` (:class:`~arena.store.database.Store`:
every query), with Alembic's revisions in ``migrations/``.

May import: games.  Never imports the runner, formats, stats, bots or the CLI.
"""

# The compiled group (arena/games/native.py) holds arena.store.replays: its finder must
# be in place before that module is looked for, so the games package comes first.
import arena.games  # noqa: F401
