"""PTO ``TMOV``: move or convert a tile between buffers, with the per-generation checks of the seed.

Counterpart of ``TMOV`` (``docs/isa/TMOV.md``; ``include/pto/npu/a5/TMov.hpp``,
``include/pto/npu/a2a3/TExtract.hpp``). Overload families (pto-mx-semantics 2.1) map to keywords:

=============================================  ==================================================================
PTO                                            catlass_py
=============================================  ==================================================================
``TMOV(dst, src)``                             ``tmov(dst, src)`` (also ND->NZ / ND->ZN by the dst format)
``TMOV<..., reluMode>(dst, src)``              ``tmov(dst, src, relu=ReluPreMode.NormalRelu)``
``TMOV<..., mode, reluMode>(dst, src)``        ``tmov(dst, src, mode=AccToVecMode...)``; dual modes take
                                               ``dst=(tile_on_vec0, tile_on_vec1)``
``TMOV<..., FpTile, mode, relu>(dst, src, fp)``  ``tmov(dst, src, fp=scaling_tile)``
``TMOV<..., relu>(dst, src, preQuantScalar)``  ``tmov(dst, src, pre_quant_scalar=word)``
``TMOV[<grp_axis>](dst, src, tmp)``            :func:`tmov_zz` (X -> ZZ exponent repack)
=============================================  ==================================================================

Every check of the seed is made before any data moves and raises :class:`ConfigError` naming the rule; the
arch comes from the cores the tiles are bound to (Atlas A2/A3 rules, or the Ascend 950 rules). Data movement
is logical: ``dst(r, c) = convert(src(r, c))`` over the valid region, each side addressed through its layout.
"""

from __future__ import annotations

import enum

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.tile.pto.fixpipe import (
    DEFAULT_OPTIONS,
    FixpipeOptions,
    ReluPreMode,
    fixpipe_apply,
    fixpipe_check,
    pre_quant_mode,
)
from catlass_py.tile.pto.quant_reg import set_quant_pre, set_quant_vector
from catlass_py.tile.pto.tile import FRACTAL_AB, FRACTAL_C, BLayout, SLayout, Tile, TileType
from catlass_py.tile.quant import QuantMode

T = TileType


class AccToVecMode(enum.IntEnum):
    """PTO ``AccToVecMode``: which vector sub-block(s) an Acc -> Vec transfer writes."""

    SingleModeVec0 = 0
    SingleModeVec1 = 1
    DualModeSplitM = 2
    DualModeSplitN = 3


class STPhase(enum.IntEnum):
    """PTO ``STPhase``: unit-flag phase of an accumulator store (recorded only)."""

    Unspecified = 0
    Partial = 2
    Final = 3


#: element types of the Ascend 950 ``CommonCheck`` (``is_textract_supported_type``)
A5_MOVE_TYPES = frozenset({"int8", "hifloat8", "float8_e5m2", "float8_e4m3fn", "float16", "bfloat16", "float32",
                           "float4_e2m1fn", "float4_e1m2"})
#: element types of the ND -> NZ / ND -> ZN repack
REPACK_TYPES = frozenset({"float16", "bfloat16", "float32", "int32", "int8", "uint8", "float8_e4m3fn",
                          "float8_e5m2", "hifloat8", "float4_e2m1fn", "float4_e1m2"})
#: element types of the X -> ZZ exponent repack (``CommonCheckZZ``)
ZZ_TYPES = frozenset({"uint8", "hifloat8", "float8_e8m0fnu"})

_BIAS_A2 = {("int32", "int32"), ("float32", "float32"), ("float16", "float32")}
_BIAS_A5 = _BIAS_A2 | {("bfloat16", "float32")}
BIAS_TABLE_BYTES = 4096
FB_TILE_BYTES = 4096


def _is950(arch) -> bool:
    return arch.arch_code >= 3510


def _arch_of(*tiles):
    archs = []
    for t in tiles:
        if not isinstance(t, Tile):
            raise ConfigError(f"TMOV: expected PTO Tiles, got {t!r}")
        ctx = t._bound().ctx
        if ctx is None:
            raise ConfigError(f"TMOV: {t} is bound to a buffer outside any core")
        archs.append(ctx.arch)
    if any(a.name != archs[0].name for a in archs):
        raise ConfigError(f"TMOV: tiles are bound to cores of different archs ({', '.join(a.name for a in archs)})")
    return archs[0]


def _nbytes(tile: Tile, count: int) -> int:
    return tile.dtype.nbytes(count)


def _same_shape(dst: Tile, src: Tile, rule: str) -> None:
    if (src.rows, src.cols) != (dst.rows, dst.cols):
        raise ConfigError(f"TMOV {rule}: the shape of destination and source tile must be the same "
                          f"(src {src.rows}x{src.cols}, dst {dst.rows}x{dst.cols})")


def _same_dtype(dst: Tile, src: Tile, rule: str) -> None:
    if dst.dtype != src.dtype:
        raise ConfigError(f"TMOV {rule}: destination and source tile data types must be the same "
                          f"(src {src.dtype.name}, dst {dst.dtype.name})")


def _common_check(dst: Tile, src: Tile, rule: str) -> None:
    """Ascend 950 ``CommonCheck``: supported type, same type, source NZ / ZN / row-major."""
    if dst.dtype.name not in A5_MOVE_TYPES:
        raise ConfigError(f"TMOV {rule}: unsupported data type {dst.dtype.name} (supported: {sorted(A5_MOVE_TYPES)})")
    _same_dtype(dst, src, rule)
    if not (src.fmt in ("ZN", "NZ") or src.blayout is BLayout.RowMajor):
        raise ConfigError(f"TMOV {rule}: invalid source fractal {src.fmt} (must be ZN, NZ or row-major)")


def _check_bias(dst: Tile, src: Tile, pairs, rule: str, *, on_dst: bool, limit: int | None) -> None:
    if (src.dtype.name, dst.dtype.name) not in pairs:
        raise ConfigError(f"TMOV {rule}: {src.dtype.name} -> {dst.dtype.name} is not a bias-table conversion "
                          f"(allowed: {sorted(pairs)})")
    if src.rows != 1:
        raise ConfigError(f"TMOV {rule}: when TileType is Bias, the source must have 1 row (got {src.rows})")
    t = dst if on_dst else src
    nbytes = _nbytes(t, t.cols)
    if nbytes % 64:
        raise ConfigError(f"TMOV {rule}: {'Dst' if on_dst else 'Src'} Cols * sizeof(DType) must be 64-byte aligned "
                          f"(got {nbytes} bytes)")
    if limit is not None and nbytes > limit:
        raise ConfigError(f"TMOV {rule}: the bias tile ({nbytes} bytes) exceeds the {limit}-byte bias table")


def _check_scaling(dst: Tile, src: Tile, rule: str, *, on_dst: bool, limit: int | None) -> None:
    if dst.dtype != src.dtype or dst.dtype.name not in ("uint64", "int64"):
        raise ConfigError(f"TMOV {rule}: Scaling tiles hold uint64/int64 quant words and dst dtype must equal src "
                          f"dtype (src {src.dtype.name}, dst {dst.dtype.name})")
    if src.rows != 1:
        raise ConfigError(f"TMOV {rule}: when TileType is Scaling, the source must have 1 row (got {src.rows})")
    t = dst if on_dst else src
    nbytes = _nbytes(t, t.cols)
    if nbytes % 128:
        raise ConfigError(f"TMOV {rule}: {'Dst' if on_dst else 'Src'} Cols * sizeof(DType) must be 128-byte aligned "
                          f"(got {nbytes} bytes)")
    if limit is not None and nbytes > limit:
        raise ConfigError(f"TMOV {rule}: the Scaling tile ({nbytes} bytes) exceeds the {limit}-byte fixpipe buffer limit")


def _check_repack(dst: Tile, src: Tile, rows: int, cols: int, rule: str) -> None:
    """ND -> NZ / ND -> ZN (Vec -> Vec or Vec -> Mat with a boxed destination)."""
    if dst.dtype.name not in REPACK_TYPES:
        raise ConfigError(f"TMOV {rule}: unsupported data type {dst.dtype.name} (supported: {sorted(REPACK_TYPES)})")
    _same_dtype(dst, src, rule)
    if dst.fmt == "ZN":
        k0 = dst.inner[0]
        if rows % k0 or cols % 16:
            raise ConfigError(f"TMOV ND->ZN: needs K % K0 == 0 and N % 16 == 0 (K0 = {k0} for {dst.dtype.name}); "
                              f"got a {rows}x{cols} region")


def _check_a2(dst: Tile, src: Tile) -> str:
    pair = (src.loc, dst.loc)
    allowed = {(T.Mat, T.Left), (T.Mat, T.Right), (T.Mat, T.Bias), (T.Mat, T.Scaling), (T.Vec, T.Vec)}
    if pair not in allowed:
        raise ConfigError(f"TMOV (Atlas A2/A3): {src.loc.value} -> {dst.loc.value} is not a supported tile pair "
                          "(Mat->Left/Right/Bias/Scaling, Vec->Vec, Acc->Mat)")
    rule = f"{src.loc.value}->{dst.loc.value} (Atlas A2/A3)"
    _same_shape(dst, src, rule)
    if dst.loc is T.Bias:
        _check_bias(dst, src, _BIAS_A2, rule, on_dst=False, limit=None)
    elif dst.loc is T.Scaling:
        _check_scaling(dst, src, rule, on_dst=False, limit=None)
    else:
        _same_dtype(dst, src, rule)
        if dst.loc is T.Left and dst.fmt != "ZZ":
            raise ConfigError(f"TMOV {rule}: the Left tile is ZZ (RowMajor/RowMajor) on Atlas A2/A3, got {dst.fmt}")
        if dst.loc is T.Right and dst.fmt != "ZN":
            raise ConfigError(f"TMOV {rule}: the Right tile is ZN (RowMajor/ColMajor), got {dst.fmt}")
    return rule


def _check_950(dst: Tile, src: Tile) -> str:
    pair = (src.loc, dst.loc)
    mat_dsts = (T.Left, T.Right, T.Bias, T.Scaling, T.ScaleLeft, T.ScaleRight)
    if not ((src.loc is T.Mat and dst.loc in mat_dsts) or (src.loc is T.Vec and dst.loc in (T.Vec, T.Mat))):
        raise ConfigError(f"TMOV (Ascend 950): {pair[0].value} -> {pair[1].value} is not a supported tile pair "
                          "(Mat->Left/Right/Bias/Scaling/ScaleLeft/ScaleRight, Vec->Vec/Mat, Acc->Vec/Mat)")
    rule = f"{src.loc.value}->{dst.loc.value} (Ascend 950)"
    if src.loc is T.Mat:
        _same_shape(dst, src, rule)
    if dst.loc is T.Bias:
        _check_bias(dst, src, _BIAS_A5, rule, on_dst=True, limit=BIAS_TABLE_BYTES)
    elif dst.loc is T.Scaling:
        _check_scaling(dst, src, rule, on_dst=True, limit=FB_TILE_BYTES)
    elif dst.loc in (T.ScaleLeft, T.ScaleRight):
        _same_dtype(dst, src, rule)
        if dst.dtype.name != "float8_e8m0fnu":
            raise ConfigError(f"TMOV {rule}: MX scale tiles hold float8_e8m0 (CommonCheckMX), got {dst.dtype.name}")
        want = "ZZ" if dst.loc is T.ScaleLeft else "NN"
        if dst.fmt != want:
            raise ConfigError(f"TMOV {rule}: a {dst.loc.value} tile is {want}, got {dst.fmt}")
    elif dst.loc is T.Left:
        _common_check(dst, src, rule)
        if dst.fmt != "NZ":
            raise ConfigError(f"TMOV {rule}: DstTile invalid fractal: Left is NZ (ColMajor/RowMajor) on Ascend 950, got {dst.fmt}")
    elif dst.loc is T.Right:
        _common_check(dst, src, rule)
        if dst.fmt != "ZN":
            raise ConfigError(f"TMOV {rule}: DstTile invalid fractal: Right is ZN (RowMajor/ColMajor), got {dst.fmt}")
    elif dst.loc is T.Mat:
        _common_check(dst, src, rule)
    else:  # Vec -> Vec
        if dst.dtype != src.dtype:
            _same_dtype(dst, src, rule)
    return rule


def _padded_write(dst: Tile, data: np.ndarray) -> None:
    """Write ``data`` into a boxed tile, zero-filling the rest of the box grid it touches (the ND->NZ golden
    pads rows to a multiple of 16 and columns to a multiple of C0 with zeros)."""
    r, c = data.shape
    ir, ic = dst.inner
    pr = min(dst.rows, -(-r // ir) * ir)
    pc = min(dst.cols, -(-c // ic) * ic)
    if (pr, pc) != (r, c):
        full = np.zeros((pr, pc), dtype=data.dtype)
        full[:r, :c] = data
        data = full
    dst.write(data)


def _emit(tile: Tile, pipe: Pipe, op: str, nbytes: int, **info) -> None:
    ctx = tile.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(pipe, op, nbytes=nbytes, info=info)


def tmov(dst, src: Tile, *, relu: ReluPreMode = ReluPreMode.NoRelu, mode: AccToVecMode | None = None,
         pre_quant_scalar: int | None = None, fp: Tile | None = None, phase: STPhase = STPhase.Unspecified,
         options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TMOV``: copy (or convert, for Acc sources) ``src`` into ``dst`` over the valid region.

    ``dst`` is a :class:`Tile`, or for ``DualModeSplitM`` / ``DualModeSplitN`` the pair (tile in sub-block 0's
    UB, tile in sub-block 1's UB). ``relu``, ``mode``, ``pre_quant_scalar`` (a quant word, e.g. from
    :func:`~catlass_py.tile.pto.quant_reg.set_quant_scalar`) and ``fp`` (a Scaling tile of quant words) apply to
    Acc sources only. ``options`` selects the fixpipe [CONFLICT] alternatives.
    """
    dsts = tuple(dst) if isinstance(dst, (tuple, list)) else (dst,)
    extra = (fp,) if fp is not None else ()
    arch = _arch_of(src, *dsts, *extra)
    if src.loc is T.Acc:
        _tmov_acc(dsts, src, arch, ReluPreMode(relu), mode, pre_quant_scalar, fp, STPhase(phase), options)
        return
    if ReluPreMode(relu) is not ReluPreMode.NoRelu or mode is not None or pre_quant_scalar is not None or fp is not None:
        raise ConfigError("TMOV: relu, AccToVecMode and quant forms exist only for Acc sources "
                          f"(got a {src.loc.value} source)")
    if len(dsts) != 1:
        raise ConfigError("TMOV: only the dual Acc->Vec modes take two destination tiles")
    dst = dsts[0]
    rule = _check_950(dst, src) if _is950(arch) else _check_a2(dst, src)
    rows = min(src.valid_row, dst.valid_row)
    cols = min(src.valid_col, dst.valid_col)
    boxed_from_plain = src.slayout is SLayout.NoneBox and dst.slayout is not SLayout.NoneBox
    if boxed_from_plain and src.loc is T.Vec:
        _check_repack(dst, src, rows, cols, rule)
    if dst.computes:  # (a timing-only core moves no bytes: tiles lie inside their buffers by construction)
        data = src.read(rows, cols)
        if dst.loc is T.Bias and dst.dtype != src.dtype:
            data = data.astype(dst.dtype.numpy)  # half/bf16 -> float: exact widening (conv control bit)
        if boxed_from_plain and src.loc is T.Vec:
            _padded_write(dst, data)
        else:
            dst.write(data)
    pipe = Pipe.V if src.loc is T.Vec else Pipe.FIX if dst.loc is T.Scaling else Pipe.MTE1
    _emit(dst, pipe, "TMOV", _nbytes(dst, rows * cols), path=rule, src=src.fmt, dst=dst.fmt, rows=rows, cols=cols)


# -- Acc -> Mat / Vec (fixpipe) ---------------------------------------------------------------------------


def _acc_dst_stride(dst: Tile) -> int:
    """``GetTmovAccDstStride``: Cols for nz2nd, Rows for nz2dn, Rows * C0 for nz2nz."""
    if dst.fmt == "ND":
        return dst.cols
    if dst.fmt == "DN":
        return dst.rows
    width = dst.dtype.bits // 8
    channel_split = dst.dtype.name == "float32" and dst.fractal == FRACTAL_AB
    c0 = 64 // width if (not channel_split and dst.fractal == FRACTAL_C) else 32 // width
    return dst.rows * c0


def _nz2nz_cols(dst: Tile, n: int, mode: AccToVecMode) -> int:
    width = dst.dtype.bits // 8
    c0 = 32 // width
    if mode is AccToVecMode.DualModeSplitM:
        align = 16
    elif mode is AccToVecMode.DualModeSplitN:
        align = 32
    elif dst.dtype.name == "float32":
        align = c0 if dst.fractal == FRACTAL_AB else 16
    else:
        align = c0
    return -(-n // align) * align


def _tmov_acc(dsts, src: Tile, arch, relu, mode, word, fp, phase, options) -> None:
    is950 = _is950(arch)
    if word is not None and fp is not None:
        raise ConfigError("TMOV Acc: give either pre_quant_scalar (scalar quant) or fp (vector quant), not both")
    kind = "scalar" if word is not None else "vector" if fp is not None else "cast"
    if src.fmt != "NZ":
        raise ConfigError(f"TMOV Acc: src fractal format should be NZ (BFractal ColMajor, SFractal RowMajor), got {src.fmt}")
    if src.dtype.name not in ("float32", "int32"):
        raise ConfigError(f"TMOV Acc: src data type only supports float or int32, got {src.dtype.name}")
    if fp is not None:
        if fp.loc is not T.Scaling:
            raise ConfigError(f"TMOV Acc: the fp tile must be TileType::Scaling, got {fp.loc.value}")
        if fp.ctx is not src.ctx:
            raise ConfigError("TMOV Acc: the fp tile must be in the fixpipe buffer of the core that owns the Acc tile")
    dst = dsts[0]
    if not is950:
        if mode is not None:
            raise ConfigError("TMOV Acc: AccToVecMode exists only on Ascend 950 (Atlas A2/A3 moves Acc -> Mat only)")
        if len(dsts) != 1 or dst.loc is not T.Mat:
            raise ConfigError(f"TMOV Acc (Atlas A2/A3): destination TileType only supports Mat, got {dst.loc.value}")
        rule = "Acc->Mat (Atlas A2/A3)"
        _same_shape(dst, src, rule)
        if dst.fractal != FRACTAL_AB:
            raise ConfigError(f"TMOV {rule}: destination SFractalSize only supports 512, got {dst.fractal}")
        nbytes = _nbytes(dst, dst.cols)
        if nbytes % 32:
            raise ConfigError(f"TMOV {rule}: Dst Tile Cols * sizeof(DstType) must be a multiple of 32 (got {nbytes})")
        if dst.fmt != "NZ":
            raise ConfigError(f"TMOV {rule}: dst fractal format should be NZ (ColMajor/RowMajor), got {dst.fmt}")
        qmode = pre_quant_mode(src.dtype, dst.dtype, kind, arch)
        mode = AccToVecMode.SingleModeVec0
    else:
        mode = AccToVecMode.SingleModeVec0 if mode is None else AccToVecMode(mode)
        dual = mode in (AccToVecMode.DualModeSplitM, AccToVecMode.DualModeSplitN)
        for d in dsts:
            if d.loc not in (T.Vec, T.Mat):
                raise ConfigError(f"TMOV Acc (Ascend 950): destination must be Vec or Mat, got {d.loc.value}")
        if (dual or mode is AccToVecMode.SingleModeVec1) and any(d.loc is not T.Vec for d in dsts):
            raise ConfigError(f"TMOV Acc: {mode.name} writes vector UBs: destination location only supports Vec")
        if dual and len(dsts) != 2:
            raise ConfigError(f"TMOV Acc: {mode.name} writes both vector sub-blocks; pass dst=(tile_vec0, tile_vec1)")
        if not dual and len(dsts) != 1:
            raise ConfigError(f"TMOV Acc: {mode.name} writes one destination tile, got {len(dsts)}")
        for d in dsts:
            if d.fmt not in ("ND", "DN", "NZ"):
                raise ConfigError(f"TMOV Acc: the destination layout must be nz2nd (ND), nz2dn (DN) or nz2nz (NZ), got {d.fmt}")
            stride = _acc_dst_stride(d)
            if stride <= 0 or _nbytes(d, stride) % 32:
                raise ConfigError(f"TMOV Acc: the destination stride ({stride} elements of {d.dtype.name}) must be "
                                  "non-zero and a multiple of 32 bytes (Cols for nz2nd, Rows for nz2dn, Rows*C0 for nz2nz)")
        if dual and kind != "cast":
            raise ConfigError(f"TMOV Acc: quant is not supported in dual destination mode ({mode.name})")
        qmode = pre_quant_mode(src.dtype, dst.dtype, kind, arch)
        if dual:
            if qmode is not QuantMode.NoQuant:
                raise ConfigError(f"TMOV Acc: quant is not supported in dual destination mode ({mode.name}); "
                                  f"{src.dtype.name} -> {dst.dtype.name} needs {qmode.value}")
            if any(d.fmt == "DN" for d in dsts):
                raise ConfigError("TMOV Acc: dual destination mode is not supported for nz2dn")
            if dsts[1].dtype != dst.dtype or dsts[1].fmt != dst.fmt:
                raise ConfigError("TMOV Acc: both dual-mode destination tiles must have the same type and layout")
            if mode is AccToVecMode.DualModeSplitN and dst.dtype.bits == 32 and src.valid_col % 32:
                raise ConfigError(f"TMOV Acc: DualModeSplitN with a 32-bit destination needs ValidCol % 32 == 0 "
                                  f"(got {src.valid_col})")
        subs = (0, 1) if dual else ((1,) if mode is AccToVecMode.SingleModeVec1 else (0,))
        for d, sub in zip(dsts, subs):
            ctx = d.ctx
            if ctx is not None and ctx.is_aiv and ctx.sub_block_idx != sub:
                raise ConfigError(f"TMOV Acc: {mode.name} writes the UB of vector sub-block {sub}, but the destination "
                                  f"tile is in {ctx.short}")
    # registers first (set_quant_pre / SetFPC), then the transfer
    if kind == "scalar":
        set_quant_pre(src.ctx, word)
    elif kind == "vector":
        set_quant_vector(fp)
    m, n = src.valid
    if dst.fmt == "NZ":
        m, n = src.rows, min(src.cols, _nz2nz_cols(dst, n, mode))
    compute = src.computes
    if compute:
        vals = fixpipe_apply(src.ctx, src.read(m, n), qmode, dst.dtype, relu=relu, options=options)
    else:  # timing-only: the register checks, no conversion
        fixpipe_check(src.ctx, n, qmode, options=options)
    if mode is AccToVecMode.DualModeSplitM:
        if m % 2:
            raise ConfigError(f"TMOV Acc: DualModeSplitM halves the rows; the valid row count must be even (got {m})")
        shapes = ((m // 2, n), (m - m // 2, n))
        parts = (vals[: m // 2], vals[m // 2:]) if compute else (None, None)
    elif mode is AccToVecMode.DualModeSplitN:
        if n % 2:
            raise ConfigError(f"TMOV Acc: DualModeSplitN halves the columns; the valid column count must be even (got {n})")
        shapes = ((m, n // 2), (m, n - n // 2))
        parts = (vals[:, : n // 2], vals[:, n // 2:]) if compute else (None, None)
    else:
        shapes = ((m, n),)
        parts = (vals,) if compute else (None,)
    for d, shape, part in zip(dsts, shapes, parts):
        if shape[0] > d.rows or shape[1] > d.cols:
            raise ConfigError(f"TMOV Acc: a {shape[0]}x{shape[1]} result does not fit {d}")
        if compute:
            d.write(np.ascontiguousarray(part))
    _emit(src, Pipe.FIX, "TMOV", _nbytes(dst, m * n), path=f"Acc->{dst.loc.value}", quant=qmode.value,
          mode=mode.name, relu=relu.name, phase=phase.name, rows=m, cols=n)


# -- X -> ZZ (MX exponent repack) -------------------------------------------------------------------------


def tmov_zz_tmp_bytes(m: int, n: int) -> int:
    """Bytes of the ``tmp`` tile ND -> ZZ needs for exponents of an ``m x n`` data tile (``n`` data columns,
    ``n / 32`` exponents per row): ``(16 + ceil(m/16) * n/64 + 16) * 2`` (the vgather2 B16 index buffer)."""
    m, n = int(m), int(n)
    if m < 0 or n <= 0 or n % 64:
        raise ConfigError(f"TMOV ND->ZZ: needs m >= 0 and data columns N % 64 == 0 (pairs of 32-groups), got m={m}, n={n}")
    return (32 + -(-m // 16) * (n // 64)) * 2


def tmov_zz(dst: Tile, src: Tile, tmp: Tile, grp_axis: int = 1) -> None:
    """PTO 3-argument ``TMOV<grp_axis>(dst, src, tmp)``: repack E8M0 exponents into the cube's [16, 2] boxes.

    * ``grp_axis=1`` (ND -> ZZ): ``src`` holds exponents ``E[r][g]`` grouped along rows (M x N/32, region =
      ``dst``'s valid region); byte ``((r//16)*(G/2) + g//2)*32 + (r%16)*2 + g%2``; rows are zero-padded to a
      multiple of 16; ``tmp`` must hold :func:`tmov_zz_tmp_bytes` bytes.
    * ``grp_axis=0`` (DN -> ZZ): ``src`` holds ``E_DN[h][n]`` grouped along columns (M/32 x N, region = ``src``'s
      valid region); byte ``((n//16)*(H/2) + h//2)*32 + (n%16)*2 + h%2`` (= ND -> ZZ of the transpose); ``tmp``
      is accepted but not used.

    ``dst`` is a ZZ tile in UB (read it back as a logical matrix through a 32-byte-box ZZ tile). The contents of
    ``tmp`` after the instruction are not modelled.
    """
    arch = _arch_of(dst, src, tmp)
    if not _is950(arch):
        raise ConfigError(f"TMOV X->ZZ exists only on Ascend 950 (vgather2 / vintlv), not on {arch.name}")
    if grp_axis not in (0, 1):
        raise ConfigError(f"TMOV X->ZZ: grp_axis must be 1 (ND->ZZ) or 0 (DN->ZZ), got {grp_axis!r}")
    name = "ND->ZZ" if grp_axis == 1 else "DN->ZZ"
    if dst.dtype.name not in ZZ_TYPES:
        raise ConfigError(f"TMOV {name}: data type must be uint8, hifloat8 or float8_e8m0, got {dst.dtype.name}")
    if not (src.dtype == dst.dtype == tmp.dtype):
        raise ConfigError(f"TMOV {name}: destination, source and temporary tile data types must all be the same "
                          f"(dst {dst.dtype.name}, src {src.dtype.name}, tmp {tmp.dtype.name})")
    for t, role in ((dst, "destination"), (src, "source"), (tmp, "temporary")):
        if t.tensor.position != "UB":
            raise ConfigError(f"TMOV {name}: runs on the vector core; the {role} tile must be in UB, got {t.tensor.position}")
    if src.fmt != "ND":
        raise ConfigError(f"TMOV {name}: source tile must be RowMajor with NoneBox layout, got {src.fmt}")
    if dst.fmt != "ZZ":
        raise ConfigError(f"TMOV {name}: destination tile must be ZZ (RowMajor/RowMajor fractal), got {dst.fmt}")
    if grp_axis == 1:
        rows, groups = dst.valid
        if rows > src.valid_row or groups > src.valid_col:
            raise ConfigError(f"TMOV ND->ZZ: the destination's valid region {rows}x{groups} exceeds the source's "
                              f"{src.valid_row}x{src.valid_col}")
        if groups % 2:
            raise ConfigError(f"TMOV ND->ZZ: the exponent columns must come in pairs (N % 64 == 0); got {groups} groups")
        need = tmov_zz_tmp_bytes(rows, groups * 32) if groups else 0
        if tmp.nbytes < need:
            raise ConfigError(f"TMOV ND->ZZ: tmp holds {tmp.nbytes} bytes but needs (32 + ceil({rows}/16) * "
                              f"{groups * 32}/64) * 2 = {need}")
        padded_rows = -(-rows // 16) * 16
        size = padded_rows * groups

        def repack():
            e = src.read(rows, groups).view(np.uint8)
            grid = np.zeros((padded_rows, groups), np.uint8)
            grid[:rows] = e
            return grid.reshape(padded_rows // 16, 16, groups // 2, 2).transpose(0, 2, 1, 3).reshape(-1)
    else:
        h, n = src.valid
        if h % 2 or h == 0:
            raise ConfigError(f"TMOV DN->ZZ: the exponent rows M/32 must be even and non-zero (M % 64 == 0); got {h}")
        if n % 16:
            raise ConfigError(f"TMOV DN->ZZ: the columns N must be a multiple of 16; got {n}")
        size = h * n

        def repack():
            e = src.read(h, n).view(np.uint8)
            return e.reshape(h // 2, 2, n // 16, 16).transpose(2, 0, 3, 1).reshape(-1)
    have = dst.tensor.nbytes
    if size > have:
        raise ConfigError(f"TMOV {name}: {size} repacked bytes do not fit the {have}-byte destination tile")
    if dst.computes:  # a timing-only core moves no bytes
        dst.tensor.view().view(np.uint8)[:size] = repack()
    _emit(dst, Pipe.V, "TMOV", int(size), path=name, grp_axis=grp_axis)


__all__ = ["A5_MOVE_TYPES", "AccToVecMode", "REPACK_TYPES", "STPhase", "ZZ_TYPES", "tmov", "tmov_zz",
           "tmov_zz_tmp_bytes"]
