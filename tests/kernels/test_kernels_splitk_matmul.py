"""Example 09 / SplitkMatmul + SplitkReduceAdd: the split-K scheduler and factor, shapes against the golden,
the split of block tasks and reduction ranges, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import run_device

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import splitk_matmul as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord
from catlass_py.gemm.block import (
    GemmIdentityBlockSwizzle,
    SplitkGemmIdentityBlockSwizzle,
)
from catlass_py.kernel.splitk_matmul import SplitkMatmul, SplitkReduceAdd
from catlass_py.ops.operator import as_stored, gm_input, gm_output
from catlass_py.ops.splitk_matmul import splitk_matmul

EX = importlib.import_module("catlass_py.examples.09_splitk_matmul")


def _inputs(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-5, 5, s).astype(dtype) for s in ((m, k), (k, n)))


def test_scheduler_deals_k_tiles_to_slices():
    s = SplitkGemmIdentityBlockSwizzle(3, 0).update((300, 600, 2600), (128, 256, 256), 4)  # Lk = 11
    assert s.get_core_loops() == 3 * 3 * 4
    assert [s.get_k_idx_by_splitk_slice_idx(i) for i in range(4)] == [0, 3, 6, 9]
    shapes = [s.get_actual_block_shape(s.get_block_coord(t), s.get_splitk_slice_idx(t)).k for t in range(0, 36, 9)]
    assert shapes == [768, 768, 768, 2600 - 9 * 256]
    ident = GemmIdentityBlockSwizzle(3, 0).update((300, 600, 2600), (128, 256))
    for t in range(36):  # the (m, n) order is GemmIdentityBlockSwizzle's, slice by slice
        bc, ib = s.get_block_coord(t), ident.get_block_coord(t % 9)
        assert (bc.m, bc.n) == (ib.m, ib.n)


def test_splitk_factor_rules():
    kernel = assembly.assemble()
    f = kernel.get_splitk_factor
    assert f(128, 256, 1024, 24) == 2     # one block, k <= 1024: at most 2 slices
    assert f(128, 256, 4096, 24) == 8     # k <= 4096: at most 8
    assert f(128, 256, 300, 24) == 2      # ... and never more than the K tiles
    assert f(2000, 2000, 1000, 20) == 1   # plenty of blocks: no split
    assert f(2000, 2000, 9000, 20) == 2   # k > 8192: at least 2
    assert f(2000, 2000, 40000, 20) == 4  # k > 32768: at least 4


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),           # one element, one core
    (20, 60, 3000, 6),      # one block split 6 ways, more cores than blocks
    (129, 257, 700, 4),     # tails, factor 1 (4 blocks on 4 cores)
    (100, 100, 9000, 2),    # k > 8192 forces two slices
])
def test_shapes(m, n, k, cores):
    a, b = _inputs(m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b)]
    c, report = splitk_matmul(a, b, core_num=cores, return_report=True)
    assert c.dtype == np.float16 and golden.compare_data(c, golden.matmul(a, b), k).passed
    assert all(np.array_equal(u, v) for u, v in zip((a, b), before))
    factor = assembly.assemble().get_splitk_factor(m, n, k, cores)
    tasks = [b for blocks in report.blocks.values() for b in blocks]
    cover = np.zeros((factor, m, n), np.int32)
    ksum = np.zeros((m, n), np.int64)
    for t in tasks:
        cover[t["slice"], t["row"]:t["row"] + t["rows"], t["col"]:t["col"] + t["cols"]] += 1
        ksum[t["row"]:t["row"] + t["rows"], t["col"]:t["col"] + t["cols"]] += t["k"]
    assert (cover == 1).all() and (ksum == k).all()  # every slice of every block once; slices cover K
    flat = np.zeros(m * n, np.int32)
    for tiles in report.tiles.values():
        for t in tiles:
            flat[t["offset"]:t["offset"] + t["count"]] += 1
    assert (flat == 1).all()


def test_bf16_fp32_out_and_interleavings():
    a, b = _inputs(60, 80, 2000, ml_dtypes.bfloat16)
    c = splitk_matmul(a, b, out_dtype="float32", layout_b="row_major", core_num=4)
    assert c.dtype == np.float32 and golden.compare_data(c, golden.matmul(a, b), 2000).passed
    kernel = assembly.assemble()
    ref = splitk_matmul(a.astype(np.float16), b.astype(np.float16), core_num=4, kernel=kernel)
    for seed in (4, 9):
        out = np.zeros((60, 80), np.float16)
        args = kernel.Arguments(GemmCoord(60, 80, 2000), 4, 4, gm_input("a", a.astype(np.float16)),
                                gm_input("b", as_stored(b.astype(np.float16), kernel.block_mmad.b_type.layout)),
                                gm_output("c", out))
        rec = WorkloadRecorder()
        run_device(kernel, args, 4, observers=(rec,), options=LaunchParams(seed=seed, preempt_on_set=True,
                                                                          detect_races=True))
        assert np.array_equal(out, ref)


def test_example_run():
    res = EX.run(["20", "60", "3000"], cores=6)
    assert res.passed and res.details["splitk_factor"] == 6 and res.blocks_per_core == [1] * 6


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.int8)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"out_dtype": "int32"}, "out_dtype"),
    ({"core_num": 25}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        splitk_matmul(args.pop("a"), args.pop("b"), **args)


def test_assembly_errors():
    k = assembly.assemble()
    with pytest.raises(ConfigError, match="UB space"):
        SplitkReduceAdd(k.arch, "float32", "float16", 2, 49152)
    with pytest.raises(ConfigError, match="float"):
        SplitkReduceAdd(k.arch, "int32", "float16", 1, 1024)
    with pytest.raises(ConfigError, match="split-K scheduler"):
        SplitkMatmul(k.block_mmad, None, GemmIdentityBlockSwizzle(), k.reduce_add)
    with pytest.raises(ConfigError, match="reads"):
        SplitkMatmul(k.block_mmad, None, k.block_scheduler, SplitkReduceAdd(k.arch, "float16", "float16", 1, 1024))
    with pytest.raises(ConfigError, match="void"):
        SplitkMatmul(k.block_mmad, object(), k.block_scheduler, k.reduce_add)
