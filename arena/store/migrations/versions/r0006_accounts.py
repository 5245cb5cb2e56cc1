"""The competition server's accounts: users, their tokens (API tokens and
one-time password links, stored as digests), browser sessions, who owns each
bot name, and uploaded submissions with their status.  New tables only, so it
is independent of the revisions beside it.

Revision ID: 0006
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    stamp = sa.DateTime(timezone=True)
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("password", sa.Text, nullable=True),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("created", stamp, nullable=False))
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False,
                  index=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created", stamp, nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False))
    op.create_table(
        "sessions",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=True,
                  index=True),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires", sa.Float, nullable=False))
    op.create_table(
        "owners",
        sa.Column("base", sa.String(200), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False,
                  index=True))
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False,
                  index=True),
        sa.Column("base", sa.String(200), nullable=False, index=True),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("label", sa.String(200), nullable=True),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("report", sa.JSON, nullable=True),
        sa.Column("created", stamp, nullable=False),
        sa.Column("updated", stamp, nullable=False))


def downgrade() -> None:
    for table in ("submissions", "owners", "sessions", "tokens", "users"):
        op.drop_table(table)
