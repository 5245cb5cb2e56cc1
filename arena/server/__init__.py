"""The competition server (``arena serve``): an ASGI application (Starlette) on
Hypercorn's trio worker, over the store's accounts, bots and games.

:mod:`~arena.server.app` (the application, errors, serving),
:mod:`~arena.server.pages` (HTML), :mod:`~arena.server.api` (JSON),
:mod:`~arena.server.auth` (viewers, sessions, CSRF, passwords, rate limits),
:mod:`~arena.server.views` (cached leaderboards, game lists, replays),
:mod:`~arena.server.submissions` (uploads queued, built and checked in a thread).

May import: bots, the site (``reports``), store, stats, formats, games.  It plays
no game and starts no bot itself: uploads are built and checked by the bots
layer, games are played by the runner's ladder, which the CLI starts as an
``arena ladder`` child process.
"""
