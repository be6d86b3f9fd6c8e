"""Example 00 / BasicMatmul: fp16, bf16, int8 with row- and column-major operands against the golden, the
split across cores, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin, gm, run_clean

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.assemblies import basic_matmul as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import (
    GemmCoord,
    GemmType,
    MmadAtlasA2Pingpong,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
)
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmul
from catlass_py.layout import RowMajor
from catlass_py.ops import basic_matmul

EX = importlib.import_module("catlass_py.examples.00_basic_matmul")
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _operands(m, n, k, element, seed=0):
    rng = np.random.default_rng(seed)
    if element == "int8":
        return (rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8))
    return (rng.uniform(-5, 5, (m, k)).astype(NP[element]), rng.uniform(-5, 5, (k, n)).astype(NP[element]))


def _check(c, a, b):
    k = a.shape[1]
    if a.dtype == np.int8:
        assert c.dtype == np.int32
        assert np.array_equal(c, golden.matmul_int32(a, b))
    else:
        assert c.dtype == a.dtype
        assert golden.compare_data(c, golden.matmul(a, b), k).passed


@pytest.mark.parametrize("element", ["float16", "bfloat16", "int8"])
@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "row"), ("row", "column"), ("column", "column")])
def test_dtypes_and_layouts(element, layouts):
    a, b = _operands(70, 300, 333, element)
    before = (a.copy(), b.copy())
    c = basic_matmul(a, b, layout_a=layouts[0], layout_b=layouts[1], core_num=2)
    _check(c, a, b)
    assert np.array_equal(a, before[0]) and np.array_equal(b, before[1])


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),          # everything smaller than one tile, one core
    (5, 40, 33, 4),        # more cores than blocks
    (128, 256, 256, 1),    # exactly one tile
    (129, 257, 513, 3),    # tails in m, n and k (3 K tiles)
    (300, 20, 700, 2),     # n smaller than one tile, several block rows
])
def test_shapes_fp16(m, n, k, cores):
    a, b = _operands(m, n, k, "float16", seed=m + n + k)
    c, report = basic_matmul(a, b, core_num=cores, return_report=True)
    _check(c, a, b)
    assert_each_written_once(report, {None: (m, n)})
    assert_round_robin(report, cores)
    assert len(report.blocks_per_core()) == cores


def test_empty_m_and_n():
    a, b = _operands(0, 30, 20, "float16")
    assert basic_matmul(a, b, core_num=2).shape == (0, 30)
    a, b = _operands(10, 0, 20, "int8")
    assert basic_matmul(a, b, core_num=2).shape == (10, 0)


def test_fp32_output_keeps_the_accumulator():
    a, b = _operands(40, 50, 600, "bfloat16")
    c = basic_matmul(a, b, out_dtype="float32", core_num=2)
    assert c.dtype == np.float32
    assert np.abs(c - golden.matmul(a, b)).max() < 1e-2


def test_example_host_data_and_split():
    res = EX.run(["200", "300", "270"], cores=4)
    assert res.passed and res.error_count == 0
    assert res.blocks_per_core == [1, 1, 1, 1]  # 2 x 2 blocks, one per core
    a, b = EX.make_inputs(2, 3, 4)
    assert a.dtype == np.float16 and np.abs(a.astype(np.float32)).max() <= 5


def test_kernel_flags_balanced_and_async_block_drained():
    # BasicMatmul also drives a PreloadAsync block; its destructor (leaving the with-block) flushes the queue.
    a_t, c_t = GemmType("float16", RowMajor), GemmType("float16", RowMajor)
    policy = MmadAtlasA2PreloadAsync(1, 2, 2, 2, 1, False, True)
    kernel = BasicMatmul(BlockMmad(policy, (128, 256, 256), (128, 256, 64), a_t, a_t, c_t), None,
                         GemmIdentityBlockSwizzle(3, 1))
    a, b = _operands(300, 600, 300, "float16")
    c = np.zeros((300, 600), np.float16)
    rec = WorkloadRecorder()
    run_clean(kernel, kernel.Arguments(GemmCoord(300, 600, 300), gm("a", a), gm("b", b), gm("c", c, read_only=False)),
              3, observers=(rec,))
    _check(c, a, b)
    assert_each_written_once(rec.report, {None: (300, 600)})


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.float32)}, "dtype"),
    ({"b": np.zeros((4, 4), np.int8)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"layout_a": "diagonal"}, "layout_a"),
    ({"core_num": 0}, "core_num"),
    ({"core_num": 25}, "core_num"),
    ({"out_dtype": "int32"}, "out_dtype"),
    ({"a": [[1.0]]}, "expected an array"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16), **kwargs}
    a, b = args.pop("a"), args.pop("b")
    with pytest.raises(ArgumentError, match=match):
        basic_matmul(a, b, **args)


def test_assembly_errors():
    t = GemmType("float16", RowMajor)
    good = BlockMmad(MmadAtlasA2Pingpong(True), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="policies that fit: .*MmadAtlasA2Pingpong"):
        BasicMatmul(BlockMmad(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), t, t, t), None,
                    GemmIdentityBlockSwizzle())
    with pytest.raises(ConfigError, match="BlockEpilogue"):
        BasicMatmul(good, object(), GemmIdentityBlockSwizzle())
    with pytest.raises(ConfigError, match="BlockScheduler"):
        BasicMatmul(good, None, None)
    i8 = GemmType("int8", RowMajor)
    with pytest.raises(ConfigError, match="unit flag"):
        assembly.assemble(element="int8", dispatch_policy=MmadAtlasA2Pingpong(True))
    with pytest.raises(ConfigError, match="L0B tiles"):
        BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 256), i8, i8, GemmType("int32", RowMajor))
