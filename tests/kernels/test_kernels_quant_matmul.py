"""Example 12 / QuantMatmulMultiStageWorkspace: bit-exact against the golden, the ring handshake, the split,
argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, run_device, tile_counts

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import quant_matmul as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad
from catlass_py.kernel.quant_matmul_multistage_workspace import (
    QuantMatmulMultiStageWorkspace,
)
from catlass_py.ops.operator import as_stored, gm_input, gm_output
from catlass_py.ops.quant_matmul import quant_matmul

EX = importlib.import_module("catlass_py.examples.12_quant_matmul")


def _inputs(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-16, 17, (m, k), dtype=np.int8)
    b = rng.integers(-16, 17, (k, n), dtype=np.int8)
    return a, b, rng.random(n).astype(dtype), rng.random(m).astype(dtype)


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),          # smaller than one tile
    (5, 40, 33, 4),        # more cores than blocks
    (129, 257, 1100, 3),   # tails in m, n and k (3 K tiles of 512)
    (300, 20, 64, 1),      # one core, n smaller than one tile, 3 blocks through a 2-slot ring
])
def test_shapes_bit_exact(m, n, k, cores):
    a, b, s, p = _inputs(m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b, s, p)]
    d, report = quant_matmul(a, b, s, p, core_num=cores, return_report=True)
    expect = golden.quant_matmul(a, b, s, p)
    assert d.dtype == np.float16 and np.array_equal(d, expect.astype(np.float16))
    assert all(np.array_equal(u, v) for u, v in zip((a, b, s, p), before))
    assert_once(block_counts(report, (m, n)))
    assert_once(tile_counts(report, (m, n)))


def test_bf16_and_row_major_b():
    a, b, s, p = _inputs(70, 300, 200, ml_dtypes.bfloat16)
    d = quant_matmul(a, b, s, p, layout_b="row_major", core_num=2)
    assert d.dtype == ml_dtypes.bfloat16
    assert np.array_equal(d, golden.quant_matmul(a, b, s, p).astype(ml_dtypes.bfloat16))


def test_ring_handshake_and_interleavings():
    m, n, k = 500, 600, 64  # 4 x 3 = 12 blocks: 6 per core through the 2-slot ring
    a, b, s, p = _inputs(m, n, k)
    expect = golden.quant_matmul(a, b, s, p).astype(np.float16)
    kernel = assembly.assemble(swizzle_direction=0)
    for seed in (None, 3):
        d = np.zeros((m, n), np.float16)
        rec = WorkloadRecorder()
        gm_b = gm_input("b", as_stored(b, kernel.block_mmad.b_type.layout))
        args = kernel.Arguments(GemmCoord(m, n, k), 2, gm_input("a", a), gm_b, gm_input("s", s), gm_input("p", p),
                                gm_output("d", d))
        run_device(kernel, args, 2, observers=(rec,),
                   options=LaunchParams(seed=seed, preempt_on_set=seed is not None, detect_races=True))
        assert np.array_equal(d, expect)
        flags = {c.short: t for c, t in rec.report.flags.items()}
        assert flags["AIC0"].sets[0] + flags["AIC0"].sets[2] == 6
        assert flags["AIC0"].waits[1] + flags["AIC0"].waits[3] == 6


def test_example_host_data():
    res = EX.run(["200", "300", "600"], cores=2)
    assert res.passed and res.details["bit_exact"] and res.blocks_per_core == [2, 2]
    a, b, s, p = EX.inputs(3, 4, 5)
    assert a.dtype == np.int8 and b.shape == (5, 4) and s.dtype == np.float16 and p.shape == (3,)


def test_empty_output():
    a, b, s, p = _inputs(0, 30, 20)
    assert quant_matmul(a, b, s, p, core_num=2).shape == (0, 30)


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 4), np.int16)}, "dtype"),
    ({"scale": np.zeros(4, np.float32)}, "dtype"),
    ({"per_token_scale": np.zeros(4, ml_dtypes.bfloat16)}, "dtype"),
    ({"scale": np.zeros(5, np.float16)}, "scale"),
    ({"per_token_scale": np.zeros(3, np.float16)}, "per_token_scale"),
    ({"a": np.zeros((4, 0), np.int8), "b": np.zeros((0, 4), np.int8)}, "deadlock"),
    ({"core_num": 0}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 4), np.int8), "b": np.zeros((4, 4), np.int8), "scale": np.zeros(4, np.float16),
            "per_token_scale": np.zeros(4, np.float16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        quant_matmul(args.pop("a"), args.pop("b"), args.pop("scale"), args.pop("per_token_scale"), **args)


def test_assembly_errors():
    k = assembly.assemble()
    with pytest.raises(ConfigError, match="WORKSPACE_STAGES"):
        QuantMatmulMultiStageWorkspace(k.block_mmad, k.block_epilogue, k.block_scheduler, 0)
    with pytest.raises(ConfigError, match="flag ids"):
        QuantMatmulMultiStageWorkspace(k.block_mmad, k.block_epilogue, k.block_scheduler, 5)
    with pytest.raises(ConfigError, match="callbacks"):
        mm = k.block_mmad
        one_cb = BlockMmad(MmadAtlasA2PreloadAsync(1, 2, 2, 2, 1, False, True), mm.l1_tile_shape, mm.l0_tile_shape,
                           mm.a_type, mm.b_type, mm.c_type)
        QuantMatmulMultiStageWorkspace(one_cb, k.block_epilogue, k.block_scheduler)
    with pytest.raises(ConfigError, match="per-token-dequant"):
        QuantMatmulMultiStageWorkspace(k.block_mmad, None, k.block_scheduler)
