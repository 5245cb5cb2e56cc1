"""A bot that misbehaves on purpose: ``bad_bot.py MODE [AFTER]``.

It plays the first legal action for AFTER requests (default 3), then does MODE:
hang, crash, garbage, illegal, nonmap, flood, stale (reply with a wrong id
first, then correctly: never faults), fork_hang (start a grandchild, then hang),
stderr_flood (log megabytes to stderr but play correctly), slow_hello (never
answer the handshake), good (never misbehave).  Further arguments are ignored
(tests put a marker there, which fork_hang's child repeats, to find leftovers).
"""

import os
import subprocess
import sys
import time

import msgpack

MODE = sys.argv[1]
AFTER = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def misbehave(request: dict) -> None:
    if MODE in ("hang", "fork_hang"):
        if MODE == "fork_hang":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                              *sys.argv[1:]])
        time.sleep(300)
    elif MODE == "crash":
        sys.stderr.write("bad_bot: about to crash\n")
        sys.stderr.flush()
        os._exit(3)
    elif MODE == "garbage":
        os.write(1, b"\xc1\xc1 this is not msgpack")
        time.sleep(300)
    elif MODE == "illegal":
        send({"type": "action", "id": request["id"], "index": len(request["legal"]) + 7})
    elif MODE == "nonmap":
        send([1, 2, 3])
        time.sleep(300)
    elif MODE == "flood":
        chunk = b"\xdb" + (200 * 1024 * 1024).to_bytes(4, "big") + b"x" * 65536
        os.write(1, chunk)
        while True:
            os.write(1, b"x" * 65536)


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while True:
        data = os.read(0, 65536)
        if not data:
            return
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                if MODE == "slow_hello":
                    time.sleep(300)
                send({"type": "hello", "name": f"bad-{MODE}", "version": "0"})
            elif kind == "request":
                requests += 1
                if MODE == "stderr_flood":
                    sys.stderr.write("log line " * 20000 + "\n")
                    sys.stderr.flush()
                if requests > AFTER and MODE not in ("good", "stale", "stderr_flood"):
                    misbehave(msg)
                    continue
                if MODE == "stale":
                    send({"type": "action", "id": msg["id"] + 1000, "index": 0})
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
