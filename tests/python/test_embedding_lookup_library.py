"""libember_bench_lookup.so through bench/embedding_vs_peers.py's EmberInProcess: Ember's
embedding_bag on numpy buffers (fp32 and int8 row-wise against a numpy reference on random
data), the loads-only ceiling, and bad input (a clear error, no crash).

Skipped unless EMBER_BENCH_LOOKUP_LIB names the library (ctest sets it).
"""

import os
import sys

import numpy as np
import pytest

LIB = os.environ.get("EMBER_BENCH_LOOKUP_LIB", "")
if not os.path.exists(LIB):
    pytest.skip("EMBER_BENCH_LOOKUP_LIB is not set to libember_bench_lookup.so",
                allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import embedding_vs_peers as bench  # noqa: E402

FLUSH = np.ones(1 << 10, dtype=np.uint64)


def open_lookup(table, rows, dim, fmt, ids, offsets, threads=1):
    return bench.EmberInProcess(LIB, np, table, rows, dim, fmt, ids, offsets, threads, FLUSH, 0)


def bags(rng, rows, batch, max_len):
    lengths = rng.integers(0, max_len + 1, size=batch)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = rng.integers(0, rows, size=int(offsets[-1]), dtype=np.int64)
    return ids, offsets


@pytest.mark.parametrize("threads", [1, 2])
def test_fp32_sum_matches_numpy(threads):
    rng = np.random.default_rng(7)
    rows, dim, batch = 1000, 24, 64
    table = rng.standard_normal((rows, dim), dtype=np.float32)
    ids, offsets = bags(rng, rows, batch, 9)  # some bags empty
    lookup = open_lookup(table, rows, dim, "float32", ids, offsets, threads)
    assert len(lookup.times(2)) == 2
    out = lookup.output_array(np, None, (batch, dim))
    ref = np.stack([table[ids[offsets[b]:offsets[b + 1]]].sum(axis=0, dtype=np.float64)
                    for b in range(batch)])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    if threads == 1:
        seconds, distance = lookup.ceiling(2)
        assert len(seconds) == 2 and min(seconds) >= 0
        assert distance in (0, 4, 8, 16, 32, 64)
    else:  # the loads-only ceiling is a one-thread measure
        with pytest.raises(SystemExit) as e:
            lookup.ceiling(1)
        assert "needs 1 thread" in str(e.value)
    huge, total = lookup.pages()
    assert total == table.nbytes
    lookup.close()


def int8_rowwise_table(rng, rows, dim):
    """Random int8 row-wise rows (codes, float32 scale and bias) and their float64 values."""
    packed = np.empty((rows, dim + 8), dtype=np.uint8)
    packed[:, :dim] = rng.integers(0, 256, size=(rows, dim), dtype=np.uint8)
    scale = rng.uniform(0.001, 0.02, size=rows).astype(np.float32)
    bias = rng.uniform(-1, 1, size=rows).astype(np.float32)
    packed[:, dim:dim + 4] = scale.view(np.uint8).reshape(rows, 4)
    packed[:, dim + 4:] = bias.view(np.uint8).reshape(rows, 4)
    return packed, packed[:, :dim].astype(np.float64) * scale[:, None] + bias[:, None]


def test_int8_rowwise_matches_numpy():
    rng = np.random.default_rng(11)
    rows, dim, batch = 500, 16, 32
    packed, deq = int8_rowwise_table(rng, rows, dim)
    ids, offsets = bags(rng, rows, batch, 6)
    lookup = open_lookup(packed, rows, dim, "int8_rowwise", ids, offsets)
    out = lookup.output_array(np, None, (batch, dim))
    ref = np.stack([deq[ids[offsets[b]:offsets[b + 1]]].sum(axis=0) for b in range(batch)])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
    lookup.close()


def test_int8_orders_of_sums_in_one_process():
    # Two handles on the same buffers, one in the default (fast) order and one
    # in FBGEMM's: both match numpy, and they are not the same bits (the
    # order took effect per handle, not per process).
    rng = np.random.default_rng(13)
    rows, dim, batch = 400, 64, 48
    packed, deq = int8_rowwise_table(rng, rows, dim)
    ids, offsets = bags(rng, rows, batch, 60)
    ref = np.stack([deq[ids[offsets[b]:offsets[b + 1]]].sum(axis=0) for b in range(batch)])
    outs = {}
    for order in ("fast", "fbgemm", "fast"):
        lookup = bench.EmberInProcess(LIB, np, packed, rows, dim, "int8_rowwise", ids, offsets,
                                      1, FLUSH, 0, order)
        lookup.times(1)
        out = lookup.output_array(np, None, (batch, dim))
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
        if order in outs:  # the fast order again, after FBGEMM's: the same bits
            np.testing.assert_array_equal(out, outs[order])
        outs[order] = out
        lookup.close()
    assert np.count_nonzero(outs["fast"] != outs["fbgemm"]) > 0


def test_unknown_order_of_sums_is_a_clear_error():
    rows, dim = 10, 8
    table = np.zeros((rows, dim), dtype=np.float32)
    ids, offsets = np.zeros(4, dtype=np.int64), np.array([0, 2, 4], dtype=np.int64)
    with pytest.raises(SystemExit) as e:
        bench.EmberInProcess(LIB, np, table, rows, dim, "float32", ids, offsets, 1, FLUSH, 0,
                             "fbgemm-ish")
    assert "unknown order of quantized sums 'fbgemm-ish'" in str(e.value)


def expect_open_error(capsys, message, *args):
    with pytest.raises(SystemExit) as e:
        open_lookup(*args)
    assert message in str(e.value)


def test_bad_format_is_a_clear_error(capsys):
    table = np.zeros((4, 4), dtype=np.float32)
    ids, offsets = np.array([1], dtype=np.int64), np.array([0, 1], dtype=np.int64)
    expect_open_error(capsys, "--format must be float32, float16, bfloat16 or int8_rowwise",
                      table, 4, 4, "int3", ids, offsets)


def test_out_of_range_id_is_a_clear_error(capsys):
    table = np.zeros((4, 4), dtype=np.float32)
    ids, offsets = np.array([1, 9], dtype=np.int64), np.array([0, 2], dtype=np.int64)
    with pytest.raises(SystemExit) as e:
        open_lookup(table, 4, 4, "float32", ids, offsets)
    assert "9" in str(e.value)


def test_inconsistent_offsets_are_a_clear_error(capsys):
    table = np.zeros((4, 4), dtype=np.float32)
    ids, offsets = np.array([1, 2], dtype=np.int64), np.array([0, 2, 1], dtype=np.int64)
    with pytest.raises(SystemExit) as e:
        open_lookup(table, 4, 4, "float32", ids, offsets)
    assert "offset" in str(e.value)


def test_buffers_that_do_not_match_are_clear_errors(capsys):
    table = np.zeros((4, 4), dtype=np.float32)
    ids, offsets = np.array([1], dtype=np.int64), np.array([0, 1], dtype=np.int64)
    expect_open_error(capsys, "the table must be a contiguous 0 x 16-byte", table, 0, 4,
                      "float32", ids, offsets)
    expect_open_error(capsys, "the table must be a contiguous 8 x 16-byte", table, 8, 4,
                      "float32", ids, offsets)
    expect_open_error(capsys, "the table must be a contiguous 4 x 16-byte",
                      np.zeros((4, 8), dtype=np.float32)[:, ::2], 4, 4, "float32", ids, offsets)
    expect_open_error(capsys, "ids must be a contiguous 1-D int64 array", table, 4, 4,
                      "float32", ids.astype(np.int32), offsets)
    expect_open_error(capsys, "offsets must be a contiguous 1-D int64 array", table, 4, 4,
                      "float32", ids, np.array([0, 1, 2, 3])[::2])
