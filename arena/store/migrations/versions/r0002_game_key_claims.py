"""Each game's key (table, deal, rotation), unique; work claims of arenas that
share a tournament.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

tournaments = sa.table("tournaments", sa.column("id", sa.Integer),
                       sa.column("config", sa.JSON))
tables = sa.table("tables", sa.column("id", sa.Integer), sa.column("tournament_id", sa.Integer),
                  sa.column("bots", sa.JSON))
games = sa.table("games", sa.column("table_id", sa.Integer), sa.column("number", sa.Integer),
                 sa.column("deal", sa.Integer), sa.column("rotation", sa.Integer))


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for column in ("deal", "rotation"):
        # SQLite adds a NOT NULL column only with a default, and cannot drop it
        # after (short of rebuilding the games table that faults and records
        # reference); elsewhere the default goes once the rows are filled.
        op.add_column("games", sa.Column(column, sa.Integer, nullable=False,
                                         server_default=sa.text("0")))
    _fill_game_keys()
    if not sqlite:
        for column in ("deal", "rotation"):
            op.alter_column("games", column, server_default=None)
    op.create_index("uq_games_table_deal_rotation", "games", ["table_id", "deal", "rotation"],
                    unique=True)
    op.create_table(
        "claims",
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"),
                  primary_key=True),
        sa.Column("unit", sa.String(200), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("expires", sa.Float, nullable=False),
    )


def _fill_game_keys() -> None:
    """deal = number // table size, rotation = number % table size: how the
    arena numbered a table's games (table size from the tournament's config,
    else the number of bots at the table)."""
    bind = op.get_bind()
    rows = bind.execute(sa.select(tables.c.id, tables.c.bots, tournaments.c.config)
                        .join(tournaments, tables.c.tournament_id == tournaments.c.id))
    for table_id, bots, config in rows.all():
        size = int((config or {}).get("table_size") or len(bots) or 1)
        bind.execute(games.update().where(games.c.table_id == table_id)
                     .values(deal=games.c.number // size, rotation=games.c.number % size))


def downgrade() -> None:
    op.drop_table("claims")
    op.drop_index("uq_games_table_deal_rotation", "games")
    op.drop_column("games", "rotation")
    op.drop_column("games", "deal")
