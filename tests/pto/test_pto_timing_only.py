"""Timing-only launches (``LaunchParams(numerics=False)``) of the PTO tile instructions TEXTRACT (every non-Acc pair and
the ND -> 2 x NZ form), TINSERT (Vec -> Mat bursts, Vec -> Vec), TFILLPAD (Vec modes and the Mat NZ fill), TQUANT (MX
ND / DN, INT8) and TDEQUANT: the same events and cost-model prediction as the numeric launch, the same errors, and no
on-chip bytes (every arena the kernel touches is still unallocated when its program ends).

Each case is a small one-core kernel in the shape of the instruction's ST kernel (``test_st_<family>.py``): TLOAD the
inputs from GM, the instruction, TSTORE the Vec outputs. The timing-only launch gets shape-only GM operands.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py.analysis import CostModel
from catlass_py.arch import LaunchParams, launch
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.arch.spec import ASCEND_950
from catlass_py.errors import CatlassError
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.pto import (
    FRACTAL_MX,
    CompactMode,
    MxQuantAlg,
    PadValue,
    QuantType,
    TFillPadMode,
    Tile,
    TileType,
    pto_layout,
    tdequant,
    textract,
    textract_2xnz,
    tfillpad,
    tile_left,
    tile_left_scale,
    tinsert,
    tload,
    tquant,
    tquant_int8,
    tstore,
)
from catlass_py.testing import EventLog

V, M_ = TileType.Vec, TileType.Mat
RNG = np.random.default_rng(7)


# -- the kernels ----------------------------------------------------------------------------------------------------
# A case is (cube, inputs, outputs, body): ``inputs`` name -> host array, ``outputs`` name -> (bytes, dtype);
# ``body(ctx, gm)`` runs the kernel on one core (``gm`` name -> GlobalTensor) and returns the tiles whose arenas a
# timing-only run must leave unallocated.


def _f16(r, c):
    return RNG.standard_normal((r, c)).astype(np.float16)


def _f32(r, c):
    return RNG.standard_normal((r, c)).astype(np.float32)


def _mat_to_left(ctx, gm):
    src = Tile.of("NZ", M_, "float16", 64, 64).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(64, 64))
    dst = tile_left("float16", 32, 32).assign(ctx, 0)
    textract(dst, src, 16, 32)
    return src, dst


def _mat_to_right_normal(ctx, gm):
    src = Tile.of("ZN", M_, "float16", 64, 64).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(64, 64))
    dst = Tile.of("ZN", TileType.Right, "float16", 32, 32, valid=(20, 24), compact=CompactMode.Normal).assign(ctx, 0)
    textract(dst, src, 32, 16)
    return src, dst


def _mat_to_scale_left(ctx, gm):
    src = Tile.of("ZZ", M_, "float8_e8m0fnu", 32, 4, fractal=FRACTAL_MX).assign(ctx, 0)
    tload(src, gm["s"], RowMajor(32, 4))
    dst = tile_left_scale(16, 4).assign(ctx, 0)
    textract(dst, src, 16, 0)
    return src, dst


def _vec_to_mat_extract(ctx, gm):
    src = Tile.of("ND", V, "float16", 32, 64).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(32, 64))
    dst = Tile.of("ND", M_, "float16", 16, 64).assign(ctx, 0x400)
    textract(dst, src, 16, 0)
    return src, dst


def _vec_to_vec_extract(ctx, gm):
    src = Tile.of("ND", V, "float32", 32, 32).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(32, 32))
    dst = Tile.of("ND", V, "float32", 16, 16, valid=(13, 11)).assign(ctx, 0x8000)
    textract(dst, src, 8, 16)
    tstore(gm["out"], RowMajor(13, 11), dst)
    return src, dst


def _nd_to_2xnz(ctx, gm):
    src = Tile.of("ND", V, "float16", 64, 128).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(64, 128))
    d0 = Tile.of("NZ", V, "float16", 32, 32, valid=(20, 25)).assign(ctx, 0x8000)
    d1 = Tile.of("NZ", V, "float16", 16, 48).assign(ctx, 0xC000)
    textract_2xnz(d0, d1, src, 8, 16, 32, 64)
    tstore(gm["out"], pto_layout("NZ", 32, 32, 16, 16), d0)
    return src, d0, d1


TEXTRACT_CASES = {
    "Mat->Left": (True, {"a": _f16(64, 64)}, {}, _mat_to_left),
    "Mat->Right Normal": (True, {"a": _f16(64, 64)}, {}, _mat_to_right_normal),
    "Mat->ScaleLeft": (True, {"s": RNG.integers(100, 140, (32, 4), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)},
                       {}, _mat_to_scale_left),
    "Vec->Mat": (False, {"a": _f16(32, 64)}, {}, _vec_to_mat_extract),
    "Vec->Vec": (False, {"a": _f32(32, 32)}, {"out": (13 * 11 * 4, "float32")}, _vec_to_vec_extract),
    "ND->2xNZ": (False, {"a": _f16(64, 128)}, {"out": (32 * 32 * 2, "float16")}, _nd_to_2xnz),
}


def _insert_nd(ctx, gm):
    src = Tile.of("ND", V, "float16", 16, 64, valid=(12, 40)).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(12, 40))
    dst = Tile.of("ND", M_, "float16", 32, 128).assign(ctx, 0)
    tinsert(dst, src, 16, 32)
    return src, dst


def _insert_nd_whole(ctx, gm):
    src = Tile.of("ND", V, "float16", 16, 64).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(16, 64))
    dst = Tile.of("ND", M_, "float16", 32, 64).assign(ctx, 0)
    tinsert(dst, src, 16, 0)
    return src, dst


def _insert_nz(split):
    def body(ctx, gm):
        src = Tile.of("NZ", V, "float16", 32, 64, valid=(24, 64)).assign(ctx, 0)
        tload(src, gm["a"], RowMajor(24, 64))
        dst = Tile.of("NZ", M_, "float16", 64, 64).assign(ctx, 0)
        tinsert(dst, src, 16, 0, split=split)
        return src, dst
    return body


def _insert_zn(ctx, gm):
    src = Tile.of("ZN", V, "float16", 32, 32).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(32, 32))
    dst = Tile.of("ZN", M_, "float16", 64, 32).assign(ctx, 0)
    tinsert(dst, src, 32, 0)
    return src, dst


def _insert_vec(ctx, gm):
    src = Tile.of("ND", V, "float32", 16, 16, valid=(9, 14)).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(9, 14))
    dst = Tile.of("ND", V, "float32", 32, 32).assign(ctx, 0x4000)
    tload(dst, gm["b"], RowMajor(32, 32))
    tinsert(dst, src, 8, 16)
    tstore(gm["out"], RowMajor(32, 32), dst)
    return src, dst


TINSERT_CASES = {
    "Vec->Mat ND rows": (False, {"a": _f16(12, 40)}, {}, _insert_nd),
    "Vec->Mat ND whole": (False, {"a": _f16(16, 64)}, {}, _insert_nd_whole),
    "Vec->Mat NZ": (False, {"a": _f16(24, 64)}, {}, _insert_nz(1)),
    "Vec->Mat NZ split2": (False, {"a": _f16(24, 64)}, {}, _insert_nz(2)),
    "Vec->Mat NZ split4": (False, {"a": _f16(24, 64)}, {}, _insert_nz(4)),
    "Vec->Mat ZN": (False, {"a": _f16(32, 32)}, {}, _insert_zn),
    "Vec->Vec": (False, {"a": _f32(9, 14), "b": _f32(32, 32)}, {"out": (32 * 32 * 4, "float32")}, _insert_vec),
}


def _fillpad(mode):
    def body(ctx, gm):
        src = Tile.of("ND", V, "float32", 32, 32 if mode is not TFillPadMode.Expand else 16, valid=(10, 13),
                      pad=PadValue.Min).assign(ctx, 0)
        tload(src, gm["a"], RowMajor(10, 13))
        at = 0 if mode is TFillPadMode.InPlace else 0x8000
        dst = Tile.of("ND", V, "float32", 32, 32, valid=(24, 32), pad=PadValue.Max).assign(ctx, at)
        tfillpad(dst, src, mode)
        tstore(gm["out"], RowMajor(24, 32), dst)
        return src, dst
    return body


def _fillpad_mat(compact):
    def body(ctx, gm):
        dst = Tile.of("NZ", M_, "float16", 64, 64, valid=(20, 40), pad=PadValue.Zero, compact=compact).assign(ctx, 0)
        tload(dst, gm["a"], RowMajor(20, 40))
        tfillpad(dst, dst)
        return (dst,)
    return body


def _fillpad_mat_fp4(ctx, gm):
    dst = Tile.of("NZ", M_, "float4_e2m1fn", 32, 128, valid=(20, 70), pad=PadValue.Zero).assign(ctx, 0)
    tfillpad(dst, dst)
    return (dst,)


TFILLPAD_CASES = {
    "Normal": (False, {"a": _f32(10, 13)}, {"out": (24 * 32 * 4, "float32")}, _fillpad(TFillPadMode.Normal)),
    "InPlace": (False, {"a": _f32(10, 13)}, {"out": (24 * 32 * 4, "float32")}, _fillpad(TFillPadMode.InPlace)),
    "Expand": (False, {"a": _f32(10, 13)}, {"out": (24 * 32 * 4, "float32")}, _fillpad(TFillPadMode.Expand)),
    "Mat NZ": (True, {"a": _f16(20, 40)}, {}, _fillpad_mat(CompactMode.Null)),
    "Mat NZ RowAlignedPadding": (True, {"a": _f16(20, 40)}, {}, _fillpad_mat(CompactMode.RowAlignedPadding)),
    "Mat NZ fp4": (True, {}, {}, _fillpad_mat_fp4),
}


def _mx_nd_fp8(ctx, gm):
    src = Tile.of("ND", V, "float32", 32, 64).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(32, 64))
    dst = Tile.of("ND", V, "int8", 32, 64).assign(ctx, 0x2000)
    exp = Tile.of("ND", V, "uint8", 32, 32, valid=(32, 2)).assign(ctx, 0x3000)
    mx = Tile.of("ND", V, "float32", 1, 64).assign(ctx, 0x4000)
    sc = Tile.of("ND", V, "float32", 1, 64).assign(ctx, 0x4100)
    tquant(dst, src, exp, mx, sc, alg=MxQuantAlg.OcpMxFp8E4M3)
    tstore(gm["out"], RowMajor(32, 64), dst)
    tstore(gm["exp"], RowMajor(32, 2), exp)
    return src, dst, exp, mx, sc


def _mx_nd_fp4(ctx, gm):
    src = Tile.of("ND", V, "bfloat16", 16, 64, valid=(16, 40), pad=PadValue.Zero).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(16, 40))
    dst = Tile.of("ND", V, "float4_e2m1fn", 1, 1024).assign(ctx, 0x1000)
    exp = Tile.of("ND", V, "uint8", 1, 32).assign(ctx, 0x1400)
    mx = Tile.of("ND", V, "bfloat16", 1, 32).assign(ctx, 0x1500)
    sc = Tile.of("ND", V, "bfloat16", 1, 32).assign(ctx, 0x1600)
    tquant(dst, src, exp, mx, sc, alg=MxQuantAlg.NvMxFp4E2M1)
    tstore(gm["exp"], RowMajor(1, 32), exp)
    return src, dst, exp, mx, sc


def _mx_dn(interleave):
    def body(ctx, gm):
        src = Tile.of("ND", V, "float16", 64, 32).assign(ctx, 0)
        tload(src, gm["a"], RowMajor(64, 32))
        dst = Tile.of("ND", V, "int8", 64, 32).assign(ctx, 0x1000)
        exp = (Tile.of("ND", V, "uint8", 1, 64) if interleave else Tile.of("ND", V, "uint8", 2, 32)).assign(ctx, 0x1800)
        mx = Tile.of("ND", V, "float16", 2, 32).assign(ctx, 0x1900)
        sc = Tile.of("ND", V, "float16", 2, 32).assign(ctx, 0x1A00)
        tquant(dst, src, exp, mx, sc, alg=MxQuantAlg.OcpMxFp8E4M3, grp_axis=0, interleave=interleave)
        tstore(gm["out"], RowMajor(64, 32), dst)
        return src, dst, exp, mx, sc
    return body


def _int8(asym):
    def body(ctx, gm):
        src = Tile.of("ND", V, "float32", 16, 32, valid=(16, 24)).assign(ctx, 0)
        tload(src, gm["a"], RowMajor(16, 24))
        dst = Tile.of("ND", V, "uint8" if asym else "int8", 16, 32, valid=(16, 24)).assign(ctx, 0x1000)
        scale = Tile.of("DN", V, "float32", 16, 1).assign(ctx, 0x1400)
        tload(scale, gm["s"], RowMajor(16, 1))
        offset = None
        if asym:
            offset = Tile.of("DN", V, "float32", 16, 1).assign(ctx, 0x1500)
            tload(offset, gm["o"], RowMajor(16, 1))
        tquant_int8(dst, src, scale, offset, quant_type=QuantType.INT8_ASYM if asym else QuantType.INT8_SYM)
        tstore(gm["out"], RowMajor(16, 24), dst)
        return (src, dst, scale) + ((offset,) if asym else ())
    return body


def _dequant(ctx, gm):
    src = Tile.of("ND", V, "int8", 16, 32, valid=(16, 24)).assign(ctx, 0)
    tload(src, gm["a"], RowMajor(16, 24))
    dst = Tile.of("ND", V, "float32", 16, 32, valid=(16, 24)).assign(ctx, 0x1000)
    sc = Tile.of("DN", V, "float32", 16, 1, valid=(16, 1)).assign(ctx, 0x1800)
    of = Tile.of("DN", V, "float32", 16, 1, valid=(16, 1)).assign(ctx, 0x1900)
    tload(sc, gm["s"], ColumnMajor(16, 1))
    tload(of, gm["o"], ColumnMajor(16, 1))
    tdequant(dst, src, sc, of)
    tstore(gm["out"], RowMajor(16, 24), dst)
    return src, dst, sc, of


def _bf16(r, c):
    return RNG.standard_normal((r, c)).astype(ml_dtypes.bfloat16)


TQUANT_CASES = {
    "MX ND fp8": (False, {"a": _f32(32, 64)}, {"out": (32 * 64, "int8"), "exp": (64, "uint8")}, _mx_nd_fp8),
    "MX ND fp4 zero-pad": (False, {"a": _bf16(16, 40)}, {"exp": (32, "uint8")}, _mx_nd_fp4),
    "MX DN": (False, {"a": _f16(64, 32)}, {"out": (64 * 32, "int8")}, _mx_dn(False)),
    "MX DN interleave": (False, {"a": _f16(64, 32)}, {"out": (64 * 32, "int8")}, _mx_dn(True)),
    "INT8 sym": (False, {"a": _f32(16, 24), "s": _f32(16, 1)}, {"out": (16 * 24, "int8")}, _int8(False)),
    "INT8 asym": (False, {"a": _f32(16, 24), "s": _f32(16, 1), "o": _f32(16, 1)}, {"out": (16 * 24, "uint8")},
                  _int8(True)),
    "TDEQUANT": (False, {"a": RNG.integers(-128, 128, (16, 24), dtype=np.int8), "s": _f32(16, 1), "o": _f32(16, 1)},
                 {"out": (16 * 24 * 4, "float32")}, _dequant),
}

FAMILIES = {"textract": TEXTRACT_CASES, "tinsert": TINSERT_CASES, "tfillpad": TFILLPAD_CASES, "tquant": TQUANT_CASES}
ALL = [pytest.param(family, name, id=f"{family}:{name}") for family, cases in FAMILIES.items() for name in cases]


class _Kernel:
    """One core runs ``body`` (the AIC, or vector core 0 of the AI core); ``seen`` gets whether each watched tile's
    arena was still unallocated when the program ended (before the launch releases the buffers)."""

    def __init__(self, body, cube: bool):
        self.body = body
        self.seen = None
        self.aic, self.aiv = (self._run, None) if cube else (None, self._run)

    def _run(self, ctx, gm):
        if ctx.sub_block_idx:
            return
        tiles = self.body(ctx, gm)
        self.seen = [(repr(t), t.tensor.arena._raw is None) for t in tiles]


def _gm(case, numerics: bool):
    _cube, inputs, outputs, _body = case
    gm = {}
    for name, host in inputs.items():
        dtype = host.dtype.name if host.dtype != np.dtype(ml_dtypes.float8_e8m0fnu) else "float8_e8m0fnu"
        if numerics:
            gm[name] = GlobalBuffer.from_array(np.ascontiguousarray(host), name, read_only=True).tensor(dtype)
        else:
            gm[name] = GlobalBuffer.virtual(host.nbytes, name, read_only=True).tensor(dtype)
    for name, (nbytes, dtype) in outputs.items():
        buf = GlobalBuffer.empty(nbytes, name, fill=0) if numerics else GlobalBuffer.virtual(nbytes, name)
        gm[name] = buf.tensor(dtype)
    return gm


def _launch(case, numerics: bool):
    cube, _inputs, _outputs, body = case
    kernel, log, cost = _Kernel(body, cube), EventLog(), CostModel()
    launch(kernel, _gm(case, numerics), 1, arch=ASCEND_950, observers=(log, cost),
           options=LaunchParams(numerics=numerics))
    return kernel.seen, log.events, cost.report


@pytest.mark.parametrize(("family", "name"), ALL)
def test_timing_only_publishes_the_numeric_runs_events_and_touches_no_bytes(family, name):
    case = FAMILIES[family][name]
    full_seen, full_events, full_cost = _launch(case, True)
    timed_seen, timed_events, timed_cost = _launch(case, False)
    assert timed_events == full_events  # ops, pipes, nbytes, GM and on-chip accesses, flags: all of it
    assert timed_cost.cycles == full_cost.cycles and timed_cost.pipe_busy == full_cost.pipe_busy
    assert timed_cost.summary() == full_cost.summary()
    assert not all(fresh for _, fresh in full_seen)  # the numeric run did write bytes
    touched = [tile for tile, fresh in timed_seen if not fresh]
    assert not touched, f"a timing-only run allocated the arenas of {touched}"


# -- the same errors ------------------------------------------------------------------------------------------------


def _scale_rows_overflow(ctx, gm):
    # Normal ScaleLeft: the valid rows rounded up to the 16-row box (16) exceed the tile's 8 static rows
    src = Tile.of("ZZ", M_, "float8_e8m0fnu", 32, 4, fractal=FRACTAL_MX).assign(ctx, 0)
    dst = Tile.of("ZZ", TileType.ScaleLeft, "float8_e8m0fnu", 8, 4, fractal=FRACTAL_MX,
                  compact=CompactMode.Normal).assign(ctx, 0)
    textract(dst, src, 0, 0)
    return ()


def _ub_to_l1_past_src(ctx, gm):
    src = Tile.of("ND", V, "float16", 32, 64).assign(ctx, 0)
    dst = Tile.of("ND", M_, "float16", 16, 64).assign(ctx, 0)
    textract(dst, src, 24, 0)  # the 2048-byte burst from byte 3072 leaves the 4096-byte source
    return ()


def _insert_past_dst(ctx, gm):
    src = Tile.of("ND", V, "float16", 16, 64, valid=(12, 40)).assign(ctx, 0)
    dst = Tile.of("ND", M_, "float16", 32, 128).assign(ctx, 0)
    tinsert(dst, src, 28, 96)
    return ()


def _insert_zn_misaligned(ctx, gm):
    src = Tile.of("ZN", V, "float16", 32, 32).assign(ctx, 0)
    dst = Tile.of("ZN", M_, "float16", 64, 32).assign(ctx, 0)
    tinsert(dst, src, 8, 0)
    return ()


def _fillpad_inplace_apart(ctx, gm):
    src = Tile.of("ND", V, "float32", 32, 32, valid=(10, 13)).assign(ctx, 0)
    dst = Tile.of("ND", V, "float32", 32, 32, pad=PadValue.Max).assign(ctx, 0x8000)
    tfillpad(dst, src, TFillPadMode.InPlace)
    return ()


def _mx_tiles(ctx, *, dst_cols=1024, exp_shape=(1, 32), mx_dtype="bfloat16"):
    src = Tile.of("ND", V, "bfloat16", 16, 64, valid=(16, 40)).assign(ctx, 0)
    dst = Tile.of("ND", V, "float4_e2m1fn", 1, dst_cols).assign(ctx, 0x1000)
    exp = Tile.of("ND", V, "uint8", *exp_shape).assign(ctx, 0x1400)
    mx = Tile.of("ND", V, mx_dtype, 1, 32).assign(ctx, 0x1500)
    sc = Tile.of("ND", V, mx_dtype, 1, 32).assign(ctx, 0x1600)
    return dst, src, exp, mx, sc


def _mx_option(**options):
    def body(ctx, gm):
        tquant(*_mx_tiles(ctx), alg=MxQuantAlg.OcpMxFp4E2M1, **options)
        return ()
    return body


def _mx_dst_short(ctx, gm):
    tquant(*_mx_tiles(ctx, dst_cols=512), alg=MxQuantAlg.OcpMxFp4E2M1)
    return ()


def _mx_exp_short(ctx, gm):
    tquant(*_mx_tiles(ctx, exp_shape=(8, 32)), alg=MxQuantAlg.OcpMxFp4E2M1)
    return ()


def _mx_max_short(ctx, gm):
    tquant(*_mx_tiles(ctx, mx_dtype="int8"), alg=MxQuantAlg.OcpMxFp4E2M1)
    return ()


def _mx_dn_max_width(ctx, gm):
    src = Tile.of("ND", V, "float16", 64, 32).assign(ctx, 0)
    dst = Tile.of("ND", V, "int8", 64, 32).assign(ctx, 0x1000)
    exp = Tile.of("ND", V, "uint8", 2, 32).assign(ctx, 0x1800)
    mx = Tile.of("ND", V, "float32", 2, 32).assign(ctx, 0x1900)
    sc = Tile.of("ND", V, "float32", 2, 32).assign(ctx, 0x1A00)
    tquant(dst, src, exp, mx, sc, grp_axis=0)
    return ()


ERRORS = {
    "textract ScaleLeft rows": (True, _scale_rows_overflow),
    "textract Vec->Mat burst": (False, _ub_to_l1_past_src),
    "tinsert ND burst": (False, _insert_past_dst),
    "tinsert ZN alignment": (False, _insert_zn_misaligned),
    "tfillpad in place": (False, _fillpad_inplace_apart),
    "tquant rounding": (False, _mx_option(rounding="rtz")),
    "tquant fp4_nan": (False, _mx_option(rounding="stochastic", fp4_nan="nan")),
    "tquant rng": (False, _mx_option(rounding="stochastic")),
    "tquant inf_scale": (False, _mx_option(inf_scale="max")),
    "tquant emax": (False, _mx_option(inf_scale="nan", emax=200)),
    "tquant dst bytes": (False, _mx_dst_short),
    "tquant exp bytes": (False, _mx_exp_short),
    "tquant max bytes": (False, _mx_max_short),
    "tquant DN max width": (False, _mx_dn_max_width),
}


def _error(cube, body, numerics):
    with pytest.raises(CatlassError) as info:
        launch(_Kernel(body, cube), {}, 1, arch=ASCEND_950, options=LaunchParams(numerics=numerics))
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_timing_only_raises_the_numeric_runs_error(name):
    cube, body = ERRORS[name]
    assert _error(cube, body, False) == _error(cube, body, True)
