"""The runner: the only layer with processes, pipes, time, concurrency and the sandbox.

Bot processes (:mod:`~arena.runner.process`), their confinement
(:mod:`~arena.runner.sandbox`, :mod:`~arena.runner.sandbox_check`), the protocol client
and its clock (:mod:`~arena.runner.client`), one game (:mod:`~arena.runner.referee`),
one stream of games (:mod:`~arena.runner.stream`), a tournament's plan and its run
(:mod:`~arena.runner.plan`, :mod:`~arena.runner.tournament`), the ladder's run
(:mod:`~arena.runner.ladder`), Dask workers (:mod:`~arena.runner.cluster`), claims of
arenas sharing a tournament (:mod:`~arena.runner.claims`), progress lines, and a person
at the terminal (:mod:`~arena.runner.human`, :mod:`~arena.runner.terminal_view`).

May import: games, store, stats, formats, protocol.  Never imported by games, store,
stats, formats or the site.
"""
