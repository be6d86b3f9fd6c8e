"""Example 34 / SingleCoreSplitkMatmul: the scheduler (ranges, serpentine order, merged tail strip), the NZ
padding prologue, atomic accumulation of K tiles, shapes against the golden, the split, errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, run_device, tile_counts

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import single_core_splitk_matmul as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, GemmType, MmadAtlasA2SingleCoreSplitk
from catlass_py.gemm.block import (
    BlockMmad,
    GemmIdentityBlockSwizzle,
    SingleCoreSplitkGemmIdentityBlockSwizzle,
)
from catlass_py.kernel.single_core_slicek_matmul import SingleCoreSplitkMatmul
from catlass_py.layout import RowMajor, zN
from catlass_py.ops.operator import as_stored, gm_input, gm_output
from catlass_py.ops.single_core_splitk_matmul import single_core_splitk_matmul

EX = importlib.import_module("catlass_py.examples.34_single_core_splitk_matmul")
OP = single_core_splitk_matmul


def _inputs(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-5, 5, s).astype(dtype) for s in ((m, k), (k, n)))


@pytest.mark.parametrize("lm,ln,s,d", [(7, 5, 3, 0), (5, 7, 3, 1), (4, 9, 20, 1), (41, 3, 20, 0), (2, 22, 20, 1),
                                       (9, 4, 4, 0), (4, 9, 4, 1), (1, 1, 1, 0)])
def test_scheduler_is_a_bijection_with_contiguous_ranges(lm, ln, s, d):
    problem, tile = (lm * 16, ln * 16, 100), (16, 16, 32)
    cores = 5
    seen = []
    for core in range(cores):
        sch = SingleCoreSplitkGemmIdentityBlockSwizzle(s, d).update(problem, tile, cores, core)
        loops = sch.get_single_core_loops()
        assert loops == 4 * sch.mn_loop_range_len
        coords = [sch.get_block_coord(i) for i in range(loops)]
        assert [c.k for c in coords] == sorted(c.k for c in coords)  # K outermost
        assert [sch.is_atomic_add(i) for i in range(loops)] == [c.k != 0 for c in coords]
        seen += [(c.m, c.n) for c in coords if c.k == 0]
        assert sch.get_actual_block_shape(GemmCoord(0, 0, 3)).k == 100 - 3 * 32
    assert sorted(seen) == [(i, j) for i in range(lm) for j in range(ln)]


def test_scheduler_merges_a_short_last_strip():
    # Zn, offset 4 over 9 block-rows: the last strip (1 row <= 4/2) joins the one before (5 rows).
    sch = SingleCoreSplitkGemmIdentityBlockSwizzle(4, 0).update((9 * 16, 3 * 16, 16), (16, 16, 16), 1, 0)
    order = [tuple(sch.get_block_coord(i)[:2]) for i in range(27)]
    # strip 1 is 5 rows high and, being odd, starts at the last column; odd columns walk back up
    assert order[12:17] == [(4, 2), (5, 2), (6, 2), (7, 2), (8, 2)]
    assert order[17:19] == [(8, 1), (7, 1)]


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),          # one element
    (20, 40, 64, 3),       # more cores than blocks
    (300, 200, 1100, 2),   # m > n branch, 3 K tiles with atomic adds, tails
    (100, 300, 600, 4),    # m <= n branch (256 x 128 L1 tiles)
])
def test_shapes(m, n, k, cores):
    a, b = _inputs(m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b)]
    c, report = OP(a, b, core_num=cores, return_report=True)
    assert c.dtype == np.float16 and golden.compare_data(c, golden.matmul(a, b), k).passed
    assert all(np.array_equal(u, v) for u, v in zip((a, b), before))
    assert_once(tile_counts(report, (m, n)))
    l1k = 512
    cover = np.zeros((m, n), np.int32)
    owner = -np.ones((m, n), np.int32)
    for core, blocks in report.blocks.items():
        for b in blocks:
            sl = (slice(b["row"], b["row"] + b["rows"]), slice(b["col"], b["col"] + b["cols"]))
            cover[sl] += 1
            assert b["atomic"] == (b["k_idx"] != 0)
            assert (owner[sl] == -1).all() or (owner[sl] == core).all()  # all K tiles of a block: one core
            owner[sl] = core
    assert (cover == -(-k // l1k)).all()


def test_bf16_fp32_out_row_major_b_and_interleavings():
    a, b = _inputs(70, 40, 700, ml_dtypes.bfloat16)
    c = OP(a, b, out_dtype="float32", layout_b="row_major", core_num=2)
    assert c.dtype == np.float32 and golden.compare_data(c, golden.matmul(a, b), 700).passed
    kernel = assembly.assemble(m_gt_n=True)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    ref = OP(a16, b16, core_num=2, kernel=kernel)
    for seed in (1, 8):
        out = np.zeros((70, 40), np.float16)
        gm_b = gm_input("b", as_stored(b16, kernel.layout_b))
        args = kernel.Arguments(GemmCoord(70, 40, 700), gm_input("a", a16), gm_b, gm_output("c", out))
        rec = WorkloadRecorder()
        run_device(kernel, args, 2, observers=(rec,),
                   options=LaunchParams(seed=seed, preempt_on_set=True, detect_races=True))
        assert np.array_equal(out, ref)
        assert any(e.kind == "padding_tile" for e in rec.report.markers)


def test_example_run():
    res = EX.run(["300", "200", "1100"], cores=2)
    assert res.passed and sum(res.blocks_per_core) == res.details["k_tiles_total"] == 3 * 1 * 3


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.int8)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"out_dtype": "int8"}, "out_dtype"),
    ({"layout_a": "zn"}, "layout_a"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        OP(args.pop("a"), args.pop("b"), **args)


def test_assembly_errors():
    with pytest.raises(ConfigError, match="unit flag"):
        MmadAtlasA2SingleCoreSplitk(2, 1, 2, True)
    h, f = GemmType("float16", zN), GemmType("float32", RowMajor)
    with pytest.raises(ConfigError, match="L1"):
        BlockMmad(MmadAtlasA2SingleCoreSplitk(2, 2, 2, False), (128, 256, 512), (128, 128, 128), h, h, f)
    with pytest.raises(ConfigError, match="L0TileShape::M"):
        BlockMmad(MmadAtlasA2SingleCoreSplitk(1, 1, 1, False), (128, 256, 256), (256, 128, 32), h, h, f)
    with pytest.raises(ConfigError, match="L0C"):
        BlockMmad(MmadAtlasA2SingleCoreSplitk(1, 1, 4, False), (128, 256, 256), (128, 256, 128), h, h, f)
    k = assembly.assemble()
    with pytest.raises(ConfigError, match="SingleCoreSplitkGemmIdentityBlockSwizzle"):
        SingleCoreSplitkMatmul(k.prologue_a, k.prologue_b, k.block_mmad, None, GemmIdentityBlockSwizzle(),
                               k.remove_padding)
    with pytest.raises(ConfigError, match="PrologueA"):
        SingleCoreSplitkMatmul(k.prologue_b, k.prologue_b, k.block_mmad, None, k.block_scheduler, k.remove_padding)
    with pytest.raises(ConfigError, match="atomic adds"):
        SingleCoreSplitkMatmul(k.prologue_a, k.prologue_b, BlockMmad(
            MmadAtlasA2SingleCoreSplitk(2, 1, 2, False), (128, 256, 512), (128, 128, 128), h,
            GemmType("float16", k.block_mmad.b_type.layout), GemmType("float16", RowMajor)), None, k.block_scheduler,
            k.remove_padding)
