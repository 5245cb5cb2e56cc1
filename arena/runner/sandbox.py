"""How a bot process is confined: the command line that starts it, its
environment, its private directory and its resource limits.

Two kinds, chosen once per run by :func:`resolve` (``--sandbox auto|bwrap|none``):

``bwrap``
    bubblewrap gives every bot process its own user, PID, network, IPC and UTS
    namespaces; the system directories and its program's installation
    read-only; a private read-only copy of the bot's own files at ``/bot``
    (:class:`BotFiles`), made for each process, so that nothing it does to
    their page cache reaches a later process; ``/proc`` without the machine's
    counters (:mod:`arena.runner.procfs`); a private, empty, writable ``/tmp``
    (its ``$HOME`` and working directory, a size-capped tmpfs that disappears
    with the process); nothing else of the host: not the organiser's working
    directory, not the database, not other bots' files or processes.  ``--die-with-parent`` kills
    the bot when the arena dies, even by SIGKILL, and killing bwrap tears down
    the whole PID namespace, so no child (setsid, double fork) survives.
    When the arena runs as root the bot runs as ``nobody`` inside its own user
    namespace, so process limits apply (the kernel exempts root).
``none``
    No namespaces: the bot runs as the organiser's user and can read what the
    organiser can.  The limits, the private directory and the cleared
    environment still apply; children are found and killed by a marker in
    their environment.

Resource limits (:class:`Limits`) are applied by ``prlimit`` in the exec chain,
never by a ``preexec_fn``.  This module only builds command lines and
descriptions; :mod:`arena.runner.process` starts and kills the processes.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.metadata
import importlib.util
import json
import os
import secrets
import shutil
import site
import stat
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

from arena.runner import cgroups, procfs, seccomp
from arena.runner.cgroups import BotGroup, join_argv

SandboxKind = Literal["bwrap", "none"]
SANDBOX_CHOICES = ("auto", "bwrap", "none")

#: The environment a bot gets, besides $HOME and $TMPDIR (its private directory).
BOT_PATH = "/usr/local/bin:/usr/bin:/bin"
BOT_ENV = {"PATH": BOT_PATH, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
#: Marks every process of one bot (``none`` sandbox), so strays can be found.
MARKER_VAR = "FIVE_ARENA_BOT"
#: Where the private directory is mounted inside bubblewrap.
BWRAP_HOME = "/tmp"
#: Outside bubblewrap, a bot's HOME and TMPDIR: ``arena-bot-<its arena's owner tag>-*``
#: in the temporary folder (:func:`_make_scratch`).
SCRATCH_PREFIX = "arena-bot-"
#: Where a bot's own files are copied inside bubblewrap, afresh for each process.
BOT_DIR = "/bot"
#: Where the arena's Python finds a copy of the packages installed in editable mode
#: (``protocol``, ``sample_bots``, ``arena`` of a checkout) inside bubblewrap.
PACKAGES_DIR = "/arena/python"
#: Skipped when a bot's folder is copied (as by the version fingerprint).
SKIPPED_NAMES = frozenset({".git", "__pycache__"})
#: An ad-hoc bot's folder larger than this is not copied: only the files its
#: command names are (with a hint to give the bot a folder of its own).
COPY_MAX_FILES = 2000
COPY_MAX_BYTES = 256 << 20
#: System directories mounted read-only inside bubblewrap (those that exist).
SYSTEM_DIRS = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Program names that mean "the arena's own Python" (so its packages are there).
PYTHON_NAMES = ("python", "python3", f"python3.{sys.version_info.minor}")
NOBODY = 65534
#: Suffixes of files that a bot command names (its script, a jar, a model).
FILE_SUFFIXES = frozenset({
    ".py", ".pyc", ".pyz", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua", ".sh",
    ".bash", ".jar", ".class", ".jl", ".r", ".exe", ".wasm", ".json", ".onnx", ".pt", ".pkl"})


class SandboxError(Exception):
    """The requested sandbox cannot run here; the message says what is missing."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of every bot process (each process of the bot's tree)."""

    #: Private writable memory (heap, anonymous mappings): RLIMIT_DATA, in MiB.
    memory_mb: int = 1024
    #: CPU seconds of one process over its whole match: RLIMIT_CPU, a backstop.
    cpu_seconds: int = 600
    #: Processes and threads of the bot: RLIMIT_NPROC (per sandbox under bwrap).
    processes: int = 64
    #: Open file descriptors: RLIMIT_NOFILE.
    open_files: int = 256
    #: Largest file it may write, and the size of its private tmpfs, in MiB.
    file_size_mb: int = 64

    @classmethod
    def parse(cls, pairs: Sequence[str]) -> Limits:
        """``["memory_mb=512", ...]`` (from ``--limit``) over the defaults."""
        known = {f.name for f in fields(cls)}
        values = asdict(cls())
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or key not in known:
                raise SandboxError(f"--limit {pair!r}: expected NAME=NUMBER with NAME one of "
                                   f"{', '.join(sorted(known))}")
            try:
                number = int(raw)
            except ValueError:
                raise SandboxError(f"--limit {key} takes a whole number, not {raw!r}") from None
            if not 1 <= number <= 1 << 20:
                raise SandboxError(f"--limit {key}={number} is out of range 1..{1 << 20}")
            values[key] = number
        return cls(**values)

    def prlimit_args(self, processes: int | None = None) -> list[str]:
        mib = 1 << 20
        return [f"--data={self.memory_mb * mib}", f"--cpu={self.cpu_seconds}",
                f"--nproc={processes or self.processes}", f"--nofile={self.open_files}",
                f"--fsize={self.file_size_mb * mib}", "--core=0"]

    def describe(self) -> str:
        return (f"memory {self.memory_mb} MiB, CPU {self.cpu_seconds} s, "
                f"{self.processes} processes, {self.open_files} files, "
                f"files up to {self.file_size_mb} MiB, no core dumps")


@dataclass(frozen=True)
class FileCopy:
    """A file that bubblewrap writes into the sandbox, from a descriptor opened
    when the bot starts: generated ``data`` bound read-only over ``dest``
    (``--ro-bind-data``), or a copy of host file ``source`` (``--file``)."""

    dest: str
    data: bytes | None = None
    source: str | None = None
    mode: int = 0o444

    def option(self) -> str:
        return "--ro-bind-data" if self.data is not None else "--file"

    def open(self) -> int:
        """A descriptor holding the file's bytes (the caller closes it)."""
        if self.data is not None:
            return _memfd("bwrap-data", self.data)
        assert self.source is not None
        return os.open(self.source, os.O_RDONLY | os.O_CLOEXEC)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True)
class Launch:
    """Everything :mod:`arena.runner.process` needs to start one confined bot.

    Start it with the command line of :meth:`command` (never ``argv`` alone),
    and :meth:`release` it when it has ended."""

    #: The program and what follows bwrap's own options (the exec chain, the bot).
    argv: list[str]
    env: dict[str, str]
    cwd: str
    #: A host directory to delete when the process ends (``none`` sandbox).
    scratch: str | None
    #: The value of :data:`MARKER_VAR` in every process of this bot.
    marker: str
    #: The bot's cgroup, made for it (the exec chain moves the bot into it).
    cgroup: BotGroup | None = None
    #: bwrap's own options, passed NUL-separated through a descriptor
    #: (``--args``), so ``/proc/1/cmdline`` inside shows none of them; a
    #: :class:`FileCopy` becomes the options that write that file.
    options: tuple[str | FileCopy, ...] = ()
    #: The bot's niceness (``nice -n``) above the arena's, 0: as the arena's.
    nice: int = 0
    #: The seccomp filter bubblewrap loads before it runs the bot (a BPF program).
    seccomp: bytes = b""

    @contextlib.contextmanager
    def command(self) -> Iterator[tuple[list[str], tuple[int, ...]]]:
        """The command line to start, and the descriptors it must inherit
        (``pass_fds``); they are closed when the block ends."""
        argv, fds = list(self.argv), []
        try:
            words: list[bytes] = []
            for item in self.options:
                if isinstance(item, FileCopy):
                    fds.append(item.open())
                    words += [b"--perms", b"%04o" % item.mode, item.option().encode(),
                              str(fds[-1]).encode(), os.fsencode(item.dest)]
                else:
                    words.append(os.fsencode(item))
            options = b"".join(word + b"\0" for word in words)
            for option, data in (("--seccomp", self.seccomp), ("--args", options)):
                if data:
                    fds.append(_memfd(f"bwrap{option}", data))
                    argv[1:1] = [option, str(fds[-1])]
            if self.cgroup is not None:
                argv = join_argv(self.cgroup, argv)
            if self.nice:
                argv = ["nice", "-n", str(self.nice), *argv]
            yield argv, tuple(fds)
        finally:
            for fd in fds:
                os.close(fd)

    def release(self, patience: float = 5.0) -> None:
        """Kill what is left in the bot's cgroup and remove it; delete its
        private directory.  Blocks up to ``patience`` seconds until the cgroup
        is gone (killed processes take a moment to leave it); async callers
        wait for that themselves and pass 0 (see
        :meth:`arena.runner.process.BotProcess.aclose`)."""
        deadline = time.monotonic() + patience
        while self.cgroup is not None:
            self.cgroup.kill()
            if self.cgroup.remove() or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


@dataclass(frozen=True)
class Sandbox:
    """A resolved sandbox: its kind, limits and the paths no bot may see."""

    kind: SandboxKind
    limits: Limits = field(default_factory=Limits)
    #: Host paths never shown to a bot, by resolved identity, even inside a
    #: folder it may read: the database and its journals, the bot store,
    #: report folders.  A folder that holds one is shown without it.
    hidden: tuple[str, ...] = ()
    #: Organiser's environment variables passed through (``--pass-env``).
    pass_env: tuple[str, ...] = ()
    #: Each bot in a cgroup of its own (memory, processes and CPU time per bot).
    cgroup: bool = False
    #: Bots run this much nicer than the arena (0 to 19), e.g. a server's checks,
    #: so the server's pages come first.
    nice: int = 0
    #: Each bubblewrap-confined process reads a private copy of its own files
    #: (:class:`BotFiles`); False binds them read-only at the same place
    #: instead, their page cache shared with later processes (a baseline for
    #: ``bench/bot_copy_cost.py`` and the tests' controls).
    private_copy: bool = True

    def describe(self) -> str:
        """What protects the other players from a bot, in one line."""
        if self.kind == "bwrap":
            where = ("bubblewrap sandbox (own user, PID, network, IPC and UTS namespaces; "
                     "read-only system files; a private read-only copy of the bot's own "
                     "files for each process" + ("" if self.private_copy else " (NOT made)")
                     + "; no machine-wide counters in /proc; private /tmp; no view of the "
                     "organiser's files, the database or other processes)")
        else:
            where = ("NO sandbox (bots run as the organiser's user: they can read the "
                     "organiser's files and the database, see other processes and use the "
                     "network); private temporary directory")
        found = cgroups.host()
        if self.cgroup and found is not None:
            account = (f"{found.describe()} per bot: memory {self.limits.memory_mb} MiB "
                       f"(shared memory and /tmp included), {self.limits.processes} "
                       f"processes, CPU time of every process")
        else:
            account = (f"cgroup MISSING ({cgroups.problem() or 'not requested'}): "
                       f"limits per process")
        return f"{where}; cleared environment; {account}; limits: {self.limits.describe()}"

    def launch(self, argv: Sequence[str], scratch_root: str | None = None,
               directory: str | None = None, *, writable: bool = False,
               stdout_fd: int | None = None) -> Launch:
        """The command line, environment and directory that start ``argv``; with a
        ``directory`` (a stored bot's), the bot starts there and sees it
        read-only (``writable``: read-write, for its build), and no other file
        its command names.  ``stdout_fd``: the bot's stdout is this descriptor
        of the starting process (inherited), not its fd 1, so that only the bot
        holds it (under bubblewrap its own processes keep fds 0-2 open).
        The caller must :meth:`Launch.release` the result."""
        by_path = os.sep in argv[0] if argv else False
        if directory is not None:
            directory = os.path.realpath(directory)
            argv = in_directory(argv, directory)
        argv = resolve_argv(argv)
        marker = secrets.token_hex(8)
        env = {**BOT_ENV, MARKER_VAR: marker}
        env.update({k: os.environ[k] for k in self.pass_env if k in os.environ})
        group = self._make_cgroup()
        try:
            if self.kind == "bwrap":
                env.update(HOME=BWRAP_HOME, TMPDIR=BWRAP_HOME)
                if is_arena_python(argv) and editable_packages():
                    env["PYTHONPATH"] = PACKAGES_DIR
                options, chain = self._bwrap_argv(argv, env, directory, writable, stdout_fd,
                                                  by_path)
                return Launch(["bwrap", *chain], env, "/", None, marker, group,
                              tuple(options), self.nice, _seccomp_program())
            scratch = _make_scratch(scratch_root)
            env.update(HOME=scratch, TMPDIR=scratch)
            processes = self.limits.processes + _processes_of_user()
            wrapped = ["setpriv", "--pdeathsig", "KILL", "--",
                       "prlimit", *self.limits.prlimit_args(processes), "--",
                       *_redirect(stdout_fd), *argv]
            return Launch(wrapped, env, directory or scratch, scratch, marker, group,
                          nice=self.nice)
        except BaseException:
            if group is not None:
                group.remove()
            raise

    def _make_cgroup(self) -> cgroups.BotGroup | None:
        if not self.cgroup:
            return None
        # bubblewrap's own two processes (outside and PID 1) are in the group too.
        extra = 2 if self.kind == "bwrap" else 0
        try:
            return cgroups.make(self.limits.memory_mb << 20, self.limits.processes + extra)
        except cgroups.CgroupError as exc:
            raise SandboxError(str(exc)) from None

    def _bwrap_argv(self, argv: list[str], env: Mapping[str, str], directory: str | None,
                    writable: bool, stdout_fd: int | None, by_path: bool
                    ) -> tuple[list[str | FileCopy], list[str]]:
        """bwrap's options, and the exec chain after them."""
        out: list[str | FileCopy] = [
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
        for key, value in env.items():
            out += ["--setenv", key, value]
        out += _system_mounts()
        out += ["--proc", "/proc", *_proc_masks(self.limits.memory_mb), "--dev", "/dev",
                "--size", str(self.limits.file_size_mb << 20), "--perms", "1777",
                "--tmpfs", BWRAP_HOME]
        hidden = Hidden.of(self.hidden)
        made: set[str] = set()
        if writable and directory is not None:
            # A build writes its version: the stored directory itself, where it is.
            shared = program_paths(argv, directory)
            out += _program_mounts(shared, hidden, made)
            out += [*_ancestor_dirs(directory, made), "--bind", directory, directory]
            cwd = directory
        else:
            files = BotFiles.of(argv, directory, hidden, by_path=by_path)
            shared = list(files.shared)
            # After the private /tmp, so a program kept under /tmp stays visible.
            out += _program_mounts(shared, hidden, made)
            out += files.copy_options() if self.private_copy else files.bind_options(hidden)
            argv = files.inside(argv)
            cwd = BOT_DIR if directory is not None else BWRAP_HOME
        if is_arena_python(argv):  # after the installation's binds, which it masks in
            out += _packages_mounts()
        # Once: bubblewrap warns on stderr ("Only the last --chdir ...") when given twice.
        out += ["--chdir", cwd]
        chain = [*_redirect(stdout_fd), *argv]
        if os.geteuid() == 0:
            _check_world_readable(shared)
            # The kernel exempts root from RLIMIT_NPROC: become nobody, in a user
            # namespace of its own, before the limits are set.
            out += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
            return out, ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                         "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                         "unshare", "--user", "--", "prlimit", *self.limits.prlimit_args(),
                         "--", *chain]
        out += ["--unshare-user", "--disable-userns"]
        return out, ["prlimit", *self.limits.prlimit_args(), "--", *chain]


def _proc_masks(memory_mb: int) -> list[str | FileCopy]:
    """bwrap options covering /proc's machine-wide counters (:mod:`procfs`)."""
    out: list[str | FileCopy] = []
    for mask in procfs.masks(memory_mb):
        if mask.data is None:
            out += ["--perms", "0555", "--tmpfs", mask.path, "--remount-ro", mask.path]
        else:
            out.append(FileCopy(mask.path, data=mask.data))
    return out


def _seccomp_program() -> bytes:
    try:
        return seccomp.program()
    except seccomp.SeccompError as exc:
        raise SandboxError(str(exc)) from None


def _redirect(stdout_fd: int | None) -> list[str]:
    """The exec step that makes ``stdout_fd`` the bot's stdout (and closes it)."""
    if stdout_fd is None:
        return []
    if stdout_fd < 10:
        return ["/bin/sh", "-c", f'exec "$@" >&{stdout_fd} {stdout_fd}>&-', "sh"]
    # dash knows only fds 0-9; bash sets SHLVL in what it execs.
    return ["/bin/bash", "-c", f'exec env -u SHLVL "$@" >&{stdout_fd} {stdout_fd}>&-', "sh"]


def resolve(choice: str, limits: Limits | None = None, hidden: Iterable[str] = (),
            pass_env: Iterable[str] = ()) -> Sandbox:
    """The sandbox for ``--sandbox choice``: ``auto`` is bwrap when it works here,
    else ``none``; ``bwrap`` raises :class:`SandboxError` if it does not work.
    Bots get cgroups wherever one can be made here (:func:`cgroups.problem`)."""
    if choice not in SANDBOX_CHOICES:
        raise SandboxError(f"--sandbox {choice!r}: choose one of {', '.join(SANDBOX_CHOICES)}")
    missing = [tool for tool in ("prlimit", "setpriv") if shutil.which(tool) is None]
    if missing:
        raise SandboxError(f"{' and '.join(missing)} not found: install util-linux "
                           f"(apt-get install util-linux)")
    kind: SandboxKind = "none"
    if choice != "none":
        problem = bwrap_problem()
        if problem is None:
            kind = "bwrap"
        elif choice == "bwrap":
            raise SandboxError(f"--sandbox bwrap: {problem}")
    return Sandbox(kind, limits or Limits(), tuple(hidden), tuple(pass_env),
                   cgroups.problem() is None)


_BWRAP_PROBLEM: list[str | None] = []


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot confine bots here, or None when it can (cached)."""
    if not _BWRAP_PROBLEM:
        _BWRAP_PROBLEM.append(_probe_bwrap())
    return _BWRAP_PROBLEM[0]


def _probe_bwrap() -> str | None:
    import subprocess

    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    try:
        probe = Sandbox("bwrap").launch(["true"])
    except SandboxError as exc:
        return str(exc)
    try:
        with probe.command() as (argv, fds):
            done = subprocess.run(argv, env=probe.env, cwd=probe.cwd, capture_output=True,
                                  timeout=20, check=False, pass_fds=fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start: {exc}"
    finally:
        probe.release()
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return ("bubblewrap cannot create namespaces here"
                f" ({detail[-1] if detail else f'exit {done.returncode}'})")
    return None


# -- what a bot may see -------------------------------------------------------------

def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with the program made absolute (looked up on the organiser's PATH;
    ``python``/``python3`` mean the arena's own interpreter) and every argument
    that names an existing file made its resolved real path, since the bot
    starts elsewhere and sees only real paths."""
    if not argv:
        raise SandboxError("empty bot command")
    program = argv[0]
    if program in PYTHON_NAMES:
        program = sys.executable
    else:
        found = shutil.which(program)
        program = os.path.abspath(found) if found else program
    files = set(named_files(argv))
    return [program, *(os.path.realpath(w) if w in files else w for w in argv[1:])]


def path_arguments(argv: Sequence[str]) -> Iterator[str]:
    """The arguments after the program that look like files: they contain a path
    separator or end in one of :data:`FILE_SUFFIXES` (each must exist: see
    :func:`named_files` for what is mounted).  Options, ``KEY=VALUE``, URLs and
    the word after ``-m``/``-c``/``-e`` (a module or code) are not files."""
    for word in _words(argv):
        if os.sep in word or Path(word).suffix.lower() in FILE_SUFFIXES:
            yield word


def named_files(argv: Sequence[str], base: str = "") -> Iterator[str]:
    """The arguments after the program that name an existing file or folder
    (relative to ``base``, default the working directory), whatever their
    suffix (``weights.bin``)."""
    for word in _words(argv):
        if os.path.exists(os.path.join(base, word)):
            yield word


def _words(argv: Sequence[str]) -> Iterator[str]:
    words = iter(argv[1:])
    for word in words:
        if word in ("-m", "-c", "-e"):
            next(words, None)
        elif word and not (word.startswith("-") or "=" in word or "://" in word):
            yield word


def program_paths(argv: Sequence[str], directory: str | None = None) -> list[str]:
    """Host paths a bot needs read-only: its program (the arena's Python: its
    installation) and the files its command names (for ``python -m pkg``, that
    package's project).
    A stored bot (``directory``) gets no named file outside its directory."""
    program = os.path.realpath(argv[0])
    paths: list[str] = []
    if is_arena_python(argv):
        paths += python_installation()
        paths += _outside_packages(argv)
    elif not under_system(program) and (directory is None or _contains(directory, program)):
        paths.append(program)  # and so its folder, never the folder above it
    named = [os.path.realpath(word) for word in named_files(argv)]
    paths += [p for p in named if directory is None or _contains(directory, p)]
    return paths


@dataclass(frozen=True)
class BotFiles:
    """What a bot process reads, split in two.  ``shared``: host paths bound
    read-only where they are (the arena's Python installation, a program found
    on PATH); ``own``: the bot's own files, as (host path, path under
    :data:`BOT_DIR`), copied into a private read-only tmpfs for each process,
    so that the pages one process evicts or warms belong to files no later
    process reads, and no host path of them shows in its mount table."""

    shared: tuple[str, ...]
    own: tuple[tuple[str, str], ...]
    #: The files to copy, as they are written (found once per folder and run).
    entries: tuple[CopyEntry, ...] = ()

    @classmethod
    def of(cls, argv: Sequence[str], directory: str | None, hidden: Hidden, *,
           by_path: bool) -> BotFiles:
        """The files of resolved ``argv``: a stored bot's (``directory``) are its
        directory; an ad-hoc bot's are its program when given by path and each
        existing file its command names, each with its folder unless that
        folder holds the organiser's working directory or is too large
        (:data:`COPY_MAX_FILES`, :data:`COPY_MAX_BYTES`): then the named files
        alone, and a hint on stderr, once per command."""
        shared = _shared_paths(argv, by_path=by_path and directory is None)
        if directory is not None:
            own = [(directory, BOT_DIR)]
        else:
            own = _adhoc_own(argv, shared, hidden, by_path=by_path)
        # A stored version lies in the bot store, which is hidden: it is all the bot's.
        within = hidden if directory is None else Hidden((), frozenset())
        entries: list[CopyEntry] = []
        for host, inside in own:
            entries += _entries(host, inside, within)
        return cls(tuple(shared), tuple(own), tuple(entries))

    def copy_options(self) -> list[str | FileCopy]:
        """bwrap options writing the copies, then making them read-only."""
        if not self.own:
            return []
        out: list[str | FileCopy] = ["--perms", "0755", "--tmpfs", BOT_DIR]
        for entry in self.entries:
            if entry.link is not None:
                out += ["--symlink", entry.link, entry.dest]
            elif entry.source is None:
                out += ["--perms", "0755", "--dir", entry.dest]
            else:
                out.append(FileCopy(entry.dest, source=entry.source, mode=entry.mode))
        return [*out, "--remount-ro", BOT_DIR]

    def bind_options(self, hidden: Hidden) -> list[str | FileCopy]:
        """bwrap options binding the files read-only where the copies would be,
        uncopied (a folder holding something hidden is copied all the same)."""
        # Made world-traversable first: bwrap would copy the mode of the source's parent.
        out: list[str | FileCopy] = ["--perms", "0755", "--dir", BOT_DIR] if self.own else []
        for host, inside in self.own:
            if os.path.isdir(host) and hidden.inside(host):
                return self.copy_options()
            out += ["--ro-bind", host, inside]
        return out

    def inside(self, argv: Sequence[str]) -> list[str]:
        """``argv`` with every path of the bot's own files as the bot sees it."""
        def moved(word: str) -> str:
            real = os.path.realpath(word) if os.path.isabs(word) else word
            for host, inside in self.own:
                if _contains(host, real):
                    return inside + real[len(host):]
            return word

        return [moved(word) for word in argv]


@dataclass(frozen=True)
class CopyEntry:
    """One item of a copy: a folder (``source`` and ``link`` None), a
    symbolic link (``link``: its target, as written) or a file (``source``)."""

    dest: str
    source: str | None = None
    link: str | None = None
    mode: int = 0o444


def _shared_paths(argv: Sequence[str], *, by_path: bool) -> list[str]:
    """Host paths every process of the bot reads where they are: the arena's
    Python (its installation, a ``-m`` package), or a program found on PATH
    (not given ``by_path``) outside the system directories."""
    if is_arena_python(argv):
        return list(python_installation()) + _outside_packages(argv)
    program = os.path.realpath(argv[0])
    return [] if by_path or under_system(program) else [program]


def is_arena_python(argv: Sequence[str]) -> bool:
    """Whether resolved ``argv`` runs the arena's own Python."""
    return argv[0] == sys.executable or os.path.realpath(argv[0]) == os.path.realpath(
        sys.executable)


def _outside_packages(argv: Sequence[str]) -> list[str]:
    """Where ``python -m module`` finds its package, unless it is an editable one
    (those are at :data:`PACKAGES_DIR`)."""
    if "-m" not in argv[:-1]:
        return []
    editable = [folder for _, folder in editable_packages()]
    return [path for path in module_paths(argv[argv.index("-m") + 1])
            if not any(_contains(folder, os.path.realpath(path)) for folder in editable)]


def _adhoc_own(argv: Sequence[str], shared: Sequence[str], hidden: Hidden, *,
               by_path: bool) -> list[tuple[str, str]]:
    """An ad-hoc bot's own files or folders, each with its path under BOT_DIR."""
    cwd = os.path.realpath(os.getcwd())
    program = os.path.realpath(argv[0])
    candidates = [program] if by_path else []
    candidates += [os.path.realpath(word) for word in named_files(argv)]
    items: list[str] = []
    alone: list[str] = []
    for path in candidates:
        if (under_system(path) or hidden.covers(path) or not os.path.exists(path)
                or any(_contains(p, path) for p in shared)):
            continue
        folder = os.path.dirname(path) if os.path.isfile(path) else path
        if _contains(folder, cwd) or _too_large(folder, hidden):
            if folder != path:  # a named folder of that kind is not shown at all
                items.append(path)
                alone.append(path)
        else:
            items.append(folder)
    if alone:
        _hint(argv, alone)
    own: list[tuple[str, str]] = []
    taken: set[str] = set()
    for path in sorted(set(items), key=len):
        if any(_contains(done, path) for done, _ in own):
            continue
        name = os.path.basename(path) or "root"
        inside, n = f"{BOT_DIR}/{name}", 1
        while inside in taken:
            n += 1
            inside = f"{BOT_DIR}/{name}-{n}"
        taken.add(inside)
        own.append((path, inside))
    return own


_HINTED: set[tuple[str, ...]] = set()


def _hint(argv: Sequence[str], alone: Sequence[str]) -> None:
    """Say once per command that its bot sees only the files it names."""
    if tuple(argv) in _HINTED:
        return
    _HINTED.add(tuple(argv))
    names = ", ".join(os.path.basename(p) for p in alone)
    print(f"arena: note: bot {os.path.basename(argv[0])} {names}: its folder holds the "
          f"working directory (or is too large), so it sees only {names}; give the bot a "
          f"folder of its own (python mybot/bot.py) if it needs more", file=sys.stderr)


def _too_large(folder: str, hidden: Hidden) -> bool:
    files, size = 0, 0
    for entry in _entries(folder, BOT_DIR, hidden):
        if entry.source is not None:
            files += 1
            size += os.path.getsize(entry.source)
            if files > COPY_MAX_FILES or size > COPY_MAX_BYTES:
                return True
    return False


@functools.lru_cache(maxsize=256)
def _entries(host: str, inside: str, hidden: Hidden) -> tuple[CopyEntry, ...]:
    """What copying ``host`` (a file or folder) to ``inside`` writes: its
    folders, files and symbolic links, less hidden ones, :data:`SKIPPED_NAMES`
    and special files.  Found once per run (a stored version never changes)."""
    if os.path.isfile(host):
        return (CopyEntry(inside, host, mode=_mode(host)),)
    out = [CopyEntry(inside)] if inside != BOT_DIR else []
    for root, dirs, names in os.walk(host):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_NAMES)
        where = inside + root[len(host):]
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                out.append(CopyEntry(f"{where}/{name}", link=os.readlink(path)))
            elif not hidden.covers(path):
                out.append(CopyEntry(f"{where}/{name}"))
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))
                   and not hidden.covers(os.path.join(root, d))]
        for name in sorted(names):
            path = os.path.join(root, name)
            if name in SKIPPED_NAMES or hidden.covers(path):
                continue
            if os.path.islink(path):
                out.append(CopyEntry(f"{where}/{name}", link=os.readlink(path)))
            elif os.path.isfile(path):
                out.append(CopyEntry(f"{where}/{name}", path, mode=_mode(path)))
    return tuple(out)


def _mode(path: str) -> int:
    """Read-only, executable where the original is."""
    return 0o555 if os.stat(path).st_mode & stat.S_IXUSR else 0o444


@functools.cache
def python_installation() -> tuple[str, ...]:
    """The arena interpreter's installation: prefixes, site-packages and the
    source folders of packages installed in editable mode (found once)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    paths.update(site.getsitepackages())
    return tuple(sorted(p for p in paths if os.path.exists(p)))


@functools.cache
def editable_packages() -> tuple[tuple[str, str], ...]:
    """The packages installed in editable mode (the arena's own, in a checkout),
    as (name, source folder): a bot's Python imports them from a copy at
    :data:`PACKAGES_DIR`, never from the organiser's checkout."""
    found: dict[str, str] = {}
    for folder in _editable_package_dirs():  # the last: where this process imports it
        found[os.path.basename(folder)] = os.path.realpath(folder)
    return tuple(sorted(found.items()))


@functools.cache
def packages_copy() -> tuple[str, str]:
    """A private copy, made once per arena process, of :func:`editable_packages`
    (their compiled ``__pycache__`` kept, still valid since times are kept),
    world-readable, deleted when the process exits: its folder, bound at
    :data:`PACKAGES_DIR` so that no bot's mount table shows the checkout's
    path, and an empty file bound over :func:`editable_traces`."""
    _remove_orphan_copies()
    root = tempfile.mkdtemp(prefix=f"{COPY_PREFIX}{os.getpid()}-")
    atexit.register(shutil.rmtree, root, True)
    packages, empty = os.path.join(root, "packages"), os.path.join(root, "empty")
    for name, source in editable_packages():
        shutil.copytree(source, os.path.join(packages, name), symlinks=True,
                        ignore=shutil.ignore_patterns(".*", "*.part", "*.old"))
    Path(empty).touch()
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)
    return packages, empty


#: The name of :func:`packages_copy`'s folder, then its process id and a dash.
COPY_PREFIX = "arena-python-"


def _remove_orphan_copies() -> None:
    """Delete the package copies of this user's arena processes that ended
    without their exit handler (killed): found by the process id in the name."""
    for folder in Path(tempfile.gettempdir()).glob(f"{COPY_PREFIX}*-*"):
        pid = folder.name[len(COPY_PREFIX):].split("-", 1)[0]
        with contextlib.suppress(OSError):
            if (pid.isdigit() and folder.lstat().st_uid == os.getuid()
                    and stat.S_ISDIR(folder.lstat().st_mode) and process_gone(int(pid))):
                shutil.rmtree(folder, ignore_errors=True)


def process_gone(pid: int) -> bool:
    """Whether no process of this machine has id ``pid`` (one of another user
    exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


@functools.cache
def editable_traces() -> tuple[str, ...]:
    """The files of the installation that name the editable packages' folders
    (their ``.pth`` hooks and finders, their ``direct_url.json``): masked empty
    in the sandbox, whose Python imports those packages from :data:`PACKAGES_DIR`."""
    out: list[str] = []
    for folder in site.getsitepackages():
        for pattern in ("__editable__*", "__pycache__/__editable__*", "*.egg-link",
                        "*.dist-info/direct_url.json"):
            out += [str(path) for path in Path(folder).glob(pattern)
                    if path.is_file() and (not path.name.endswith(".json")
                                           or b'"editable": true' in path.read_bytes())]
    return tuple(sorted(out))


def _packages_mounts() -> list[str]:
    """bwrap options showing the arena's editable packages at :data:`PACKAGES_DIR`
    (a copy) and nothing that names where they are on the host."""
    if not editable_packages():
        return []
    packages, empty = packages_copy()
    out = [*_ancestor_dirs(PACKAGES_DIR), "--ro-bind", packages, PACKAGES_DIR]
    for trace in editable_traces():
        out += ["--ro-bind", empty, trace]
    return out


@functools.cache
def module_paths(module: str) -> tuple[str, ...]:
    """Where ``python -m module`` finds its top-level package."""
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return ()
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        return tuple(spec.submodule_search_locations)
    return (spec.origin,) if spec.origin else ()


def _editable_package_dirs() -> list[str]:
    """Source folders of the packages installed in editable mode, where the
    installation says they are (PEP 610's direct_url.json), and where this
    process imports them from (a checkout may shadow the installation)."""
    dirs: list[str] = []
    owners = importlib.metadata.packages_distributions()
    projects: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        try:
            url = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        if url.get("dir_info", {}).get("editable") and url.get("url", "").startswith("file://"):
            projects[dist.metadata["Name"]] = urllib.parse.unquote(url["url"][len("file://"):])
    for top, dists in owners.items():
        for name in set(dists) & set(projects):
            dirs += [os.path.join(projects[name], where, top) for where in ("", "src")
                     if os.path.isdir(os.path.join(projects[name], where, top))]
            dirs += module_paths(top)
    return dirs


def under_system(path: str) -> bool:
    """Whether ``path`` is in the system directories every bot sees read-only."""
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


def _system_mounts() -> list[str]:
    out: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    return out


@dataclass(frozen=True)
class Hidden:
    """What no bot may see, as resolved real paths and (device, inode) pairs."""

    paths: tuple[str, ...]
    identities: frozenset[tuple[int, int]]

    @classmethod
    def of(cls, paths: Iterable[str]) -> Hidden:
        real = tuple(sorted({os.path.realpath(p) for p in paths}))
        ids = set()
        for path in real:
            with contextlib.suppress(OSError):
                info = os.stat(path)
                ids.add((info.st_dev, info.st_ino))
        return cls(real, frozenset(ids))

    def covers(self, path: str) -> bool:
        """Whether ``path`` (real) is hidden, or inside something hidden."""
        if any(_contains(h, path) for h in self.paths):
            return True
        try:
            info = os.stat(path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) in self.identities

    def inside(self, folder: str) -> bool:
        """Whether something hidden lies inside ``folder`` (real)."""
        return any(_contains(folder, h) and h != folder for h in self.paths)


def _program_mounts(paths: Iterable[str], hidden: Hidden, made: set[str]) -> list[str]:
    """Read-only binds for ``paths`` (and, for a file, its folder), from their
    resolved real paths, each ancestor created world-traversable (bwrap would
    copy a 0700 ancestor's mode, e.g. /root's).  Nothing hidden is bound: a
    folder holding something hidden is rebuilt from its other entries, and a
    folder holding the organiser's working directory is not bound at all
    (only the files named in it are)."""
    cwd = os.path.realpath(os.getcwd())
    binds: list[str] = []
    for path in map(os.path.realpath, paths):
        if under_system(path) or hidden.covers(path) or not os.path.exists(path):
            continue
        folder = os.path.dirname(path) if os.path.isfile(path) else path
        if _contains(folder, cwd) and folder != cwd:
            if folder != path:
                binds.append(path)
            continue
        binds.append(folder)
    out: list[str] = []
    bound: list[str] = []
    for path in sorted(set(binds), key=len):
        if any(_contains(done, path) for done in bound):
            continue
        out += _bind_without(path, hidden, made)
        bound.append(path)
    return out


def _bind_without(path: str, hidden: Hidden, made: set[str]) -> list[str]:
    """A read-only bind of ``path``; of a folder holding something hidden, its
    entries one by one (a symlink as a symlink), less the hidden ones, so that
    a file added to it later stays out of sight too."""
    out = _ancestor_dirs(path, made)
    if not (os.path.isdir(path) and hidden.inside(path)):
        return [*out, "--ro-bind", path, path]
    out += ["--perms", "0755", "--dir", path]
    made.add(path)
    with os.scandir(path) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_symlink():
                out += ["--symlink", os.readlink(entry.path), entry.path]
            elif not hidden.covers(entry.path):
                out += _bind_without(entry.path, hidden, made)
    return out


def _ancestor_dirs(path: str, made: set[str] | None = None) -> list[str]:
    """bwrap options creating ``path``'s ancestors world-traversable (those not in
    ``made``, which is updated)."""
    out: list[str] = []
    for ancestor in _ancestors(path):
        if made is None or ancestor not in made:
            out += ["--perms", "0755", "--dir", ancestor]
            if made is not None:
                made.add(ancestor)
    return out


def in_directory(argv: Sequence[str], directory: str) -> list[str]:
    """``argv`` of a command run in ``directory``: its relative program path
    (``./bot``) and the relative files it names made absolute in ``directory``."""
    def there(word: str) -> str:
        path = os.path.join(directory, word)
        return path if not os.path.isabs(word) and os.path.exists(path) else word

    program = argv[0]
    if os.sep in program:
        program = there(program)
    files = set(path_arguments(argv))
    return [program, *(there(w) if w in files else w for w in argv[1:])]


def _check_world_readable(paths: Iterable[str]) -> None:
    """Under root the bot runs as nobody: say so before it fails obscurely."""
    for path in paths:
        if under_system(path) or not os.path.exists(path):
            continue
        need = stat.S_IROTH | (stat.S_IXOTH if os.path.isdir(path) else 0)
        if os.stat(path).st_mode & need != need:
            raise SandboxError(f"{path} is not readable by the sandbox's user 'nobody' (the "
                               f"arena runs as root): chmod o+rX it, or run as another user")


def _contains(folder: str, path: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/")


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _make_scratch(root: str | None) -> str:
    """A private folder for a bot outside bubblewrap (its HOME and TMPDIR), named
    after this arena so that another can tell when its arena died without
    removing it (a second Ctrl-C, ``kill -9``)."""
    _remove_stale_scratch(root)
    return tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{cgroups.owner_tag(os.getpid())}-",
                            dir=root)


@functools.cache
def _remove_stale_scratch(root: str | None) -> None:
    """Remove the bots' private folders under ``root`` (default: the temporary
    folder) whose arena died, once per process and folder."""
    for name in _scratch_names(root):
        if cgroups.owner_dead(name.removeprefix(SCRATCH_PREFIX)):
            shutil.rmtree(os.path.join(root or tempfile.gettempdir(), name), ignore_errors=True)


def remove_own_scratch(root: str | None = None) -> None:
    """Remove this arena's bots' private folders under ``root`` at once (for an
    exit that cannot wait for each bot to be ended and released)."""
    mine = f"{SCRATCH_PREFIX}{cgroups.owner_tag(os.getpid())}-"
    for name in _scratch_names(root):
        if name.startswith(mine):
            shutil.rmtree(os.path.join(root or tempfile.gettempdir(), name), ignore_errors=True)


def _scratch_names(root: str | None) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(root or tempfile.gettempdir())
                if entry.name.startswith(SCRATCH_PREFIX)]
    except OSError:
        return []


def _processes_of_user() -> int:
    """Processes now owned by this user: RLIMIT_NPROC counts them all when
    there is no user namespace, so the ``none`` sandbox adds them."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                count += entry.stat().st_uid == uid
    return count
