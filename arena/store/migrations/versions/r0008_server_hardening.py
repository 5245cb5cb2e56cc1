"""The server's hardening (issue 27): users can be disabled; sessions end when
idle (``seen``); bot names are owned case-insensitively (``owners.folded``);
rate limits count in the database (``rate_counters``), so a restart or a second
server keeps them; a submission's check reports its games as they finish
(``progress``).

Names that already differ only in case keep working: the later ones' folded
name is made unique with their own name appended.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as users:
        users.add_column(sa.Column("disabled", sa.Boolean, nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table("sessions") as sessions:
        sessions.add_column(sa.Column("seen", sa.Float, nullable=True))
    with op.batch_alter_table("submissions") as submissions:
        submissions.add_column(sa.Column("progress", sa.JSON, nullable=True))
    with op.batch_alter_table("owners") as owners:
        owners.add_column(sa.Column("folded", sa.String(200), nullable=True))
    _fold_owners()
    with op.batch_alter_table("owners") as owners:
        owners.alter_column("folded", existing_type=sa.String(200), nullable=False)
        owners.create_unique_constraint("uq_owners_folded", ["folded"])
    op.create_table(
        "rate_counters",
        sa.Column("kind", sa.String(40), primary_key=True),
        sa.Column("subject", sa.String(200), primary_key=True),
        sa.Column("window", sa.BigInteger, primary_key=True),
        sa.Column("count", sa.Integer, nullable=False))


def _fold_owners() -> None:
    connection = op.get_bind()
    owners = sa.table("owners", sa.column("base", sa.String), sa.column("folded", sa.String))
    taken: set[str] = set()
    for (base,) in connection.execute(sa.select(owners.c.base).order_by(owners.c.base)):
        folded = base.lower()
        if folded in taken:
            folded = f"{folded}#{base}"[:200]
        taken.add(folded)
        connection.execute(owners.update().where(owners.c.base == base).values(folded=folded))


def downgrade() -> None:
    op.drop_table("rate_counters")
    with op.batch_alter_table("owners") as owners:
        owners.drop_constraint("uq_owners_folded", type_="unique")
        owners.drop_column("folded")
    with op.batch_alter_table("submissions") as submissions:
        submissions.drop_column("progress")
    with op.batch_alter_table("sessions") as sessions:
        sessions.drop_column("seen")
    with op.batch_alter_table("users") as users:
        users.drop_column("disabled")
