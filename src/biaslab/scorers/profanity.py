"""Profanity probability from ``alt-profanity-check`` (a linear SVM on bag-of-words, offline)."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version

from biaslab.errors import ConfigError


class ProfanityScorer:
    name = "profanity"

    def __init__(self) -> None:
        try:
            from profanity_check import predict_prob
        except Exception as exc:  # not installed, or its pickled model does not load with this scikit-learn
            raise ConfigError(
                f"the profanity scorer needs the package 'alt-profanity-check', which does not import "
                f"({type(exc).__name__}); pip install alt-profanity-check"
            ) from None
        self._predict = predict_prob
        self.identity = f"profanity:alt-profanity-check={version('alt-profanity-check')}:prob"

    def score(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return [float(p) for p in self._predict(list(texts))]


def make_profanity(rest: str = "", **options) -> ProfanityScorer:
    if rest or options:
        raise ConfigError("the profanity scorer takes no argument or option; use --scorer profanity")
    return ProfanityScorer()
