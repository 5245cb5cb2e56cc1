"""Bot versions: a bot row is one immutable version of a base name, labelled
``BASE@VERSION``.  Existing rows become versions "" of their own name (their
label, the name the stored games use, is unchanged); the version they reported
in their handshake moves to ``reported``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

bots = sa.table("bots", sa.column("name", sa.String), sa.column("base", sa.String),
                sa.column("version", sa.String), sa.column("reported", sa.String))
#: (column, its server default) of the new NOT NULL columns; SQLite adds such a
#: column only with a default (see r0002), which stays there.
FILLED = (("base", ""), ("fingerprint", ""), ("build", ""), ("reported", ""))


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for name, default in FILLED:
        op.add_column("bots", sa.Column(name, sa.Text if name == "build" else
                                        sa.String(64 if name == "fingerprint" else 200),
                                        nullable=False, server_default=default))
    op.add_column("bots", sa.Column("retired", sa.Boolean, nullable=False,
                                    server_default=sa.false()))
    op.add_column("bots", sa.Column("directory", sa.Text, nullable=True))
    op.add_column("bots", sa.Column("games", sa.JSON, nullable=True))
    op.add_column("bots", sa.Column("added", sa.DateTime(timezone=True), nullable=True))
    op.execute(bots.update().values(base=bots.c.name, reported=bots.c.version, version=""))
    if not sqlite:
        for name, _ in FILLED:
            op.alter_column("bots", name, server_default=None)
        op.alter_column("bots", "retired", server_default=None)
    op.create_index("ix_bots_base", "bots", ["base"])
    op.create_index("uq_bots_base_version", "bots", ["base", "version"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_bots_base_version", "bots")
    op.drop_index("ix_bots_base", "bots")
    op.execute(bots.update().where(bots.c.version == "").values(version=bots.c.reported))
    for name in ("added", "games", "directory", "retired", *(n for n, _ in FILLED)):
        op.drop_column("bots", name)
