"""The per-token dequant epilogue's repeat of a proved tile geometry (``_TileReplay``): on a vector core nobody
observes, a tile whose geometry already ran through the tile ops writes the same bytes (D, and every UB byte) and
leaves the same flag state as the ops, and a GM region out of bounds still raises the ops' error; under a cost
model alone, the repeats replay their geometry's template and the prediction is that of every tile's events."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py.analysis import CostModel
from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, LaunchParams, MarkerEvent, Observer, launch
from catlass_py.epilogue import (
    BlockEpilogue,
    EpilogueAtlasA2PerTokenDequant,
    EpilogueHorizontalTileSwizzle,
    PerTokenDequantParams,
)
from catlass_py.epilogue.block import per_token_dequant as ptd
from catlass_py.errors import OutOfBoundsError
from catlass_py.gemm import GemmCoord, GemmType
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.tile import (
    EpilogueTileCopy,
    TileBroadcastOneBlk,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
)

BF16 = ml_dtypes.bfloat16
F32 = GemmType("float32", RowMajor)
BLOCK = GemmCoord(128, 256, 512)


def assemble(out, scale):
    tile = (32, 256)
    return BlockEpilogue(
        EpilogueAtlasA2PerTokenDequant(2), GemmType("int32", RowMajor), GemmType(scale, VectorLayout),
        GemmType(scale, VectorLayout), GemmType(out, RowMajor),
        TileRowBroadcastMul(A2, F32, tile), TileBroadcastOneBlk(A2, F32, tile[0]),
        TileOneBlkColumnBroadcastMul(A2, F32, tile),
        EpilogueTileCopy(A2, GemmType("int32", RowMajor), GemmType(scale, VectorLayout),
                         GemmType(scale, VectorLayout), GemmType(out, RowMajor)),
        EpilogueHorizontalTileSwizzle,
    )


class EpilogueOnly:
    """The two AIVs of one AI core dequantise the listed blocks of C (row-major m x n) into D, then keep a copy of
    their whole UB."""

    aic = None

    def __init__(self, epi, ub_bytes):
        self.epi = epi
        self.ub_bytes = ub_bytes

    def aiv(self, ctx, p):
        m, n, blocks, gm_c, gm_scale, gm_pts, gm_d = p
        layout_c = RowMajor(m, n)
        with self.epi(ctx.resource) as e:
            e.update_params(PerTokenDequantParams(gm_scale, VectorLayout(n), gm_pts, VectorLayout(m), gm_d,
                                                  RowMajor(m, n)))
            for mi, ni in blocks:
                actual = GemmCoord(min(BLOCK.m, m - mi * BLOCK.m), min(BLOCK.n, n - ni * BLOCK.n), 512)
                e(BLOCK, GemmCoord(mi, ni, 0), actual, gm_c[layout_c.offset(mi * BLOCK.m, ni * BLOCK.n)],
                  layout_c.get_tile_layout(actual.m, actual.n))
        self.ub_bytes[ctx.sub_block_idx] = ctx.resource.ub_buf.raw.copy()


class Markers(Observer):
    """The epilogue's tile markers with their sequence numbers (which count every flag set before them)."""

    interests = frozenset({"marker"})

    def __init__(self):
        self.marks = []

    def on_event(self, e):
        if isinstance(e, MarkerEvent):
            self.marks.append((e.seq, e.core.sub, tuple(sorted(e.data.items()))))


@pytest.fixture
def replays(monkeypatch):
    """Count the tiles repeated from a proof."""
    count = {"run": 0}
    run = ptd._TileReplay.run

    def counted(self, *a):
        done = run(self, *a)
        count["run"] += done
        return done

    monkeypatch.setattr(ptd._TileReplay, "run", counted)
    return count


def _inputs(m, n, out_np, scale_np, seed):
    rng = np.random.default_rng(seed)
    c = rng.integers(-2**31, 2**31, size=(m, n), dtype=np.int64).astype(np.int32)
    mag = 2.0**-31 if out_np is np.float16 else 1.0
    scale = (rng.uniform(-2, 2, n) * mag * 1000).astype(np.float32).astype(scale_np)
    pts = rng.uniform(0, 1, m).astype(np.float32).astype(scale_np)
    return c, scale, pts


def _params(c, scale, pts, d_host, blocks, m=None):
    """The kernel's parameters: C (read-only, m x n unless ``m`` says the blocks address more rows), the scales and
    D's host array, wrapped as GM buffers."""
    return ((m or c.shape[0]), c.shape[1], blocks, GlobalBuffer.from_array(c, "C", read_only=True).tensor("int32"),
            GlobalBuffer.from_array(scale, "scale", read_only=True).tensor(scale.dtype),
            GlobalBuffer.from_array(pts, "pts", read_only=True).tensor(pts.dtype),
            GlobalBuffer.from_array(d_host, "D").tensor(d_host.dtype))


def _run(epi, c, scale, pts, blocks, out_np, d_rows=None, *, ops_only=False, monkeypatch=None):
    """D, both UBs and the markers of one launch; ``ops_only``: every tile runs through the tile ops."""
    m, n = c.shape
    if ops_only:
        monkeypatch.setattr(ptd._TileReplay, "build", classmethod(lambda cls, *a: None))
    d_host = np.full((d_rows or m, n), np.nan, np.float32).astype(out_np)
    p = _params(c, scale, pts, d_host, blocks)
    ub, marks = {}, Markers()
    try:
        launch(EpilogueOnly(epi, ub), p, 1, arch=A2, observers=(marks,), options=LaunchParams(poison=0x5A))
    finally:
        if ops_only:
            monkeypatch.undo()
    return d_host, ub, marks.marks


def _golden(c, scale, pts, out_np):
    x = c.astype(np.float32) * scale.astype(np.float32)[None, :]
    return (x * pts.astype(np.float32)[:, None]).astype(out_np)


@pytest.mark.parametrize("out,scale", [("bfloat16", "bfloat16"), ("float16", "float16"), ("bfloat16", "float32")])
def test_repeated_tiles_write_what_the_tile_ops_write(out, scale, replays, monkeypatch):
    # m = 400: row blocks of 128, 128, 128 and 16 rows (tiles of 32 and a 16-row tail); n = 300: column blocks of 256
    # and 44 (a tail narrower than the UB row). Blocks repeat their geometries on both AIVs and both UB stages.
    m, n = 400, 300
    out_np = BF16 if out == "bfloat16" else np.float16
    c, scale_v, pts = _inputs(m, n, out_np, np.float32 if scale == "float32" else out_np, 7)
    blocks = [(mi, ni) for mi in range(4) for ni in range(2)]
    epi = assemble(out, scale)
    d, ub, marks = _run(epi, c, scale_v, pts, blocks, out_np)
    assert replays["run"] > 0.6 * len(marks)
    replays["run"] = 0
    d_ops, ub_ops, marks_ops = _run(epi, c, scale_v, pts, blocks, out_np, ops_only=True, monkeypatch=monkeypatch)
    assert replays["run"] == 0
    np.testing.assert_array_equal(d.view(np.uint16), _golden(c, scale_v, pts, out_np).view(np.uint16))
    np.testing.assert_array_equal(d.view(np.uint16), d_ops.view(np.uint16))
    for sub in (0, 1):  # every UB byte, the stale rows and columns of the tails included
        np.testing.assert_array_equal(ub[sub], ub_ops[sub])
    assert marks == marks_ops  # the same tiles in the same order, after the same number of flag sets


@pytest.mark.parametrize("short", ["D", "C"])
def test_a_repeated_tile_out_of_bounds_raises_the_tile_ops_error(short, replays, monkeypatch):
    # the first blocks prove the 128 x 256 geometry; the last block of that geometry ends past its buffer
    m, n = 384, 256
    c, scale, pts = _inputs(m, n, BF16, BF16, 8)
    epi = assemble("bfloat16", "bfloat16")
    if short == "C":
        c_short = c[:300]
        blocks, run_c, d_rows = [(0, 0), (1, 0), (2, 0)], c_short, None

        def go(**kw):
            # C has 300 rows but the blocks are laid out for 384 (the kernel's view of a short workspace)
            return _run_view(epi, c_short, m, scale, pts, blocks, **kw)
    else:
        blocks, run_c, d_rows = [(0, 0), (1, 0), (2, 0)], c, 300

        def go(**kw):
            return _run(epi, run_c, scale, pts, blocks, BF16, d_rows, **kw)
    with pytest.raises(OutOfBoundsError) as fast:
        go()
    assert replays["run"] > 0
    with pytest.raises(OutOfBoundsError) as ops:
        go(ops_only=True, monkeypatch=monkeypatch)
    assert str(fast.value) == str(ops.value)
    assert f"GM tensor {short!r}" in str(fast.value)


def _run_view(epi, c_short, m, scale, pts, blocks, *, ops_only=False, monkeypatch=None):
    """Like :func:`_run` with C shorter (fewer rows) than the m x n problem the blocks address."""
    if ops_only:
        monkeypatch.setattr(ptd._TileReplay, "build", classmethod(lambda cls, *a: None))
    n = c_short.shape[1]
    d_host = np.zeros((m, n), BF16)
    p = _params(c_short, scale, pts, d_host, blocks, m)
    try:
        launch(EpilogueOnly(epi, {}), p, 1, arch=A2)
    finally:
        if ops_only:
            monkeypatch.undo()


class _EveryEvent(Observer):
    """Observes every event: the bus then offers no templates, and every tile runs through the tile ops."""

    interests = None


def _predict(epi, c, scale, pts, blocks, observers, shared_scales=False):
    """D and the cost model's summary of one launch beside ``observers`` (``shared_scales``: the scale and the
    per-token scale in one GM buffer)."""
    m, n = c.shape
    d_host = np.zeros((m, n), BF16)
    p = _params(c, scale, pts, d_host, blocks)
    if shared_scales:
        both = GlobalBuffer.from_array(np.concatenate([scale, pts]), "scales", read_only=True).tensor(scale.dtype)
        p = p[:4] + (both, both[n]) + p[6:]
    cm = CostModel()
    launch(EpilogueOnly(epi, {}), p, 1, arch=A2, observers=(cm, *observers))
    return d_host, cm.report


@pytest.mark.parametrize("shared_scales", [False, True])
def test_the_cost_model_alone_takes_repeated_tiles_as_templates_with_their_own_gm_regions(shared_scales, replays):
    # blocks at other rows and columns of C and D (and other scale slices) repeat two geometries; with the cost
    # model alone, each repeat replays the template of its geometry's first tile with the repeat's own GM regions,
    # which the L2 model prices at their addresses. Beside an observer of every event, every tile runs the ops and
    # publishes its events. The predictions must be the same numbers. With both scales in one GM buffer, a
    # template cannot tell which region an access lies in: none is kept, and every tile runs the ops.
    m, n = 512, 512
    c, scale, pts = _inputs(m, n, BF16, BF16, 10)
    epi = assemble("bfloat16", "bfloat16")
    blocks = [(mi, ni) for mi in range(4) for ni in range(2)] + [(0, 0), (3, 1)]
    d_alone, alone = _predict(epi, c, scale, pts, blocks, (), shared_scales)
    repeated = replays["run"]
    assert repeated == 0 if shared_scales else repeated >= 30
    d_every, every = _predict(epi, c, scale, pts, blocks, (_EveryEvent(),), shared_scales)
    assert replays["run"] == repeated
    want = _golden(c, scale, pts, BF16).view(np.uint16)
    np.testing.assert_array_equal(d_alone.view(np.uint16), want)
    np.testing.assert_array_equal(d_every.view(np.uint16), want)
    assert alone.cycles == every.cycles and alone.summary() == every.summary()
    assert alone.core_end_cycles == every.core_end_cycles
    assert alone.l2_hit_bytes > 0  # the repeated blocks read C again: their reads hit at their own addresses


class _Instructions(Observer):
    interests = frozenset({"instruction"})

    def on_event(self, e):
        pass


def test_no_repeat_when_instructions_or_flags_are_observed_or_in_timing_only_runs(replays):
    m, n = 256, 256
    c, scale, pts = _inputs(m, n, BF16, BF16, 9)
    epi = assemble("bfloat16", "bfloat16")
    blocks = [(0, 0), (1, 0), (0, 0), (1, 0)]

    class _Flags(_Instructions):
        interests = frozenset({"sync"})

    for observer in (_Instructions(), _Flags()):
        d_host = np.zeros((m, n), BF16)
        launch(EpilogueOnly(epi, {}), _params(c, scale, pts, d_host, blocks), 1, arch=A2, observers=(observer,))
        np.testing.assert_array_equal(d_host.view(np.uint16), _golden(c, scale, pts, BF16).view(np.uint16))
    assert replays["run"] == 0
    d_host = np.zeros((m, n), BF16)
    launch(EpilogueOnly(epi, {}), _params(c, scale, pts, d_host, blocks), 1, arch=A2,
           options=LaunchParams(numerics=False))
    assert replays["run"] == 0 and not d_host.view(np.uint16).any()
