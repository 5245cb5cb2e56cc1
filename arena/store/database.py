"""Storage: every query, in one class (:class:`Store`, SQLAlchemy 2 Core: no ORM, whose
import and mapping would cost a small tournament a fifth of its CPU).

Default: a SQLite file (``sqlite:///arena.db``); any SQLAlchemy URL works.
Each finished game is committed in its own transaction as it finishes, so an
interrupted tournament loses at most the games that were in flight.  While
another process holds the database's write lock (another arena, a backup),
writes wait and retry (:class:`~arena.store.engine.DatabaseLocked`, ``on_locked``) rather than fail.

The tables are in :mod:`arena.store.tables` (the server's accounts, ORM rows, in
:mod:`arena.store.schema`), connecting and migrating in
:mod:`arena.store.engine`.  The schema is Alembic's (``arena/store/migrations``):
:func:`~arena.store.engine.open_engine` upgrades
a database to the newest revision, adopts one created before migrations, and
refuses one newer than this code.  Every game has a key (table, deal, rotation)
that the database keeps unique, so saving a game twice stores it once; several
arenas can share a tournament through :meth:`Store.claim`.

Reports read only what is here (:func:`Store.games`, :func:`Store.tournaments`
...), never game internals.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Select,
    Table,
    Text,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import (
    SQLAlchemyError,
)

from arena.store import move_logs
from arena.store.engine import (
    StorageError,
    T,
    first_line,
    insert_new,
    now,
    opened,
    private_paths,
    retry_locked,
    writer,
)
from arena.store.records import GameRecord, GameResult, is_no_result
from arena.store.sealed import Seals, without_deck
from arena.store.tables import (
    BOTS,
    CLAIMS,
    FAULTS,
    GAMES,
    LOGS,
    RECORDS,
    SECRETS,
    TABLES,
    TOURNAMENTS,
    VIEWS,
)

DEFAULT_URL = "sqlite:///arena.db"
#: The kind of the tournaments ``arena check-bot`` stores: their games count in
#: no leaderboard or rating.
CHECK_KIND = "check"
#: The kind of the one-game tournaments of a person playing the ladder's bots in
#: the browser (``arena serve``): unrated too, in no leaderboard.
PERSON_KIND = "person"


@dataclass(frozen=True)
class BotVersion:
    """A stored bot version (see :data:`~arena.store.tables.BOTS`)."""

    base: str
    version: str
    command: str
    fingerprint: str
    directory: str | None = None
    build: str = ""
    games: list[str] | None = None
    author: str = ""
    added: datetime | None = None
    retired: bool = False
    reported: str = ""

    @property
    def label(self) -> str:
        """How its seats, faults and ratings name it: ``BASE@VERSION``."""
        return f"{self.base}@{self.version}" if self.version else self.base


def _bot_version(row: Row[Any]) -> BotVersion:
    return BotVersion(base=row.base, version=row.version, command=row.command,
                      fingerprint=row.fingerprint, directory=row.directory, build=row.build,
                      games=row.games, author=row.author, added=row.added,
                      retired=row.retired, reported=row.reported)


def _next_version(connection: Connection, base: str) -> str:
    taken = connection.scalars(select(BOTS.c.version).where(BOTS.c.base == base)).all()
    return str(max((int(v) for v in taken if v.isdigit()), default=0) + 1)


@dataclass(frozen=True)
class StoredGame:
    """A game as reports see it."""

    id: int
    tournament_id: int
    table: int
    number: int
    game: str
    seed: int
    options: dict[str, Any]
    seats: list[str]
    scores: list[float]
    places: list[int]
    game_places: list[int]
    faults: list[dict[str, Any]]
    duration: float
    decisions: int
    ignored: list[int]
    #: Its deal secret is not revealed yet (:mod:`arena.store.sealed`): show
    #: ``shown_seed`` and ``shown_options``, never ``seed`` or ``options``.
    sealed: bool = False

    @property
    def shown_seed(self) -> int | None:
        """The seed, or None while the game is sealed."""
        return None if self.sealed else self.seed

    @property
    def shown_options(self) -> dict[str, Any]:
        """The options, without a stacked deck while the game is sealed."""
        return without_deck(self.options) if self.sealed else self.options

    @property
    def no_result(self) -> bool:
        """Every seat faulted: the game counts in no rating or place statistic."""
        return is_no_result(len(self.seats), {f["seat"] for f in self.faults})


def counted_games(games: Iterable[StoredGame]) -> list[StoredGame]:
    """The games that count for places (average place, first places, head-to-head):
    every game but the no-result ones.  Fault counts still use every game."""
    return [game for game in games if not game.no_result]


def stored_check(tournament: Mapping[str, Any]) -> dict[str, Any] | None:
    """The check report a stored tournament (:meth:`Store.tournament`) of kind
    :data:`CHECK_KIND` keeps in its config, with its ``tournament_id``,
    ``created`` and ``status``; None for any other tournament."""
    check = (tournament.get("config") or {}).get("check")
    if tournament.get("kind") != CHECK_KIND or not isinstance(check, dict):
        return None
    return {**check, "tournament_id": tournament["id"], "created": tournament["created"],
            "status": tournament["status"]}


#: The version a bot reports in a game's handshake, where it changed; its author
#: where none is known (a manifest's author stays).
_UPDATE_BOT_INFO = update(BOTS).where(
    BOTS.c.name == bindparam("who"),
    or_(BOTS.c.reported != bindparam("reported_version"),
        (BOTS.c.author == "") & (bindparam("new_author") != "")),
).values(reported=bindparam("reported_version"),
         author=case((BOTS.c.author == "", bindparam("new_author")), else_=BOTS.c.author))


class Store:
    """The arena's database: writes results, answers the reports' queries.

    A write that finds the database locked by another process waits and
    retries; ``on_locked`` (if given) is called once per such wait.  Writes
    given ``wait=False`` make one attempt (bounded by :data:`BUSY_TIMEOUT_MS`)
    and raise :class:`DatabaseLocked`, for callers that wait in their own way.
    """

    def __init__(self, url: str = DEFAULT_URL,
                 on_locked: Callable[[], None] | None = None, *, create: bool = True) -> None:
        self.url = url
        self.on_locked = on_locked
        self._waiting = False
        #: Whether opening it created the database (``create``: else it must exist).
        self.engine, self.created = opened(url, self.notice_locked, create=create)
        #: The engine for write transactions (on SQLite they begin IMMEDIATE).
        self.writer = writer(self.engine)
        self._waiting = False
        #: (tournament id, table number) -> (table row id, table size)
        self._tables: dict[tuple[int, int], tuple[int, int]] = {}

    def close(self) -> None:
        self.engine.dispose()

    def notice_locked(self) -> None:
        """Tell ``on_locked`` that a write is waiting for the lock, once per wait."""
        if not self._waiting and self.on_locked is not None:
            self.on_locked()
        self._waiting = True

    def _write(self, work: Callable[[Connection], T], wait: bool = True) -> T:
        """``work(connection)`` in one transaction, committed; retried while locked."""
        def attempt() -> T:
            with self.writer.begin() as connection:
                return work(connection)

        return self.retried(attempt, wait)

    def retried(self, attempt: Callable[[], T], wait: bool = True) -> T:
        """``attempt()``, a write transaction, retried while the database is locked
        (``wait`` False: once); StorageError if it fails otherwise."""
        try:
            done = retry_locked(attempt, self.notice_locked if wait else None)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot write to database {self.url!r}: "
                               f"{first_line(exc)}") from None
        self._waiting = False
        return done

    # -- writes ------------------------------------------------------------
    def register_bots(self, bots: Sequence[tuple[str, str]]) -> None:
        """Register (label, command) pairs not registered yet, each as a bot of its
        own (base name = label); a registered label is left as it is, since a
        version never changes (versions come from :meth:`add_bot_version`)."""
        def work(connection: Connection) -> None:
            for name, command in bots:  # race-safe: two checks register one opponent
                insert_new(connection, BOTS, {"name": name, "base": name, "command": command})

        self._write(work)

    def add_bot_version(self, bot: BotVersion) -> tuple[BotVersion, bool]:
        """Store a new version of ``bot.base`` unless one with its fingerprint is
        stored: (the stored version, whether it is new).  ``bot.version`` "" is
        numbered here (1, 2, ... per base name).  StorageError if the version is
        taken by other content."""
        def work(connection: Connection) -> tuple[BotVersion, bool]:
            same = connection.execute(select(BOTS).where(
                BOTS.c.base == bot.base, BOTS.c.fingerprint == bot.fingerprint)
                .order_by(BOTS.c.id)).first()
            if same is not None:
                return _bot_version(same), False
            version = bot.version or _next_version(connection, bot.base)
            label = f"{bot.base}@{version}"
            if connection.scalar(select(BOTS.c.id).where(BOTS.c.name == label)) is not None:
                raise StorageError(f"bot {label} is stored already with other content: "
                                   f"give the new content a new version")
            stored = replace(bot, version=version, added=now(), retired=False, reported="")
            connection.execute(insert(BOTS).values(
                name=label, base=bot.base, version=version, command=bot.command,
                fingerprint=bot.fingerprint, directory=bot.directory, build=bot.build,
                games=bot.games, author=bot.author, added=stored.added))
            return stored, True

        return self._write(work)

    def next_bot_version(self, base: str) -> str:
        """The version number a new version of ``base`` gets if none is given."""
        with self.engine.connect() as connection:
            return _next_version(connection, base)

    def retire_bots(self, base: str, version: str | None = None) -> list[str]:
        """Retire ``base``'s version (every version when None): the labels retired
        now (already retired ones are not listed)."""
        def work(connection: Connection) -> list[str]:
            query = select(BOTS.c.name).where(BOTS.c.base == base, BOTS.c.retired.is_(False))
            if version is not None:
                query = query.where(BOTS.c.version == version)
            names = list(connection.scalars(query.order_by(BOTS.c.id)))
            if names:
                connection.execute(update(BOTS).where(BOTS.c.name.in_(names))
                                   .values(retired=True))
            return names

        return self._write(work)

    def create_tournament(self, game: str, config: dict[str, Any], tables: Sequence[Sequence[str]],
                          total_games: int, kind: str = "tournament",
                          secret: tuple[str, str] | None = None) -> int:
        """Store a tournament and its tables; its id.  ``secret``: its deal secret
        and the commitment to it (:mod:`arena.formats.deals`), unrevealed."""
        def work(connection: Connection) -> int:
            tournament = int(connection.execute(insert(TOURNAMENTS).values(
                kind=kind, game=game, config=config, total_games=total_games)
                .returning(TOURNAMENTS.c.id)).scalar_one())
            if tables:
                connection.execute(insert(TABLES), [
                    {"tournament_id": tournament, "number": number, "bots": list(bots)}
                    for number, bots in enumerate(tables)])
            if secret is not None:
                connection.execute(insert(SECRETS).values(
                    tournament_id=tournament, first_table=0, secret=secret[0],
                    commitment=secret[1], revealed=False))
            return tournament

        return self._write(work)

    # -- deal secrets (arena.formats.deals) ---------------------------------------
    def add_deal_secret(self, tournament_id: int, first_table: int, secret: str,
                        commitment: str) -> str:
        """Store the deal secret of a tournament's tables from ``first_table`` on (a
        ladder's next period), unless one is stored already; the stored secret."""
        def work(connection: Connection) -> str:
            insert_new(connection, SECRETS, {
                "tournament_id": tournament_id, "first_table": first_table, "secret": secret,
                "commitment": commitment, "revealed": False})
            stored = connection.scalar(self._secret(tournament_id, first_table))
            assert stored is not None
            return str(stored)

        return self._write(work)

    def deal_secret(self, tournament_id: int, first_table: int = 0) -> str | None:
        """The organiser's copy of a deal secret, revealed or not (to play its deals);
        None if there is none."""
        with self.engine.connect() as connection:
            stored = connection.scalar(self._secret(tournament_id, first_table))
            return None if stored is None else str(stored)

    @staticmethod
    def _secret(tournament_id: int, first_table: int) -> Select[tuple[str]]:
        return select(SECRETS.c.secret).where(SECRETS.c.tournament_id == tournament_id,
                                              SECRETS.c.first_table == first_table)

    def reveal_deal_secret(self, tournament_id: int, first_table: int) -> None:
        """Reveal the secret of a tournament's tables from ``first_table`` on (a
        ladder's finished period): its games are no longer sealed."""
        self._write(lambda connection: connection.execute(
            update(SECRETS).where(SECRETS.c.tournament_id == tournament_id,
                                  SECRETS.c.first_table == first_table)
            .values(revealed=True)))

    def append_table(self, tournament_id: int, number: int, bots: Sequence[str], *,
                     games: int, configs: Sequence[Mapping[str, str]] = ()) -> None:
        """Add table ``number`` (``bots`` in seat order) to a running tournament whose
        tables grow as it plays (a ladder), counting ``games`` more in its total;
        ``configs`` are bots its configuration does not name yet
        (:func:`arena.runner.tournament.bot_config`), added to it.  One transaction;
        StorageError if the table number is taken."""
        def work(connection: Connection) -> None:
            config = self._config(connection, tournament_id)
            if config is None:
                raise StorageError(f"no tournament {tournament_id}")
            known = {bot["name"] for bot in config.get("bots", [])}
            added = [dict(entry) for entry in configs if entry["name"] not in known]
            if added:
                config = {**config, "bots": [*config.get("bots", []), *added]}
            connection.execute(update(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id)
                               .values(config=config,
                                       total_games=TOURNAMENTS.c.total_games + games))
            connection.execute(insert(TABLES).values(tournament_id=tournament_id,
                                                     number=number, bots=list(bots)))

        self._write(work)

    @staticmethod
    def _config(connection: Connection, tournament_id: int) -> dict[str, Any] | None:
        """A tournament's stored config; None if there is no such tournament."""
        config = connection.scalar(select(TOURNAMENTS.c.config)
                                   .where(TOURNAMENTS.c.id == tournament_id))
        return None if config is None else dict(config)

    def private_paths(self) -> tuple[str, ...]:
        return private_paths(self.url)

    def set_protections(self, tournament_id: int, protections: str) -> None:
        """Record what confined the bots of a run (shown on its report pages)."""
        def work(connection: Connection) -> None:
            config = self._config(connection, tournament_id)
            if config is not None:
                connection.execute(update(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id)
                                   .values(config={**config, "protections": protections}))

        self._write(work, True)

    def set_status(self, tournament_id: int, status: str, *, wait: bool = True) -> None:
        """Set a tournament's status; "finished" also reveals its deal secrets."""
        def work(connection: Connection) -> None:
            connection.execute(update(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id)
                               .values(status=status))
            if status == "finished":
                connection.execute(update(SECRETS).where(
                    SECRETS.c.tournament_id == tournament_id).values(revealed=True))

        self._write(work, wait)

    def save_game(self, tournament_id: int, table: int, number: int, options: dict[str, Any],
                  result: GameResult, *, wait: bool = True, deal: int | None = None,
                  rotation: int | None = None) -> int:
        """Commit one finished game with its faults and record, in one
        transaction, under its key: (table, ``deal``, ``rotation``), by default
        ``divmod(number, table size)``.  Idempotent: if a game with that key is
        stored already (a resumed or concurrent arena played it too), store
        nothing and return the stored game's id."""
        data = result.record.pack()  # before the transaction: no lock held meanwhile
        logs = [(seat, move_logs.pack(entries))
                for seat, entries in enumerate(result.move_logs) if entries]

        def work(connection: Connection) -> int:
            table_id, size = self._table(connection, tournament_id, table)
            key = {"table_id": table_id, "deal": number // size if deal is None else deal,
                   "rotation": number % size if rotation is None else rotation}
            return self._insert_game(connection, key, number, options, result, data, logs)

        return self._write(work, wait)

    def _table(self, connection: Connection, tournament_id: int, table: int) -> tuple[int, int]:
        """(row id, size) of a tournament's table: the size from the tournament's
        config, else the number of bots at it; remembered."""
        found = self._tables.get((tournament_id, table))
        if found is None:
            row = connection.execute(
                select(TABLES.c.id, TABLES.c.bots, TOURNAMENTS.c.config)
                .join(TOURNAMENTS, TABLES.c.tournament_id == TOURNAMENTS.c.id)
                .where(TABLES.c.tournament_id == tournament_id, TABLES.c.number == table)).first()
            if row is None:
                raise StorageError(f"tournament {tournament_id} has no table {table}")
            size = int((row.config or {}).get("table_size") or len(row.bots) or 1)
            found = self._tables[(tournament_id, table)] = (row.id, size)
        return found

    @staticmethod
    def _insert_game(connection: Connection, key: dict[str, int], number: int,
                     options: dict[str, Any], result: GameResult, data: bytes,
                     logs: Sequence[tuple[int, bytes]] = ()) -> int:
        inserted = insert_new(connection, GAMES, {
            **key, "number": number, "seed": result.seed, "options": options,
            "seats": result.bots, "scores": result.scores, "game_places": result.game_places,
            "places": result.places, "fault_count": len(result.faults),
            "ignored": result.ignored, "decisions": result.decisions,
            "duration": result.duration, "finished": now()})
        if inserted is None:
            stored = connection.scalar(select(GAMES.c.id).where(
                *(GAMES.c[name] == value for name, value in key.items())))
            if stored is None:
                raise StorageError(f"game {number} of the table is stored already, under "
                                   f"another deal and rotation than {key['deal']}, "
                                   f"{key['rotation']}")
            return int(stored)
        game_id = int(inserted[0])
        if result.faults:
            connection.execute(insert(FAULTS), [
                {"game_id": game_id, "seat": f.seat, "bot": f.bot, "kind": f.kind,
                 "detail": f.detail, "stderr_tail": f.stderr_tail, "step": f.step}
                for f in result.faults])
        connection.execute(insert(RECORDS), {"game_id": game_id, "data": data})
        if logs:
            connection.execute(insert(LOGS), [{"game_id": game_id, "seat": seat, "data": log}
                                              for seat, log in logs])
        infos = [{"who": name, "reported_version": info.get("version", ""),
                  "new_author": info.get("author", "")}
                 for name, info in zip(result.bots, result.record.bot_info, strict=False)
                 if info.get("version") or info.get("author")]
        if infos:
            connection.execute(_UPDATE_BOT_INFO, infos)
        return game_id

    # -- claims: arenas sharing a tournament -----------------------------------
    def claim(self, tournament_id: int, unit: str, owner: str, lease_seconds: float, *,
              replacing: str | None = None) -> bool:
        """Whether ``owner`` now holds ``unit`` of a tournament for ``lease_seconds``:
        true if the unit was unclaimed, already ``owner``'s (the lease is
        extended), its previous lease has expired, or it was held by
        ``replacing`` (an owner known to be dead); false while another owner's
        lease runs.  Race-safe: of arenas claiming one unit at once, exactly
        one gets it.

        A unit is a piece of work, e.g. ``"3/1"`` for rotation 1 of table 3;
        ``owner`` names one arena process (e.g. host:pid:start time).  Leases
        are by the claimants' clocks, which must agree to well within a lease.
        Claims only avoid wasted work: what guarantees that no game is stored
        twice is the games' unique key (:meth:`save_game`), so an arena that
        lost its claim (expired) may finish its game and nothing breaks."""
        def work(connection: Connection) -> bool:
            now = time.time()
            held = {"tournament_id": tournament_id, "unit": unit, "owner": owner,
                    "expires": now + lease_seconds}
            if insert_new(connection, CLAIMS, held) is not None:
                return True
            takeable = [CLAIMS.c.owner == owner, CLAIMS.c.expires <= now]
            if replacing is not None:
                takeable.append(CLAIMS.c.owner == replacing)
            taken = connection.execute(
                update(CLAIMS).where(*self._claim_key(tournament_id, unit), or_(*takeable))
                .values(owner=owner, expires=now + lease_seconds))
            return taken.rowcount == 1

        return self._write(work)

    def claim_holder(self, tournament_id: int, unit: str) -> str | None:
        """Who holds (or last held) ``unit`` of a tournament, if anyone."""
        with self.engine.connect() as connection:
            return connection.scalar(select(CLAIMS.c.owner).where(
                *self._claim_key(tournament_id, unit)))

    def renew(self, tournament_id: int, unit: str, owner: str, lease_seconds: float) -> bool:
        """Extend ``owner``'s claim of ``unit`` to ``lease_seconds`` from now; false if
        ``owner`` does not hold it (another arena took it after the lease expired,
        or it was released)."""
        def work(connection: Connection) -> bool:
            renewed = connection.execute(
                update(CLAIMS).where(*self._claim_key(tournament_id, unit),
                                     CLAIMS.c.owner == owner)
                .values(expires=time.time() + lease_seconds))
            return renewed.rowcount == 1

        return self._write(work)

    def release(self, tournament_id: int, unit: str, owner: str) -> None:
        """Give up ``owner``'s claim of ``unit`` (nothing if it holds none)."""
        self._write(lambda connection: connection.execute(
            delete(CLAIMS).where(*self._claim_key(tournament_id, unit),
                                 CLAIMS.c.owner == owner)))

    @staticmethod
    def _claim_key(tournament_id: int, unit: str) -> tuple[Any, Any]:
        return CLAIMS.c.tournament_id == tournament_id, CLAIMS.c.unit == unit

    # -- reads ---------------------------------------------------------------
    def tournament(self, tournament_id: int) -> dict[str, Any] | None:
        found = self._tournament_dicts(TOURNAMENTS.c.id == tournament_id)
        return found[0] if found else None

    def tournaments(self) -> list[dict[str, Any]]:
        return self._tournament_dicts()

    def _tournament_dicts(self, *where: Any) -> list[dict[str, Any]]:
        """The tournaments (``where`` they match) as :meth:`_tournament_dict` gives
        them, in four queries whatever their number (a server reads them all at
        every snapshot, and every check of an upload is one)."""
        def of(table: Table) -> Select[Any]:  # the rows of ``table`` of those tournaments
            return (select(table).join(TOURNAMENTS, table.c.tournament_id == TOURNAMENTS.c.id)
                    .where(*where))

        with self.engine.connect() as connection:
            rows = connection.execute(select(TOURNAMENTS).where(*where)
                                      .order_by(TOURNAMENTS.c.id)).all()
            tables: dict[int, list[list[str]]] = {}
            for table in connection.execute(of(TABLES).order_by(TABLES.c.number)):
                tables.setdefault(table.tournament_id, []).append(table.bots)
            done: dict[int, int] = dict(connection.execute(
                select(TABLES.c.tournament_id, func.count(GAMES.c.id))
                .join(GAMES, GAMES.c.table_id == TABLES.c.id)
                .join(TOURNAMENTS, TABLES.c.tournament_id == TOURNAMENTS.c.id)
                .where(*where).group_by(TABLES.c.tournament_id)).all())
            secrets: dict[int, list[Row[Any]]] = {}
            for secret in connection.execute(of(SECRETS).order_by(SECRETS.c.first_table)):
                secrets.setdefault(secret.tournament_id, []).append(secret)
            return [self._tournament_dict(row, tables.get(row.id, []), done.get(row.id, 0),
                                          secrets.get(row.id, [])) for row in rows]

    @staticmethod
    def _tournament_dict(row: Row[Any], tables: list[list[str]], done: int,
                         secrets: Sequence[Row[Any]]) -> dict[str, Any]:
        """A tournament as :meth:`tournament` gives it, with its ``tables`` (their bots,
        by table number), ``done`` games stored and its deal ``secrets``; ``deals``: its
        deal secrets as they may be shown (first table, commitment, the secret once
        revealed); ``sealed``: some of its games may be sealed."""
        finished = row.status == "finished"
        deals = [{"first_table": s.first_table, "commitment": s.commitment,
                  "secret": s.secret if s.revealed or finished else None} for s in secrets]
        return {"id": row.id, "kind": row.kind, "game": row.game, "config": row.config,
                "status": row.status, "total_games": row.total_games, "games_done": done,
                "created": row.created.isoformat() if row.created else "",
                "tables": tables,
                "deals": deals,
                "sealed": not finished and (not deals or deals[-1]["secret"] is None)}

    def _seals(self, connection: Connection) -> dict[int, Seals]:
        """Which games of each tournament are sealed (:class:`Seals`)."""
        seals = {tid: Seals(status == "finished") for tid, status in connection.execute(
            select(TOURNAMENTS.c.id, TOURNAMENTS.c.status))}
        rows = connection.execute(select(SECRETS.c.tournament_id, SECRETS.c.first_table,
                                         SECRETS.c.revealed)
                                  .order_by(SECRETS.c.tournament_id, SECRETS.c.first_table))
        by_tournament: dict[int, list[tuple[int, bool]]] = {}
        for tid, first, revealed in rows:
            by_tournament.setdefault(tid, []).append((first, bool(revealed)))
        for tid, secrets in by_tournament.items():
            if tid in seals and not seals[tid].finished:
                seals[tid] = Seals(False, [f for f, _ in secrets], [r for _, r in secrets])
        return seals

    def checks(self, label: str | None = None) -> list[dict[str, Any]]:
        """The stored ``arena check-bot`` reports (tournaments of kind
        :data:`CHECK_KIND`) of bot ``label`` (None: of every bot), latest first:
        see :func:`stored_check`."""
        found = (stored_check(tournament) for tournament
                 in reversed(self._tournament_dicts(TOURNAMENTS.c.kind == CHECK_KIND)))
        return [check for check in found if check is not None and label in (None, check["bot"])]

    def done_games(self, tournament_id: int, table: int | None = None) -> set[tuple[int, int]]:
        """(table number, game number) of every stored game of a tournament (at
        one of its tables, if given)."""
        query = (select(TABLES.c.number, GAMES.c.number)
                 .join(GAMES, GAMES.c.table_id == TABLES.c.id)
                 .where(TABLES.c.tournament_id == tournament_id))
        if table is not None:
            query = query.where(TABLES.c.number == table)
        with self.engine.connect() as connection:
            return {(t, g) for t, g in connection.execute(query)}

    def games(self, tournament_id: int | None = None) -> Iterator[StoredGame]:
        """Every stored game (of one tournament, if given), oldest first."""
        games = (select(GAMES, TABLES.c.tournament_id, TABLES.c.number.label("table_number"),
                        TOURNAMENTS.c.game.label("game_name"))
                 .join(TABLES, GAMES.c.table_id == TABLES.c.id)
                 .join(TOURNAMENTS, TABLES.c.tournament_id == TOURNAMENTS.c.id)
                 .order_by(GAMES.c.id))
        faults = (select(FAULTS.c.game_id, *(FAULTS.c[key] for key in _FAULT_KEYS))
                  .join(GAMES, FAULTS.c.game_id == GAMES.c.id)
                  .join(TABLES, GAMES.c.table_id == TABLES.c.id)
                  .order_by(FAULTS.c.id))
        if tournament_id is not None:
            games = games.where(TABLES.c.tournament_id == tournament_id)
            faults = faults.where(TABLES.c.tournament_id == tournament_id)
        by_game: dict[int, list[dict[str, Any]]] = {}
        with self.engine.connect() as connection:
            seals = self._seals(connection)
            for game_id, *fault in connection.execute(faults):
                by_game.setdefault(game_id, []).append(dict(zip(_FAULT_KEYS, fault, strict=True)))
            rows = connection.execute(games).all()
        for game in rows:
            yield StoredGame(
                id=game.id, tournament_id=game.tournament_id, table=game.table_number,
                number=game.number, game=game.game_name, seed=game.seed,
                options=game.options, seats=game.seats, scores=game.scores,
                places=game.places, game_places=game.game_places,
                faults=by_game.get(game.id, []), duration=game.duration,
                decisions=game.decisions, ignored=game.ignored,
                sealed=seals[game.tournament_id].sealed(game.table_number))

    def record(self, game_id: int) -> GameRecord | None:
        """A game's full record (actions, events, reveal, times, stderr)."""
        with self.engine.connect() as connection:
            data = connection.scalar(select(RECORDS.c.data).where(RECORDS.c.game_id == game_id))
            return GameRecord.unpack(data) if data is not None else None

    def move_logs(self, game_ids: Sequence[int], seats: Sequence[int] | None = None,
                  batch: int = 500) -> dict[int, dict[int, list[move_logs.LogEntry]]]:
        """Per game of ``game_ids``, per seat (of ``seats``, if given) that logged
        anything, its per-move stderr (:mod:`arena.store.move_logs`): for the
        bot's owner, or the organiser, only."""
        found: dict[int, dict[int, list[move_logs.LogEntry]]] = {}
        with self.engine.connect() as connection:
            for start in range(0, len(game_ids), batch):
                query = select(LOGS.c.game_id, LOGS.c.seat, LOGS.c.data).where(
                    LOGS.c.game_id.in_(list(game_ids[start : start + batch])))
                if seats is not None:
                    query = query.where(LOGS.c.seat.in_(list(seats)))
                for game_id, seat, data in connection.execute(query):
                    found.setdefault(game_id, {})[seat] = move_logs.unpack(data)
        return found

    def finish_times(self, after: int = 0) -> dict[int, float]:
        """When each game with an id above ``after`` was stored, in POSIX seconds
        (the server's ratings over time and its games' ages)."""
        query = select(GAMES.c.id, GAMES.c.finished).where(GAMES.c.id > after)
        with self.engine.connect() as connection:
            return {game_id: _posix(finished) for game_id, finished in
                    connection.execute(query)}

    def game(self, game_id: int) -> StoredGame | None:
        """One stored game (as :meth:`scan_games` reads it), or None."""
        found = next(self.scan_games(after=game_id - 1, batch=1), None)
        return found if found is not None and found.id == game_id else None

    def delete_tournament(self, tournament_id: int) -> int:
        """Delete a tournament and everything stored under it (its games with
        their faults and records, its tables and claims) in one transaction;
        the number of games deleted.  The bots stay registered."""
        tables = select(TABLES.c.id).where(TABLES.c.tournament_id == tournament_id)
        games = select(GAMES.c.id).where(GAMES.c.table_id.in_(tables))

        def work(connection: Connection) -> int:
            for child in (FAULTS, RECORDS, VIEWS, LOGS):
                connection.execute(delete(child).where(child.c.game_id.in_(games)))
            deleted = connection.execute(delete(GAMES).where(GAMES.c.table_id.in_(tables)))
            connection.execute(delete(CLAIMS).where(CLAIMS.c.tournament_id == tournament_id))
            connection.execute(delete(SECRETS).where(SECRETS.c.tournament_id == tournament_id))
            connection.execute(delete(TABLES).where(TABLES.c.tournament_id == tournament_id))
            connection.execute(delete(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id))
            return int(deleted.rowcount)

        count = self._write(work)
        self._tables = {key: row for key, row in self._tables.items() if key[0] != tournament_id}
        return count

    def records(self, game_ids: Sequence[int], batch: int = 500
                ) -> Iterator[tuple[int, GameRecord]]:
        """(game id, record) for many games, fetched ``batch`` at a time."""
        with self.engine.connect() as connection:
            for start in range(0, len(game_ids), batch):
                chunk = list(game_ids[start : start + batch])
                rows = connection.execute(select(RECORDS.c.game_id, RECORDS.c.data)
                                          .where(RECORDS.c.game_id.in_(chunk)))
                for game_id, data in rows:
                    yield game_id, GameRecord.unpack(data)

    # -- replay views (arena/store/replays.py) ------------------------------
    def replay_views(self, game_ids: Sequence[int], form: int, batch: int = 200
                     ) -> Iterator[tuple[int, bytes]]:
        """(game id, stored views) of those of ``game_ids`` whose views are stored in
        format ``form``, fetched ``batch`` at a time."""
        with self.engine.connect() as connection:
            for start in range(0, len(game_ids), batch):
                chunk = list(game_ids[start : start + batch])
                rows = connection.execute(
                    select(VIEWS.c.game_id, VIEWS.c.data)
                    .where(VIEWS.c.game_id.in_(chunk), VIEWS.c.format == form))
                yield from ((game_id, data) for game_id, data in rows)

    def ids_with_views(self, form: int) -> set[int]:
        """Ids of the stored games whose views are stored in format ``form``."""
        with self.engine.connect() as connection:
            return set(connection.scalars(select(VIEWS.c.game_id)
                                          .where(VIEWS.c.format == form)))

    def without_views(self, form: int, tournament_id: int | None = None, *,
                      after: int = 0, limit: int = 100) -> list[int]:
        """Ids of stored games after id ``after`` (of one tournament, if given),
        oldest first, without views in format ``form``: at most ``limit``."""
        query = (select(GAMES.c.id).outerjoin(VIEWS, VIEWS.c.game_id == GAMES.c.id)
                 .where(GAMES.c.id > after,
                        (VIEWS.c.game_id.is_(None)) | (VIEWS.c.format != form))
                 .order_by(GAMES.c.id).limit(limit))
        if tournament_id is not None:
            query = query.where(GAMES.c.table_id.in_(
                select(TABLES.c.id).where(TABLES.c.tournament_id == tournament_id)))
        with self.engine.connect() as connection:
            return list(connection.scalars(query))

    def save_replay_views(self, views: Sequence[tuple[int, int, bytes]], *,
                          wait: bool = True) -> None:
        """Store (game id, format, data) views, replacing those stored before; a
        game deleted meanwhile is skipped.  ``wait`` False: DatabaseLocked rather
        than waiting for another process's lock."""
        def work(connection: Connection) -> None:
            ids = [game_id for game_id, _, _ in views]
            present = set(connection.scalars(select(GAMES.c.id).where(GAMES.c.id.in_(ids))))
            connection.execute(delete(VIEWS).where(VIEWS.c.game_id.in_(ids)))
            rows = [{"game_id": game_id, "format": form, "data": data}
                    for game_id, form, data in views if game_id in present]
            if rows:
                connection.execute(insert(VIEWS), rows)

        if views:
            self._write(work, wait)

    def bots(self) -> list[dict[str, str]]:
        """Every registered bot version by label: name (the label), base, version,
        command, author, and the version it reports in its handshake."""
        with self.engine.connect() as connection:
            rows = connection.execute(select(BOTS).order_by(BOTS.c.name)).all()
            return [{"name": r.name, "base": r.base, "command": r.command,
                     "version": r.version, "author": r.author, "reported": r.reported}
                    for r in rows]

    def bot_versions(self, base: str | None = None) -> list[BotVersion]:
        """Every bot version (of ``base``, if given), by base name, oldest first."""
        with self.engine.connect() as connection:
            query = select(BOTS).order_by(BOTS.c.base, BOTS.c.id)
            if base is not None:
                query = query.where(BOTS.c.base == base)
            return [_bot_version(row) for row in connection.execute(query)]

    def scan_games(self, tournament_id: int | None = None, *, after: int = 0,
                   batch: int = 5000) -> Iterator[StoredGame]:
        """The games of :meth:`games` (every one, or one tournament's) with an id above
        ``after``, oldest first, fetched ``batch`` at a time by plain SQL: for reports and
        exports over many games (no ORM objects, no records).  JSON values that repeat
        (options, seats, places) are decoded once and shared between games: read them,
        never change them."""
        shared: dict[str, Any] = {}

        def decode(raw: Any, share: bool = True) -> Any:
            if not isinstance(raw, str):  # a driver that decodes JSON itself
                return raw
            if not share:
                return json.loads(raw)
            found = shared.get(raw)
            if found is None:
                if len(shared) >= _SHARED_VALUES:
                    shared.clear()
                found = shared[raw] = json.loads(raw)
            return found

        games = (select(GAMES.c.id, TABLES.c.tournament_id, TABLES.c.number, GAMES.c.number,
                        TOURNAMENTS.c.game, GAMES.c.seed, GAMES.c.duration, GAMES.c.decisions,
                        GAMES.c.fault_count, *(GAMES.c[name].cast(Text) for name in _SCANNED))
                 .join(TABLES, GAMES.c.table_id == TABLES.c.id)
                 .join(TOURNAMENTS, TABLES.c.tournament_id == TOURNAMENTS.c.id)
                 .order_by(GAMES.c.id).limit(batch))
        if tournament_id is not None:
            games = games.where(TABLES.c.tournament_id == tournament_id)
        faults = select(FAULTS.c.game_id, *(FAULTS.c[key] for key in _FAULT_KEYS)) \
            .order_by(FAULTS.c.id)
        with self.engine.connect() as connection:
            seals = self._seals(connection)
            while rows := connection.execute(games.where(GAMES.c.id > after)).all():
                first, after = rows[0][0], rows[-1][0]
                by_game: dict[int, list[dict[str, Any]]] = {}
                if any(row.fault_count for row in rows):
                    for game_id, *fault in connection.execute(
                            faults.where(FAULTS.c.game_id.between(first, after))):
                        by_game.setdefault(game_id, []).append(dict(zip(_FAULT_KEYS, fault,
                                                                        strict=True)))
                for (game_id, tournament, table, number, game, seed, duration, decisions, _,
                     options, seats, scores, places, game_places, ignored) in rows:
                    yield StoredGame(
                        id=game_id, tournament_id=tournament, table=table, number=number,
                        game=game, seed=seed, options=decode(options), seats=decode(seats),
                        scores=decode(scores, share=False), places=decode(places),
                        game_places=decode(game_places), faults=by_game.get(game_id, []),
                        duration=duration, decisions=decisions, ignored=decode(ignored),
                        sealed=seals[tournament].sealed(table))


#: JSON columns :meth:`Store.scan_games` reads, in the order it reads them.
_SCANNED = ("options", "seats", "scores", "places", "game_places", "ignored")
_FAULT_KEYS = ("seat", "bot", "kind", "detail", "stderr_tail", "step")
#: Distinct JSON values :meth:`Store.scan_games` keeps decoded at once (then starts afresh).
_SHARED_VALUES = 50_000


def _posix(moment: datetime) -> float:
    """A stored time in POSIX seconds (SQLite gives it back without its zone: UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
