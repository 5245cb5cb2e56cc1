"""Zoo: before answering hello, tries to reach the organiser's machine: TCP
to the test's listening port on 127.0.0.1 and on the host's own address, and
the test's abstract unix socket (sending its token when connected); in the
background it resolves a public name and connects outward.  One stderr line
per attempt (``NET OK ...`` or ``NET REFUSED ...``), then it plays legally.

Arguments: ``port=N token=T [host=IP]``.
"""

import socket
import sys
import threading

from rawbot import Message, serve

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
PORT = int(ARGS["port"])
TOKEN = ARGS["token"]


def log(line: str) -> None:
    sys.stderr.write(f"zoo network: {line}\n")
    sys.stderr.flush()


def attempt(what: str, family: int, address: object, timeout: float = 0.5) -> None:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(address)
            sock.sendall(f"zoo-network {TOKEN}\n".encode())
        log(f"NET OK connected to {what}")
    except OSError as exc:
        log(f"NET REFUSED {what}: {exc}")


def local_attempts() -> None:
    attempt(f"127.0.0.1:{PORT}", socket.AF_INET, ("127.0.0.1", PORT))
    if ARGS.get("host"):
        attempt(f"{ARGS['host']}:{PORT}", socket.AF_INET, (ARGS["host"], PORT))
    attempt(f"abstract unix socket zoo-{TOKEN}", socket.AF_UNIX, f"\0zoo-{TOKEN}")


def outward_attempts() -> None:
    try:
        infos = socket.getaddrinfo("example.com", 80, proto=socket.IPPROTO_TCP)
        log(f"NET OK resolved example.com: {infos[0][4][0]}")
    except OSError as exc:
        log(f"NET REFUSED resolve example.com: {exc}")
    attempt("1.1.1.1:80", socket.AF_INET, ("1.1.1.1", 80), timeout=1.0)


def on_hello(msg: Message) -> None:
    local_attempts()
    threading.Thread(target=outward_attempts, daemon=True).start()


if __name__ == "__main__":
    serve("zoo-network", hello=on_hello)
