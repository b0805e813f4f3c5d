"""A GGUF file's metadata parsed once, and faster, while transformers converts it (:func:`parsed_once`).

transformers reads a GGUF file's metadata three times per conversion (tokenizer, config, weights), each time
through ``gguf.GGUFReader``, which slices its memory map once per value: a vocabulary of 262,144 tokens (Gemma 3)
is half a million slices of a ``numpy.memmap``, each through the subclass's Python hooks, then each token's bytes
are turned into a string one number at a time. While a conversion runs:

* the first reader of the file is kept for the other two parses;
* that reader parses the metadata from a plain array over the same mapped bytes (the same values, slices without
  the memory-map subclass's hooks); the tensors it describes still read from the memory map, as before;
* a string value is decoded from its bytes at once (``bytes(array).decode()``, what transformers' own decoding of
  the same bytes gives);
* GGUF's tensor-name map is built once (transformers builds it anew per submodule: 15 s of CPU for Gemma 3).

Nothing else changes: the parsed values, and so the converted files, are the same (the tests compare the store's
conversion with transformers' own load of the GGUF file, without any of this). Where a library lacks what is
replaced here (other versions), that part is left as it is.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_STRING, _ARRAY = 8, 9  # GGUFValueType.STRING, GGUFValueType.ARRAY


def _plain_fields_reader(original: Any) -> Any:
    """``original`` (``gguf.GGUFReader``) parsing its metadata from a plain ``numpy.ndarray`` view of its map."""
    import numpy as np

    class PlainFieldsReader(original):
        def _build_fields(self, offs: int, count: int) -> Any:
            return self._over_plain_array(super()._build_fields, offs, count)

        def _build_tensor_info(self, offs: int, count: int) -> Any:
            return self._over_plain_array(super()._build_tensor_info, offs, count)

        def _over_plain_array(self, parse: Any, *args: Any) -> Any:
            mapped: Any = getattr(self, "data")  # noqa: B009 - set by the reader it derives from
            self.data = mapped.view(np.ndarray)  # the same bytes, sliced without memmap's hooks
            try:
                return parse(*args)
            finally:
                self.data = mapped

    return PlainFieldsReader


def _fast_strings(original: Any) -> Any:
    """transformers' ``_gguf_parse_value`` with a string's bytes decoded at once."""
    import numpy as np

    def parse_value(value: Any, data_type: Any) -> Any:
        types = data_type if isinstance(data_type, list) else [data_type]
        if types in ([_STRING], [_ARRAY, _STRING]) and getattr(value, "dtype", None) == np.uint8:
            return bytes(value).decode()
        return original(value, data_type)

    return parse_value


@contextlib.contextmanager
def parsed_once(path: Path) -> Iterator[None]:
    """While the GGUF file ``path`` is converted (module docstring)."""
    try:
        import gguf
    except ImportError:  # transformers says what is missing
        yield
        return
    original, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    plain = _plain_fields_reader(original) if hasattr(original, "_build_fields") else original
    target, kept = os.path.realpath(path), list[Any]()

    def reader(file: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or os.path.realpath(file) != target:
            return original(file, *args, **kwargs)
        if not kept:
            kept.append(plain(file))
        return kept[0]

    tf_gguf: Any = None
    try:
        from transformers import modeling_gguf_pytorch_utils as tf_gguf
    except ImportError:
        pass
    parse_value = getattr(tf_gguf, "_gguf_parse_value", None)
    setattr(gguf, "GGUFReader", reader)  # noqa: B010 - a class replaced by a function for the conversion
    gguf.get_tensor_name_map = functools.cache(name_map)
    if parse_value is not None:
        tf_gguf._gguf_parse_value = _fast_strings(parse_value)
    try:
        yield
    finally:
        setattr(gguf, "GGUFReader", original)  # noqa: B010
        gguf.get_tensor_name_map = name_map
        if parse_value is not None:
            tf_gguf._gguf_parse_value = parse_value
