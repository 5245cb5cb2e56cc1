"""Statistics on plain data: Elo ratings (:mod:`~arena.stats.ratings`, on the tables
:mod:`~arena.stats.pools` makes of stored games) and two-player match statistics
(:mod:`~arena.stats.match_stats`: score, Elo, LOS, SPRT), and the rotation-order
test with the drawn order of seat rotations it relies on
(:mod:`~arena.stats.rotation_learning`).

Imports nothing of the arena: numpy only (scipy would cost half a second of CPU to
import); it knows nothing of storage.
"""
