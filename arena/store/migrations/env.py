"""Alembic's environment for the arena's schema: online only, on the connection
(already in a transaction) that :func:`arena.store.database.open_engine` passes in
``config.attributes["connection"]``, so a migration commits or rolls back with it."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection)
with context.begin_transaction():
    context.run_migrations()
