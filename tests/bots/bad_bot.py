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

sys.path.append(os.path.join(os.path.dirname(__file__), "zoo"))  # for rawbot.py
from rawbot import Message, action, after, log, play, send, serve

MODE = sys.argv[1]
AFTER = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def misbehave(request: Message) -> None:
    if MODE in ("hang", "fork_hang"):
        if MODE == "fork_hang":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                              *sys.argv[1:]])
        time.sleep(300)
    elif MODE == "crash":
        log("bad_bot: about to crash")
        os._exit(3)
    elif MODE == "garbage":
        os.write(1, b"\xc1\xc1 this is not msgpack")
        time.sleep(300)
    elif MODE == "illegal":
        play(request, len(request["legal"]) + 7)
    elif MODE == "nonmap":
        send([1, 2, 3])
        time.sleep(300)
    elif MODE == "flood":
        chunk = b"\xdb" + (200 * 1024 * 1024).to_bytes(4, "big") + b"x" * 65536
        os.write(1, chunk)
        while True:
            os.write(1, b"x" * 65536)


def on_hello(msg: Message) -> None:
    if MODE == "slow_hello":
        time.sleep(300)


def behave(request: Message) -> None:
    if MODE == "stderr_flood":
        sys.stderr.write("log line " * 20000 + "\n")
        sys.stderr.flush()
    if MODE == "stale":
        send(action(request["id"] + 1000))
    play(request)


if __name__ == "__main__":
    serve(f"bad-{MODE}",
          behave if MODE in ("good", "stale", "stderr_flood") else after(AFTER, misbehave),
          version="0", hello=on_hello)
