"""BlockMmad end to end through arch.launch: a small AIC-only kernel loops the blocks of C = A @ B with
GemmIdentityBlockSwizzle and calls the BlockMmad, plus shuffle-K order and the
timing of the fixpipe callbacks of the async blocks."""

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, InstructionEvent, Observer, launch
from catlass_py.errors import ArgumentError
from catlass_py.gemm import (
    GemmCoord,
    GemmShape,
    GemmType,
    MatrixCoord,
    MmadAtlasA2Pingpong,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
)
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics import compare_data
from catlass_py.tile import CopyGmToL1GMMPTD, TileCopy

LAYOUT = {"R": RowMajor, "C": ColumnMajor}


@dataclass
class Params:
    shape: GemmCoord
    gm_a: object
    layout_a: object
    gm_b: object
    layout_b: object
    gm_c: object
    layout_c: object


class BlockGemm:
    """AIC-only kernel: blocks dealt round-robin over the cube cores; every call of the block is recorded
    in ``log`` (with the callbacks) when ``log`` is given."""

    aiv = None

    def __init__(self, block_mmad, swizzle=GemmIdentityBlockSwizzle(3, 0), log=None, k_override=None):
        self.block_mmad = block_mmad
        self.swizzle = swizzle
        self.log = log
        self.k_override = k_override

    def aic(self, ctx, p):
        l1 = self.block_mmad.l1_tile_shape
        sched = self.swizzle.update(p.shape, MatrixCoord(l1.m, l1.n))
        log = self.log
        with self.block_mmad(ctx.resource) as bm:
            for loop in range(ctx.block_idx, sched.get_core_loops(), ctx.block_num):
                bc = sched.get_block_coord(loop)
                actual = sched.get_actual_block_shape(bc)
                if self.k_override is not None:
                    actual = GemmCoord(actual.m, actual.n, self.k_override(loop))
                a = p.gm_a[p.layout_a.offset(bc.m * l1.m, 0)]
                b = p.gm_b[p.layout_b.offset(0, bc.n * l1.n)]
                c = p.gm_c[p.layout_c.offset(bc.m * l1.m, bc.n * l1.n)]
                if log is not None:
                    log.append(("call", loop))
                caps = self.block_mmad.CAPABILITIES
                if caps.asynchronous:
                    before = (lambda i=loop: log.append(("before", i))) if log is not None else None
                    after = (lambda i=loop: log.append(("after", i))) if log is not None else None
                    if caps.callbacks == 2:
                        bm(a, p.layout_a, b, p.layout_b, c, p.layout_c, actual, before, after)
                    else:
                        bm(a, p.layout_a, b, p.layout_b, c, p.layout_c, actual, after)
                else:
                    bm(a, p.layout_a, b, p.layout_b, c, p.layout_c, actual)
                if log is not None:
                    log.append(("return", loop))
            if log is not None:
                log.append(("sync", None))
            bm.synchronize_block()
            if log is not None:
                log.append(("synced", None))


def store(mat, layout_cls):
    """Host array holding ``mat`` in the given GM layout."""
    return np.ascontiguousarray(mat if layout_cls is RowMajor else mat.T)


def run_gemm(block_mmad, a, b, la="R", lb="R", block_dim=2, observers=(), log=None, k_override=None,
             swizzle=GemmIdentityBlockSwizzle(3, 0)):
    m, k = a.shape
    n = b.shape[1]
    acc = np.int32 if a.dtype == np.int8 else np.float32
    elem = {np.dtype(np.int8): "int8", np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
            np.dtype(ml_dtypes.bfloat16): "bfloat16"}[a.dtype]
    gm_a = GlobalBuffer.from_array(store(a, LAYOUT[la]), "A", read_only=True).tensor(elem)
    gm_b = GlobalBuffer.from_array(store(b, LAYOUT[lb]), "B", read_only=True).tensor(elem)
    c_buf = GlobalBuffer.empty(m * n * 4, "C", fill=0xFF)
    p = Params(GemmCoord(m, n, k), gm_a, LAYOUT[la](m, k), gm_b, LAYOUT[lb](k, n), c_buf.tensor(acc), RowMajor(m, n))
    launch(BlockGemm(block_mmad, swizzle, log, k_override), p, block_dim, arch=A2, observers=observers)
    return c_buf.raw.view(acc).reshape(m, n)


def policy(name):
    return {
        "pingpong": MmadAtlasA2Pingpong(),
        "async": MmadAtlasA2PreloadAsync(1, 2, 2, 2, 1, False, False),
        "async_cb": MmadAtlasA2PreloadAsyncWithCallback(1, 2, 2, 2, 1, False, True),
        "async_cb_deep": MmadAtlasA2PreloadAsyncWithCallback(2, 3, 3, 2, 2, False, True),
    }[name]


def assemble(pol, dtype, la, lb, tile_copy=None):
    a_t = GemmType(dtype, LAYOUT[la])
    b_t = GemmType(dtype, LAYOUT[lb])
    c_t = GemmType("int32" if dtype == "int8" else "float32", RowMajor)
    if dtype == "int8":
        l1, l0 = GemmShape(32, 64, 64), GemmShape(32, 64, 32)
    else:
        l1, l0 = GemmShape(32, 32, 64), GemmShape(32, 32, 32)
    return BlockMmad(policy(pol), l1, l0, a_t, b_t, c_t, tile_copy=tile_copy)


def operands(dtype, m, n, k, seed):
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        return (rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n)).astype(np.int8))
    npd = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}[dtype]
    return (rng.uniform(-1, 1, (m, k)).astype(np.float32).astype(npd),
            rng.uniform(-1, 1, (k, n)).astype(np.float32).astype(npd))


# m, n, k tails: m, n not multiples of the block; k = 2 * L1.K + 22 (not a multiple of L1.K or L0.K)
SHAPE = (70, 100, 150)


@pytest.mark.parametrize("pol", ["pingpong", "async", "async_cb", "async_cb_deep"])
@pytest.mark.parametrize("la,lb", [("R", "R"), ("C", "R"), ("R", "C"), ("C", "C")])
def test_int8_block_gemm_is_exact(pol, la, lb):
    m, n, k = SHAPE
    a, b = operands("int8", m, n, k, seed=len(pol) + ord(la) + 3 * ord(lb))
    c = run_gemm(assemble(pol, "int8", la, lb), a, b, la, lb)
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("pol", ["pingpong", "async_cb", "async_cb_deep"])
@pytest.mark.parametrize("la,lb", [("R", "R"), ("C", "C"), ("R", "C")])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_block_gemm_within_catlass_tolerance(pol, la, lb, dtype):
    m, n, k = 45, 50, 90  # k = L1.K + 26: the last L0 part is 26 deep
    a, b = operands(dtype, m, n, k, seed=7)
    c = run_gemm(assemble(pol, dtype, la, lb), a, b, la, lb)
    golden = a.astype(np.float64) @ b.astype(np.float64)
    res = compare_data(c, golden, k)
    assert res, str(res)
    assert np.all(np.isfinite(c))


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (32, 64, 64), (33, 65, 65), (5, 200, 31)])
def test_int8_edge_shapes(m, n, k):
    a, b = operands("int8", m, n, k, seed=m + n + k)
    c = run_gemm(assemble("async_cb", "int8", "R", "R"), a, b, block_dim=3)
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


def test_gmmptd_loader_gives_the_same_result():
    a_t = GemmType("int8", RowMajor)
    tc = TileCopy(A2, a_t, a_t, GemmType("int32", RowMajor)).replace(copy_gm_to_l1_a=CopyGmToL1GMMPTD(A2, a_t))
    bm = assemble("async_cb", "int8", "R", "R", tile_copy=tc)
    for m in (1, 33):  # 1-row tiles take the plain DataCopy branch
        a, b = operands("int8", m, 70, 150, seed=m)
        c = run_gemm(bm, a, b)
        np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


# --- shuffle-K ----------------------------------------------------------------------------------------


class GmReads(Observer):
    def __init__(self, ops):
        self.ops = ops
        self.reads = []  # (core short name, op, buffer, byte start)

    def on_event(self, e):
        if isinstance(e, InstructionEvent) and e.op in self.ops:
            for acc in e.gm_reads:
                self.reads.append((e.core.short, e.op, acc.buffer, acc.start))


@pytest.mark.parametrize("ptd", [False, True])
def test_shuffle_k_starts_at_block_idx_mod_t(ptd):
    m, n, k = 32, 128, 4 * 64 - 10  # T = 4 K tiles; blocks: 1 x 2 -> with 3 cores, cores 0 and 1 work
    a, b = operands("int8", m, n, k, seed=1)
    a_t = GemmType("int8", RowMajor)
    tc = TileCopy(A2, a_t, a_t, GemmType("int32", RowMajor))
    if ptd:
        tc = tc.replace(copy_gm_to_l1_a=CopyGmToL1GMMPTD(A2, a_t))
    bm = BlockMmad(MmadAtlasA2PreloadAsyncWithCallback(1, 2, 2, 2, 1, False, True), GemmShape(32, 64, 64),
                   GemmShape(32, 64, 32), a_t, a_t, GemmType("int32", RowMajor), tile_copy=tc)
    op_a = "CopyGmToL1GMMPTD" if ptd else "CopyGmToL1"
    obs = GmReads({"CopyGmToL1", "CopyGmToL1GMMPTD"})
    c = run_gemm(bm, a, b, block_dim=3, observers=(obs,))
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))
    t_count = 4
    for core in (0, 1):
        a_tiles = [start // 64 for who, op, buf, start in obs.reads if who == f"AIC{core}" and buf == "A"]
        assert all(op == op_a for who, op, buf, _ in obs.reads if who == f"AIC{core}" and buf == "A")
        assert a_tiles == [(core % t_count + i) % t_count for i in range(t_count)]
        # B rows of the same K tiles, in the same order (B row-major: tile t starts at row t*64)
        b_starts = [start for who, op, buf, start in obs.reads if who == f"AIC{core}" and buf == "B"]
        assert [(s // n) // 64 for s in b_starts] == a_tiles
    assert not [r for r in obs.reads if r[0] == "AIC2"]


def test_without_shuffle_k_tiles_load_in_order():
    m, n, k = 32, 64, 3 * 64
    a, b = operands("int8", m, n, k, seed=2)
    obs = GmReads({"CopyGmToL1"})
    bm = assemble("async", "int8", "R", "R")  # shuffle off
    # One block only: give it to AIC 2 of 3 by running on 3 cores with a 3-block problem
    a3 = np.concatenate([a, a, a])
    run_gemm(bm, a3, b, block_dim=3, observers=(obs,))
    for core in range(3):
        tiles = [(s % (k)) // 64 for who, _, buf, s in obs.reads if who == f"AIC{core}" and buf == "A"]
        assert tiles == [0, 1, 2]


# --- callbacks around the fixpipe ---------------------------------------------------------------------


class FixpipeLog(Observer):
    """Appends ('fixpipe', block) to the kernel's log when a fixpipe stores block ``block``'s C."""

    def __init__(self, log, block_of_byte):
        self.log = log
        self.block_of_byte = block_of_byte

    def on_event(self, e):
        if isinstance(e, InstructionEvent) and e.op == "Fixpipe":
            self.log.append(("fixpipe", self.block_of_byte(e.gm_writes[0].start)))
        elif isinstance(e, InstructionEvent) and e.op == "Mmad":
            self.log.append(("mmad", None))


@pytest.mark.parametrize("t_tiles", [1, 3])
def test_callbacks_run_around_the_fixpipe_during_the_next_call(t_tiles):
    l1m, l1n = 32, 64
    m, n, k = 4 * l1m, l1n, t_tiles * 64 - 5  # 4 blocks in one column, all on one core
    a, b = operands("int8", m, n, k, seed=3)
    log = []
    obs = FixpipeLog(log, lambda byte: byte // (l1m * n * 4))  # C row-major int32: block i starts at row 32 i
    bm = assemble("async_cb", "int8", "R", "R")
    c = run_gemm(bm, a, b, block_dim=1, observers=(obs,), log=log)
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))
    seq = [x for x in log if x[0] != "mmad"]
    expect = [("call", 0), ("return", 0)]
    for blk in range(1, 4):
        expect += [("call", blk), ("before", blk - 1), ("fixpipe", blk - 1), ("after", blk - 1), ("return", blk)]
    expect += [("sync", None), ("before", 3), ("fixpipe", 3), ("after", 3), ("synced", None)]
    assert seq == expect
    # "right before / right after": the callbacks are adjacent to their fixpipe (no Mmad in between)
    for i, x in enumerate(log):
        if x[0] == "before":
            assert log[i + 1] == ("fixpipe", x[1]) and log[i + 2] == ("after", x[1])


def test_deeper_preload_defers_the_store_two_calls():
    m, n, k = 4 * 32, 32, 64  # T = 1 tile per block, preload_stages = 2
    a, b = operands("float16", m, n, k, seed=4)
    log = []
    obs = FixpipeLog(log, lambda byte: byte // (32 * n * 4))
    bm = assemble("async_cb_deep", "float16", "R", "R")
    run_gemm(bm, a, b, block_dim=1, observers=(obs,), log=log)
    seq = [x for x in log if x[0] != "mmad"]
    expect = [("call", 0), ("return", 0), ("call", 1), ("return", 1)]
    for blk in range(2, 4):
        expect += [("call", blk), ("before", blk - 2), ("fixpipe", blk - 2), ("after", blk - 2), ("return", blk)]
    expect += [("sync", None)]
    for blk in (2, 3):
        expect += [("before", blk), ("fixpipe", blk), ("after", blk)]
    expect += [("synced", None)]
    assert seq == expect


def test_preload_async_single_callback_runs_after_the_fixpipe():
    m, n, k = 2 * 32, 64, 64
    a, b = operands("int8", m, n, k, seed=5)
    log = []
    obs = FixpipeLog(log, lambda byte: byte // (32 * n * 4))
    run_gemm(assemble("async", "int8", "R", "R"), a, b, block_dim=1, observers=(obs,), log=log)
    seq = [x for x in log if x[0] != "mmad"]
    assert seq == [("call", 0), ("return", 0), ("call", 1), ("fixpipe", 0), ("after", 0), ("return", 1),
                   ("sync", None), ("fixpipe", 1), ("after", 1), ("synced", None)]


def test_async_block_with_k_zero_issues_nothing_and_skips_callbacks():
    m, n, k = 2 * 32, 64, 64
    a, b = operands("int8", m, n, k, seed=6)
    log = []
    obs = FixpipeLog(log, lambda byte: byte // (32 * n * 4))
    # block 1 has k == 0; block 0 is a normal block
    c = run_gemm(assemble("async_cb", "int8", "R", "R"), a, b, block_dim=1, observers=(obs,), log=log,
                 k_override=lambda loop: 0 if loop == 1 else k)
    assert not any(x[1] == 1 and x[0] in ("before", "after", "fixpipe") for x in log)
    assert ("fixpipe", 0) in log
    np.testing.assert_array_equal(c[:32].astype(np.int64), a[:32].astype(np.int64) @ b.astype(np.int64))
    assert np.all(c[32:] == -1)  # never stored: still the 0xFF fill


def test_pingpong_rejects_k_zero():
    a, b = operands("int8", 32, 64, 64, seed=7)
    with pytest.raises(ArgumentError):
        run_gemm(assemble("pingpong", "int8", "R", "R"), a, b, block_dim=1, k_override=lambda loop: 0)


class KeywordCallback(BlockGemm):
    """Passes PreloadAsync's single callback by keyword (``callback_after_fixpipe=``), or both keywords."""

    def __init__(self, block_mmad, log, both=False):
        super().__init__(block_mmad, log=log)
        self.both = both

    def aic(self, ctx, p):
        l1 = self.block_mmad.l1_tile_shape
        sched = self.swizzle.update(p.shape, MatrixCoord(l1.m, l1.n))
        with self.block_mmad(ctx.resource) as bm:
            for loop in range(sched.get_core_loops()):
                bc = sched.get_block_coord(loop)
                kw = {"callback_after_fixpipe": lambda i=loop: self.log.append(("after", i))}
                if self.both:
                    kw["callback_before_fixpipe"] = lambda i=loop: self.log.append(("before", i))
                bm(p.gm_a[p.layout_a.offset(bc.m * l1.m, 0)], p.layout_a, p.gm_b, p.layout_b,
                   p.gm_c[p.layout_c.offset(bc.m * l1.m, 0)], p.layout_c, sched.get_actual_block_shape(bc), **kw)


def test_preload_async_callback_by_keyword_is_not_dropped():
    m, n, k = 2 * 32, 64, 64
    a, b = operands("int8", m, n, k, seed=8)
    bm = assemble("async", "int8", "R", "R")
    gm_a = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    gm_b = GlobalBuffer.from_array(b, "B", read_only=True).tensor("int8")
    c_buf = GlobalBuffer.empty(m * n * 4, "C")
    p = Params(GemmCoord(m, n, k), gm_a, RowMajor(m, k), gm_b, RowMajor(k, n), c_buf.tensor("int32"), RowMajor(m, n))
    log = []
    obs = FixpipeLog(log, lambda byte: byte // (32 * n * 4))
    launch(KeywordCallback(bm, log), p, 1, arch=A2, observers=(obs,))
    assert [x for x in log if x[0] != "mmad"] == [("fixpipe", 0), ("after", 0), ("fixpipe", 1), ("after", 1)]
    with pytest.raises(ArgumentError, match="one callback"):
        launch(KeywordCallback(bm, [], both=True), p, 1, arch=A2)
