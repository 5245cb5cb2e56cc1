"""A real PostgreSQL server for the tests, started in a temporary directory.

Debian's ``postgresql`` package provides ``initdb`` and ``pg_ctl`` (setup.sh
installs it for the tests).  initdb refuses to run as root, so when the tests
run as root (as CI does) the server runs as the ``postgres`` system user.  The
server listens on a Unix socket in its own directory only, with fsync off.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine


class PostgresMissing(RuntimeError):
    """PostgreSQL's server programs are not installed."""


def _program(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise PostgresMissing(f"{name} not found: install Debian's postgresql package "
                              f"(bash setup.sh test)")
    return found


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *argv]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _run(argv: list[str]) -> None:
    done = subprocess.run(_as_server_user(argv), capture_output=True, text=True, timeout=120,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(argv[0]).name} failed: {done.stderr.strip()[-500:]}")


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a throw-away server; yield a SQLAlchemy URL of its database."""
    initdb, pg_ctl = _program("initdb"), _program("pg_ctl")
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    port = _free_port()
    try:
        _run([initdb, "-D", str(data), "-A", "trust", "-U", "arena", "--no-sync", "-E", "UTF8"])
        options = f"-k {folder} -c listen_addresses='' -p {port} -F"
        _run([pg_ctl, "-D", str(data), "-o", options, "-w", "-l", str(folder / "log"), "start"])
        yield f"postgresql+psycopg://arena@/postgres?host={folder}&port={port}"
    finally:
        subprocess.run(_as_server_user([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def new_database(url: str) -> str:
    """A new, empty database on the server of ``url`` (from :func:`postgres_server`);
    its URL."""
    if "/postgres?" not in url:
        raise ValueError(f"not a server's URL from postgres_server(): {url}")
    name = f"t{uuid.uuid4().hex[:16]}"
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        engine.dispose()
    return url.replace("/postgres?", f"/{name}?")


@pytest.fixture(scope="session", name="postgres_server_url")
def postgres_server_fixture() -> Iterator[str]:
    """One server for the whole run, or per xdist worker (registered in tests/conftest.py):
    starting one takes a second or two, so every test module takes its own databases on
    this one (:func:`new_database`) rather than starting its own."""
    with postgres_server() as url:
        yield url
