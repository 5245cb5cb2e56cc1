"""The uploads' checker is fair to strangers (issue 27): checks of different
users run in parallel, the next one is chosen round-robin by user, builds and
checks have short limits of their own, a user may queue only a few uploads, and
a submission shows its queue position and its check's games as they finish.

Real ``arena serve`` processes (``tests/server.py``) on real SQLite databases,
real bots; the claim and the fair order also directly on a real database."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
import requests

from arena.bots.versions import BotError, build
from arena.runner.sandbox import resolve
from arena.store.accounts import Accounts
from arena.store.database import Store
from tests.server import (
    BOT_PY,
    MANIFEST,
    bot_archive,
    eventually,
    running_server,
    tar_gz,
    user_add,
    wait_status,
)

#: A build that never ends, with a number to find its process by.
ENDLESS_BUILD = 'build = "sleep {seconds}"\n'
#: A bot that takes a while over every move, so its check's games end one by one.
SLOW_MOVES_PY = """\
import random, time
from protocol import run


def choose(observation, legal):
    time.sleep(0.03)
    return random.randrange(len(legal))


run(choose, name="slow", version="1", author="x")
"""
#: A bot slow to start: every check of it takes several seconds.
SLOW_START_PY = "import time\ntime.sleep(4)\n" + BOT_PY


def upload(base: str, token: str, archive: bytes, name: str = "bot.tar.gz"
           ) -> requests.Response:
    return requests.post(f"{base}/api/submissions", timeout=60,
                         headers={"Authorization": f"Bearer {token}"},
                         files={"archive": (name, archive)})


def endless_archive(name: str, seconds: int) -> bytes:
    """A bot whose build sleeps ``seconds`` (for ever, as far as a test goes)."""
    toml = MANIFEST.format(name=name, author="x") + ENDLESS_BUILD.format(seconds=seconds)
    return tar_gz({"bot.toml": toml, "bot.py": BOT_PY})


def archive_of(name: str, bot_py: str) -> bytes:
    return tar_gz({"bot.toml": MANIFEST.format(name=name, author="x"), "bot.py": bot_py})


def submission(base: str, token: str, submission_id: int, page: bool = False
               ) -> requests.Response:
    path = f"/submissions/{submission_id}" if page else f"/api/submissions/{submission_id}"
    return requests.get(base + path, timeout=60, headers={"Authorization": f"Bearer {token}"})


def processes_with(word: str) -> list[int]:
    """The processes whose command line holds ``word``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if word.encode() in words:
                found.append(int(entry.name))
    return found


# -- (a) checks of different users run in parallel; a build over its limit is killed --------

def test_an_endless_build_does_not_hold_another_users_upload(tmp_path: Path) -> None:
    """ann's build sleeps for ever; bob's ordinary upload, after it, passes on the
    other checker while ann's still builds; ann's fails at the build limit, its
    processes killed."""
    db = f"sqlite:///{tmp_path / 'parallel.db'}"
    ann, _ = user_add(db, "ann")
    bob, _ = user_add(db, "bob")
    with running_server(db, "--checkers", "2", "--build-time", "60",
                        "--check-games", "2") as base:
        slow = upload(base, ann, endless_archive("annslow", 100017))
        assert slow.status_code == 202, slow.text
        slow_id = slow.json()["id"]
        assert wait_status(base, ann, slow_id, ("building", "passed", "failed"),
                           seconds=60)["status"] == "building"
        began = time.monotonic()
        quick = upload(base, bob, bot_archive("bobquick"))
        assert quick.status_code == 202, quick.text
        done = wait_status(base, bob, quick.json()["id"], seconds=90)
        assert done["status"] == "passed", done
        assert time.monotonic() - began < 90
        # bob's was not behind ann's: hers is still building
        assert submission(base, ann, slow_id).json()["status"] == "building"
        assert processes_with("100017"), "ann's build is not running"

        failed = wait_status(base, ann, slow_id, seconds=120)
        assert failed["status"] == "failed", failed
        assert "took longer than 60 s" in str(failed["message"]), failed
        assert eventually(lambda: processes_with("100017"), lambda found: not found,
                          seconds=20) == [], "the build's process outlived its limit"


def test_a_check_over_its_limit_is_stopped_and_fails(tmp_path: Path) -> None:
    """The check's games take longer than --check-time: stopped, its bots killed,
    the submission failed with one line (its version stays stored, unchecked)."""
    db = f"sqlite:///{tmp_path / 'check-limit.db'}"
    ann, _ = user_add(db, "ann")
    toml = MANIFEST.format(name="slowstart", author="x").replace(
        'command = "python bot.py"', 'command = "python bot.py slowstart-7421"')
    with running_server(db, "--check-time", "3", "--check-games", "4") as base:
        reply = upload(base, ann, tar_gz({"bot.toml": toml, "bot.py": SLOW_START_PY}))
        assert reply.status_code == 202, reply.text
        assert wait_status(base, ann, reply.json()["id"], ("checking", "passed", "failed"),
                           seconds=60)["status"] == "checking"
        assert eventually(lambda: processes_with("slowstart-7421"), bool), "no bot started"
        done = wait_status(base, ann, reply.json()["id"], seconds=120)
        assert done["status"] == "failed", done
        assert done["message"] == "the check took longer than 3 s", done
        assert done["label"] == "slowstart@1", done
        assert eventually(lambda: processes_with("slowstart-7421"), lambda found: not found,
                          seconds=20) == [], "the check's bots outlived its limit"


@pytest.mark.parametrize("kind", ["none", "bwrap"])
def test_a_build_over_its_limit_is_killed_with_every_process_of_it(tmp_path: Path,
                                                                   kind: str) -> None:
    """The build and what it started in the background: none outlives the limit,
    in the real sandbox too."""
    if kind == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("no bubblewrap here")
    began = time.monotonic()
    with pytest.raises(BotError, match=r"took longer than 2 s$"):
        build(tmp_path, "sh -c 'sleep 100041 & sleep 100042'", resolve(kind), "x@1", 2)
    assert time.monotonic() - began < 30
    assert eventually(lambda: processes_with("100041") + processes_with("100042"),
                      lambda found: not found, seconds=10) == []


# -- (b) round-robin by user, (c) the queue cap, (d) queue position and progress -----------

def test_the_next_check_is_chosen_round_robin_by_user(tmp_path: Path) -> None:
    """One checker: ann queues three slow builds, then bob uploads: bob's goes
    before ann's second.  ann's fourth upload is refused (her queue is full) and
    nothing of it is stored.  While queued, bob's shows its place in the fair
    order, then its check's games as they finish, in its JSON and on its page."""
    db = f"sqlite:///{tmp_path / 'fair.db'}"
    ann, _ = user_add(db, "ann")
    bob, _ = user_add(db, "bob")
    bot_store = tmp_path / "bots"
    accounts = Accounts(Store(db))
    with running_server(db, "--checkers", "1", "--build-time", "15", "--check-games", "4",
                        bot_store=bot_store) as base:
        ids = []
        for number in (1, 2, 3):
            reply = upload(base, ann, endless_archive(f"ann{number}", 100020 + number))
            assert reply.status_code == 202, reply.text
            ids.append(reply.json()["id"])
        assert wait_status(base, ann, ids[0], ("building", "passed", "failed"),
                           seconds=60)["status"] == "building"

        # (c) a fourth of ann's while three are queued or running: 429, nothing kept
        stored = len(accounts.submissions())
        uploads = sorted(p.name for p in (tmp_path / "bots-uploads").iterdir())
        refused = upload(base, ann, bot_archive("ann4"))
        assert refused.status_code == 429, refused.text
        assert "3" in refused.text and "queue" in refused.text, refused.text
        assert len(accounts.submissions()) == stored
        assert accounts.owner("ann4") is None
        assert sorted(p.name for p in (tmp_path / "bots-uploads").iterdir()) == uploads

        reply = upload(base, bob, archive_of("bobslow", SLOW_MOVES_PY))
        assert reply.status_code == 202, reply.text
        bob_id = reply.json()["id"]
        # (d) queued: its place in the fair order, bob's first (ann has one running)
        queued = submission(base, bob, bob_id).json()
        assert queued["status"] == "queued", queued
        assert queued["queue_position"] == 1 and queued["progress"] == [], queued
        assert submission(base, ann, ids[1]).json()["queue_position"] == 2
        assert submission(base, ann, ids[2]).json()["queue_position"] == 3
        assert submission(base, ann, ids[0]).json()["queue_position"] is None
        assert "1st in the queue" in submission(base, bob, bob_id, page=True).text

        # its games as they finish: some seen while it is still checking
        seen: list[int] = []
        deadline = time.monotonic() + 120
        body = queued
        while body["status"] not in ("passed", "failed") and time.monotonic() < deadline:
            body = submission(base, bob, bob_id).json()
            if body["status"] == "checking":
                seen.append(len(body["progress"]))
            time.sleep(0.2)
        assert body["status"] == "passed", body
        assert any(0 < count < 4 for count in seen), seen
        progress = body["progress"]
        assert isinstance(progress, list) and len(progress) == 4, body
        assert sorted(entry["number"] for entry in progress) == [0, 1, 2, 3]  # as in its report
        for entry in progress:
            assert entry["game"] == "five" and entry["seat"] in (0, 1), entry
            assert entry["place"] in (1, 2) and entry["faults"] == [], entry
            assert isinstance(entry["score"], (int, float)), entry
        assert body["queue_position"] is None
        page = submission(base, bob, bob_id, page=True).text
        assert 'id="progress"' in page and "in the queue" not in page

        # ann's second went after bob's
        assert submission(base, ann, ids[1]).json()["status"] in ("queued", "building")
        second = wait_status(base, ann, ids[1], seconds=120)
        assert second["status"] == "failed" and "took longer than 15 s" in str(
            second["message"]), second


# -- (e) the claim, the fair order, the stamp: on a real database ---------------------------

def queue_of(accounts: Accounts, user: int, count: int) -> list[int]:
    return [accounts.add_submission(user, f"bot{user}-{i}", "b.tar.gz").id
            for i in range(count)]


def status_of(accounts: Accounts, submission_id: int) -> str:
    found = accounts.submission(submission_id)
    assert found is not None
    return found.status


def test_two_checkers_never_take_the_same_submission(tmp_path: Path) -> None:
    accounts = Accounts(Store(f"sqlite:///{tmp_path / 'claims.db'}"))
    users = [accounts.add_user(name).id for name in ("ann", "bob", "cy")]
    ids = [i for user in users for i in queue_of(accounts, user, 15)]

    # the same submission claimed by two threads at once: one of them gets it
    barrier = threading.Barrier(2)
    won: dict[int, list[bool]] = {i: [] for i in ids[:10]}

    def race() -> None:
        for i in ids[:10]:
            barrier.wait()
            won[i].append(accounts.claim(i))

    threads = [threading.Thread(target=race) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(sorted(results) == [False, True] for results in won.values()), won

    # the rest taken by two checkers, each the next in the fair order
    taken: list[list[int]] = [[], []]

    def check(mine: list[int]) -> None:
        while (found := accounts.claim_next(len(ids))) is not None:
            mine.append(found.id)

    threads = [threading.Thread(target=check, args=(mine,)) for mine in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not set(taken[0]) & set(taken[1])
    assert sorted(taken[0] + taken[1]) == ids[10:]
    assert all(s.status == "building" for s in accounts.submissions())


def test_the_fair_order_goes_round_robin_by_user(tmp_path: Path) -> None:
    accounts = Accounts(Store(f"sqlite:///{tmp_path / 'order.db'}"))
    ann, bob, cy = (accounts.add_user(name).id for name in ("ann", "bob", "cy"))
    a1, a2, a3 = queue_of(accounts, ann, 3)
    assert accounts.queue_order() == [a1, a2, a3]
    assert accounts.claim_next(1) is not None and status_of(accounts, a1) == "building"
    (b1,) = queue_of(accounts, bob, 1)
    c1, c2 = queue_of(accounts, cy, 2)
    # ann has one running: bob's and cy's first go before her second; then in turn
    assert accounts.queue_order() == [b1, c1, a2, c2, a3]
    # ann's done, but she had the latest turn: bob and cy still go first
    accounts.update_submission(a1, "failed", message="x")
    assert accounts.queue_order() == [b1, c1, a2, c2, a3]
    # a user at the bound of running checks waits while others may go
    taken = accounts.claim_next(1)
    assert taken is not None and taken.id == b1
    assert accounts.claim_next(1) is not None  # c1
    assert status_of(accounts, c1) == "building"
    taken = accounts.claim_next(1)
    assert taken is not None and taken.id == a2
    assert accounts.claim_next(1) is None  # cy's second waits for her first
    assert accounts.queue_order() == [c2, a3]
    # a restarted checker: bob and cy never had a turn that ended, ann had
    accounts.requeue_unfinished()
    assert accounts.queue_order() == [b1, c1, a2, c2, a3]


def test_only_checks_whose_checker_stopped_renewing_are_queued_again(tmp_path: Path) -> None:
    """Two servers on one database: a starting checker must not take over a check
    the other is running (it renews its stamp), only one left behind."""
    accounts = Accounts(Store(f"sqlite:///{tmp_path / 'renew.db'}"))
    ann = accounts.add_user("ann").id
    alive, dead = queue_of(accounts, ann, 2)
    assert accounts.claim(alive) and accounts.claim(dead)
    assert accounts.requeue_unfinished(5.0) == 0  # both fresh
    time.sleep(1.5)
    accounts.renew(alive)
    assert accounts.requeue_unfinished(1.0) == 1
    assert status_of(accounts, alive) == "building" and status_of(accounts, dead) == "queued"


def test_a_progress_entry_changes_the_live_stamp(tmp_path: Path) -> None:
    accounts = Accounts(Store(f"sqlite:///{tmp_path / 'stamp.db'}"))
    ann = accounts.add_user("ann").id
    (sub,) = queue_of(accounts, ann, 1)
    assert accounts.claim(sub)
    before = accounts.activity()
    accounts.add_progress(sub, {"game": "five", "number": 1, "seat": 0, "score": 1.0,
                                "place": 1, "faults": []})
    assert accounts.activity() != before
    found = accounts.submission(sub)
    assert found is not None and [e["number"] for e in found.progress or []] == [1]


def test_checker_flags_are_validated_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_bots import run

    db = f"sqlite:///{tmp_path / 'flags.db'}"
    for flags, said in ((["--checkers", "0"], "--checkers must be from 1 to 64"),
                        (["--checkers", "65"], "--checkers must be from 1 to 64"),
                        (["--build-time", "0"], "--build-time must be"),
                        (["--check-time", "-1"], "--check-time must be")):
        status, _, err = run(capsys, "serve", "--db", db, "--port", "0", *flags)
        assert status != 0 and said in err, err
        assert len(err.strip().splitlines()) == 1, err
