"""Two-player match statistics from wins, draws and losses (the first player's view).

The figures match fastchess (trinomial model: score, Elo and normalized Elo with
95% errors, likelihood of superiority) and cutechess (LOS from decisive games;
the SPRT with the BayesElo draw model); fastchess's generalized SPRT on
normalized Elo is :func:`gsprt_llr`.  Plain numbers in, numbers out: nothing here
knows about games or storage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

#: Normalized Elo per unit of (score - 1/2) / standard deviation: 800 / ln 10.
NELO_SCALE = 800 / math.log(10)
Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Trinomial:
    """A match's results, from the first player's view."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points per game: a win 1, a draw 1/2."""
        return (self.wins + self.draws / 2) / self.games

    @property
    def variance(self) -> float:
        """Variance of one game's points around :attr:`score`."""
        s = self.score
        return (self.wins * (1 - s) ** 2 + self.draws * (0.5 - s) ** 2
                + self.losses * s**2) / self.games


def elo_of_score(score: float) -> float:
    """The logistic Elo difference that expects ``score`` (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


@dataclass(frozen=True)
class MatchSummary:
    """What fastchess prints for a match: score, Elo +/- error, nElo +/- error, LOS."""

    wins: int
    draws: int
    losses: int
    score: float
    elo: float
    elo_error: float
    nelo: float
    nelo_error: float
    los: float


def summarize(wins: int, draws: int, losses: int) -> MatchSummary:
    """The trinomial figures of a match (errors are 95% half-widths)."""
    t = Trinomial(wins, draws, losses)
    s, n = t.score, t.games
    sigma = math.sqrt(t.variance)
    margin = Z95 * sigma / math.sqrt(n)
    elo_error = (elo_of_score(s + margin) - elo_of_score(s - margin)) / 2
    nelo = (s - 0.5) / sigma * NELO_SCALE if sigma else math.copysign(math.inf, s - 0.5)
    los = NormalDist().cdf((s - 0.5) / (sigma / math.sqrt(n))) if sigma else float(s > 0.5)
    return MatchSummary(wins, draws, losses, s, elo_of_score(s), elo_error, nelo,
                        Z95 * NELO_SCALE / math.sqrt(n), los)


def los_decisive(wins: int, losses: int) -> float:
    """cutechess's likelihood of superiority, from decisive games only."""
    if wins + losses == 0:
        return 0.5
    return 0.5 + 0.5 * math.erf((wins - losses) / math.sqrt(2 * (wins + losses)))


# -- sequential probability ratio tests ------------------------------------------------

@dataclass(frozen=True)
class SprtBounds:
    """Stop when the log-likelihood ratio leaves ``(lower, upper)``."""

    lower: float
    upper: float

    @classmethod
    def of(cls, alpha: float, beta: float) -> SprtBounds:
        return cls(math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))

    def verdict(self, llr: float) -> str | None:
        """``"H1"`` (elo1 accepted), ``"H0"``, or None: play on."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


def _bayes_probabilities(bayes_elo: float, draw_elo: float) -> tuple[float, float, float]:
    win = 1 / (1 + 10 ** ((draw_elo - bayes_elo) / 400))
    loss = 1 / (1 + 10 ** ((draw_elo + bayes_elo) / 400))
    return win, 1 - win - loss, loss


def sprt_llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """cutechess-style SPRT log-likelihood ratio of elo1 against elo0 (logistic
    Elo) in the BayesElo draw model, the draw Elo estimated from the sample with
    half a game added to each outcome (so it is defined from the first game)."""
    if wins + draws + losses == 0:
        return 0.0
    n = wins + draws + losses + 1.5
    win, loss = (wins + 0.5) / n, (losses + 0.5) / n
    draw_elo = 200 * math.log10((1 - loss) / loss * (1 - win) / win)
    x = 10 ** (-draw_elo / 400)
    scale = 4 * x / (1 + x) ** 2
    p0 = _bayes_probabilities(elo0 / scale, draw_elo)
    p1 = _bayes_probabilities(elo1 / scale, draw_elo)
    return sum(count * math.log(a / b)
               for count, a, b in zip((wins, draws, losses), p1, p0, strict=True))


def gsprt_llr(wins: int, draws: int, losses: int, nelo0: float, nelo1: float) -> float:
    """fastchess's generalized SPRT log-likelihood ratio on normalized Elo
    (trinomial, Gaussian approximation)."""
    t = Trinomial(wins, draws, losses)
    if t.games == 0 or t.variance == 0:
        return 0.0
    sigma = math.sqrt(t.variance)
    s0 = 0.5 + nelo0 * sigma / NELO_SCALE
    s1 = 0.5 + nelo1 * sigma / NELO_SCALE
    return (s1 - s0) * (2 * t.score - s0 - s1) / (2 * t.variance / t.games)
