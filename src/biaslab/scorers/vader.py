"""VADER sentiment (Hutto & Gilbert 2014): the compound score in [-1, 1], sign kept."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version

from biaslab.errors import ConfigError


class VaderScorer:
    name = "vader"

    def __init__(self) -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self._analyzer = SentimentIntensityAnalyzer()
        self.identity = f"vader:{version('vaderSentiment')}:compound"
        self._memo: dict[str, float] = {}

    def score(self, texts: Sequence[str]) -> list[float]:
        out = []
        for text in texts:
            value = self._memo.get(text)
            if value is None:
                value = float(self._analyzer.polarity_scores(text)["compound"])
                self._memo[text] = value
            out.append(value)
        return out


def make_vader(rest: str = "", **options) -> VaderScorer:
    if rest or options:
        raise ConfigError("the vader scorer takes no argument or option; use --scorer vader")
    return VaderScorer()
