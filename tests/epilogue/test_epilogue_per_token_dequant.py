"""BlockEpilogue<EpilogueAtlasA2PerTokenDequant>: assembly checks, UB plan, and a direct
launch on the two vector cores of one AI core."""

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, MarkerEvent, Observer, launch
from catlass_py.epilogue import (
    BlockEpilogue,
    EpilogueAtlasA2PerTokenDequant,
    EpilogueHorizontalTileSwizzle,
    EpilogueIdentityTileSwizzle,
    PerTokenDequantParams,
)
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmCoord, GemmType
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul

BF16 = ml_dtypes.bfloat16
F32 = GemmType("float32", RowMajor)


def assemble(stages=2, tile=(32, 256), out="bfloat16", scale=None, pts=None, c="int32", layouts=None,
             brcb_len=None, col_tile=None, swizzle=EpilogueHorizontalTileSwizzle):
    scale = scale or out
    pts = pts or out
    lc, ls, lp, ld = layouts or (RowMajor, VectorLayout, VectorLayout, RowMajor)
    c_t, s_t, p_t, d_t = GemmType(c, lc), GemmType(scale, ls), GemmType(pts, lp), GemmType(out, ld)
    return BlockEpilogue(
        EpilogueAtlasA2PerTokenDequant(stages), c_t, s_t, p_t, d_t,
        TileRowBroadcastMul(A2, F32, tile),
        TileBroadcastOneBlk(A2, F32, brcb_len or tile[0]),
        TileOneBlkColumnBroadcastMul(A2, F32, col_tile or tile),
        EpilogueTileCopy(A2, GemmType(c, RowMajor), GemmType(scale, VectorLayout), GemmType(pts, VectorLayout),
                         GemmType(out, RowMajor)),
        swizzle,
    )


# --- assembly ----------------------------------------------------------------------------------------


def test_ub_plan_of_example_10():
    plan = assemble().ub_plan
    s0, s1 = plan["stages"]
    assert s0 == {"c": 0, "scale": 32768, "per_token": 33280, "d": 33344}
    assert s1 == {"c": 49728, "scale": 49728 + 32768, "per_token": 49728 + 33280, "d": 49728 + 33344}
    assert (plan["c_fp32"], plan["scale_fp32"], plan["mul"], plan["per_token_fp32"], plan["brcb"]) == (
        99456, 132224, 133248, 166016, 166144)
    assert plan["total"] == 167168 == 2 * 49728 + 66688 + 1024


def test_ub_plan_of_float_scale_specialisation():
    plan = assemble(scale="float32", pts="float32").ub_plan
    # per stage: C 32768 + scale 1024 + per-token 128 + D 16384 = 50304; then ubCFp32, ubMul, Brcb
    assert plan["stages"][1] == {"c": 50304, "scale": 50304 + 32768, "per_token": 50304 + 33792, "d": 50304 + 33920}
    assert (plan["c_fp32"], plan["mul"], plan["brcb"], plan["total"]) == (100608, 133376, 166144, 167168)
    assert "scale_fp32" not in plan


def test_ub_budget_overflow():
    with pytest.raises(ConfigError, match="196608"):
        assemble(tile=(64, 256))  # 2 * 98944 + ... > 196608
    with pytest.raises(ConfigError, match="196608"):
        assemble(stages=3)  # 3 * 49728 + 67712 = 216896


def test_more_than_two_ub_stages_run_out_of_event_ids():
    assemble(stages=2, tile=(16, 64))
    with pytest.raises(ConfigError, match="event"):
        assemble(stages=3, tile=(16, 64))  # fits the UB, but 9 V_MTE2 event ids > 8


@pytest.mark.parametrize("kw", [
    {"c": "int8"}, {"c": "float32"}, {"out": "float32"}, {"out": "int8"},
    {"scale": "float16"},                      # bf16 D with fp16 scale
    {"pts": "float16"},
    {"scale": "float32"},                      # float scale with bf16 per-token scale
    {"layouts": (ColumnMajor, VectorLayout, VectorLayout, RowMajor)},
    {"layouts": (RowMajor, RowMajor, VectorLayout, RowMajor)},
    {"layouts": (RowMajor, VectorLayout, VectorLayout, ColumnMajor)},
])
def test_wrong_dtypes_or_layouts(kw):
    with pytest.raises(ConfigError):
        assemble(**kw)


def test_fp16_output_with_fp16_scales_is_fine():
    assemble(out="float16")


@pytest.mark.parametrize("kw", [{"brcb_len": 16}, {"col_tile": (32, 128)}, {"col_tile": (16, 256)}])
def test_inconsistent_tile_shapes(kw):
    with pytest.raises(ConfigError, match="TileShape"):
        assemble(**kw)


def test_other_assembly_errors():
    with pytest.raises(ConfigError):
        EpilogueAtlasA2PerTokenDequant(0)
    with pytest.raises(ConfigError):
        assemble(swizzle=None)
    with pytest.raises(ConfigError, match="32-byte"):
        assemble(tile=(8, 8))  # bf16 scale slice of 16 bytes puts the per-token buffer off a 32-byte boundary


# --- a direct launch on the two AIVs of one AI core ---------------------------------------------------


@dataclass
class EpiParams:
    m: int
    n: int
    blocks: list  # (block coord (mi, ni), actual k)
    gm_c: object
    gm_scale: object
    gm_pts: object
    gm_d: object


BLOCK = GemmCoord(128, 256, 512)


class EpilogueOnly:
    aic = None

    def __init__(self, epi, calls=None):
        self.epi = epi
        self.calls = calls  # when a list: every block gets a callback that records (sub-block, block)

    def aiv(self, ctx, p):
        layout_c = RowMajor(p.m, p.n)
        with self.epi(ctx.resource) as e:
            e.update_params(PerTokenDequantParams(p.gm_scale, VectorLayout(p.n), p.gm_pts, VectorLayout(p.m),
                                                  p.gm_d, RowMajor(p.m, p.n)))
            for (mi, ni), k in p.blocks:
                actual = GemmCoord(min(BLOCK.m, p.m - mi * BLOCK.m), min(BLOCK.n, p.n - ni * BLOCK.n), k)
                gm_block_c = p.gm_c[layout_c.offset(mi * BLOCK.m, ni * BLOCK.n)]
                cb = None
                if self.calls is not None:
                    cb = lambda blk=(mi, ni), sub=ctx.sub_block_idx: self.calls.append((sub, blk))  # noqa: E731
                e(BLOCK, GemmCoord(mi, ni, 0), actual, gm_block_c, layout_c.get_tile_layout(actual.m, actual.n), cb)


class Tiles(Observer):
    def __init__(self):
        self.tiles = []

    def on_event(self, e):
        if isinstance(e, MarkerEvent) and e.kind == "epilogue_tile":
            d = e.data
            self.tiles.append((e.core.sub, d["row"], d["col"], d["rows"], d["cols"], d["zero"]))


def run_epilogue(epi, c, scale, pts, blocks, out_np, calls=None):
    m, n = c.shape
    d_host = np.full((m, n), np.nan, np.float32).astype(out_np)  # NaN sentinel
    p = EpiParams(m, n, blocks,
                  GlobalBuffer.from_array(c, "C", read_only=True).tensor("int32"),
                  GlobalBuffer.from_array(scale, "scale", read_only=True).tensor(scale.dtype),
                  GlobalBuffer.from_array(pts, "pts", read_only=True).tensor(pts.dtype),
                  GlobalBuffer.from_array(d_host, "D").tensor(out_np))
    tiles = Tiles()
    launch(EpilogueOnly(epi, calls), p, 1, arch=A2, observers=(tiles,))
    return d_host, tiles.tiles


def plant_discriminating(c, scale, pts, out_np, positions, rng):
    """Overwrite C at ``positions`` with values for which the CATLASS order differs (after rounding to D)
    from the other multiplication order (even positions) or from the exactly rounded product (odd
    positions), so that neither a wrong order nor a wider intermediate can pass."""
    for i, (r, col) in enumerate(positions):
        cand = rng.integers(-2**31, 2**31, size=200_000, dtype=np.int64).astype(np.int32)
        s, p = np.float32(scale[col]), np.float32(pts[r])
        ours = ((cand.astype(np.float32) * s) * p).astype(out_np).view(np.uint16)
        other = (cand.astype(np.float32) * np.float32(s * p)).astype(out_np).view(np.uint16)
        exact = (cand.astype(np.float64) * np.float64(s) * np.float64(p)).astype(np.float32).astype(out_np).view(np.uint16)
        hit = np.flatnonzero(ours != (other if i % 2 == 0 else exact))
        assert hit.size, "no discriminating value found"
        c[r, col] = cand[hit[0]]


def golden(c, scale, pts, out_np):
    """float32 multiplies in CATLASS order: ((fp32(C) * fp32(scale[col])) * fp32(pts[row])), then RNE."""
    x = c.astype(np.float32) * scale.astype(np.float32)[None, :]
    x = x.astype(np.float32) * pts.astype(np.float32)[:, None]
    return x.astype(np.float32).astype(out_np)


@pytest.mark.parametrize("out,scale_kind", [("bfloat16", "same"), ("float16", "same"), ("bfloat16", "float32")])
def test_direct_launch_dequantises_every_block(out, scale_kind):
    m, n = 200, 300  # blocks 128x256, 128x44, 72x256, 72x44
    rng = np.random.default_rng(1)
    out_np = BF16 if out == "bfloat16" else np.float16
    c = rng.integers(-2**31, 2**31, size=(m, n), dtype=np.int64).astype(np.int32)
    mag = 2.0**-31 if out == "float16" else 1.0
    s_np = np.float32 if scale_kind == "float32" else out_np
    scale = (rng.uniform(-2, 2, n) * mag * 1000).astype(np.float32).astype(s_np)
    pts = rng.uniform(0, 1, m).astype(np.float32).astype(s_np)
    plant_discriminating(c, scale, pts, out_np, [(1, 1), (50, 280), (150, 7), (199, 299)], rng)
    if out == "bfloat16":
        # int32 -> fp32 must round to nearest even: 2**25 + 2**17 + 3 becomes 2**25 + 2**17 + 4 (above the bf16
        # tie, rounds up to 2**25 + 2**18); truncation would give the exact tie (rounds to even, 2**25).
        scale[0] = 1
        pts[0] = 1
        c[0, 0] = 2**25 + 2**17 + 3
    epi = assemble(out=out, scale=("float32" if scale_kind == "float32" else out),
                   pts=("float32" if scale_kind == "float32" else out))
    blocks = [((0, 0), 512), ((0, 1), 512), ((1, 0), 512), ((1, 1), 512)]
    d, tiles = run_epilogue(epi, c, scale, pts, blocks, out_np)
    want = golden(c, scale, pts, out_np)
    np.testing.assert_array_equal(d.view(np.uint16), want.view(np.uint16))
    if out == "bfloat16":
        assert float(d[0, 0]) == 2**25 + 2**18
    # AIV0 takes tiles 0, 2, ... and AIV1 tiles 1, 3, ... of every block (Horizontal: down the rows)
    expect = []
    for (mi, ni), _ in blocks:
        rows = min(128, m - mi * 128)
        cols = min(256, n - ni * 256)
        for t in range(-(-rows // 32)):
            expect.append((t % 2, mi * 128 + 32 * t, ni * 256, min(32, rows - 32 * t), cols, False))
    assert sorted(tiles) == sorted(expect)
    for sub in (0, 1):
        mine = [x for x in tiles if x[0] == sub]
        assert mine == [x for x in expect if x[0] == sub]  # and in this order


def test_block_with_k_zero_writes_zeros_and_nothing_else():
    m, n = 200, 300
    rng = np.random.default_rng(2)
    c = rng.integers(-1000, 1000, size=(m, n)).astype(np.int32)
    scale = rng.uniform(0.5, 1, n).astype(BF16)
    pts = rng.uniform(0.5, 1, m).astype(BF16)
    blocks = [((0, 1), 0), ((1, 0), 512)]  # block (0,1) has k == 0; blocks (0,0), (1,1) are never run
    d, tiles = run_epilogue(assemble(), c, scale, pts, blocks, BF16)
    assert np.all(d[:128, 256:].astype(np.float32) == 0)
    want = golden(c, scale, pts, BF16)
    np.testing.assert_array_equal(d[128:, :256].view(np.uint16), want[128:, :256].view(np.uint16))
    assert np.all(np.isnan(d[:128, :256].astype(np.float32))) and np.all(np.isnan(d[128:, 256:].astype(np.float32)))
    zero_tiles = sorted(x for x in tiles if x[5])
    assert zero_tiles == [(0, 0, 256, 32, 44, True), (0, 64, 256, 32, 44, True),
                          (1, 32, 256, 32, 44, True), (1, 96, 256, 32, 44, True)]


def test_one_aiv_idle_when_the_block_has_one_tile():
    m, n = 20, 256
    rng = np.random.default_rng(3)
    c = rng.integers(-1000, 1000, size=(m, n)).astype(np.int32)
    scale = rng.uniform(0.5, 1, n).astype(BF16)
    pts = rng.uniform(0.5, 1, m).astype(BF16)
    d, tiles = run_epilogue(assemble(), c, scale, pts, [((0, 0), 64)], BF16)
    np.testing.assert_array_equal(d.view(np.uint16), golden(c, scale, pts, BF16).view(np.uint16))
    assert tiles == [(0, 0, 0, 20, 256, False)]


def test_identity_swizzle_alternates_along_the_row_of_tiles():
    m, n = 40, 300  # one block 40x256 + one 40x44, 16x64 tiles
    rng = np.random.default_rng(4)
    c = rng.integers(-5000, 5000, size=(m, n)).astype(np.int32)
    scale = rng.uniform(-1, 1, n).astype(BF16)
    pts = rng.uniform(0, 1, m).astype(BF16)
    epi = assemble(tile=(16, 64), swizzle=EpilogueIdentityTileSwizzle)
    d, tiles = run_epilogue(epi, c, scale, pts, [((0, 0), 1), ((0, 1), 1)], BF16)
    np.testing.assert_array_equal(d.view(np.uint16), golden(c, scale, pts, BF16).view(np.uint16))
    # block (0,0): 40x256 -> loops (3, 4): tile i at (i // 4, i % 4)
    first = [x for x in tiles if x[2] < 256]
    assert [(x[0], x[1], x[2]) for x in first if x[0] == 0] == [(0, 16 * (i // 4), 64 * (i % 4)) for i in range(0, 12, 2)]
    assert [(x[0], x[1], x[2]) for x in first if x[0] == 1] == [(1, 16 * (i // 4), 64 * (i % 4)) for i in range(1, 12, 2)]


def test_callback_runs_once_per_block_on_each_aiv_except_for_k_zero():
    m, n = 200, 300
    rng = np.random.default_rng(5)
    c = rng.integers(-1000, 1000, size=(m, n)).astype(np.int32)
    scale = rng.uniform(0.5, 1, n).astype(BF16)
    pts = rng.uniform(0.5, 1, m).astype(BF16)
    calls = []
    blocks = [((0, 0), 8), ((0, 1), 0), ((1, 1), 8)]
    run_epilogue(assemble(), c, scale, pts, blocks, BF16, calls=calls)
    # both sub-blocks call it (even a sub-block with no tile of its own), never for the k == 0 block
    assert sorted(calls) == [(0, (0, 0)), (0, (1, 1)), (1, (0, 0)), (1, (1, 1))]
