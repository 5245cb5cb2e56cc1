"""Two-player match statistics: games (win/draw/loss) and game pairs (pentanomial).

The figures match fastchess (trinomial and pentanomial models: score, Elo and
normalized Elo with 95% errors, likelihood of superiority; the generalized SPRT
on normalized or logistic Elo, with the exact maximum-likelihood distributions
of M. Van den Bergh's "Comments on Normalized Elo") and cutechess (LOS from
decisive games; the SPRT with the BayesElo draw model).  :class:`Sprt` is one
test's settings and :class:`SequentialTest` applies it pair by pair in deal
order.  Plain numbers in, numbers out: nothing here knows about games or storage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

#: Normalized Elo per unit of (score - 1/2) / standard deviation: 800 / ln 10.
NELO_SCALE = 800 / math.log(10)
Z95 = NormalDist().inv_cdf(0.975)
#: Points of one game (loss, draw, win) and of one pair of games, as a share of the most.
GAME_SCORES = (0.0, 0.5, 1.0)
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Stands in for an outcome never seen, so every maximum-likelihood estimate exists (fastchess).
UNSEEN = 1e-3


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


@dataclass(frozen=True)
class Pentanomial:
    """Pairs of games (one deal, seats swapped) by the first player's points in the
    pair: LL 0, LD 1/2, WL and DD 1, WD 3/2, WW 2."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    @classmethod
    def of(cls, pairs: Sequence[tuple[float, float]]) -> Pentanomial:
        """The counts of (first game's points, second game's points) pairs."""
        total = Pentanomial()
        for first, second in pairs:
            total = total.plus(first, second)
        return total

    def plus(self, first: float, second: float) -> Pentanomial:
        """These counts with one more pair (each game's points: 0, 1/2 or 1)."""
        points = sorted((first, second))
        key = {(0, 0): "ll", (0, 0.5): "ld", (0, 1): "wl", (0.5, 0.5): "dd", (0.5, 1): "wd",
               (1, 1): "ww"}[points[0], points[1]]
        return Pentanomial(**{**asdict(self), key: getattr(self, key) + 1})

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.wl + self.dd + self.wd + self.ww

    def counts(self) -> tuple[int, ...]:
        """Pairs by points 0, 1/2, 1, 3/2, 2 (WL and DD both score 1): fastchess's Ptnml(0-2)."""
        return (self.ll, self.ld, self.wl + self.dd, self.wd, self.ww)

    def trinomial(self) -> Trinomial:
        """The same games counted one by one."""
        return Trinomial(wins=2 * self.ww + self.wd + self.wl,
                         draws=self.wd + 2 * self.dd + self.ld,
                         losses=self.wl + self.ld + 2 * self.ll)


def elo_of_score(score: float) -> float:
    """The logistic Elo difference that expects ``score`` (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1) + 0.0  # never -0.0


def score_of_elo(elo: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1 / (1 + 10 ** (-elo / 400))


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

    @property
    def elo_text(self) -> str:
        """``+40.7 +/- 30.4`` (fastchess's figures) when both ends of the interval exist
        and differ; else the Wilson interval of the score over the games: ``+150.3
        [+20.1, +401.7]``, or one-sided ``> +85.2 (every game won)`` / ``< -85.2 (every
        game lost)``.  Never ``inf`` or ``nan``."""
        if math.isfinite(self.elo) and math.isfinite(self.elo_error) and self.elo_error > 0:
            return f"{self.elo:+.1f} +/- {self.elo_error:.1f}"
        low, high = wilson(self.score, self.wins + self.draws + self.losses)
        if high >= 1:
            return f"> {elo_of_score(low):+.1f} (every game won)"
        if low <= 0:
            return f"< {elo_of_score(high):+.1f} (every game lost)"
        return f"{self.elo:+.1f} [{elo_of_score(low):+.1f}, {elo_of_score(high):+.1f}]"

    @property
    def nelo_text(self) -> str:
        """``+49.8 +/- 36.8``; ``undefined (no spread)`` when every game or pair scored
        the same (normalized Elo divides by the spread of the scores)."""
        if not math.isfinite(self.nelo):
            return "undefined (no spread)"
        return f"{self.nelo:+.1f} +/- {self.nelo_error:.1f}"


def wilson(score: float, games: int) -> tuple[float, float]:
    """The Wilson 95% interval of a score share over ``games`` games (draws as half a
    point): never of zero width, inside [0, 1], reaching 0 or 1 only at a score of 0 or 1."""
    z2 = Z95 * Z95
    centre = (score + z2 / (2 * games)) / (1 + z2 / games)
    spread = Z95 / (1 + z2 / games) * math.sqrt(score * (1 - score) / games
                                                  + z2 / (4 * games * games))
    low, high = centre - spread, centre + spread
    return (0.0 if score <= 0 else low), (1.0 if score >= 1 else high)


def summarize(wins: int, draws: int, losses: int) -> MatchSummary:
    """The trinomial figures of a match (errors are 95% half-widths)."""
    return _summary(Trinomial(wins, draws, losses), GAME_SCORES, (losses, draws, wins), 1)


def summarize_pairs(pairs: Pentanomial) -> MatchSummary:
    """The pentanomial figures of a match played in pairs (fastchess's EloPentanomial):
    the variance comes from whole pairs, so the luck a deal gives both games cancels."""
    return _summary(pairs.trinomial(), PAIR_SCORES, pairs.counts(), 2)


def _summary(games: Trinomial, scores: Sequence[float], counts: Sequence[int],
             games_per_unit: int) -> MatchSummary:
    """Figures from the distribution of a unit's score (a game, or a pair's points / 2)."""
    units = sum(counts)
    s, variance = _mean_variance(scores, [c / units for c in counts])
    margin = Z95 * math.sqrt(variance / units)
    elo_error = (elo_of_score(s + margin) - elo_of_score(s - margin)) / 2
    sigma = math.sqrt(games_per_unit * variance)  # per game
    if sigma:
        nelo = (s - 0.5) / sigma * NELO_SCALE
        los = NormalDist().cdf((s - 0.5) / math.sqrt(variance / units))
    else:  # every unit scored the same
        nelo = 0.0 if s == 0.5 else math.copysign(math.inf, s - 0.5)
        los = 0.5 if s == 0.5 else float(s > 0.5)
    return MatchSummary(games.wins, games.draws, games.losses, s, elo_of_score(s), elo_error,
                        nelo, Z95 * NELO_SCALE / math.sqrt(games_per_unit * units), los)


def los_decisive(wins: int, losses: int) -> float:
    """cutechess's likelihood of superiority, from decisive games only."""
    if wins + losses == 0:
        return 0.5
    return 0.5 + 0.5 * math.erf((wins - losses) / math.sqrt(2 * (wins + losses)))


def points_by_places(mine: int, theirs: int) -> float:
    """A player's points in one game against one opponent from their places (lower is
    better): 1 a win, 1/2 a draw, 0 a loss."""
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


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


def _softplus(t: float) -> float:
    """log(1 + e^t) without overflow."""
    return t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))


def _log_cosh(t: float) -> float:
    t = abs(t)
    return t + math.log1p(math.exp(-2 * t)) - math.log(2)


def _bayes_log_probabilities(bayes_elo: float, draw_elo: float) -> tuple[float, float, float]:
    """Log-probabilities of a win, a draw and a loss in the BayesElo model, in logs
    so that extreme Elo (a sample of nearly all draws) neither overflows nor
    rounds a probability to zero.  With y = -bayes_elo and d = draw_elo in
    natural units: win = s(d + y), loss = s(d - y) with s(t) = 1 / (1 + e^t), and
    draw = 1 - win - loss = sinh(d) / (cosh(y) + cosh(d))."""
    c = math.log(10) / 400
    y, d = -bayes_elo * c, draw_elo * c
    log_win, log_loss = -_softplus(d + y), -_softplus(d - y)
    if d <= 0:
        return log_win, -math.inf, log_loss
    log_sinh = d + math.log(-math.expm1(-2 * d)) - math.log(2)
    a, b = _log_cosh(y), _log_cosh(d)
    log_cosh_sum = max(a, b) + math.log1p(math.exp(-abs(a - b)))
    return log_win, log_sinh - log_cosh_sum, log_loss


def sprt_llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """cutechess-style SPRT log-likelihood ratio of elo1 against elo0 (logistic
    Elo) in the BayesElo draw model, the draw Elo estimated from the sample with
    half a game added to each outcome (so it is defined from the first game)."""
    if wins + draws + losses == 0:
        return 0.0
    n = wins + draws + losses + 1.5
    win, loss = (wins + 0.5) / n, (losses + 0.5) / n
    draw_elo = 200 * math.log10((1 - loss) / loss * (1 - win) / win)
    scale = 1 / math.cosh(draw_elo * math.log(10) / 800) ** 2  # 4x / (1 + x)^2, x = 10^(-d/400)
    p0 = _bayes_log_probabilities(elo0 / scale, draw_elo)
    p1 = _bayes_log_probabilities(elo1 / scale, draw_elo)
    return sum(count * (a - b)
               for count, a, b in zip((wins, draws, losses), p1, p0, strict=True) if count)


def gsprt_llr(wins: int, draws: int, losses: int, nelo0: float, nelo1: float) -> float:
    """fastchess's generalized SPRT log-likelihood ratio on normalized Elo, game by
    game (trinomial)."""
    if wins + draws + losses == 0:
        return 0.0
    return _gsprt(GAME_SCORES, (losses, draws, wins), "normalized", nelo0, nelo1, 1)


def pair_llr(pairs: Pentanomial, elo0: float, elo1: float, model: str) -> float:
    """fastchess's generalized SPRT log-likelihood ratio on pairs (pentanomial):
    ``model`` "normalized" (bounds in normalized Elo) or "logistic" (logistic Elo)."""
    if pairs.pairs == 0:
        return 0.0
    return _gsprt(PAIR_SCORES, pairs.counts(), model, elo0, elo1, 2)


def _gsprt(scores: Sequence[float], counts: Sequence[int], model: str, elo0: float,
           elo1: float, games_per_unit: int) -> float:
    """Total log-likelihood of the sample under the most likely distribution whose
    expected score (logistic) or normalized Elo (normalized) is elo1, minus the same
    under elo0."""
    regular = [c if c else UNSEEN for c in counts]
    total = sum(regular)
    observed = [c / total for c in regular]
    if model == "logistic":
        p0 = _mle_of_score(scores, observed, score_of_elo(elo0))
        p1 = _mle_of_score(scores, observed, score_of_elo(elo1))
    else:
        per_game = math.sqrt(games_per_unit) / NELO_SCALE
        p0 = _mle_of_t(scores, observed, elo0 * per_game)
        p1 = _mle_of_t(scores, observed, elo1 * per_game)
    return total * sum(q * (math.log(a) - math.log(b))
                       for q, a, b in zip(observed, p1, p0, strict=True))


def _mean_variance(scores: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mean = sum(a * p for a, p in zip(scores, probs, strict=True))
    return mean, sum(p * (a - mean) ** 2 for a, p in zip(scores, probs, strict=True))


def _reweighted(observed: Sequence[float], phi: Sequence[float]) -> list[float]:
    """The distribution ``observed[i] / (1 + theta phi[i])`` whose theta solves
    g(theta) = sum(observed[i] phi[i] / (1 + theta phi[i])) = 0 (Van den Bergh,
    eqs. 1.2-1.3).  g falls from +inf to -inf between the poles -1/max(phi) and
    -1/min(phi), and 0 lies between them: Newton's method from 0, bisecting
    whenever a step would leave the bracket."""
    low, high = -1 / max(phi), -1 / min(phi)
    theta = 0.0
    for _ in range(200):
        ratios = [f / (1 + theta * f) for f in phi]
        value = sum(q * r for q, r in zip(observed, ratios, strict=True))
        slope = -sum(q * r * r for q, r in zip(observed, ratios, strict=True))
        if value > 0:
            low = theta
        else:
            high = theta
        step = theta - value / slope
        if not low < step < high:
            step = (low + high) / 2
        if abs(step - theta) <= 1e-15 * max(1.0, abs(theta)):
            theta = step
            break
        theta = step
    return [q / (1 + theta * f) for q, f in zip(observed, phi, strict=True)]


def _mle_of_score(scores: Sequence[float], observed: Sequence[float], s: float) -> list[float]:
    """The most likely distribution with expected score ``s``."""
    return _reweighted(observed, [a - s for a in scores])


def _mle_of_t(scores: Sequence[float], observed: Sequence[float], t: float) -> list[float]:
    """The most likely distribution with (mean - 1/2) / sigma = ``t``, by fixed-point
    iteration from the uniform distribution (Van den Bergh, section 4.1)."""
    probs = [1 / len(scores)] * len(scores)
    for _ in range(200):
        mean, variance = _mean_variance(scores, probs)
        sigma = math.sqrt(variance)
        phi = [a - 0.5 - 0.5 * t * sigma * (1 + ((a - mean) / sigma) ** 2) for a in scores]
        new = _reweighted(observed, phi)
        done = max(abs(a - b) for a, b in zip(new, probs, strict=True)) < 1e-12
        probs = new
        if done:
            break
    return probs


SPRT_MODELS = ("normalized", "logistic", "bayesian")
#: Widest bounds: beyond about 245 normalized Elo the maximum-likelihood fixed point
#: of the normalized model has no solution; 1000 Elo is a 99.7% expected score.
MOST_NELO = 200.0
MOST_ELO = 1000.0


@dataclass(frozen=True)
class Sprt:
    """One sequential test of elo1 (H1) against elo0 (H0), with error rates alpha
    (accepting H1 when H0 holds) and beta (the reverse).

    ``model``: "normalized" (default: fastchess's generalized SPRT on pairs, bounds
    in normalized Elo), "logistic" (the same, bounds in logistic Elo) or "bayesian"
    (cutechess: game by game, logistic Elo bounds, BayesElo draw model).
    """

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def problem(self) -> str | None:
        """Why these settings make no test, or None."""
        values = (self.elo0, self.elo1, self.alpha, self.beta)
        if not all(math.isfinite(v) for v in values):
            return "--elo0, --elo1, --alpha and --beta must be finite numbers"
        if self.elo0 >= self.elo1:
            return f"--elo0 ({self.elo0:g}) must be below --elo1 ({self.elo1:g})"
        most = MOST_NELO if self.model == "normalized" else MOST_ELO
        if max(abs(self.elo0), abs(self.elo1)) > most:
            return (f"--elo0 and --elo1 must be within +/-{most:g} {self.unit} with the "
                    f"{self.model} model, not {self.elo0:g} and {self.elo1:g}")
        for name, value in (("--alpha", self.alpha), ("--beta", self.beta)):
            if not 0 < value < 1:
                return f"{name} must be between 0 and 1 (exclusive), not {value:g}"
        if self.alpha + self.beta >= 1:
            return f"--alpha + --beta must be below 1, not {self.alpha + self.beta:g}"
        if self.model not in SPRT_MODELS:
            return f"--sprt-model must be one of {', '.join(SPRT_MODELS)}, not {self.model!r}"
        return None

    @property
    def bounds(self) -> SprtBounds:
        return SprtBounds.of(self.alpha, self.beta)

    @property
    def unit(self) -> str:
        """What elo0 and elo1 measure."""
        return "nElo" if self.model == "normalized" else "Elo"

    def llr(self, pairs: Pentanomial) -> float:
        """The log-likelihood ratio of these pairs."""
        if self.model == "bayesian":
            games = pairs.trinomial()
            return sprt_llr(games.wins, games.draws, games.losses, self.elo0, self.elo1)
        return pair_llr(pairs, self.elo0, self.elo1, self.model)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sprt:
        return cls(**data)


@dataclass
class SequentialTest:
    """An SPRT applied to a match's pairs in deal order.

    Pairs finish in any order (several are played at once); the test looks at
    them in deal order, after each pair that completes the run of deals 0..m,
    and stops at the first m whose log-likelihood ratio leaves the bounds.  So
    the verdict does not depend on how many pairs ran at once or which finished
    first, and recomputing it from the stored games gives the same answer.  A
    pair with a game without result (every seat faulted) is skipped.
    """

    sprt: Sprt
    max_pairs: int
    #: Points of the first bot in each finished game, by (deal, rotation); None: no result.
    halves: dict[tuple[int, int], float | None] = field(default_factory=dict)
    #: The pairs the test has looked at (deals 0 .. next_deal - 1, less void ones).
    counted: Pentanomial = field(default_factory=Pentanomial)
    next_deal: int = 0
    void: int = 0
    llr: float = 0.0
    verdict: str | None = None
    #: (pairs counted, LLR) after each counted pair: the test's path to its verdict.
    path: list[tuple[int, float]] = field(default_factory=list)

    def record(self, deal: int, rotation: int, points: float | None) -> None:
        """One finished game: the first bot's points in it, or None without result."""
        self.halves[deal, rotation] = points
        while self.verdict is None and self.next_deal < self.max_pairs and \
                (self.next_deal, 0) in self.halves and (self.next_deal, 1) in self.halves:
            first, second = self.halves[self.next_deal, 0], self.halves[self.next_deal, 1]
            self.next_deal += 1
            if first is None or second is None:
                self.void += 1
                continue
            self.counted = self.counted.plus(first, second)
            self.llr = self.sprt.llr(self.counted)
            self.path.append((self.counted.pairs, self.llr))
            self.verdict = self.sprt.bounds.verdict(self.llr)

    @property
    def decided(self) -> bool:
        """A verdict, or every pair played: start no new pair."""
        return self.verdict is not None or self.next_deal >= self.max_pairs

    @property
    def outcome(self) -> str:
        """"H1", "H0", "inconclusive" (every pair played) or "running"."""
        if self.verdict is not None:
            return self.verdict
        return "inconclusive" if self.next_deal >= self.max_pairs else "running"


def verdict_text(outcome: str, first: str, second: str, sprt: Sprt) -> str:
    """A test's outcome (:attr:`SequentialTest.outcome`) in words, ``first`` the bot
    the test is about."""
    return {
        "H1": f"H1 accepted: {first} is better than {second} by {sprt.elo1:g} {sprt.unit} "
              f"rather than by {sprt.elo0:g} or less",
        "H0": f"H0 accepted: {first} is not better than {second} by {sprt.elo1:g} "
              f"{sprt.unit}; by {sprt.elo0:g} or less",
        "inconclusive": "inconclusive: every pair was played before the LLR left its bounds",
    }.get(outcome, "running: the LLR is still between its bounds")
