"""Prints, as one JSON line on stderr, what a bot can learn of where it runs:
the lines of its mount tables that name any of the paths given (in hex, so
that its command line does not name them), its working directory, argv and
the files beside its script, and where it imports the arena's ``protocol`` from."""

import glob
import json
import os
import site
import sys

here = os.path.dirname(os.path.abspath(__file__))
needles = [bytes.fromhex(word).decode() for word in sys.argv[1:] if word.startswith("hex:")
           for word in [word[4:]]]
found, lines = [], 0
for name in ("mountinfo", "mounts"):
    with open(f"/proc/self/{name}") as file:
        for line in file:
            lines += 1
            found += [line.strip() for needle in needles if needle in line]
try:
    import protocol  # the arena's package, as the Python starter kit imports it
    where = protocol.__file__
except ImportError as exc:
    where = f"ImportError: {exc}"
traces = {}  # the installation's files that could name where an editable package is
for folder in site.getsitepackages():
    for pattern in ("__editable__*", "__pycache__/__editable__*", "*.dist-info/direct_url.json"):
        for path in glob.glob(os.path.join(folder, pattern)):
            with open(path, "rb") as file:
                data = file.read()
            if pattern.endswith(".json") and data and b'"editable": true' not in data:
                continue
            traces[path] = os.path.getsize(path)
print(json.dumps({
    "protocol": where,
    "traces": traces,
    "lines": lines,
    "organiser_lines": found,
    "cwd": os.getcwd(),
    "argv": [word for word in sys.argv if not word.startswith("hex:")],
    "beside": sorted(os.listdir(here)),
}), file=sys.stderr, flush=True)
