"""A checkpoint's weights and configs without transformers' model classes, for the engine (the architectures of
:mod:`.architecture`: Llama, Mistral, Qwen2, Qwen3, Phi-3, Gemma 3 text).

Importing transformers' modeling code takes longer than everything else in loading a small
model (2-4 s of imports on 2 cores, against ~1.3 s for torch and 0.02 s to map the
safetensors file; for Gemma 3 the modeling import alone is about 3 s). :class:`~.engine.LlamaEngine`
needs only the weight tensors and a few config values, so for a checkpoint it supports
(:func:`light_supported`) the loader builds a :class:`LightCausalLM`: the same tensor names
(``model.layers[i].self_attn.q_proj.weight``, ...) as plain attributes, ``config`` and
``generation_config`` read from their JSON files.

Anything else asked of it (``model(input_ids)``, ``state_dict()``, ``generate``, ... e.g. the
static engine, or a test comparing the engine with the transformers forward pass) loads the
transformers model from the same directory on first use and is passed on to it (a second copy
of the weights, unfused).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from biaslab.models.local.llama.architecture import describe


class _Config(SimpleNamespace):
    """config.json's values as attributes."""

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def read_config(directory: Path, name: str = "config.json") -> _Config | None:
    try:
        return _Config(**json.loads((Path(directory) / name).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def light_supported(directory: Path) -> bool:
    """Whether the checkpoint in ``directory`` can run on the engine without transformers' model."""
    cfg = read_config(directory)
    if cfg is None or getattr(cfg, "quantization_config", None):
        return False
    return describe(cfg) is not None and (Path(directory) / "model.safetensors").is_file()


def _linear(weight: torch.Tensor) -> SimpleNamespace:
    return SimpleNamespace(weight=weight)


def _tree(weights: dict[str, torch.Tensor]) -> Any:
    """Dotted tensor names as nested attributes (``layers.3.mlp.up_proj.weight``), numbered parts as lists."""
    root: dict[str, Any] = {}
    for name, tensor in weights.items():
        node = root
        *path, leaf = name.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = tensor

    def build(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if node and all(k.isdigit() for k in node):
            return [build(node[k]) for k in sorted(node, key=int)]
        return SimpleNamespace(**{k: build(v) for k, v in node.items()})

    return build(root)


class LightCausalLM:
    """A checkpoint the engine runs, as tensors (see the module); the transformers model on demand."""

    def __init__(self, directory: Path, dtype: torch.dtype, model_class: Any) -> None:
        from safetensors.torch import load_file

        self.directory = Path(directory)
        self._dtype = dtype
        self._model_class = model_class
        self._full: Any = None
        self._lock = threading.Lock()
        cfg = read_config(self.directory)
        arch = describe(cfg) if cfg is not None else None
        assert cfg is not None and arch is not None
        self.config = cfg
        gen = read_config(self.directory, "generation_config.json")
        self.generation_config = gen
        sd = load_file(str(self.directory / "model.safetensors"))
        if dtype != torch.float32:
            sd = {k: v.to(dtype) for k, v in sd.items()}
        tied = bool(getattr(cfg, "tie_word_embeddings", True))
        embed = sd.get("model.embed_tokens.weight")
        head = sd.get("lm_head.weight")
        if tied:  # stored once, under either name
            embed = head = embed if embed is not None else head
        if embed is None or head is None:
            raise KeyError("model.embed_tokens.weight" if embed is None else "lm_head.weight")

        layers = range(int(cfg.num_hidden_layers))
        names = (
            ["model.norm.weight"]
            + [f"model.layers.{i}.{n}.weight" for i in layers for n in arch.layer_weights]
            + [f"model.layers.{i}.{n}.bias" for i in layers for n in arch.layer_biases]
        )
        missing = [n for n in names if n not in sd]
        if missing:
            raise KeyError(missing[0])
        self.model = _tree({n[len("model.") :]: sd[n] for n in names})  # model.layers[i].self_attn.q_proj.weight ...
        self.model.embed_tokens = _linear(embed)
        self.lm_head = _linear(head)

    # what the loader calls on every model
    def to(self, device: Any) -> LightCausalLM:
        if torch.device(device).type != "cpu":
            raise ValueError("the light model runs on CPU only")
        return self

    def eval(self) -> LightCausalLM:
        return self

    def requires_grad_(self, flag: bool = True) -> LightCausalLM:
        return self

    def get_output_embeddings(self) -> SimpleNamespace:
        return self.lm_head

    # everything else: the transformers model
    def full(self) -> Any:
        """The transformers model of the same checkpoint (loaded on first use)."""
        with self._lock:
            if self._full is None:
                m = self._model_class.from_pretrained(str(self.directory), dtype=self._dtype, local_files_only=True)
                m.eval()
                m.requires_grad_(False)
                self._full = m
            return self._full

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.full()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.full(), name)
