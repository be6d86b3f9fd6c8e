"""Examples 27/28 / MatmulActivation (D = cast(gelu|silu(A @ B))): the tile ops against formulas, shapes
against the golden, the split, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, tile_counts

from catlass_py import golden
from catlass_py.arch import standalone_core
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2ElemWiseNoSource
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.matmul_activation import MatmulActivation
from catlass_py.layout import RowMajor
from catlass_py.ops.matmul_activation import matmul_gelu, matmul_silu
from catlass_py.tile import EpilogueTileCopy
from catlass_py.tile.vector_elementwise import TileElemWiseGelu, TileElemWiseSilu

OPS = {"gelu": (matmul_gelu, golden.matmul_gelu), "silu": (matmul_silu, golden.matmul_silu)}


def _inputs(m, n, k, dtype=np.float16, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return tuple((rng.uniform(-1, 1, s) * scale).astype(dtype) for s in ((m, k), (k, n)))


@pytest.mark.parametrize("op", ["gelu", "silu"])
def test_tile_ops_follow_the_formula(op):
    ctx = standalone_core(core_type="AIV")
    n = 512
    src = ctx.resource.ub_buf.get_buffer_by_byte("float32", 0, n)
    dst = ctx.resource.ub_buf.get_buffer_by_byte("float32", 4 * n, n)
    x = np.linspace(-12, 12, n, dtype=np.float32)
    src.view()[:] = x
    tile = (TileElemWiseGelu if op == "gelu" else TileElemWiseSilu)(ctx.arch, "float32", n)
    tile(dst, src)
    x64 = x.astype(np.float64)
    ref = x64 / (1 + np.exp(-1.595769121 * (x64 + 0.044715 * x64 ** 3))) if op == "gelu" else x64 / (1 + np.exp(-x64))
    assert np.allclose(dst.view(), ref, rtol=1e-5, atol=1e-6)
    assert np.array_equal(src.view(), x)  # the source stays x


@pytest.mark.parametrize("op", ["gelu", "silu"])
@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),          # smaller than one tile
    (5, 40, 33, 4),        # more cores than blocks
    (129, 257, 300, 3),    # tails in m, n, k
    (260, 20, 64, 2),      # n smaller than one tile
])
def test_shapes(op, m, n, k, cores):
    fn, gold = OPS[op]
    a, b = _inputs(m, n, k, seed=m + n + k, scale=8 / np.sqrt(k))  # |A @ B| ~ a few units: the curved part
    d, report = fn(a, b, core_num=cores, return_report=True)
    assert d.dtype == np.float16 and d.shape == (m, n)
    assert golden.compare_data(d, gold(a, b), k).passed
    assert_once(block_counts(report, (m, n)))
    assert_once(tile_counts(report, (m, n)))


def test_gelu_and_silu_differ_and_bf16_fp32_out():
    a, b = _inputs(64, 64, 32, ml_dtypes.bfloat16, scale=0.7)
    g = matmul_gelu(a, b, out_dtype="float32", core_num=1)
    s = matmul_silu(a, b, out_dtype="float32", core_num=1)
    assert g.dtype == np.float32 and not np.array_equal(g, s)
    assert golden.compare_data(g, golden.matmul_gelu(a, b), 32).passed
    assert golden.compare_data(s, golden.matmul_silu(a, b), 32).passed


@pytest.mark.parametrize("name", ["27_matmul_gelu", "28_matmul_silu"])
def test_examples(name):
    res = importlib.import_module(f"catlass_py.examples.{name}").run(["100", "300", "64"], cores=2)
    assert res.passed and sum(res.blocks_per_core) == 2


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.int8)}, "dtype"),
    ({"b": np.zeros((5, 4), np.float16)}, "shape"),
    ({"out_dtype": "int8"}, "out_dtype"),
    ({"a": np.zeros((4, 0), np.float16), "b": np.zeros((0, 4), np.float16)}, "k"),
    ({"core_num": 99}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.float16), "b": np.zeros((4, 4), np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        matmul_silu(args.pop("a"), args.pop("b"), **args)


def test_assembly_errors():
    h, f = GemmType("float16", RowMajor), GemmType("float32", RowMajor)
    mmad = BlockMmad(MmadAtlasA2Pingpong(True), (128, 256, 256), (128, 256, 64), h, h, f)
    arch = mmad.arch
    policy = EpilogueAtlasA2ElemWiseNoSource()
    copy = EpilogueTileCopy(arch, f, d_type=h)
    epi = BlockEpilogue(policy, f, h, TileElemWiseGelu(arch, f, 16384), copy)
    MatmulActivation(mmad, epi, GemmIdentityBlockSwizzle(3, 0))
    with pytest.raises(ConfigError, match="must be float"):
        BlockEpilogue(policy, h, h, TileElemWiseGelu(arch, h, 16384), EpilogueTileCopy(arch, h, d_type=h))
    with pytest.raises(ConfigError, match="UB out of bounds"):
        BlockEpilogue(policy, f, h, TileElemWiseGelu(arch, f, 20000), copy)
    with pytest.raises(ConfigError, match="COMPUTE_LENGTH"):
        MatmulActivation(mmad, BlockEpilogue(policy, f, h, TileElemWiseGelu(arch, f, 4096), copy),
                         GemmIdentityBlockSwizzle(3, 0))
    hmmad = BlockMmad(MmadAtlasA2Pingpong(True), (128, 256, 256), (128, 256, 64), h, h, h)
    with pytest.raises(ConfigError, match="consistent"):
        MatmulActivation(hmmad, epi, GemmIdentityBlockSwizzle(3, 0))
