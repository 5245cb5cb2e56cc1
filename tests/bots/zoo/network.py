"""Zoo: before answering hello, tries to reach the organiser's machine: TCP
to the test's listening port on 127.0.0.1 and on the host's own address, and
the test's abstract unix socket (sending its token when connected); in the
background it resolves a public name and connects outward.  One stderr line
per attempt (``NET OK ...`` or ``NET REFUSED ...``), then it plays legally.

Arguments: ``port=N token=T [host=IP]``.
"""

import os
import socket
import sys
import threading

import msgpack

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


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                local_attempts()
                threading.Thread(target=outward_attempts, daemon=True).start()
                send({"type": "hello", "name": "zoo-network"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
