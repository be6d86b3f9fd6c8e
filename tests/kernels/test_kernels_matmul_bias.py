"""Example 20 / MatmulBias + MmadAtlasA2PingpongBias: the bias through L1 and BT against the golden, the n tail
(the bias copy reads a whole L1 tile), the split, the static checks."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin

from catlass_py import golden
from catlass_py.arch import standalone_core
from catlass_py.assemblies import matmul_bias as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmType, MmadAtlasA2Pingpong, MmadAtlasA2PingpongBias
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import MatmulBias
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.ops import matmul_bias
from catlass_py.tile import CopyGmToL1Bias, CopyL1ToBT

EX = importlib.import_module("catlass_py.examples.20_matmul_bias")


def _operands(m, n, k, element="float16", bias_dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    if element == "int8":
        return (rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8),
                rng.integers(-2**20, 2**20, n).astype(np.int32))
    t = np.float16 if element == "float16" else ml_dtypes.bfloat16
    return (rng.uniform(-2, 2, (m, k)).astype(t), rng.uniform(-2, 2, (k, n)).astype(t),
            rng.uniform(-50, 50, n).astype(bias_dtype))


@pytest.mark.parametrize("m,n,k,cores,layout_a", [
    (1, 1, 1, 1, "row"),
    (5, 300, 70, 2, "column"),     # n tail: the second block's bias copy runs past the end of the bias
    (130, 10, 600, 3, "row"),      # several K tiles: the bias enters only with the first
    (257, 513, 33, 12, "column"),  # more cores (12) than blocks (9), tails everywhere
])
def test_fp16_bias(m, n, k, cores, layout_a):
    a, b, bias = _operands(m, n, k, seed=m + n)
    c, report = matmul_bias(a, b, bias, layout_a=layout_a, core_num=cores, return_report=True)
    assert c.dtype == np.float16
    assert golden.compare_data(c, golden.matmul_bias(a, b, bias), k).passed
    assert_each_written_once(report, {None: (m, n)})
    assert_round_robin(report, cores)


def test_bf16_with_fp32_bias_and_fp16_with_fp32_bias():
    a, b, bias = _operands(70, 90, 130, "bfloat16", np.float32)
    c = matmul_bias(a, b, bias, core_num=2, layout_b="column")
    assert golden.compare_data(c, golden.matmul_bias(a, b, bias), 130).passed
    a, b, bias = _operands(70, 90, 130, "float16", np.float32)
    c = matmul_bias(a, b, bias, core_num=2, out_dtype="float32")
    assert np.abs(c - golden.matmul_bias(a, b, bias)).max() < 1e-3


def test_int8_int32_bias_bit_exact():
    a, b, bias = _operands(100, 300, 257, "int8")
    c = matmul_bias(a, b, bias, core_num=3, layout_b="column")
    assert c.dtype == np.int32 and np.array_equal(c, golden.matmul_bias(a, b, bias))


def test_example_host_data():
    res = EX.run(["100", "300", "50"], cores=2)
    assert res.passed and res.blocks_per_core == [1, 1]


def test_bias_tile_copies():
    ctx = standalone_core()
    from catlass_py.arch import GlobalBuffer

    bias = np.arange(20, dtype=np.float16)
    src = GlobalBuffer.from_array(bias, "bias", read_only=True).tensor("float16")
    l1 = ctx.resource.l1_buf.get_buffer_by_byte("float16", 0)
    CopyGmToL1Bias("AtlasA2", GemmType("float16", VectorLayout))(l1, src, VectorLayout(32), VectorLayout(20))
    got = l1.view(32)
    assert np.array_equal(got[:20], bias)  # 2 whole 32-byte blocks move; past the GM end: poison
    assert np.isnan(got[20:]).all()
    bt = ctx.resource.bt_buf.get_buffer_by_byte("float32", 0)
    CopyL1ToBT("AtlasA2", GemmType("float16", VectorLayout, "L1"), GemmType("float32", VectorLayout, "BT"))(
        bt, l1, VectorLayout(10), VectorLayout(256))
    assert np.array_equal(bt.view(10), bias[:10].astype(np.float32))  # one 64-byte unit (32 halves) widened


def test_static_checks():
    t = GemmType("float16", RowMajor)
    vb = GemmType("float16", VectorLayout)
    with pytest.raises(ConfigError, match="bfloat16"):
        assembly.assemble(element="bfloat16")  # default bias = bf16: CATLASS has no bf16 bias
    with pytest.raises(ConfigError, match="BiasType"):
        BlockMmad(MmadAtlasA2PingpongBias(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="BT"):  # 512 fp32 accumulators = 2 KiB > 1 KiB bias table
        BlockMmad(MmadAtlasA2PingpongBias(), (32, 512, 64), (32, 512, 32), t, t, t, vb)
    with pytest.raises(ConfigError, match="VectorLayout"):
        BlockMmad(MmadAtlasA2PingpongBias(), (128, 256, 256), (128, 256, 64), t, t, t, GemmType("float16", RowMajor))
    with pytest.raises(ConfigError, match="cannot initialise"):
        assembly.assemble(element="int8", bias_element="float16")
    plain = BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="only MmadAtlasA2PingpongBias fits"):
        MatmulBias(plain, None, GemmIdentityBlockSwizzle())


def test_argument_errors():
    a, b, bias = _operands(4, 6, 8)
    with pytest.raises(ArgumentError, match="bias: expected shape"):
        matmul_bias(a, b, bias[:5], core_num=1)
    with pytest.raises(ArgumentError, match="bias: expected dtype"):
        matmul_bias(a, b, bias.astype(ml_dtypes.bfloat16), core_num=1)
    a8, b8, bias8 = _operands(4, 6, 8, "int8")
    with pytest.raises(ArgumentError, match="int32"):
        matmul_bias(a8, b8, bias8.astype(np.float32), core_num=1)


def test_pipeline_events_balanced():
    from split_coverage import gm, run_clean

    from catlass_py.gemm import GemmCoord

    kernel = assembly.assemble(dispatch_policy=MmadAtlasA2PingpongBias(False))  # unit flag off: FIX_M/M_FIX events too
    a, b, bias = _operands(150, 300, 600)
    c = np.zeros((150, 300), np.float16)
    run_clean(kernel, kernel.Arguments(GemmCoord(150, 300, 600), gm("a", a), gm("b", b), gm("c", c, read_only=False),
                                       gm("bias", bias)), 3)
    assert golden.compare_data(c, golden.matmul_bias(a, b, bias), 600).passed
