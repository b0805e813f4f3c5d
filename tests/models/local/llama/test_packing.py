"""The engine's weights laid out for oneDNN: the same numbers as the plain weights, rows independent of the rows
beside them (so a lone sequence decodes one row, not a block of eight), and the plain weights kept where the
layout is missing, does not fit or does not keep rows independent."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
packing = pytest.importorskip("biaslab.models.local.llama.packing")

needs_onednn = pytest.mark.skipif(not packing.available(), reason="this torch lacks oneDNN's linear")


def _weights() -> list:
    g = torch.Generator().manual_seed(3)
    return [torch.randn(96, 64, generator=g), torch.randn(64, 96, generator=g), torch.randn(96, 64, generator=g)]


def test_fits_takes_half_of_the_memory_beyond_the_reserve():
    free = packing.RESERVE_BYTES + 2000
    assert packing.fits(1000, free=free) and not packing.fits(1001, free=free)
    assert not packing.fits(1, free=packing.RESERVE_BYTES // 2)  # less than the reserve: nothing fits


@needs_onednn
def test_laid_out_products_give_the_plain_numbers_and_independent_rows():
    weights = _weights()
    done = packing.pack(weights, 8, free=1 << 40)
    assert done.packed and done.row_multiple == 1 and all(w.is_mkldnn for w in done.weights)
    x = torch.randn(11, 64, generator=torch.Generator().manual_seed(4))
    for plain, laid_out in zip(weights[:1], done.weights[:1]):
        full = packing.linear(x, laid_out)
        assert torch.equal(full, packing.linear(x, plain))  # from two rows on, the plain weights' numbers
        assert torch.allclose(full, x @ plain.T, atol=1e-4)
        for n in (1, 2, 5):
            assert torch.equal(packing.linear(x[3 : 3 + n], laid_out), full[3 : 3 + n])


@needs_onednn
def test_the_plain_weights_stay_where_the_layout_does_not_fit_or_apply():
    weights = _weights()
    too_big = packing.pack(weights, 8, free=packing.RESERVE_BYTES + 1000)
    assert not too_big.packed and too_big.row_multiple == 8 and "memory" in too_big.reason
    assert all(a is b for a, b in zip(too_big.weights, weights))
    halves = packing.pack([w.to(torch.bfloat16) for w in weights], 8, free=1 << 40)
    assert not halves.packed and "float32" in halves.reason


@needs_onednn
def test_a_kernel_whose_rows_depend_on_their_company_keeps_the_blocks_of_rows(monkeypatch):
    real = packing.linear

    def lone_row_differs(x, w):  # as a matrix-vector kernel for one row would
        y = real(x, w)
        return y + 1e-6 if x.shape[0] == 1 else y

    monkeypatch.setattr(packing, "linear", lone_row_differs)
    done = packing.pack(_weights(), 8, free=1 << 40)
    assert not done.packed and done.row_multiple == 8 and "(96, 64)" in done.reason


@needs_onednn
def test_a_lone_sequence_decodes_one_row_with_the_tokens_it_gets_in_a_batch(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.sampling import Decoding

    plain, laid_out = LlamaEngine(tiny_llama, pack=False), LlamaEngine(tiny_llama)
    assert (plain.row_multiple, laid_out.row_multiple) == (8, 1) and laid_out.layout == "laid out"
    prompts = [[1, 5 + i, 9, 2 * i % 97, 40] for i in range(6)]
    decodings = [Decoding(1.0, 0.9, 6, 70 + i) for i in range(6)]

    def run(engine, idx):
        out = {}
        engine.generate(
            [prompts[i] for i in idx], [decodings[i] for i in idx], set(), lambda k, t, r, n: out.update({idx[k]: t})
        )
        return out

    rows: list[int] = []
    forward = laid_out.forward

    def counting(tokens, *args, **kwargs):
        if tokens.shape[1] == 1:
            rows.append(tokens.shape[0])
        return forward(tokens, *args, **kwargs)

    threads = torch.get_num_threads()
    with torch.inference_mode():
        batch_plain, batch = run(plain, range(6)), run(laid_out, range(6))
        laid_out.forward = counting
        alone = run(laid_out, [4])
    assert batch == batch_plain and alone[4] == batch[4]
    assert len({tuple(t) for t in batch.values()}) > 1
    assert rows and set(rows) == {1}  # no padding rows in its steps
    assert torch.get_num_threads() == threads
