"""Example 03 / MatmulEpilogue (D = A @ B + X): shapes against the golden, the split of blocks and tiles,
the CrossCoreFlagWithReverse back-pressure, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, run_device, tile_counts

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.cross_core_sync import CrossCoreFlagWithReverse
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import matmul_add as assembly
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2ElemWiseOneSource
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import (
    GemmCoord,
    GemmType,
    MmadAtlasA2Pingpong,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
)
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.matmul_epilogue import MatmulEpilogue
from catlass_py.layout import RowMajor
from catlass_py.ops.matmul_add import matmul_add
from catlass_py.ops.operator import gm_input, gm_output
from catlass_py.tile import EpilogueTileCopy
from catlass_py.tile.vector_elementwise import TileElemWiseAdd

EX = importlib.import_module("catlass_py.examples.03_matmul_add")


def _inputs(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-5, 5, s).astype(dtype) for s in ((m, k), (k, n), (m, n)))


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),          # smaller than one tile, one core
    (5, 40, 33, 4),        # more cores than blocks
    (128, 256, 256, 1),    # exactly one block
    (129, 257, 513, 3),    # tails in m, n, k
    (300, 20, 70, 2),      # n smaller than one tile, several block rows
])
def test_shapes(m, n, k, cores):
    a, b, x = _inputs(m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b, x)]
    d, report = matmul_add(a, b, x, core_num=cores, return_report=True)
    assert d.dtype == np.float16 and d.shape == (m, n)
    assert golden.compare_data(d, golden.matmul_add(a, b, x), k).passed
    assert all(np.array_equal(u, v) for u, v in zip((a, b, x), before))
    assert_once(block_counts(report, (m, n)))
    assert_once(tile_counts(report, (m, n)))
    assert len(report.blocks_per_core()) == cores


def test_bf16_and_column_major_operands():
    a, b, x = _inputs(70, 300, 90, ml_dtypes.bfloat16)
    d = matmul_add(a, b, x, layout_a="column_major", layout_b="column_major", core_num=2)
    assert d.dtype == ml_dtypes.bfloat16
    # The device rounds C to bf16 before adding X (bf16 + bf16 -> bf16): compare with that C, since the
    # golden's fp32 C + X is more accurate than two bf16 roundings under cancellation.
    c16 = golden.matmul(a, b).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert golden.compare_data(d, c16 + x.astype(np.float32), 90).passed


def test_reverse_flag_back_pressure_over_15_blocks():
    # 20 blocks on one AI core: the AIC sets flag 0 twenty times and waits once for the reverse flag 1,
    # which each vector core sets after its 15th wait.
    m, n, k = 4 * 128, 5 * 256, 16
    a, b, x = _inputs(m, n, k)
    kernel = assembly.assemble(swizzle_direction=1)
    d = x.copy()
    rec = WorkloadRecorder()
    args = kernel.Arguments(GemmCoord(m, n, k), 2, gm_input("a", a), gm_input("b", b), gm_output("d", d))
    run_device(kernel, args, 1, observers=(rec,))
    assert golden.compare_data(d, golden.matmul_add(a, b, x), k).passed
    flags = {c.short: t for c, t in rec.report.flags.items()}
    assert flags["AIC0"].sets[0] == 20 and flags["AIC0"].waits[1] == 1
    assert flags["AIV0.0"].waits[0] == 20 and flags["AIV0.0"].sets[1] == 1


def test_interleavings_agree():
    a, b, x = _inputs(200, 600, 100)
    ref = matmul_add(a, b, x, core_num=2)
    kernel = assembly.assemble(swizzle_direction=1)
    for seed in (1, 5):
        d = x.copy()
        args = kernel.Arguments(GemmCoord(200, 600, 100), 2, gm_input("a", a), gm_input("b", b), gm_output("d", d))
        run_device(kernel, args, 2, options=LaunchParams(seed=seed, preempt_on_set=True, detect_races=True))
        assert np.array_equal(d, ref)


def test_example_run():
    res = EX.run(["200", "300", "100"], cores=2)
    assert res.passed and res.blocks_per_core == [2, 2]
    assert res.details["tiles_per_aiv"] == {"AIV0.0": 2, "AIV0.1": 2, "AIV1.0": 2, "AIV1.1": 2}


def test_empty_output():
    a, b, x = _inputs(0, 30, 20)
    assert matmul_add(a, b, x, core_num=2).shape == (0, 30)


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.float32)}, "dtype"),
    ({"x": np.zeros((4, 4), ml_dtypes.bfloat16)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"x": np.zeros((4, 5), np.float16)}, "x"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"layout_b": "diagonal"}, "layout_b"),
    ({"core_num": 0}, "core_num"),
    ({"b": [[1.0]]}, "expected an array"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16),
            "x": np.zeros((4, 4), np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        matmul_add(args.pop("a"), args.pop("b"), args.pop("x"), **args)


def test_assembly_errors():
    t = GemmType("float16", RowMajor)
    mmad = BlockMmad(MmadAtlasA2Pingpong(True), (128, 256, 256), (128, 256, 64), t, t, t)
    copy = EpilogueTileCopy(mmad.arch, t, t, None, t)
    epi = BlockEpilogue(EpilogueAtlasA2ElemWiseOneSource(), t, t, t, TileElemWiseAdd(mmad.arch, t, 16384), copy)
    swz = GemmIdentityBlockSwizzle(3, 0)
    MatmulEpilogue(mmad, epi, swz)  # the example's assembly is fine
    async_mmad = BlockMmad(MmadAtlasA2PreloadAsync(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="synchronous"):
        MatmulEpilogue(async_mmad, epi, swz)
    preload = BlockMmad(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="only MmadAtlasA2Pingpong"):
        MatmulEpilogue(preload, epi, swz)
    small = BlockEpilogue(EpilogueAtlasA2ElemWiseOneSource(), t, t, t, TileElemWiseAdd(mmad.arch, t, 8192), copy)
    with pytest.raises(ConfigError, match="COMPUTE_LENGTH"):
        MatmulEpilogue(mmad, small, swz)
    with pytest.raises(ConfigError, match="UB out of bounds"):
        BlockEpilogue(EpilogueAtlasA2ElemWiseOneSource(), t, t, t, TileElemWiseAdd(mmad.arch, t, 40000), copy)
    f32 = GemmType("float32", RowMajor)
    with pytest.raises(ConfigError, match="same"):
        BlockEpilogue(EpilogueAtlasA2ElemWiseOneSource(), f32, t, t, TileElemWiseAdd(mmad.arch, t, 16384), copy)
    with pytest.raises(ConfigError, match="REVERSE_DEPTH"):
        CrossCoreFlagWithReverse(0, 1, depth=16)


def test_removing_the_vector_wait_is_caught(monkeypatch):
    # Toggle test: without the AIV's wait on flag 0 the vector cores read C before the cube stored it.
    import catlass_py.kernel.matmul_epilogue as mod
    from catlass_py.errors import RaceError

    monkeypatch.setattr(mod, "cross_core_wait_flag_with_reverse", lambda ctx, flag, mode, pipe: None)
    a, b, x = _inputs(200, 300, 64)
    kernel = assembly.assemble(swizzle_direction=1)
    args = kernel.Arguments(GemmCoord(200, 300, 64), 2, gm_input("a", a), gm_input("b", b),
                            gm_output("d", x.copy()))
    with pytest.raises(RaceError, match="workspace"):
        run_device(kernel, args, 1, options=LaunchParams(detect_races=True))
