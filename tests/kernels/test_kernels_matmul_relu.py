"""Example 26 / OptimizedMatmul + MmadAtlasA2Preload + ReluTileCopy: the fixpipe ReLU, the Preload block's
shuffle-K and cross-block prefetch, the AIV padding prologues (PADDING_BLOCK_ND), the split, the checks."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin, gm, run_clean

from catlass_py import golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch import GlobalBuffer, LaunchParams
from catlass_py.assemblies import matmul_relu as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, GemmType, MmadAtlasA2Pingpong, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import (
    OptimizedMatmul,
    PaddingBuilder,
    PaddingMatrixBlockND,
    PaddingTag,
)
from catlass_py.layout import ColumnMajor, PaddingColumnMajor, PaddingRowMajor, RowMajor
from catlass_py.ops import matmul_relu
from catlass_py.tile import ReluTileCopy

EX = importlib.import_module("catlass_py.examples.26_matmul_relu")


def _operands(m, n, k, int8=False, seed=0):
    rng = np.random.default_rng(seed)
    if int8:
        return rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8)
    return rng.uniform(-2, 2, (m, k)).astype(np.float16), rng.uniform(-2, 2, (k, n)).astype(np.float16)


@pytest.mark.parametrize("m,n,k,cores", [
    (1, 1, 1, 1),            # padding both (k = 1 is not a multiple of 256)
    (300, 40, 512, 2),       # no padding; m > n: swizzle <3,0>; 2 K tiles shuffled
    (600, 513, 300, 2),      # padding both; several blocks per core: cross-block prefetch with tails
    (40, 300, 256, 6),       # no padding; more cores than blocks
])
def test_relu_shapes(m, n, k, cores):
    a, b = _operands(m, n, k, seed=m + k)
    c, report = matmul_relu(a, b, core_num=cores, return_report=True)
    expect = golden.matmul_relu(a, b)
    assert golden.compare_data(c, expect, k).passed
    assert (c >= 0).all()
    assert m * n == 1 or (expect <= 0).any()  # the ReLU did cut something
    assert_each_written_once(report, {None: (m, n)})
    assert_round_robin(report, cores)


def test_int8_and_layouts():
    a, b = _operands(150, 260, 300, int8=True)
    for la, lb in (("row", "column"), ("column", "row"), ("column", "column")):
        c = matmul_relu(a, b, layout_a=la, layout_b=lb, core_num=3)
        assert np.array_equal(c, golden.matmul_relu(a, b)), (la, lb)


def test_padding_decisions_and_example():
    assert assembly.padding_needed(64, 64, 512) == (False, False)
    assert assembly.padding_needed(64, 64, 300) == (True, True)
    assert assembly.padding_needed(64, 100, 512, layout_b=RowMajor) == (False, True)  # B row-major: ld = n
    assert assembly.padding_needed(64, 64, 65536) == (True, True)  # stride limit
    kernel = assembly.assemble(padding_a=True, padding_b=True)
    assert kernel.block_mmad.a_type.layout is PaddingRowMajor and kernel.block_mmad.b_type.layout is PaddingColumnMajor
    assert assembly.assemble().aiv is None  # without prologues no vector core launches
    res = EX.run(["200", "100", "300"], cores=2)
    assert res.passed and res.details["padding_a"] and res.details["workspace_bytes"] == 2 * (256 * 512 + 512 * 256)


@pytest.mark.parametrize("compute_length", [256, 4096])
def test_padding_block_nd_both_branches_and_no_races(compute_length):
    """A short COMPUTE_LENGTH drives the long-tile branch (one row over several UB trips); a larger one packs
    several rows per trip. The padded workspace feeds the cube after the barrier + flag, with no race."""
    m, n, k = 70, 90, 600
    t = GemmType("float16", RowMajor)
    pa = PaddingMatrixBlockND("AtlasA2", "float16", RowMajor, compute_length)
    pb = PaddingMatrixBlockND("AtlasA2", "float16", ColumnMajor, compute_length)
    at, bt = GemmType("float16", pa.layout_out), GemmType("float16", pb.layout_out)
    mmad = BlockMmad(MmadAtlasA2Preload(True, True), (128, 256, 256), (128, 256, 64), at, bt, t,
                     tile_copy=ReluTileCopy("AtlasA2", at, bt, t))
    kernel = OptimizedMatmul(pa, pb, mmad, None, GemmIdentityBlockSwizzle(3, 1))
    a, b = _operands(m, n, k)
    c = np.zeros((m, n), np.float16)
    args = kernel.Arguments(GemmCoord(m, n, k), gm("a", a), gm("b", np.ascontiguousarray(b.T)), gm("c", c, read_only=False))
    rec = WorkloadRecorder()
    run_clean(kernel, args, 2, observers=(rec,), options=LaunchParams(detect_races=True))
    assert golden.compare_data(c, golden.matmul_relu(a, b), k).passed


def test_nz_prologue_is_accepted():
    pb = PaddingBuilder(PaddingTag.PADDING_NZ, "AtlasA2", "float16", ColumnMajor)
    t = GemmType("float16", RowMajor)
    bt = GemmType("float16", pb.layout_after_padding)
    mmad = BlockMmad(MmadAtlasA2Preload(True, True), (128, 256, 256), (128, 256, 64), t, bt, t)
    kernel = OptimizedMatmul(None, pb.padding, mmad, None, GemmIdentityBlockSwizzle(3, 1))
    m, n, k = 50, 70, 90
    a, b = _operands(m, n, k)
    c = np.zeros((m, n), np.float16)
    args = kernel.Arguments(GemmCoord(m, n, k), gm("a", a), gm("b", np.ascontiguousarray(b.T)), gm("c", c, read_only=False))
    op_ws = kernel.get_workspace_size(args)
    assert op_ws > 0
    from catlass_py.kernel import DeviceGemm

    op = DeviceGemm(kernel)
    op.initialize(args, GlobalBuffer.empty(op_ws, "ws"))
    op.run(2)
    assert golden.compare_data(c, golden.matmul(a, b), k).passed


def test_assembly_and_argument_errors():
    t = GemmType("float16", RowMajor)
    pingpong = BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="only MmadAtlasA2Preload fits"):
        OptimizedMatmul(None, None, pingpong, None, GemmIdentityBlockSwizzle())
    preload = BlockMmad(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), t, t, t)
    with pytest.raises(ConfigError, match="PrologueA writes"):
        OptimizedMatmul(PaddingMatrixBlockND("AtlasA2", "float16", RowMajor), None, preload, None,
                        GemmIdentityBlockSwizzle())
    with pytest.raises(ConfigError, match="UB"):
        PaddingMatrixBlockND("AtlasA2", "float16", RowMajor, 96 * 1024)
    pa = PaddingMatrixBlockND("AtlasA2", "float16", RowMajor, 64)
    at = GemmType("float16", PaddingRowMajor)
    with pytest.raises(ConfigError, match="multiple of the padded block width"):
        OptimizedMatmul(pa, None, BlockMmad(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), at, t, t), None,
                        GemmIdentityBlockSwizzle())
    with pytest.raises(ConfigError, match="not implemented"):
        PaddingBuilder(PaddingTag.PADDING_ND, "AtlasA2", "float16", RowMajor)
    a, b = _operands(4, 4, 4)
    with pytest.raises(ArgumentError, match="b: expected shape"):
        matmul_relu(a, b[:3], core_num=1)
    with pytest.raises(ArgumentError, match="k"):
        matmul_relu(a[:, :0], b[:0], core_num=1)


class _LoadLog:
    """Observer: per cube core, the A loads (element offset) between the block marks."""

    interests = frozenset({"instruction", "marker"})

    def __init__(self):
        self.calls = {}

    def on_launch_start(self, info):
        self.calls = {}

    def on_event(self, e):
        from catlass_py.arch.events import InstructionEvent, MarkerEvent
        from catlass_py.arch.pipes import CoreType

        if e.core.type is not CoreType.AIC:
            return
        calls = self.calls.setdefault(e.core.ai_core, [[]])
        if isinstance(e, MarkerEvent) and e.kind == "block":
            calls.append([])
        elif isinstance(e, InstructionEvent) and e.op == "CopyGmToL1" and e.gm_reads[0].buffer == "a":
            calls[-1].append(e.gm_reads[0].start // 2)

    def on_launch_end(self, info, error):
        pass


def test_preload_prefetches_the_next_blocks_first_tile_and_shuffles_k():
    m, n, k, cores = 600, 100, 600, 2   # 5 blocks (block rows), 3 K tiles (256, 256, 88)
    kernel = assembly.assemble(swizzle=(3, 0))
    a, b = _operands(m, n, k)
    c = np.zeros((m, n), np.float16)
    log = _LoadLog()
    args = kernel.Arguments(GemmCoord(m, n, k), gm("a", a), gm("b", np.ascontiguousarray(b.T)), gm("c", c, read_only=False))
    run_clean(kernel, args, cores, observers=(log,))
    assert golden.compare_data(c, golden.matmul_relu(a, b), k).passed
    for core, calls in log.calls.items():
        loads = [len(x) for x in calls]
        blocks = len(calls) - 1
        # nothing before the first block; the first call loads its own first tile + 2 more + the next block's
        # first; later calls load 2 + the prefetch; the last call has nothing to prefetch.
        assert loads == [0, 4] + [3] * (blocks - 2) + [2], (core, loads)
        first_col = calls[1][0] % k
        assert first_col == 256 * (core % 3)  # shuffle-K: the K loop starts at tile GetBlockIdx() % kTiles
