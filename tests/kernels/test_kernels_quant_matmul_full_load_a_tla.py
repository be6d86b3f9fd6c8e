"""Example 44 / QuantMatmulFullLoadATla + BlockMmadTla<MmadFullLoadA> + GemmIdentityBlockSwizzleL1FullLoad: the README
shape, the scheduler's per-core ranges, A's panel loaded once per row of blocks, shuffle-K, layouts and D types
against an independent golden, races and interleavings through the workspace ring, CanImplement, assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import Observer
from catlass_py.assemblies import quant_matmul_full_load_a_tla as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, MmadFullLoadA, MmadPingpong
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad
from catlass_py.kernel.quant_matmul_full_load_a_tla import QuantMatmulFullLoadATla
from catlass_py.ops import quant_matmul_full_load_a_tla as op
from catlass_py.testing import check

EX = importlib.import_module("catlass_py.examples.44_quant_matmul_full_loadA_tla")


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-16, 16, (m, k)).astype(np.int8), rng.integers(-16, 16, (k, n)).astype(np.int8),
            rng.uniform(0, 1, n).astype(np.float32), rng.uniform(0, 1, m).astype(np.float32))


def _want(a, b, scale, pts):
    """Independent golden: exact int64 product, float32(acc) * scale * per-token scale, left to right."""
    acc = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)
    return (acc * scale[None, :]) * pts[:, None]


class _Loads(Observer):
    """Counts the GM -> L1 copies of A (the int8 loads whose source is GM buffer 'a')."""

    interests = frozenset({"instruction"})

    def __init__(self):
        self.a = 0

    def on_event(self, e):
        if getattr(e, "op", None) == "CopyGmToL1Tla" and any(r.buffer == "a" for r in e.gm_reads):
            self.a += 1


def test_readme_shape_compare_success_bit_exact():
    res = EX.run(["256", "512", "1024", "0"], cores=20)
    assert res.passed and res.verdict == "Compare success." and res.details["bit_exact"]
    assert res.details["scheduler"] == "GemmIdentityBlockSwizzleL1FullLoad" and res.details["cores_used"] == 4


def test_l1_full_load_scheduler_ranges():
    """5 x 3 blocks on 4 cores: ranges of 4, 4, 4, 3 consecutive blocks in <1, 0> order (row by row, serpentine
    every other row); loop t of core t % 4 is the (t / 4)-th block of that core's range."""
    s = GemmIdentityBlockSwizzleL1FullLoad(1, 0).update((5 * 128, 3 * 256, 64), (128, 256), block_num=4)
    order = [GemmIdentityBlockSwizzle(1, 0).update((5 * 128, 3 * 256, 64), (128, 256)).get_block_coord(i)
             for i in range(15)]
    per_core = {c: [s.get_block_coord(t) for t in range(c, 15, 4)] for c in range(4)}
    assert per_core[0] == order[0:4] and per_core[1] == order[4:8] and per_core[2] == order[8:12]
    assert per_core[3] == order[12:15]
    with pytest.raises(ArgumentError, match="block_num"):
        GemmIdentityBlockSwizzleL1FullLoad(1, 0).update((128, 256, 64), (128, 256), block_num=0)


def test_a_panel_is_loaded_once_per_row_of_blocks():
    a, b, s, p = _inputs(256, 256 * 4, 700, seed=4)
    loads = _Loads()
    d = op(a, b, s, p, core_num=2, observers=(loads,))
    assert np.array_equal(d.astype(np.float32), _want(a, b, s, p).astype(ml_dtypes.bfloat16).astype(np.float32))
    assert loads.a == 2  # 8 blocks, 2 cores, 4 consecutive blocks (one row of A) each: one panel load per core


@pytest.mark.parametrize("out", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "column")])
def test_values_against_an_independent_golden(out, layouts):
    a, b, s, p = _inputs(300, 200, 1100, seed=1)
    d = op(a, b, s, p, layout_a=layouts[0], layout_b=layouts[1], out_dtype=out, core_num=3)
    np_out = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32}[out]
    assert d.dtype == np_out
    assert np.array_equal(d.astype(np.float32), _want(a, b, s, p).astype(np_out).astype(np.float32))


@pytest.mark.parametrize("shape,cores", [((400, 600, 1100), 3), ((100, 300, 700), 5), ((1, 40, 64), 2)])
def test_races_and_interleavings(shape, cores):
    a, b, s, p = _inputs(*shape, seed=2)
    result = check(op, a, b, s, p, core_num=cores, golden=_want(a, b, s, p), k=shape[2], seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_shuffle_k_off_and_one_workspace_stage():
    a, b, s, p = _inputs(300, 520, 1500, seed=5)
    policy = MmadFullLoadA(enable_shuffle_k=False)
    kernel = assembly.assemble(dispatch_policy=policy, workspace_stages=1)
    result = check(op, a, b, s, p, kernel=kernel, core_num=3, golden=_want(a, b, s, p), k=1500, seeds=1)
    assert result.compare.passed


def test_can_implement_and_assembly_rules():
    a, b, s, p = _inputs(10, 20, 2049)
    with pytest.raises(ArgumentError, match="MatA tile cannot be full loaded to L1.*> L1_SIZE 524288"):
        op(a, b, s, p, core_num=2)
    with pytest.raises(ArgumentError, match="usage"):
        EX.run(["1", "2"], cores=1)
    with pytest.raises(ConfigError, match=r"L1A_TILE_SIZE \* L1A_STAGES \+ L1B_TILE_SIZE \* L1B_STAGES <= L1_SIZE"):
        BlockMmadTla(MmadFullLoadA(l1b_stages=3), (128, 256, 512), (128, 256, 128), "int8", "int8", "int32")
    with pytest.raises(ConfigError, match="L0C_STAGES must be 1 when UnitFlag is true"):
        BlockMmadTla(MmadFullLoadA(enable_unit_flag=True, l0c_stages=2), (128, 128, 512), (128, 128, 128), "int8",
                     "int8", "int32")
    kernel = assembly.assemble()
    other = BlockMmadTla(MmadPingpong(), (128, 256, 512), (128, 256, 128), "int8", "int8", "int32")
    with pytest.raises(ConfigError, match="only MmadFullLoadA fits"):
        QuantMatmulFullLoadATla(other, kernel.block_epilogue, kernel.block_scheduler)
    with pytest.raises(ConfigError, match="WORKSPACE_STAGES"):
        QuantMatmulFullLoadATla(kernel.block_mmad, kernel.block_epilogue, kernel.block_scheduler, 0)
    with pytest.raises(ConfigError, match="flag ids"):
        QuantMatmulFullLoadATla(kernel.block_mmad, kernel.block_epilogue, kernel.block_scheduler, 9)
    assert kernel.get_workspace_size(kernel.Arguments(GemmCoord(1, 1, 1), 20, None, None)) == 128 * 256 * 20 * 2 * 4
