"""Bots as submissions: versioned bots with their ``bot.toml`` and the bot store
(:mod:`~arena.bots.versions`), checking a bot before it plays for rating
(:mod:`~arena.bots.check`) and the sample bots as entrants (:mod:`~arena.bots.samples`).

May import: runner, store, formats, stats, games, protocol, sample_bots.  Never imports
the CLI or the site.
"""
