"""Example 37 / StreamkMatmul + StreamkReduceAdd: the stream-K scheduler (K ranges, cross blocks, GetCoreIdx /
IsCross), shapes against the golden, the split of normal and tail blocks, errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, run_device, tile_counts

from catlass_py import golden
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import streamk_matmul as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, GemmType, MmadAtlasA2Pingpong, MmadAtlasA2Streamk
from catlass_py.gemm.block import BlockMmad, StreamkGemmIdentityBlockSwizzle
from catlass_py.kernel.streamk_matmul import StreamkMatmul, StreamkReduceAdd
from catlass_py.layout import RowMajor
from catlass_py.ops.operator import gm_input, gm_output
from catlass_py.ops.streamk_matmul import streamk_matmul

EX = importlib.import_module("catlass_py.examples.37_streamk_matmul")
TILE = GemmCoord(128, 256, 256)


def _inputs(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-5, 5, s).astype(dtype) for s in ((m, k), (k, n)))


@pytest.mark.parametrize("m,n,k,cores", [(400, 512, 2000, 5), (128, 256, 300, 7), (300, 600, 5000, 4),
                                         (640, 256, 1000, 3), (128, 1024, 777, 6)])
def test_scheduler_covers_every_k_tile_once(m, n, k, cores):
    s = StreamkGemmIdentityBlockSwizzle(3, 0).update((m, n, k), TILE, cores)
    lk = s.loops_mnk.k
    covered = {}
    for core in range(s.get_core_loops() - s.normal_blocks):
        dec = s.get_streamk_block_dec(s.normal_blocks + core)
        parts = [(dec.block_coord, dec.actual_block_shape)]
        if dec.is_cross_block:
            parts.append((dec.streamk_block_coord, dec.streamk_actual_block_shape))
        for bc, shape in parts:
            first = bc.k
            tiles = -(-shape.k // TILE.k)
            for t in range(first, first + tiles):
                covered.setdefault((bc.m, bc.n), []).append((t, core))
    assert len(covered) == s.streamk_blocks
    for sk in range(s.streamk_blocks):
        bc = s.get_block_coord(s.normal_blocks + sk)
        tiles = sorted(covered[(bc.m, bc.n)])
        assert [t for t, _ in tiles] == list(range(lk))
        first_core = tiles[0][1]
        assert s.get_core_idx(sk) == first_core
        assert s.is_cross(sk) == (sk > 0 and covered[tuple(s.get_block_coord(s.normal_blocks + sk - 1))[:2]][-1][1]
                                  == first_core)


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),           # one element: one normal block
    (128, 256, 300, 7),     # no normal block, 2 K tiles on 2 of 7 cores
    (400, 512, 1100, 5),    # 5 normal + 3 tail blocks, cross blocks
    (300, 600, 700, 3),     # 9 normal blocks, no stream-K
    (200, 300, 1000, 3),    # 3 normal + 1 tail block over 3 cores
])
def test_shapes(m, n, k, cores):
    a, b = _inputs(m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b)]
    c, report = streamk_matmul(a, b, core_num=cores, return_report=True)
    assert c.dtype == np.float16 and golden.compare_data(c, golden.matmul(a, b), k).passed
    assert all(np.array_equal(u, v) for u, v in zip((a, b), before))
    normal = block_counts(report, (m, n), where=lambda d: not d["streamk"])
    tail = tile_counts(report, (m, n))
    assert_once(normal + tail)  # every element: one normal block store or one reduction tile
    ksum = np.zeros((m, n), np.int64)
    for kind in ("block", "block_part"):
        for e in report.markers:
            d = e.data
            if e.kind == kind and d["streamk"]:
                ksum[d["row"]:d["row"] + d["rows"], d["col"]:d["col"] + d["cols"]] += d["k"]
    assert (ksum[tail == 1] == k).all()


def test_bf16_column_major_and_interleavings():
    a, b = _inputs(260, 512, 1100, ml_dtypes.bfloat16)  # 6 blocks on 4 cores: 2 tail blocks, cross ranges
    c = streamk_matmul(a, b, layout_b="column_major", core_num=4)
    assert c.dtype == ml_dtypes.bfloat16 and golden.compare_data(c, golden.matmul(a, b), 1100).passed
    kernel = assembly.assemble()
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    ref = streamk_matmul(a16, b16, core_num=4, kernel=kernel)
    for seed in (2, 6):
        out = np.zeros((260, 512), np.float16)
        args = kernel.Arguments(GemmCoord(260, 512, 1100), 4, gm_input("a", a16), gm_input("b", b16),
                                gm_output("c", out))
        run_device(kernel, args, 4, options=LaunchParams(seed=seed, preempt_on_set=True, detect_races=seed == 2))
        assert np.array_equal(out, ref)


def test_example_run():
    res = EX.run(["400", "512", "1100"], cores=5)
    assert res.passed and res.details["normal_blocks"] == 5 and res.details["streamk_blocks"] == 3


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.float32)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"core_num": 0}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        streamk_matmul(args.pop("a"), args.pop("b"), **args)


def test_assembly_errors():
    k = assembly.assemble()
    h = GemmType("float16", RowMajor)
    with pytest.raises(ConfigError, match="MmadAtlasA2Streamk"):
        StreamkMatmul(BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 64), h, h, h), None,
                      k.block_scheduler, k.reduce_add)
    with pytest.raises(ConfigError, match="UB space"):
        StreamkReduceAdd(k.arch, k.block_scheduler, "float32", "float16", 50000)
    with pytest.raises(ConfigError, match="writes"):
        StreamkMatmul(k.block_mmad, None, k.block_scheduler,
                      StreamkReduceAdd(k.arch, k.block_scheduler, "float32", "float32", 4096))
    i8, i32 = GemmType("int8", RowMajor), GemmType("int32", RowMajor)
    with pytest.raises(ConfigError, match="float"):
        BlockMmad(MmadAtlasA2Streamk(), (128, 256, 256), (128, 256, 64), i8, i8, i32)
