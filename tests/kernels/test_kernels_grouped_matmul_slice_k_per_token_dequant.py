"""Example 11 / GroupedMatmulSliceKPerTokenDequant: bit-exact against the golden, groups with an empty K
range (zero-filled by the vector cores), the split, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, run_device, tile_counts

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import grouped_matmul_slice_k_per_token_dequant as assembly
from catlass_py.assemblies import quant_matmul as quant_matmul_assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.grouped_matmul_slice_k_per_token_dequant import (
    GroupedMatmulSliceKPerTokenDequant,
)
from catlass_py.ops.grouped_matmul_slice_k_per_token_dequant import (
    grouped_matmul_slice_k_per_token_dequant,
)
from catlass_py.ops.operator import as_stored, gm_input, gm_output

EX = importlib.import_module("catlass_py.examples.11_grouped_matmul_slice_k_per_token_dequant")
OP = grouped_matmul_slice_k_per_token_dequant
BF16 = ml_dtypes.bfloat16


def _inputs(g, m, n, k, dtype=BF16, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-16, 17, (m, k), dtype=np.int8), rng.integers(-16, 17, (k, n), dtype=np.int8),
            rng.random((g, n)).astype(dtype), rng.random((g, m)).astype(dtype))


@pytest.mark.parametrize("group_list,m,n,k,cores", [
    ([1], 1, 1, 1, 1),                      # one element
    ([0, 30, 30, 90], 40, 300, 100, 4),      # empty groups (first and third), unused K tail, more cores
    ([300, 600], 129, 257, 600, 3),          # tails in m and n, two K tiles per group
    ([16, 17, 33], 300, 20, 40, 1),          # one core, n smaller than one tile, a 1-deep group
])
def test_shapes_bit_exact(group_list, m, n, k, cores):
    gl = np.asarray(group_list, np.int64)
    g = len(gl)
    a, b, s, p = _inputs(g, m, n, k, seed=m + n + k)
    before = [v.copy() for v in (a, b, s, p, gl)]
    d, report = OP(a, b, gl, s, p, core_num=cores, return_report=True)
    expect = golden.grouped_matmul_slice_k_per_token_dequant(a, b, gl, s, p)
    assert d.shape == (g, m, n) and d.dtype == BF16
    assert np.array_equal(d, expect.astype(BF16))
    sizes = np.diff(np.concatenate([[0], gl]))
    assert not d[sizes == 0].any()
    assert all(np.array_equal(u, v) for u, v in zip((a, b, s, p, gl), before))
    assert_once(tile_counts(report, (g * m, n), group_rows=lambda grp: grp * m))
    assert_once(block_counts(report, (g * m, n)))


def test_fp16_and_int32_list():
    gl = np.array([20, 50], np.int32)
    a, b, s, p = _inputs(2, 30, 60, 50, np.float16)
    d = OP(a, b, gl, s, p, core_num=2)
    assert d.dtype == np.float16
    assert np.array_equal(d, golden.grouped_matmul_slice_k_per_token_dequant(a, b, gl, s, p).astype(np.float16))


def test_empty_groups_need_no_flags_and_interleavings():
    gl = np.array([0, 64, 64, 64, 128], np.int64)  # three empty groups
    g, m, n, k = 5, 200, 300, 128
    a, b, s, p = _inputs(g, m, n, k)
    expect = golden.grouped_matmul_slice_k_per_token_dequant(a, b, gl, s, p).astype(BF16)
    kernel = assembly.assemble()
    for seed in (None, 2):
        d = np.zeros((g, m, n), BF16)
        rec = WorkloadRecorder()
        gm_a = gm_input("a", as_stored(a, kernel.block_mmad.a_type.layout))
        args = kernel.Arguments(GemmCoord(m, n, k), g, gm_input("gl", gl), gm_a, gm_input("b", b), gm_input("s", s),
                                gm_input("p", p), gm_output("d", d))
        run_device(kernel, args, 2, observers=(rec,),
                   options=LaunchParams(seed=seed, preempt_on_set=seed is not None, detect_races=True))
        assert np.array_equal(d, expect)
        sets = sum(t.sets.get(0, 0) for c, t in rec.report.flags.items() if c.short.startswith("AIC"))
        assert sets == 2 * 2 * 2  # only the two non-empty groups' 2 x 2 blocks are signalled
        zero_tiles = [e for e in rec.report.markers if e.kind == "epilogue_tile" and e.data["zero"]]
        assert zero_tiles


def test_example_host_data():
    res = EX.run(["4", "100", "300", "200"], cores=2)
    assert res.passed and res.details["bit_exact"]
    a, b, gl, s, p = EX.inputs(3, 4, 5, 6)
    assert a.shape == (4, 6) and gl.dtype == np.int64 and s.shape == (3, 5) and p.shape == (3, 4)


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((4, 8), np.uint8)}, "dtype"),
    ({"b": np.zeros((7, 6), np.int8)}, "shape"),
    ({"group_list": np.array([3, 9])}, "<= k"),
    ({"group_list": np.array([5, 2])}, "decrease"),
    ({"scale": np.zeros((2, 6), np.float32)}, "dtype"),
    ({"per_token_scale": np.zeros((2, 5), BF16)}, "per_token_scale"),
    ({"scale": np.zeros((3, 6), BF16)}, "scale"),
    ({"core_num": -1}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((4, 8), np.int8), "b": np.zeros((8, 6), np.int8), "group_list": np.array([3, 8]),
            "scale": np.zeros((2, 6), BF16), "per_token_scale": np.zeros((2, 4), BF16), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        OP(args.pop("a"), args.pop("b"), args.pop("group_list"), args.pop("scale"), args.pop("per_token_scale"), **args)


def test_assembly_errors():
    k = assembly.assemble()
    with pytest.raises(ConfigError, match="ElementGroupList"):
        GroupedMatmulSliceKPerTokenDequant(k.block_mmad, k.block_epilogue, k.block_scheduler, "float32")
    twelve = quant_matmul_assembly.assemble()
    with pytest.raises(ConfigError, match="one callback"):
        GroupedMatmulSliceKPerTokenDequant(twelve.block_mmad, k.block_epilogue, k.block_scheduler)
