"""The schema revision this code writes and reads, without the database's imports
(``arena --version`` prints it without loading SQLAlchemy)."""

#: The newest revision in ``migrations/versions`` (a test checks): a database is
#: upgraded to it; known without importing Alembic, which only a database that needs
#: migrating loads.
HEAD_REVISION = "0009"
