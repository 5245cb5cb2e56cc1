"""Deal secrets: a tournament's secret key of its deal seeds, its commitment and
whether it is revealed (one row per ladder period).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deal_secrets",
        sa.Column("tournament_id", sa.Integer, sa.ForeignKey("tournaments.id"),
                  primary_key=True),
        sa.Column("first_table", sa.Integer, primary_key=True),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("revealed", sa.Boolean, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("deal_secrets")
