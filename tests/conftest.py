"""Fixtures shared by several test modules (defined once here, so a session fixture is
built once per run, or once per xdist worker), and the suite's Hypothesis settings."""

import os
import signal

from hypothesis import settings

from tests.arena_db import played_fixture  # noqa: F401 (the ``played`` fixture)
from tests.pg import postgres_server_fixture  # noqa: F401 (``postgres_server_url``)

# No per-example deadline: beside other work (two xdist workers, other suites on the
# machine) one example of a property test can take far over Hypothesis's 200 ms, which
# says nothing of the property.  HYPOTHESIS_PROFILE=default restores the deadline.
settings.register_profile("suite", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# The tests' Ctrl-C (SIGINT to an arena they started) must reach a Python that
# turns it into KeyboardInterrupt.  A suite started in the background of a
# non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and an ignored
# signal stays ignored across exec: every arena it started would ignore Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
