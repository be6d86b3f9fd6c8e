"""CATLASS example 10 end to end: bit-exact against the golden, split across cores as CATLASS splits it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py import golden
from catlass_py.data import example10_inputs
from catlass_py.errors import ArgumentError
from catlass_py.gemm.block import GemmIdentityBlockSwizzle
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant as gmm

BF16 = ml_dtypes.bfloat16


def _inputs(group_sizes, n, k, *, seed=0, out=BF16, extra_rows=0):
    """Random int8 operands and scales for explicit group sizes (m = sum + extra_rows)."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray(group_sizes, np.int64)
    m = int(sizes.sum()) + extra_rows
    g = len(sizes)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (g, k, n), dtype=np.int8)
    # fp16 D must stay below 65504: |acc| reaches ~128*128*k, so its scales are smaller.
    mag = 1.0 if out is BF16 else 1.0 / (128 * k)
    scale = ((rng.random((g, n)) * 2 - 0.5) * mag).astype(out)
    pts = rng.random(m).astype(out)
    return a, b, np.cumsum(sizes).astype(np.int64), scale, pts


def _check_bit_exact(a, b, gl, scale, pts, **kw):
    d = gmm(a, b, gl, scale, pts, **kw)
    expect = golden.grouped_matmul_slice_m_per_token_dequant(a, b, gl, scale, pts)
    assert d.dtype == scale.dtype and d.shape == (a.shape[0], b.shape[2])
    # D must equal the golden rounded once to the output type (bit for bit), and rows past the last
    # prefix must be zero.
    want = expect.astype(scale.dtype)
    assert np.array_equal(d.view(np.uint16), want.view(np.uint16)), np.argwhere(d.view(np.uint16) != want.view(np.uint16))[:5]
    assert not d[int(gl[-1]):].astype(np.float32).any()
    assert golden.compare_data(d, expect, a.shape[1], valid=int(gl[-1]) * b.shape[2]).passed
    return d


def test_catlass_host_data_small_shape_bit_exact():
    x = example10_inputs(8, 200, 300, 700)
    _check_bit_exact(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=4)


@pytest.mark.parametrize(
    "sizes, n, k, cores",
    [
        ([0, 3, 0, 0, 1, 1, 40, 0], 256, 512, 2),  # empty groups (also first and last), 1-row groups
        ([130, 7], 300, 700, 7),  # m tail beyond one 128-row block, n not a multiple of 256, k not of 512
        ([33, 64, 1], 96, 100, 1),  # one core; k below one L1 tile and not a multiple of 128
        ([5, 150], 512, 1056, 24),  # more cores than blocks; k = 2 L1 tiles + 32
        ([17], 16, 32, 3),  # n below one fractal column panel, single K fractal
    ],
)
def test_bit_exact_across_shapes_and_core_counts(sizes, n, k, cores):
    a, b, gl, scale, pts = _inputs(sizes, n, k, seed=len(sizes) + k)
    _check_bit_exact(a, b, gl, scale, pts, core_num=cores)


def test_rows_past_the_last_prefix_stay_zero():
    a, b, gl, scale, pts = _inputs([10, 20], 64, 64, extra_rows=9)
    d = _check_bit_exact(a, b, gl, scale, pts, core_num=2)
    assert d.shape[0] == 39


def test_float16_outputs_and_scales():
    a, b, gl, scale, pts = _inputs([40, 0, 90], 128, 256, out=np.float16)
    _check_bit_exact(a, b, gl, scale, pts, core_num=3)


def test_int32_accumulation_at_the_int8_extremes():
    # |acc| reaches 128*128*3000 = 49M: exact int32, but not exact in float32 partial sums of the whole K.
    k, n = 3000, 64
    a = np.full((20, k), -128, np.int8)
    b = np.full((1, k, n), -128, np.int8)
    b[0, ::7] = 127
    scale = np.ones((1, n), BF16)
    pts = np.ones(20, BF16)
    _check_bit_exact(a, b, np.array([20], np.int64), scale, pts, core_num=2)


def test_interleaving_seed_does_not_change_the_result():
    a, b, gl, scale, pts = _inputs([50, 3, 80], 300, 600)
    outs = [gmm(a, b, gl, scale, pts, core_num=3, seed=s) for s in (None, 1, 2)]
    for d in outs[1:]:
        assert np.array_equal(d.view(np.uint16), outs[0].view(np.uint16))


def test_inputs_are_never_modified():
    a, b, gl, scale, pts = _inputs([12, 0, 30], 64, 96)
    before = [x.copy() for x in (a, b, gl, scale, pts)]
    gmm(a, b, gl, scale, pts, core_num=2)
    with pytest.raises(ArgumentError):
        gmm(a, b, gl, scale, pts, core_num=99)
    for x, y in zip((a, b, gl, scale, pts), before):
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8))


# -- the split across cores ---------------------------------------------------------------------------


def _expected_blocks(gl, n, l1m=128, l1n=256):
    """Global block sequence of kernel 10: groups in order, blocks in GemmIdentityBlockSwizzle<3,0> order."""
    seq, prev = [], 0
    for g, v in enumerate(gl):
        mg = int(v) - prev
        sched = GemmIdentityBlockSwizzle(3, 0).update((mg, n, 1), (l1m, l1n))
        for loop in range(sched.get_core_loops()):
            c = sched.get_block_coord(loop)
            s = sched.get_actual_block_shape(c)
            seq.append((g, c.m, c.n, s.m, s.n, prev + c.m * l1m))
        prev = int(v)
    return seq


def test_blocks_are_dealt_round_robin_and_computed_once():
    sizes = [300, 0, 1, 129, 0, 64]
    n, cores = 600, 5
    a, b, gl, scale, pts = _inputs(sizes, n, 128)
    _, report = gmm(a, b, gl, scale, pts, core_num=cores, return_report=True)
    expected = _expected_blocks(gl, n)
    assert len(expected) == 3 * 3 + 1 * 3 + 2 * 3 + 1 * 3
    got = {}
    for core, blocks in report.blocks.items():
        for blk in blocks:
            key = (blk["group"], blk["m_idx"], blk["n_idx"], blk["rows"], blk["cols"], blk["row"])
            assert key not in got, f"block {key} computed twice"
            got[key] = core
    assert set(got) == set(expected)
    for j, key in enumerate(expected):
        assert got[key] == j % cores, (j, key)
    counts = report.blocks_per_core()
    assert max(counts) - min(counts) <= 1
    assert sum(counts) == len(expected)


def test_vector_cores_take_alternating_32_row_tiles_and_cover_every_row_once():
    sizes = [100, 1, 33]
    n = 300
    a, b, gl, scale, pts = _inputs(sizes, n, 64)
    _, report = gmm(a, b, gl, scale, pts, core_num=2, return_report=True)
    covered = np.zeros((int(gl[-1]), n), np.int32)
    for (core, sub), tiles in report.tiles.items():
        for t in tiles:
            row, col = divmod(t["d_offset"], n)  # element offset of the tile's origin in D
            covered[row:row + t["rows"], col:col + t["cols"]] += 1
            # Sub-block s takes the block's tiles s, s+2, ...; with the Horizontal swizzle and 256-wide blocks
            # tile i is the block's i-th band of 32 rows.
            assert t["tile"] % 2 == sub
            assert t["row"] % 128 == 32 * t["tile"]
            assert t["rows"] <= 32 and t["cols"] <= 256
    assert (covered == 1).all()


def test_a_vector_core_without_rows_still_completes_the_flag_handshake():
    # Every group has <= 32 rows: AIV1 never gets a tile, yet its AIC can only finish if it sets "computed".
    sizes = [5, 32, 1, 17]
    a, b, gl, scale, pts = _inputs(sizes, 256, 64)
    _, report = gmm(a, b, gl, scale, pts, core_num=2, return_report=True)
    blocks = report.blocks_per_core()
    for core in range(2):
        assert report.tiles.get((core, 1), []) == []
        aiv1 = next(c for c in report.flags if c.short == f"AIV{core}.1")
        aic = next(c for c in report.flags if c.short == f"AIC{core}")
        traffic = report.flags[aiv1]
        # Two workspace stages: waits on "stored" flags 0/2 and sets of "computed" flags 1/3, once per block.
        assert sum(traffic.waits.values()) == blocks[core] == sum(traffic.sets.values())
        assert set(traffic.waits) <= {0, 2} and set(traffic.sets) <= {1, 3}
        assert sum(report.flags[aic].waits.values()) == blocks[core]


# -- bad input ------------------------------------------------------------------------------------------


@pytest.fixture
def good():
    return _inputs([4, 6], 32, 64)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda a, b, gl, s, p: (a.astype(np.int16), b, gl, s, p), "a: expected dtype int8"),
        (lambda a, b, gl, s, p: (a, b[0], gl, s, p), "b: expected a 3-D array"),
        (lambda a, b, gl, s, p: (a, b[:, :-1], gl, s, p), "b: expected shape"),
        (lambda a, b, gl, s, p: (a, b, gl.astype(np.int32), s, p), "group_list: expected dtype int64"),
        (lambda a, b, gl, s, p: (a, b, gl[::-1].copy(), s, p), "must not decrease"),
        (lambda a, b, gl, s, p: (a, b, gl - 5, s, p), ">= 0"),
        (lambda a, b, gl, s, p: (a, b, gl + 1, s, p), "<= m = 10"),
        (lambda a, b, gl, s, p: (a, b, gl[:1].copy(), s, p), "one per group"),
        (lambda a, b, gl, s, p: (a, b, gl, s.astype(np.float32), p), "scale: expected dtype"),
        (lambda a, b, gl, s, p: (a, b, gl, s[:, :-1], p), "scale: expected shape"),
        (lambda a, b, gl, s, p: (a, b, gl, s, p[:-1]), "per_token_scale: expected shape"),
        (lambda a, b, gl, s, p: (a, b, gl, s, p.astype(np.float16)), "per_token_scale: expected dtype bfloat16"),
        (lambda a, b, gl, s, p: (a[:, :0], b[:, :0], gl, s, p), "k == 0"),
        (lambda a, b, gl, s, p: (a, b, list(gl), s, p), "group_list: expected an array"),
    ],
)
def test_bad_input_raises_argument_error_naming_it(good, mutate, match):
    with pytest.raises(ArgumentError, match=match):
        gmm(*mutate(*good), core_num=2)


@pytest.mark.parametrize("cores", [0, 25, -1, 2.5, True])
def test_core_num_outside_the_arch(good, cores):
    with pytest.raises(ArgumentError, match="core_num"):
        gmm(*good, core_num=cores)


def test_k_zero_would_deadlock_the_kernel(good):
    """The reason the op refuses k == 0: launched directly, the CATLASS kernel deadlocks (no block ever
    stores, so the AIVs wait forever); the simulator reports it instead of hanging."""
    import time

    from catlass_py.arch import GlobalBuffer
    from catlass_py.errors import DeadlockError
    from catlass_py.gemm import GemmCoord
    from catlass_py.kernel import DeviceGemm
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

    a, b, gl, s, p = good
    kernel = build_kernel()
    gm = {n: GlobalBuffer.from_array(x, n, read_only=True).tensor(x.dtype)
          for n, x in (("a", a[:, :0]), ("b", b[:, :0]), ("gl", gl), ("s", s), ("p", p))}
    d = GlobalBuffer.empty(10 * 32 * 2, "d").tensor("bfloat16")
    op = DeviceGemm(kernel)
    op.initialize(kernel.Arguments(GemmCoord(10, 32, 0), 2, 2, gm["gl"], gm["a"], gm["b"], gm["s"], gm["p"], d))
    t0 = time.perf_counter()
    with pytest.raises(DeadlockError, match="AIV 0 .* waits on flag 0"):
        op.run(2)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.slow
def test_readme_shape_bit_exact():
    x = example10_inputs(128, 512, 1024, 2048)
    _check_bit_exact(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=24)
