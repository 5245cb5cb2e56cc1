"""The schema as it was before migrations: bots, tournaments, tables, games,
faults (with ``step``), records.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
    )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("game", sa.String(50), nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("total_games", sa.Integer, nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "tables",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("bots", sa.JSON, nullable=False),
        sa.UniqueConstraint("tournament_id", "number"),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("seats", sa.JSON, nullable=False),
        sa.Column("scores", sa.JSON, nullable=False),
        sa.Column("game_places", sa.JSON, nullable=False),
        sa.Column("places", sa.JSON, nullable=False),
        sa.Column("fault_count", sa.Integer, nullable=False),
        sa.Column("ignored", sa.JSON, nullable=False),
        sa.Column("decisions", sa.Integer, nullable=False),
        sa.Column("duration", sa.Float, nullable=False),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("table_id", "number"),
    )
    op.create_index("ix_games_table_id", "games", ["table_id"])
    op.create_table(
        "faults",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("bot", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("stderr_tail", sa.Text, nullable=False),
        sa.Column("step", sa.Integer, nullable=True),
    )
    op.create_index("ix_faults_game_id", "faults", ["game_id"])
    op.create_index("ix_faults_bot", "faults", ["bot"])
    op.create_table(
        "records",
        sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for name in ("records", "faults", "games", "tables", "tournaments", "bots"):
        op.drop_table(name)
