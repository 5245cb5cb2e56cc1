"""How a bot process is confined: the command line that starts it, its
environment, its private directory and its resource limits.

Two kinds, chosen once per run by :func:`resolve` (``--sandbox auto|bwrap|none``):

``bwrap``
    bubblewrap gives every bot process its own user, PID, network, IPC and UTS
    namespaces; the system directories and the bot's own program files
    read-only; a private, empty, writable ``/tmp`` (its ``$HOME`` and working
    directory, a size-capped tmpfs that disappears with the process); nothing
    else of the host: not the organiser's working directory, not the
    database, not other bots' files or processes.  ``--die-with-parent`` kills
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
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

SandboxKind = Literal["bwrap", "none"]
SANDBOX_CHOICES = ("auto", "bwrap", "none")

#: The environment a bot gets, besides $HOME and $TMPDIR (its private directory).
BOT_PATH = "/usr/local/bin:/usr/bin:/bin"
BOT_ENV = {"PATH": BOT_PATH, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
#: Marks every process of one bot (``none`` sandbox), so strays can be found.
MARKER_VAR = "FIVE_ARENA_BOT"
#: Where the private directory is mounted inside bubblewrap.
BWRAP_HOME = "/tmp"
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
class Launch:
    """Everything :mod:`arena.runner.process` needs to start one confined bot."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    #: A host directory to delete when the process ends (``none`` sandbox).
    scratch: str | None
    #: The value of :data:`MARKER_VAR` in every process of this bot.
    marker: str


@dataclass(frozen=True)
class Sandbox:
    """A resolved sandbox: its kind, limits and the paths no bot may see."""

    kind: SandboxKind
    limits: Limits = field(default_factory=Limits)
    #: Host paths never exposed to a bot even inside a directory it may read
    #: (the database and its journal files).
    hidden: tuple[str, ...] = ()
    #: Organiser's environment variables passed through (``--pass-env``).
    pass_env: tuple[str, ...] = ()

    def describe(self) -> str:
        """What protects the other players from a bot, in one line."""
        if self.kind == "bwrap":
            where = ("bubblewrap sandbox (own user, PID, network, IPC and UTS namespaces; "
                     "read-only system and program files; private /tmp; no view of the "
                     "organiser's files, the database or other processes)")
        else:
            where = ("NO sandbox (bots run as the organiser's user: they can read the "
                     "organiser's files and the database, see other processes and use the "
                     "network); private temporary directory")
        return f"{where}; cleared environment; limits: {self.limits.describe()}"

    def launch(self, argv: Sequence[str], scratch_root: str | None = None,
               directory: str | None = None, *, writable: bool = False) -> Launch:
        """The command line, environment and directory that start ``argv``; with a
        ``directory`` (a stored bot's), the bot starts there and sees it
        read-only (``writable``: read-write, for its build)."""
        if directory is not None:
            directory = os.path.abspath(directory)
            argv = in_directory(argv, directory)
        argv = resolve_argv(argv)
        marker = secrets.token_hex(8)
        env = {**BOT_ENV, MARKER_VAR: marker}
        env.update({k: os.environ[k] for k in self.pass_env if k in os.environ})
        if self.kind == "bwrap":
            env.update(HOME=BWRAP_HOME, TMPDIR=BWRAP_HOME)
            out = self._bwrap_argv(argv, env, directory, writable)
            return Launch(out, env, "/", None, marker)
        scratch = _make_scratch(scratch_root)
        env.update(HOME=scratch, TMPDIR=scratch)
        processes = self.limits.processes + _processes_of_user()
        wrapped = ["setpriv", "--pdeathsig", "KILL", "--",
                   "prlimit", *self.limits.prlimit_args(processes), "--", *argv]
        return Launch(wrapped, env, directory or scratch, scratch, marker)

    def _bwrap_argv(self, argv: list[str], env: Mapping[str, str], directory: str | None,
                    writable: bool) -> list[str]:
        out = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
        for key, value in env.items():
            out += ["--setenv", key, value]
        out += _system_mounts()
        out += ["--proc", "/proc", "--dev", "/dev",
                "--size", str(self.limits.file_size_mb << 20), "--perms", "1777",
                "--tmpfs", BWRAP_HOME, "--chdir", BWRAP_HOME]
        # After the private /tmp, so a program kept under /tmp stays visible.
        paths = program_paths(argv)
        out += _program_mounts(paths, self.hidden)
        if directory is not None:
            # Last, so that it is exactly what the bot may (or, building, must) write.
            out += [*_ancestor_dirs(directory), "--bind" if writable else "--ro-bind",
                    directory, directory, "--chdir", directory]
        if os.geteuid() == 0:
            _check_world_readable(paths)
            # The kernel exempts root from RLIMIT_NPROC: become nobody, in a user
            # namespace of its own, before the limits are set.
            out += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                    "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                    "unshare", "--user", "--"]
        else:
            out += ["--unshare-user", "--disable-userns", "--"]
        return [*out, "prlimit", *self.limits.prlimit_args(), "--", *argv]


def resolve(choice: str, limits: Limits | None = None, hidden: Iterable[str] = (),
            pass_env: Iterable[str] = ()) -> Sandbox:
    """The sandbox for ``--sandbox choice``: ``auto`` is bwrap when it works here,
    else ``none``; ``bwrap`` raises :class:`SandboxError` if it does not work."""
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
    return Sandbox(kind, limits or Limits(), tuple(hidden), tuple(pass_env))


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
    probe = Sandbox("bwrap").launch(["true"])
    try:
        done = subprocess.run(probe.argv, env=probe.env, cwd=probe.cwd, capture_output=True,
                              timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return ("bubblewrap cannot create namespaces here"
                f" ({detail[-1] if detail else f'exit {done.returncode}'})")
    return None


# -- what a bot may see -------------------------------------------------------------

def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with the program made absolute (looked up on the organiser's PATH;
    ``python``/``python3`` mean the arena's own interpreter) and every argument
    that names an existing file made absolute, since the bot starts elsewhere."""
    if not argv:
        raise SandboxError("empty bot command")
    program = argv[0]
    if program in PYTHON_NAMES:
        program = sys.executable
    else:
        found = shutil.which(program)
        program = os.path.abspath(found) if found else program
    files = {word for word in path_arguments(argv) if os.path.exists(word)}
    return [program, *(os.path.abspath(w) if w in files else w for w in argv[1:])]


def path_arguments(argv: Sequence[str]) -> Iterator[str]:
    """The arguments after the program that look like files: they contain a path
    separator or end in one of :data:`FILE_SUFFIXES`.  Options, ``KEY=VALUE``,
    URLs and the word after ``-m``/``-c``/``-e`` (a module or code) are not files."""
    words = iter(argv[1:])
    for word in words:
        if word in ("-m", "-c", "-e"):
            next(words, None)
        elif not (word.startswith("-") or "=" in word or "://" in word) and (
                os.sep in word or Path(word).suffix.lower() in FILE_SUFFIXES):
            yield word


def program_paths(argv: Sequence[str]) -> list[str]:
    """Host paths a bot needs read-only: its program's installation and the
    files its command names (for ``python -m pkg``, that package's project)."""
    program = os.path.realpath(argv[0])
    paths: list[str] = []
    if os.path.realpath(sys.executable) == program or argv[0] == sys.executable:
        paths += python_installation()
        if "-m" in argv[:-1]:
            paths += module_paths(argv[argv.index("-m") + 1])
    elif not _under_system(program):
        parent = os.path.dirname(program)
        paths.append(os.path.dirname(parent) if os.path.basename(parent) == "bin" else parent)
    paths += [word for word in path_arguments(argv) if os.path.exists(word)]
    return paths


@functools.cache
def python_installation() -> tuple[str, ...]:
    """The arena interpreter's installation: prefixes, site-packages and the
    source folders of packages installed in editable mode (found once)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    paths.update(site.getsitepackages())
    paths.update(_editable_package_dirs())
    return tuple(sorted(p for p in paths if os.path.exists(p)))


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


def _under_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


def _system_mounts() -> list[str]:
    out: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    return out


def _program_mounts(paths: Iterable[str], hidden: Sequence[str]) -> list[str]:
    """Read-only binds for ``paths``, each ancestor created world-traversable
    (bwrap would copy a 0700 ancestor's mode, e.g. /root's).  A directory that
    holds a hidden path is not bound; only the named files in it are."""
    binds: list[str] = []
    for path in paths:
        path = os.path.abspath(path)
        if _under_system(path) or any(_contains(h, path) for h in hidden):
            continue
        if os.path.isdir(path) and any(_contains(path, h) for h in hidden):
            continue
        if os.path.isfile(path) and any(_contains(os.path.dirname(path), h) for h in hidden):
            binds.append(path)
        elif os.path.isfile(path):
            binds.append(os.path.dirname(path))
        else:
            binds.append(path)
    out: list[str] = []
    bound: list[str] = []
    made: set[str] = set()
    for path in sorted(set(binds), key=len):
        if any(_contains(done, path) for done in bound):
            continue
        out += _ancestor_dirs(path, made)
        out += ["--ro-bind", path, path]
        bound.append(path)
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
        if _under_system(path) or not os.path.exists(path):
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
    import tempfile

    return tempfile.mkdtemp(prefix="arena-bot-", dir=root)


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
