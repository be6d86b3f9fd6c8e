"""Example 07 / GroupedMatmulSliceMPerTokenDequant (full-size workspace, CrossCoreFlagWithReverse): bit-exact
against the golden, empty groups, k == 0, back-pressure, the split, argument and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from mix_coverage import assert_once, block_counts, run_device, tile_counts

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch.params import LaunchParams
from catlass_py.assemblies import (
    grouped_matmul_slice_m_per_token_dequant as flagship_assembly,
)
from catlass_py.assemblies import (
    grouped_matmul_slice_m_per_token_dequant_moe as assembly,
)
from catlass_py.errors import ArgumentError, ConfigError, RaceError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.grouped_matmul_slice_m_per_token_dequant import (
    GroupedMatmulSliceMPerTokenDequant,
)
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant_moe import (
    grouped_matmul_slice_m_per_token_dequant_moe,
)
from catlass_py.ops.operator import gm_input, gm_output

EX = importlib.import_module("catlass_py.examples.07_grouped_matmul_slice_m_per_token_dequant_moe")
OP = grouped_matmul_slice_m_per_token_dequant_moe


def _inputs(group_list, m, n, k, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    g = len(group_list)
    return (rng.integers(-16, 17, (m, k), dtype=np.int8), rng.integers(-16, 17, (g, k, n), dtype=np.int8),
            rng.random((g, n)).astype(dtype), rng.random(m).astype(dtype))


def _check(group_list, m, n, k, cores, dtype=np.float32, out=None, gl_dtype=np.int32):
    gl = np.asarray(group_list, gl_dtype)
    a, b, s, p = _inputs(gl, m, n, k, dtype, seed=m + n + k)
    before = [v.copy() for v in (a, b, s, p, gl)]
    d, report = OP(a, b, gl, s, p, out_dtype=out, core_num=cores, return_report=True)
    rows = int(gl[-1])
    expect = golden.grouped_matmul_slice_m_per_token_dequant(a, b, gl, s, p)
    assert np.array_equal(d[:rows], expect[:rows].astype(d.dtype)) and not d[rows:].any()
    assert all(np.array_equal(u, v) for u, v in zip((a, b, s, p, gl), before))
    starts = np.concatenate([[0], gl[:-1]])
    assert_once(tile_counts(report, (m, n), group_rows=lambda grp: int(starts[grp])), rows)
    if k:
        assert_once(block_counts(report, (m, n)), rows)
    return d, report


@pytest.mark.parametrize("group_list,m,n,k,cores", [
    ([1], 1, 1, 1, 1),                       # one row, one column
    ([0, 3, 3, 40], 50, 300, 64, 4),          # empty groups, fewer rows than m, more cores than blocks
    ([129, 130, 300], 300, 257, 300, 3),      # tails in every group, a 1-row group
    ([10, 20], 20, 40, 1024, 1),              # one core, 4 K tiles
])
def test_shapes_bit_exact(group_list, m, n, k, cores):
    _check(group_list, m, n, k, cores)


def test_half_scales_int64_list_and_bf16_out():
    _check([30, 60], 64, 100, 40, 2, dtype=np.float16, gl_dtype=np.int64)
    d, _ = _check([30, 60], 64, 100, 40, 2, out="bfloat16")
    assert d.dtype == ml_dtypes.bfloat16


def test_k_zero_writes_zeros_without_any_flag():
    d, report = _check([5, 9], 12, 40, 0, 2)
    assert not d.any()
    assert sum(report.blocks_per_core()) == 2  # the cube walks the blocks but issues nothing
    assert all(not t.sets and not t.waits for t in report.flags.values())


def _back_pressure_run(seed, detect_races):
    # 2 groups x 9 blocks on one AI core: the AIC sets flag 0 eighteen times and waits the reverse flag once.
    gl = np.array([300, 600], np.int32)
    m, n, k = 600, 700, 32
    a, b, s, p = _inputs(gl, m, n, k)
    expect = golden.grouped_matmul_slice_m_per_token_dequant(a, b, gl, s, p).astype(np.float16)
    kernel = assembly.assemble()
    d = np.zeros((m, n), np.float16)
    rec = WorkloadRecorder()
    args = kernel.Arguments(GemmCoord(m, n, k), 2, gm_input("gl", gl), gm_input("a", a), gm_input("b", b),
                            gm_input("s", s), gm_input("p", p), gm_output("d", d))
    run_device(kernel, args, 1, observers=(rec,),
               options=LaunchParams(seed=seed, preempt_on_set=seed is not None, detect_races=detect_races))
    assert np.array_equal(d, expect)
    flags = {c.short: t for c, t in rec.report.flags.items()}
    assert flags["AIC0"].sets[0] == 18 and flags["AIC0"].waits[1] == 1
    assert flags["AIV0.1"].waits[0] == 18 and flags["AIV0.1"].sets[1] == 1


@pytest.mark.parametrize("seed", [None, 11])
def test_back_pressure_and_interleavings_have_no_race(seed):
    _back_pressure_run(seed, detect_races=True)


def test_example_host_data():
    res = EX.run(["4", "200", "300", "100"], cores=2)
    assert res.passed and res.details["bit_exact"]
    a, b, gl, s, p = EX.inputs(3, 10, 4, 5)
    assert gl.dtype == np.int32 and s.dtype == np.float32 and list(gl) == sorted(gl)


@pytest.mark.parametrize("kwargs,match", [
    ({"a": np.zeros((8, 4), np.float16)}, "dtype"),
    ({"b": np.zeros((2, 5, 6), np.int8)}, "b"),
    ({"group_list": np.array([3, 8], np.int16)}, "dtype"),
    ({"group_list": np.array([5, 3], np.int32)}, "decrease"),
    ({"group_list": np.array([5, 9], np.int32)}, "<= m"),
    ({"group_list": np.array([5], np.int32)}, "entries"),
    ({"scale": np.zeros((2, 6), np.float16)}, "dtype"),
    ({"scale": np.zeros((3, 6), np.float32)}, "scale"),
    ({"out_dtype": "int8"}, "out_dtype"),
    ({"core_num": 30}, "core_num"),
])
def test_argument_errors(kwargs, match):
    args = {"a": np.zeros((8, 4), np.int8), "b": np.zeros((2, 4, 6), np.int8), "group_list": np.array([3, 8], np.int32),
            "scale": np.zeros((2, 6), np.float32), "per_token_scale": np.zeros(8, np.float32), **kwargs}
    with pytest.raises(ArgumentError, match=match):
        OP(args.pop("a"), args.pop("b"), args.pop("group_list"), args.pop("scale"), args.pop("per_token_scale"), **args)


def test_assembly_errors():
    k = assembly.assemble()
    with pytest.raises(ConfigError, match="ElementGroupList"):
        GroupedMatmulSliceMPerTokenDequant(k.block_mmad, k.block_epilogue, k.block_scheduler, "int16")
    with pytest.raises(ConfigError, match="per-token-dequant"):
        GroupedMatmulSliceMPerTokenDequant(k.block_mmad, None, k.block_scheduler)
    ten = flagship_assembly.assemble()
    with pytest.raises(ConfigError, match="one callback"):
        GroupedMatmulSliceMPerTokenDequant(ten.block_mmad, ten.block_epilogue, ten.block_scheduler)
