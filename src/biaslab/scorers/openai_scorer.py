"""Scores from an OpenAI-compatible server (the OpenAI API, vLLM, llama.cpp, Ollama...).

* ``mode=judge`` (default): the chat model rates each text for the degree of gender bias on the
  fsb-judge scale (0 = least, 1 = most negatively biased) with the fsb-judge system prompt and no
  examples, at temperature 0; the first number in [0, 1] of the answer is the score, NaN if none.
* ``mode=moderation``: the moderation endpoint's category score for ``category`` (e.g.
  ``harassment``, ``hate``), or by default the highest of all category scores.

The API key comes from the environment only (``OPENAI_API_KEY`` or ``BIASLAB_API_KEY``); local
servers given by ``base_url`` need none.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

from biaslab.errors import ConfigError

MODES = ("judge", "moderation")
MODERATION_BATCH = 32


class OpenAIJudgeScorer:
    def __init__(self, model: str, *, base_url: str | None = None, max_tokens: int = 20, **backend_options: Any):
        from biaslab.fsb.judge_scale import SYSTEM_PROMPT
        from biaslab.models.openai.backend import OpenAIBackend

        self._backend = OpenAIBackend(model, base_url=base_url, **backend_options)
        self._system = SYSTEM_PROMPT
        self._max_tokens = max_tokens
        self.name = f"openai/{model}"
        digest = hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()[:12]
        self.identity = (
            f"openai-judge:{self._backend.base_url}:{model}:prompt={digest}:temperature=0:max_tokens={max_tokens}"
        )

    def score(self, texts: Sequence[str]) -> list[float]:
        from biaslab.fsb.judge_scale import parse_score
        from biaslab.models.base import GenerateRequest, GenerationParams

        params = GenerationParams(temperature=0.0, max_tokens=self._max_tokens, seed=0)
        requests = [GenerateRequest(messages=(("system", self._system), ("user", t)), params=params) for t in texts]
        results = self._backend.generate(requests)
        scores = [parse_score(r.text) for r in results]
        return [math.nan if s is None else float(s) for s in scores]


class OpenAIModerationScorer:
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        category: str = "max",
        timeout: float = 60.0,
        max_retries: int = 4,
    ):
        from biaslab.models.openai.options import (
            OPENAI_BASE_URL,
            PLACEHOLDER_KEY,
            api_key_from_env,
            import_openai,
        )

        openai = import_openai()
        self._openai = openai
        self.base_url = (base_url or "").strip().rstrip("/") or OPENAI_BASE_URL
        key = api_key_from_env()
        if key is None and not base_url:
            raise ConfigError(
                "set OPENAI_API_KEY (or BIASLAB_API_KEY) to use the OpenAI moderation endpoint, "
                "or pass --base-url for a compatible local server"
            )
        self._client = openai.OpenAI(
            api_key=key or PLACEHOLDER_KEY, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )
        self.model = model
        self.category = category.strip()
        self.name = f"openai/{model}"
        self.identity = f"openai-moderation:{self.base_url}:{model}:category={self.category}"

    def _one_batch(self, texts: list[str]) -> list[float]:
        try:
            resp = self._client.moderations.create(model=self.model, input=texts)
        except self._openai.APIError as exc:
            status = getattr(exc, "status_code", None)
            raise ConfigError(
                f"{self.base_url}/moderations failed for model {self.model!r}"
                + (f" (HTTP {status})" if status else f" ({type(exc).__name__})")
                + "; check --base-url, the model name and the API key"
            ) from None
        out = []
        for result in resp.results:
            raw = result.category_scores
            scores = raw.model_dump(by_alias=True) if hasattr(raw, "model_dump") else dict(raw)
            scores = {k: float(v) for k, v in scores.items() if v is not None}
            if self.category == "max":
                out.append(max(scores.values()) if scores else math.nan)
            elif self.category in scores:
                out.append(scores[self.category])
            else:
                raise ConfigError(
                    f"the moderation endpoint has no category {self.category!r}; choose one of: "
                    f"{', '.join(sorted(scores))} (or category=max)"
                )
        if len(out) != len(texts):
            raise ConfigError(f"{self.base_url}/moderations returned {len(out)} results for {len(texts)} texts")
        return out

    def score(self, texts: Sequence[str]) -> list[float]:
        texts = list(texts)
        out: list[float] = []
        for start in range(0, len(texts), MODERATION_BATCH):
            out += self._one_batch(texts[start : start + MODERATION_BATCH])
        return out


def make_openai(
    rest: str = "", *, mode: str = "judge", base_url: str | None = None, category: str | None = None, **options: Any
):
    model = (rest or "").strip()
    if not model:
        raise ConfigError(
            "the openai scorer needs a model: openai/<model>, e.g. openai/gpt-4o-mini or "
            "openai/omni-moderation-latest:mode=moderation"
        )
    mode = (mode or "judge").strip().lower()
    if mode not in MODES:
        raise ConfigError(f"openai scorer mode={mode!r}; choose mode=judge or mode=moderation")
    if mode == "moderation":
        unknown = sorted(options)
        if unknown:
            raise ConfigError(f"the openai moderation scorer takes base_url and category, not {', '.join(unknown)}")
        return OpenAIModerationScorer(model, base_url=base_url, category=category or "max")
    if category is not None:
        raise ConfigError("category= applies to mode=moderation only")
    max_tokens = options.pop("max_tokens", 20)
    try:
        max_tokens = int(max_tokens)
    except (TypeError, ValueError):
        raise ConfigError(f"max_tokens={max_tokens!r} must be a whole number") from None
    return OpenAIJudgeScorer(model, base_url=base_url, max_tokens=max_tokens, **options)
