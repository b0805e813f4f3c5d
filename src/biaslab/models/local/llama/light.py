"""A Llama checkpoint's weights and configs without transformers' model classes, for the engine.

Importing transformers' modeling code takes longer than everything else in loading a small
model (2-4 s of imports on 2 cores, against ~1.3 s for torch and 0.02 s to map the
safetensors file). :class:`~.engine.LlamaEngine` needs only the weight tensors and a few config
values, so for a checkpoint it supports (:func:`light_supported`) the loader builds a
:class:`LightCausalLM`: the same tensor names (``model.layers[i].self_attn.q_proj.weight``, ...)
as plain attributes, ``config`` and ``generation_config`` read from their JSON files.

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

_LIGHT_TYPES = ("llama",)


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
    from biaslab.models.local.llama.engine import supports

    cfg = read_config(directory)
    if cfg is None or getattr(cfg, "model_type", None) not in _LIGHT_TYPES or not getattr(cfg, "num_hidden_layers", 0):
        return False
    return supports(SimpleNamespace(config=cfg)) and not getattr(cfg, "quantization_config", None)


def _linear(weight: torch.Tensor) -> SimpleNamespace:
    return SimpleNamespace(weight=weight)


class LightCausalLM:
    """A Llama-architecture checkpoint as tensors (see the module); the transformers model on demand."""

    def __init__(self, directory: Path, dtype: torch.dtype, model_class: Any) -> None:
        from safetensors.torch import load_file

        self.directory = Path(directory)
        self._dtype = dtype
        self._model_class = model_class
        self._full: Any = None
        self._lock = threading.Lock()
        cfg = read_config(self.directory)
        assert cfg is not None
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

        def layer(i: int) -> SimpleNamespace:
            p = f"model.layers.{i}."
            w = {n: _linear(sd[f"{p}{n}.weight"]) for n in (
                "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")}
            attn = SimpleNamespace(q_proj=w["self_attn.q_proj"], k_proj=w["self_attn.k_proj"],
                                   v_proj=w["self_attn.v_proj"], o_proj=w["self_attn.o_proj"])
            mlp = SimpleNamespace(gate_proj=w["mlp.gate_proj"], up_proj=w["mlp.up_proj"],
                                  down_proj=w["mlp.down_proj"])
            return SimpleNamespace(self_attn=attn, mlp=mlp,
                                   input_layernorm=_linear(sd[f"{p}input_layernorm.weight"]),
                                   post_attention_layernorm=_linear(sd[f"{p}post_attention_layernorm.weight"]))

        self.model = SimpleNamespace(embed_tokens=_linear(embed), norm=_linear(sd["model.norm.weight"]),
                                     layers=[layer(i) for i in range(int(cfg.num_hidden_layers))])
        self.lm_head = _linear(head)

    # what the loader calls on every model
    def to(self, device: Any) -> LightCausalLM:
        if torch.device(device).type != "cpu":
            raise ValueError("the light Llama model runs on CPU only")
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
