"""Tournament formats: who plays whom, in which seats, on which deals.

The formats behind one small interface (:mod:`~arena.formats.schedule`: round robin,
gauntlet, match, ladder; streams and seat rotations), the table designs they choose
from (:mod:`~arena.formats.tables`) and the ladder's picking policy
(:mod:`~arena.formats.ladder`).  Pure and deterministic from a seed.

May import: stats.  Never imports the runner, the store or the CLI.
"""
