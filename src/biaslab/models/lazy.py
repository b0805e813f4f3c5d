"""A backend that loads its model at the first request the cache cannot answer.

The cache needs only the model's identity; :class:`LazyBackend` knows it in advance (computed
from the model's files, see :mod:`.local.identity`), so a run whose answers are all cached never
loads the model, nor imports torch. Everything else is forwarded to the real backend, which is
built on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from typing import Any

from biaslab.models.base import GenerateRequest, LoglikelihoodRequest, ModelBackend, OnResult, reference_identity

_OWN = frozenset({"_identity", "_build", "_backend", "_lock", "spec", "on_load", "_build_float32"})


class LazyBackend(ModelBackend):
    def __init__(
        self,
        spec: str,
        identity: dict[str, Any],
        build: Callable[[], ModelBackend],
        *,
        kind: str = "lazy",
        supports_loglikelihood: bool = True,
        on_load: Callable[[str], None] | None = None,
        build_float32: Callable[[], ModelBackend] | None = None,
    ) -> None:
        self.spec = spec
        self.kind = kind
        self.supports_loglikelihood = supports_loglikelihood
        self.base_url = None
        self._identity = dict(identity)
        self._build = build
        self._backend: ModelBackend | None = None
        self._lock = threading.Lock()
        self.on_load = on_load  # called with the spec just before the model loads
        self._build_float32 = build_float32  # the same spec with dtype=float32 (a reference of other weights)

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    def backend(self) -> ModelBackend:
        """The real backend (loads the model the first time)."""
        with self._lock:
            if self._backend is None:
                if self.on_load is not None:
                    self.on_load(self.spec)
                backend = self._build()
                if backend.identity() != self._identity:  # pragma: no cover - guards local.identity against drift
                    raise RuntimeError(
                        f"identity of {self.spec} changed on loading: {self._identity} != {backend.identity()}"
                    )
                self._backend = backend
            return self._backend

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None):
        return self.backend().generate(requests, on_result)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None):
        return self.backend().loglikelihood(requests, on_result)

    def loglikelihood_rest(
        self, requests: Sequence[LoglikelihoodRequest], answered: Collection[int], on_result: OnResult
    ):
        return self.backend().loglikelihood_rest(requests, answered, on_result)

    def reference(self) -> ModelBackend | None:
        """The reference-precision twin (see :meth:`ModelBackend.reference`), lazy too: its identity is
        :func:`~biaslab.models.base.reference_identity` of this one, and it loads only when the cache cannot
        answer."""
        ident = reference_identity(self._identity)
        if ident is None:
            return None
        if ident.get("dtype") != self._identity.get("dtype") and self._build_float32 is not None:
            # other weights: loaded from the spec at float32 (the reduced model itself need not load)
            return LazyBackend(
                self.spec,
                ident,
                self._build_float32,
                kind=self.kind,
                supports_loglikelihood=self.supports_loglikelihood,
            )

        def build() -> ModelBackend:
            twin = self.backend().reference()
            if twin is None:  # pragma: no cover - a backend that records a precision has a reference
                raise RuntimeError(f"{self.spec} has no reference precision")
            return twin

        return LazyBackend(self.spec, ident, build, kind=self.kind, supports_loglikelihood=self.supports_loglikelihood)

    def engine_info(self) -> dict[str, Any] | None:
        return self._backend.engine_info() if self._backend is not None else None  # never loads the model

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes LazyBackend lacks (engine_stats, prompt_ids, ...).
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        return getattr(self.backend(), name)

    def __repr__(self) -> str:
        return f"LazyBackend({self.spec!r}, loaded={self.loaded})"
