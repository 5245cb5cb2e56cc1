"""Five Arena: tournaments for bots that play the Five family of card games.

One package per layer (``docs/architecture.md``; a test, ``tests/test_layers.py``,
keeps the rules):

- :mod:`arena.games`: pure rules, cards, the game loop;
- :mod:`arena.store`: the database (every query), stored records, migrations;
- :mod:`arena.stats`: ratings and match statistics on plain data;
- :mod:`arena.formats`: who plays whom, in which seats, on which deals;
- :mod:`arena.runner`: processes, the sandbox, time, playing tables, clusters;
- :mod:`arena.bots`: versioned bot submissions and check-bot;
- :mod:`arena.cli`: the ``arena`` command.

The HTML site is the separate package ``reports``; the wire protocol and the Python
SDK are ``protocol``; the sample bots are ``sample_bots``.
"""
