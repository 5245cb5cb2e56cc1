#!/usr/bin/env bash
# Sets up Five Arena on a Debian machine: the system packages it needs (only
# those missing, with apt-get; as root or through sudo), then the Python
# package in editable mode in a virtual environment, linked here as .venv (made
# with $PYTHON, default python, if missing; its bin/ has arena, and with `test`
# pytest, ruff and mypy), then compiles the engines with mypyc (a C compiler is
# needed for that; without one the arena runs them in pure Python).  `setup.sh
# test` also installs what the tests need.
#
#   bubblewrap   the bot sandbox (bwrap)
#   util-linux   prlimit and setpriv, which apply the bots' limits
#   libseccomp2  the bots' seccomp filter (built by pyseccomp, loaded by bubblewrap)
#   gcc, python3-dev   the C compiler and Python's headers that mypyc's engines need
#                (python3-dev only where the interpreter's Python.h is missing)
#   postgresql   (tests) a real PostgreSQL server the tests start themselves
#   chromium, chromium-driver   (tests) headless Chromium and its WebDriver, for the
#                report's browser tests (tests/test_browser.py)
#   libmsgpack-dev, nodejs, npm   (tests) what the C and JavaScript starter kits (and gcc)
#                need to build and run (`arena new-bot`, tests/test_kits.py); nodejs and
#                npm count as present when `node` and `npm` run (NodeSource's nodejs
#                brings its own npm and conflicts with Debian's)
#   python3-venv (only where the interpreter lacks ensurepip, as Debian's does)
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python}"

want=(bubblewrap util-linux libseccomp2 gcc)
# Python.h, to compile the engines: Debian's interpreter keeps it in python3-dev.
include="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)"
if [ ! -f "$include/Python.h" ] && [ "${include#/usr/include/}" != "$include" ]; then
    want+=(python3-dev)
fi
if [ ! -x .venv/bin/python ] && ! "$python" -c "import ensurepip" 2>/dev/null; then
    want+=(python3-venv)
fi
if [ "${1:-}" = test ]; then
    want+=(postgresql chromium chromium-driver libmsgpack-dev nodejs npm)
fi
missing=()
for package in "${want[@]}"; do
    case "$package" in
        nodejs) command -v node >/dev/null && continue ;;
        npm) command -v npm >/dev/null && continue ;;
    esac
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null; then
        echo "setup: please install ${missing[*]} (no apt-get on this machine)" >&2
        exit 1
    fi
    sudo=()
    if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
    echo "setup: installing ${missing[*]} with apt-get" >&2
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The environment lives outside the checkout, .venv links to it: Python bots run
# the arena's interpreter in the sandbox, whose mount table would show a path
# inside the checkout (docs/bots.md, "Mount table").
if [ ! -x .venv/bin/python ]; then
    home="${FIVE_ARENA_VENVS:-${XDG_DATA_HOME:-$HOME/.local/share}/five-arena}"
    venv="$home/venv-$(pwd -P | sha256sum | cut -c1-12)"
    echo "setup: making the virtual environment $venv (linked as .venv)" >&2
    mkdir -p "$home"
    "$python" -m venv "$venv"
    ln -sfn "$venv" .venv
fi
extra="[native]"
if [ "${1:-}" = test ]; then extra="[test,native]"; fi
.venv/bin/python -m pip install -q -e ".${extra}"
# The engines compiled with mypyc (arena/games/native.py): one line either way; on
# failure (no C compiler) the arena runs them in pure Python.
.venv/bin/python -m arena.games.native_build || true
