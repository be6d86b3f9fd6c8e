"""Example 13 / BasicMatmulTla + BlockMmadTla<MmadPingpong>: the README shape, fp16, bf16 and int8 with row- and
column-major operands against an independent golden, the policy's variants (stage counts, the unit flag, L0C
stages, L1 resident), races and interleavings, the split across cores, and the assembly and argument errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin

from catlass_py import golden
from catlass_py.arch import GlobalBuffer, Observer
from catlass_py.assemblies import basic_matmul_tla as assembly
from catlass_py.assemblies.basic_matmul import assemble as assemble_00
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, GemmShape, GemmType, MmadAtlasA2Pingpong, MmadPingpong
from catlass_py.gemm.block import BlockMmad, BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmul
from catlass_py.kernel.basic_matmul_tla import BasicMatmulTla
from catlass_py.layout import RowMajor
from catlass_py.ops import basic_matmul_tla
from catlass_py.testing import check
from catlass_py.tile.copy_tla import PackedTileCopyTla
from catlass_py.tla import make_layout_tag

EX = importlib.import_module("catlass_py.examples.13_basic_matmul_tla")
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _operands(m, n, k, element, seed=0):
    rng = np.random.default_rng(seed)
    if element == "int8":
        return (rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8))
    return (rng.uniform(-5, 5, (m, k)).astype(NP[element]), rng.uniform(-5, 5, (k, n)).astype(NP[element]))


def _want(a, b):
    """The golden, computed here: exact int64 products for int8, float64 sums of the exact float products
    otherwise (CATLASS's golden accumulates in float; the compare rule allows for the order)."""
    if a.dtype == np.int8:
        return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    return a.astype(np.float64) @ b.astype(np.float64)


def _assert_matches(c, a, b):
    want = _want(a, b)
    if a.dtype == np.int8:
        assert c.dtype == np.int32 and np.array_equal(c, want)
    else:
        assert c.dtype == a.dtype
        res = golden.compare_data(c, want.astype(np.float32), a.shape[1])
        assert res.passed, res


def test_readme_shape_compare_success():
    res = EX.run(["256", "512", "1024", "0"], cores=24)
    assert res.passed and res.verdict == "Compare success."
    assert res.details["swizzle"] == "<3,1>" and res.details["total_blocks"] == 4
    a, b = EX.make_inputs(256, 512, 1024)
    assert a.dtype == np.float16 and float(np.abs(a).max()) <= 5.0


@pytest.mark.parametrize("element", ["float16", "bfloat16", "int8"])
@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "row"), ("row", "column"), ("column", "column")])
def test_dtypes_and_layouts(element, layouts):
    a, b = _operands(70, 300, 333, element)
    before = (a.copy(), b.copy())
    c = basic_matmul_tla(a, b, layout_a=layouts[0], layout_b=layouts[1], core_num=2)
    _assert_matches(c, a, b)
    assert np.array_equal(a, before[0]) and np.array_equal(b, before[1])


@pytest.mark.parametrize("m,n,k,cores", [(1, 300, 70, 2), (700, 33, 600, 3), (128, 256, 256, 1), (17, 1, 1, 2),
                                         (300, 520, 64, 5)])
def test_shapes_and_split(m, n, k, cores):
    a, b = _operands(m, n, k, "float16", seed=m)
    c, report = basic_matmul_tla(a, b, core_num=cores, return_report=True)
    _assert_matches(c, a, b)
    assert_each_written_once(report, {None: (m, n)})
    assert_round_robin(report, cores)


def test_swizzle_follows_the_example():
    assert assembly.swizzle_for(300, 100) == (3, 0) and assembly.swizzle_for(100, 300) == (3, 1)
    assert assembly.swizzle_for(100, 100) == (3, 1)


@pytest.mark.parametrize("policy", [
    MmadPingpong(enable_unit_flag=False),
    MmadPingpong(enable_unit_flag=False, l0c_stages=2),
    MmadPingpong(enable_unit_flag=True, l1a_stages=3, l1b_stages=2, l0a_stages=3, l0b_stages=1),
    MmadPingpong(enable_unit_flag=True, enable_l1_resident=True),
])
def test_policy_variants_race_free_and_deterministic(policy):
    a, b = _operands(300, 280, 700, "float16", seed=3)
    if policy.l0c_stages == 1:
        kernel = assembly.assemble(dispatch_policy=policy)
    else:  # two accumulators need blocks of at most half of L0C
        block = BlockMmadTla(policy, (128, 128, 256), (128, 128, 64), "float16", "float16", "float16")
        kernel = BasicMatmulTla(block, None, GemmIdentityBlockSwizzle(3, 0))
    result = check(basic_matmul_tla, a, b, kernel=kernel, core_num=3, golden=_want(a, b).astype(np.float32), k=700,
                   seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_one_l1_stage_hangs_with_several_k_tiles():
    """CATLASS's block loads the next K tile into the next L1 stage before it consumes the current one; with one
    stage that is the same stage, whose MTE1->MTE2 event is only set after the consumption: the core hangs. The
    simulator reports the deadlock (naming the event); one K tile per block runs."""
    from catlass_py.errors import DeadlockError

    policy = MmadPingpong(enable_unit_flag=True, l1b_stages=1)
    kernel = assembly.assemble(dispatch_policy=policy)
    a, b = _operands(64, 64, 256, "float16")
    _assert_matches(basic_matmul_tla(a, b, kernel=kernel, core_num=1), a, b)
    a, b = _operands(64, 64, 300, "float16")
    with pytest.raises(DeadlockError, match=r"WaitFlag<MTE1_MTE2>\(2\) has no earlier SetFlag"):
        basic_matmul_tla(a, b, kernel=kernel, core_num=1)


def test_l1_resident_skips_a_reloaded_tile():
    """With one K tile per block and one L1 A stage, consecutive blocks of one block-row on a core reuse A."""
    a, b = _operands(64, 1024, 128, "float16", seed=5)
    counts = []
    for resident in (False, True):
        policy = MmadPingpong(enable_unit_flag=True, enable_l1_resident=resident, l1a_stages=1, l1b_stages=1)
        kernel = assembly.assemble(dispatch_policy=policy, swizzle=(1, 1))
        rec = _OpCounter()
        c = basic_matmul_tla(a, b, kernel=kernel, core_num=1, observers=(rec,))
        _assert_matches(c, a, b)
        counts.append(rec.count)
    assert counts[1] == counts[0] - 3  # 4 blocks on one core: A loaded once instead of 4 times


class _OpCounter(Observer):
    """Counts the GM -> L1 loads of A tiles (64 rows)."""

    interests = frozenset({"instruction"})

    def __init__(self):
        self.count = 0

    def on_event(self, e):
        if getattr(e, "op", None) == "CopyGmToL1Tla" and e.info["rows"] == 64:
            self.count += 1


def test_assembly_rules_quote_catlass():
    f16 = "float16"
    ok = dict(l1_tile_shape=GemmShape(128, 256, 256), l0_tile_shape=GemmShape(128, 256, 64))

    def block(policy=MmadPingpong(), l1=ok["l1_tile_shape"], l0=ok["l0_tile_shape"], el="float16", **kw):
        return BlockMmadTla(policy, l1, l0, el, el, "int32" if el == "int8" else el, **kw)

    block()
    with pytest.raises(ConfigError, match=r"L1A_TILE_SIZE \* L1A_STAGES \+ L1B_TILE_SIZE \* L1B_STAGES <= L1_SIZE"):
        block(MmadPingpong(l1a_stages=4, l1b_stages=4))
    with pytest.raises(ConfigError, match=r"L0A_TILE_SIZE \* L0A_STAGES <= L0A_SIZE"):
        block(MmadPingpong(l0a_stages=5))
    with pytest.raises(ConfigError, match=r"L0C_TILE_SIZE \* L0C_STAGES <= L0C_SIZE"):
        block(MmadPingpong(l0c_stages=3))
    with pytest.raises(ConfigError, match="L0C_STAGES must be 1 when UnitFlag is true"):
        block(MmadPingpong(enable_unit_flag=True, l0c_stages=2))
    block(MmadPingpong(enable_unit_flag=True), el="int8")  # allowed for the TLA block (example 52 uses it)
    with pytest.raises(ConfigError, match="HF32 MODE only supports in float"):
        block(MmadPingpong(use_hf32_mode=True))
    with pytest.raises(ConfigError, match=r"\(L1A_STAGES \+ L1B_STAGES\) <= 8"):
        block(MmadPingpong(l1a_stages=5, l1b_stages=4), l1=GemmShape(16, 16, 32), l0=GemmShape(16, 16, 16))
    with pytest.raises(ConfigError, match="L1_TILE_M == L0_TILE_M"):
        block(l0=GemmShape(64, 256, 64))
    with pytest.raises(ConfigError, match="L0_TILE_K <= L1_TILE_K"):
        block(l0=GemmShape(128, 256, 512))
    with pytest.raises(ConfigError, match="32B aligned"):
        block(l1=GemmShape(120, 256, 256), l0=GemmShape(120, 256, 64))
    with pytest.raises(ConfigError, match="ElementBias"):
        block(element_bias=f16)
    with pytest.raises(ConfigError, match="PackedTileCopyTla"):
        block(tile_copy=object())


def test_kernels_check_the_call_signature():
    tla_block = BlockMmadTla(MmadPingpong(), (128, 256, 256), (128, 256, 64), "float16", "float16", "float16")
    f16 = GemmType("float16", RowMajor)
    old_block = BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 64), f16, f16, f16)
    with pytest.raises(ConfigError, match="BasicMatmulTla: MmadAtlasA2Pingpong's BlockMmad .* only MmadPingpong fits"):
        BasicMatmulTla(old_block, None, GemmIdentityBlockSwizzle(3, 0))
    with pytest.raises(ConfigError, match="BasicMatmul: MmadPingpong's BlockMmad is a synchronous BlockMmad\\(tensorA"):
        BasicMatmul(tla_block, None, GemmIdentityBlockSwizzle(3, 0))


def test_host_layouts_are_checked():
    kernel = assembly.assemble()
    m, n, k = 40, 50, 60
    gm = {name: GlobalBuffer.from_array(np.zeros(shape, np.float16), name).tensor("float16")
          for name, shape in (("a", (m, k)), ("b", (k, n)), ("c", (m, n)))}
    good = [make_layout_tag("float16", "RowMajor", *s) for s in ((m, k), (k, n), (m, n))]
    bad_kind = kernel.Arguments(GemmCoord(m, n, k), gm["a"], make_layout_tag("float16", "ColumnMajor", m, k),
                                gm["b"], good[1], gm["c"], good[2])
    with pytest.raises(ConfigError, match="layoutA must be a TLA RowMajor layout"):
        kernel.can_implement(bad_kind)
    bad_extent = kernel.Arguments(GemmCoord(m, n, k), gm["a"], good[0], gm["b"], make_layout_tag("float16",
                                  "RowMajor", k, n + 1), gm["c"], good[2])
    with pytest.raises(ConfigError, match=r"layoutB has origin shape \(60, 51\)"):
        kernel.can_implement(bad_extent)


def test_bad_inputs_are_argument_errors():
    a, b = _operands(10, 20, 30, "float16")
    with pytest.raises(ArgumentError):
        basic_matmul_tla(a, b[:29], core_num=1)
    with pytest.raises(ArgumentError):
        basic_matmul_tla(a, b, layout_a="diagonal", core_num=1)
    with pytest.raises(ArgumentError):
        basic_matmul_tla(a.astype(np.float32), b, core_num=1)
    with pytest.raises(ArgumentError):
        basic_matmul_tla(a[:, :0], b[:0], core_num=1)


def test_workload_and_the_1x_kernel_agree():
    """The TLA kernel computes the same blocks on the same cores as example 00's kernel with the same swizzle, and
    the same values up to the fp32 summation order (the 1.x block multiplies tiles rounded up to the fractal, the
    TLA block the actual extents, so BLAS may sum in another order)."""
    from catlass_py.ops import basic_matmul

    a, b = _operands(300, 200, 500, "float16", seed=9)
    c_tla, rep_tla = basic_matmul_tla(a, b, core_num=4, return_report=True)
    c_old, rep_old = basic_matmul(a, b, core_num=4, return_report=True, kernel=assemble_00(swizzle=(3, 0)))
    _assert_matches(c_tla, a, b)
    _assert_matches(c_old, a, b)
    assert np.abs(c_tla.astype(np.float32) - c_old.astype(np.float32)).max() <= 0.25
    assert rep_tla.blocks_per_core() == rep_old.blocks_per_core()
