"""The site layer: the static HTML report (:mod:`reports.render`), replays
(:mod:`reports.replay`) and exports (:mod:`reports.export`), from stored records.

May import: arena.games, arena.store, arena.stats.  Never imports the runner (no trio
in ``import reports``), so it shows nothing but what was stored.
"""
