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
is logical: ``dst(r, c) = convert(src(r, c))`` over the valid region, each side addressed through its layout --
except where the reference code addresses raw bytes: the Ascend 950 Vec ND -> Vec NZ move stores as
``TMovToVecNd2Nz`` does (source valid rows only, column blocks at the destination's valid rows rounded to 16, +1
for ``RowPlusOne``; see :func:`_nd2nz_950`), Vec -> Mat is the UB -> L1 burst copy (:func:`ub_to_l1`), and
:func:`tmov_zz` reads its exponent source densely.
"""

from __future__ import annotations

import enum

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.tile.pto._common import arch_of, emit, listening, region, whole
from catlass_py.tile.pto.fixpipe import (
    DEFAULT_OPTIONS,
    FixpipeOptions,
    ReluPreMode,
    fixpipe_apply,
    fixpipe_check,
    fixpipe_reads,
    pre_quant_mode,
)
from catlass_py.tile.pto.quant_reg import point_fpc, set_quant_pre
from catlass_py.tile.pto.tile import FRACTAL_AB, FRACTAL_C, BLayout, CompactMode, SLayout, Tile, TileType
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
    return arch_of("TMOV", *tiles)


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


def _padded_shape(dst: Tile, r: int, c: int) -> tuple[int, int]:
    """The box grid a boxed destination's ``r x c`` region touches (rows to InnerRows, cols to InnerCols)."""
    ir, ic = dst.inner
    return min(dst.rows, -(-r // ir) * ir), min(dst.cols, -(-c // ic) * ic)


def _padded_write(dst: Tile, data: np.ndarray) -> tuple[int, int]:
    """Write ``data`` into a boxed tile, zero-filling the rest of the box grid it touches (TLOAD's ND -> NZ DMA pads
    rows to a multiple of 16 and columns to a multiple of C0 with zeros; this model does the same for the repacks
    other than the Ascend 950 ND -> NZ store, :func:`_nd2nz_950`). Returns the written shape."""
    r, c = data.shape
    pr, pc = _padded_shape(dst, r, c)
    if (pr, pc) != (r, c):
        full = np.zeros((pr, pc), dtype=data.dtype)
        full[:r, :c] = data
        data = full
    dst.write(data)
    return pr, pc


def _nd2nz_950(dst: Tile, src: Tile, *, write: bool = True) -> tuple:
    """Ascend 950 Vec ND -> Vec NZ as ``TMovToVecNd2Nz`` (``include/pto/npu/a5/TMov.hpp``) stores it: the source's
    valid rows, each with the destination's valid columns, into column blocks of C0 = 32 bytes whose stride is the
    destination's valid rows rounded up to 16 (plus one for ``RowPlusOne``) -- the tile's static Rows when those
    agree, a compact stride otherwise. Masked lanes are not stored: the rows between the valid rows and the block
    grid and the columns past the valid ones inside the last block keep their contents. Returns the writes
    (``write=False``: the checks and the writes' records only, for timing-only runs)."""
    c0 = dst.inner[1]
    rows, cols = src.valid_row, dst.valid_col
    if cols > src.valid_col:
        raise ConfigError(f"TMOV ND->NZ: the destination's valid columns ({cols}) exceed the source's "
                          f"({src.valid_col})")
    aligned = -(-dst.valid_row // 16) * 16
    vrow = aligned + 1 if dst.compact is CompactMode.RowPlusOne else aligned
    if rows > vrow:
        raise ConfigError(f"TMOV ND->NZ: the source's {rows} valid rows exceed the destination's column block "
                          f"({vrow} rows)")
    blocks = -(-cols // c0)
    if (blocks - 1) * vrow * c0 + rows * c0 > dst.capacity:
        raise ConfigError(f"TMOV ND->NZ: {blocks} column blocks of {vrow} rows exceed the {dst.rows}x{dst.cols} tile")
    if write:
        data = src.read(rows, cols)
        flat = dst.elements()
        r = np.arange(rows)[:, None]
        c = np.arange(cols)[None, :]
        flat[(c // c0) * vrow * c0 + r * c0 + c % c0] = data
    return tuple(dst.tensor.access(b * vrow * c0, min(c0, cols - b * c0), c0, rows) for b in range(blocks))


def ub_to_l1(dst: Tile, src: Tile, index_row: int, index_col: int, what: str) -> tuple:
    """The Ascend 950 UB -> L1 copy of PTO ``TExtractVecToMat`` (``include/pto/npu/a5/TExtract.hpp``), which
    ``TMOV`` / ``TEXTRACT`` Vec -> Mat run: bursts of raw bytes, not a layout-aware copy.

    * ND source: ``dst.valid_row * dst.valid_col`` elements from element ``index_row * src.valid_col +
      index_col`` of the source, one contiguous burst to the start of the destination;
    * NZ source: ``ceil(dst.valid_col / C0)`` bursts of ``ceil16(dst.valid_row) * C0`` elements, the first from
      the source's element ``(index_col // C0) * Rows * C0 + index_row * C0 + index_col % C0``, the source
      skipping ``src.Rows - dst.Rows`` box rows between bursts, the destination packed.

    When the destination has the source's layout and stride this equals the logical window copy. Returns the
    (reads, writes) access records."""
    if src.fmt not in ("ND", "NZ"):
        raise ConfigError(f"{what}: UB -> L1 moves an ND or NZ (ColMajor/RowMajor) Vec tile, got {src.fmt}")
    bits = src.dtype.bits
    c0 = 256 // bits  # elements per 32-byte block
    vr, vc = dst.valid
    st, dt = src._bound().reinterpret("uint8"), dst._bound().reinterpret("uint8")
    src_size, dst_size = st.count, dt.count

    def to_bytes(elements: int) -> int:
        if elements * bits % 8:
            raise ConfigError(f"{what}: a UB -> L1 burst must start and end on whole bytes of {src.dtype.name}")
        return elements * bits // 8

    if src.fmt == "ND":
        start, n = to_bytes(index_row * src.valid_col + index_col), to_bytes(vr * vc)
        if n % 32:
            raise ConfigError(f"{what}: the ND burst ({n} bytes = dst valid {vr}x{vc}) must be whole 32-byte blocks")
        bursts = [(start, 0, n)]
    else:
        align_row = -(-vr // 16) * 16
        first = (index_col // c0) * src.rows * c0 + index_row * c0 + index_col % c0
        step = (align_row + src.rows - dst.rows) * c0
        length = to_bytes(align_row * c0)
        bursts = [(to_bytes(first + k * step), k * length, length) for k in range(-(-vc // c0))]
    for sb, db, n in bursts:
        if sb < 0 or sb + n > src_size:
            raise ConfigError(f"{what}: the UB -> L1 burst [{sb}, {sb + n}) runs past the {src_size}-byte source {src}")
        if db + n > dst_size:
            raise ConfigError(f"{what}: the UB -> L1 burst [{db}, {db + n}) runs past the {dst_size}-byte "
                              f"destination {dst}")
    if dst.computes:  # a timing-only core moves no bytes (and leaves both buffers unallocated)
        src_raw, dst_raw = st.view(), dt.view()
        for sb, db, n in bursts:
            dst_raw[db: db + n] = src_raw[sb: sb + n]
    return tuple(st.access(sb, n) for sb, _, n in bursts), tuple(dt.access(db, n) for _, db, n in bursts)


def tmov(dst, src: Tile, *, relu: ReluPreMode = ReluPreMode.NoRelu, mode: AccToVecMode | None = None,
         pre_quant_scalar: int | None = None, fp: Tile | None = None, phase: STPhase = STPhase.Unspecified,
         options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TMOV``: copy (or convert, for Acc sources) ``src`` into ``dst`` over the valid region.

    ``dst`` is a :class:`Tile`, or for ``DualModeSplitM`` / ``DualModeSplitN`` the pair (tile in sub-block 0's
    UB, tile in sub-block 1's UB). ``relu``, ``mode``, ``pre_quant_scalar`` (a quant word, e.g. from
    :func:`~catlass_py.tile.pto.quant_reg.set_quant_scalar`) and ``fp`` (a Scaling tile of quant words) apply to
    Acc sources only. ``options`` selects the fixpipe [CONFLICT] alternatives.

    Pipes (PTO-ISA): Vec -> Vec on V, Vec -> Mat (Ascend 950 UB -> L1, :func:`ub_to_l1`) on MTE3, Mat ->
    Left / Right / Bias / scale tiles on MTE1, Mat -> Scaling and every Acc source on FIX.
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
    ctx = dst.ctx
    if src.loc is T.Vec and dst.loc is T.Mat:
        reads, writes = ub_to_l1(dst, src, 0, 0, f"TMOV {rule}")
        if listening(src.ctx):
            emit(src.ctx, Pipe.MTE3, "TMOV", nbytes=sum(a.nbytes for a in writes), reads=reads, writes=writes,
                 path=rule, src=src.fmt, dst=dst.fmt, rows=dst.valid_row, cols=dst.valid_col)
        return
    rows = min(src.valid_row, dst.valid_row)
    cols = min(src.valid_col, dst.valid_col)
    boxed_from_plain = src.slayout is SLayout.NoneBox and dst.slayout is not SLayout.NoneBox
    if boxed_from_plain and src.loc is T.Vec:
        _check_repack(dst, src, rows, cols, rule)
    computes = dst.computes  # a timing-only core moves no bytes (tiles lie inside their buffers by construction)
    wr, wc = rows, cols
    written = None
    if boxed_from_plain and src.loc is T.Vec and dst.fmt == "NZ" and _is950(arch) and not dst.dtype.packed:
        written = _nd2nz_950(dst, src, write=computes)
    elif computes:
        data = src.read(rows, cols)
        if dst.loc is T.Bias and dst.dtype != src.dtype:
            data = data.astype(dst.dtype.numpy)  # half/bf16 -> float: exact widening (conv control bit)
        if boxed_from_plain and src.loc is T.Vec:
            wr, wc = _padded_write(dst, data)
        else:
            dst.write(data)
    elif boxed_from_plain and src.loc is T.Vec:
        wr, wc = _padded_shape(dst, rows, cols)
    if listening(ctx) and written is not None:
        emit(ctx, Pipe.V, "TMOV", nbytes=_nbytes(dst, src.valid_row * dst.valid_col), reads=(region(src, rows, cols),),
             writes=written, path=rule, src=src.fmt, dst=dst.fmt, rows=src.valid_row, cols=dst.valid_col)
    elif listening(ctx):
        pipe = Pipe.V if src.loc is T.Vec else Pipe.FIX if dst.loc is T.Scaling else Pipe.MTE1
        emit(ctx, pipe, "TMOV", nbytes=_nbytes(dst, rows * cols), reads=(region(src, rows, cols),),
             writes=(region(dst, wr, wc),), path=rule, src=src.fmt, dst=dst.fmt, rows=rows, cols=cols)


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
    qmode, mode, kind = acc_checks(dsts, src, arch, mode, word, fp, options)
    m, n = src.valid
    if dsts[0].fmt == "NZ":
        m, n = src.rows, min(src.cols, _nz2nz_cols(dsts[0], n, mode))
    acc_move(dsts, src, qmode, kind, word, fp, relu, mode, options, m=m, n=n, op="TMOV",
             info={"path": f"Acc->{dsts[0].loc.value}", "phase": phase.name})


def acc_checks(dsts, src: Tile, arch, mode, word, fp, options=DEFAULT_OPTIONS, what: str = "TMOV Acc"):
    """The checks of an Acc -> Vec / Mat move (PTO ``CheckTMovAccValid``, ``GetDualDstCtl``, the quant-mode
    tables); returns ``(quant mode, AccToVecMode, kind)`` with kind "cast", "scalar" or "vector"."""
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
        qmode = pre_quant_mode(src.dtype, dst.dtype, kind, arch, target="onchip", options=options)
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
        qmode = pre_quant_mode(src.dtype, dst.dtype, kind, arch, target="onchip", options=options)
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
    return qmode, mode, kind


def acc_move(dsts, src: Tile, qmode, kind: str, word, fp, relu, mode, options, *, m: int, n: int, op: str,
             src_row0: int = 0, src_col0: int = 0, dst_row0: int = 0, dst_col0: int = 0, fp_col0: int = 0,
             info=None) -> None:
    """One fixpipe transfer of the ``m x n`` window at (``src_row0``, ``src_col0``) of an Acc tile into the
    destination tile(s) at (``dst_row0``, ``dst_col0``): the quant register is written first (QUANT_PRE for the
    scalar form; FPC = ``((fp address + 8 * fp_col0) >> 7) << 8`` for the vector form, as PTO's ``SetFPC``),
    then the values are converted (:func:`~catlass_py.tile.pto.fixpipe.fixpipe_apply`) and written, split
    between the two vector sub-blocks for the dual modes. Publishes one FIX-pipe event."""
    ctx = src.ctx
    dst = dsts[0]
    reg_writes = ()
    if kind == "scalar":
        set_quant_pre(ctx, word)
        reg_writes = (ctx.register_access("QUANT_PRE"),)
    elif kind == "vector":
        point_fpc(fp, 8 * fp_col0)
        reg_writes = (ctx.register_access("FPC"),)
    computes = src.computes
    if computes:
        acc = _window(src, src_row0, src_col0, m, n)
        vals = fixpipe_apply(ctx, acc, qmode, dst.dtype, relu=relu, options=options)
    else:  # timing-only: the window and register checks, no conversion
        _window_check(src, src_row0, src_col0, m, n)
        fixpipe_check(ctx, n, qmode, options=options)
        vals = _Shape((m, n))
    if mode is AccToVecMode.DualModeSplitM:
        if m % 2:
            raise ConfigError(f"TMOV Acc: DualModeSplitM halves the rows; the valid row count must be even (got {m})")
        parts = (vals[: m // 2], vals[m // 2:])
    elif mode is AccToVecMode.DualModeSplitN:
        if n % 2:
            raise ConfigError(f"TMOV Acc: DualModeSplitN halves the columns; the valid column count must be even (got {n})")
        parts = (vals[:, : n // 2], vals[:, n // 2:])
    else:
        parts = (vals,)
    for d, part in zip(dsts, parts):
        if dst_row0 + part.shape[0] > d.rows or dst_col0 + part.shape[1] > d.cols:
            raise ConfigError(f"{op} Acc: a {part.shape[0]}x{part.shape[1]} result at ({dst_row0}, {dst_col0}) does "
                              f"not fit {d}")
        if computes:
            _write_window(d, dst_row0, dst_col0, np.ascontiguousarray(part))
    if listening(ctx):
        writes = reg_writes + tuple(region(d, *p.shape, row0=dst_row0, col0=dst_col0) for d, p in zip(dsts, parts))
        emit(ctx, Pipe.FIX, op, nbytes=_nbytes(dst, m * n), reads=(region(src, m, n, row0=src_row0, col0=src_col0),
             fixpipe_reads(ctx, qmode, n)), writes=writes, quant=qmode.value, mode=mode.name,
             relu=ReluPreMode(relu).name, rows=m, cols=n, **(info or {}))


class _Shape:
    """The shape of fixpipe values a timing-only core did not compute (sliced like the array would be)."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        key = key + (slice(None),) * (2 - len(key))
        return _Shape(tuple(len(range(*k.indices(d))) for k, d in zip(key, self.shape)))


def _window_check(tile: Tile, row0: int, col0: int, rows: int, cols: int) -> None:
    if row0 + rows > tile.rows or col0 + cols > tile.cols:
        raise ConfigError(f"the window ({row0}, {col0}) + {rows}x{cols} exceeds the static {tile.rows}x{tile.cols} of {tile}")


def _window(tile: Tile, row0: int, col0: int, rows: int, cols: int) -> np.ndarray:
    """The logical window ``[row0:row0+rows, col0:col0+cols]`` of a tile (within its static shape)."""
    _window_check(tile, row0, col0, rows, cols)
    if row0 == 0 and col0 == 0:
        return tile.read(rows, cols)
    return tile.read(row0 + rows, col0 + cols)[row0:, col0:]


def _write_window(tile: Tile, row0: int, col0: int, data: np.ndarray) -> None:
    """Store ``data`` at (``row0``, ``col0``) of a tile through its layout (other elements untouched)."""
    if row0 == 0 and col0 == 0:
        tile.write(data)
        return
    r, c = data.shape
    rr = np.arange(row0, row0 + r)[:, None]
    cc = np.arange(col0, col0 + c)[None, :]
    offs = np.asarray(tile.layout.offset(rr, cc), dtype=np.int64)
    if tile.dtype.packed:
        flat = tile.elements()
        codes = data.view(np.uint8) if data.dtype.itemsize == 1 and data.dtype.kind not in "iu" else data
        flat[offs] = codes.astype(np.uint8)
        tile._store_elements(flat)
        return
    tile.elements()[offs] = data


# -- X -> ZZ (MX exponent repack) -------------------------------------------------------------------------


def tmov_zz_tmp_bytes(m: int, n: int) -> int:
    """Bytes of the ``tmp`` tile ND -> ZZ needs for exponents of an ``m x n`` data tile (``n`` data columns,
    ``n / 32`` exponents per row): ``(16 + ceil(m/16) * n/64 + 16) * 2`` (the vgather2 B16 index buffer)."""
    m, n = int(m), int(n)
    if m < 0 or n <= 0 or n % 64:
        raise ConfigError(f"TMOV ND->ZZ: needs m >= 0 and data columns N % 64 == 0 (pairs of 32-groups), got m={m}, n={n}")
    return (32 + -(-m // 16) * (n // 64)) * 2


ZZ_SOURCES = ("dense", "layout")


def tmov_zz(dst: Tile, src: Tile, tmp: Tile, grp_axis: int = 1, *, source: str = "dense") -> None:
    """PTO 3-argument ``TMOV<grp_axis>(dst, src, tmp)``: repack E8M0 exponents into the cube's [16, 2] boxes.

    * ``grp_axis=1`` (ND -> ZZ, ``TMovNdTo2Zz`` / ``GenerateB8IndicesZZToUB`` of ``include/pto/npu/a5/TMov.hpp``):
      ``rows x G = dst``'s valid region; exponent ``E[r][g]`` lands at byte ``((r//16)*(G/2) + g//2)*32 + (r%16)*2
      + g%2``; rows are padded to a multiple of 16 with zeros; ``tmp`` must hold :func:`tmov_zz_tmp_bytes` bytes
      and receives the gather indices (16 base offsets ``i * G/2``, then ``G/2`` offsets per 16-row block and a
      16-entry tail, as uint16).
    * ``grp_axis=0`` (DN -> ZZ, ``TMovDnTo2Zz``): ``H x N = src``'s valid region holds ``E_DN[h][n]`` grouped along
      columns; byte ``((n//16)*(H/2) + h//2)*32 + (n%16)*2 + h%2`` (= ND -> ZZ of the transpose); ``tmp`` is not
      touched.

    How the source is read (``source``): PTO-ISA's code takes the counts above from the tiles' valid regions and
    reads the source **densely**, G bytes per exponent row (ND) or N bytes per row pair member (DN), whatever the
    source tile's static shape; for ND it also writes zeros into the source bytes ``[rows*G, ceil16(rows)*G)``
    before gathering (``ZeroSourcePaddingB16``), so the source must hold ``ceil16(rows)*G`` bytes. That is the
    default (``"dense"``): the kernels pass a flat ``1 x (rows*G)`` tile filled by TQUANT. ``source="layout"``
    reads ``E[r][g]`` through the source tile's layout instead (the row stride is its static Cols), needs the
    destination's region within the source's valid region, and does not touch the source padding.

    ``dst`` is a ZZ tile in UB (read it back as a logical matrix through a 32-byte-box ZZ tile).
    """
    arch = _arch_of(dst, src, tmp)
    if not _is950(arch):
        raise ConfigError(f"TMOV X->ZZ exists only on Ascend 950 (vgather2 / vintlv), not on {arch.name}")
    if grp_axis not in (0, 1):
        raise ConfigError(f"TMOV X->ZZ: grp_axis must be 1 (ND->ZZ) or 0 (DN->ZZ), got {grp_axis!r}")
    if source not in ZZ_SOURCES:
        raise ConfigError(f"TMOV X->ZZ: source must be one of {ZZ_SOURCES}, got {source!r}")
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
    computes = dst.computes  # a timing-only core checks the sizes and publishes the accesses, moves no bytes
    src_raw = src.tensor.view().view(np.uint8) if computes else None
    src_size = src.tensor.nbytes
    src_u8 = src.tensor.reinterpret("uint8")
    reads, writes = [], []
    out = None
    if grp_axis == 1:
        rows, groups = dst.valid
        if groups % 2:
            raise ConfigError(f"TMOV ND->ZZ: the exponent columns must come in pairs (N % 64 == 0); got {groups} groups")
        need = tmov_zz_tmp_bytes(rows, groups * 32) if groups else 0
        if tmp.nbytes < need:
            raise ConfigError(f"TMOV ND->ZZ: tmp holds {tmp.nbytes} bytes but needs (32 + ceil({rows}/16) * "
                              f"{groups * 32}/64) * 2 = {need}")
        padded_rows = -(-rows // 16) * 16
        if source == "dense":
            total = padded_rows * groups
            if src_size < total:
                raise ConfigError(f"TMOV ND->ZZ: the source is read densely ({rows} rows x {groups} groups, padded to "
                                  f"{padded_rows} rows = {total} bytes) but the source tile holds {src_size} bytes")
            if computes:
                src_raw[rows * groups: total] = 0  # ZeroSourcePaddingB16
                grid = src_raw[:total].reshape(padded_rows, groups)
            reads.append(src_u8.access(0, rows * groups))
            if total > rows * groups:
                writes.append(src_u8.access(rows * groups, total - rows * groups))
        else:
            if rows > src.valid_row or groups > src.valid_col:
                raise ConfigError(f"TMOV ND->ZZ: the destination's valid region {rows}x{groups} exceeds the source's "
                                  f"{src.valid_row}x{src.valid_col} (source='layout')")
            if computes:
                grid = np.zeros((padded_rows, groups), np.uint8)
                grid[:rows] = src.read(rows, groups).view(np.uint8)
            reads.extend(region(src, rows, groups))
        size = padded_rows * groups
        if computes:
            out = grid.reshape(padded_rows // 16, 16, groups // 2, 2).transpose(0, 2, 1, 3).reshape(-1)
        if groups:
            pairs = groups // 2
            blocks = padded_rows // 16
            idx_bytes = 2 * (16 + pairs * blocks + 16)
            if computes:
                idx = np.concatenate([np.arange(16) * pairs]
                                     + [np.arange(pairs) + rb * 16 * pairs for rb in range(blocks)]
                                     + [np.arange(16) + (blocks - 1) * 16 * pairs]).astype(np.uint16)
                tmp.tensor.view().view(np.uint8)[: idx.nbytes] = idx.view(np.uint8)
            writes.append(tmp.tensor.reinterpret("uint8").access(0, idx_bytes))
    else:
        h, n = src.valid
        if h % 2 or h == 0:
            raise ConfigError(f"TMOV DN->ZZ: the exponent rows M/32 must be even and non-zero (M % 64 == 0); got {h}")
        if n % 16:
            raise ConfigError(f"TMOV DN->ZZ: the columns N must be a multiple of 16; got {n}")
        if source == "dense":
            if src_size < h * n:
                raise ConfigError(f"TMOV DN->ZZ: the source is read densely ({h} x {n} bytes) but the source tile holds "
                                  f"{src_size} bytes")
            if computes:
                e = src_raw[: h * n].reshape(h, n)
            reads.append(src_u8.access(0, h * n))
        else:
            if computes:
                e = src.read(h, n).view(np.uint8)
            reads.extend(region(src, h, n))
        size = h * n
        if computes:
            out = e.reshape(h // 2, 2, n // 16, 16).transpose(2, 0, 3, 1).reshape(-1)
    have = dst.tensor.nbytes
    if size > have:
        raise ConfigError(f"TMOV {name}: {size} repacked bytes do not fit the {have}-byte destination tile")
    if computes:
        dst.tensor.view().view(np.uint8)[:size] = out
    ctx = dst.ctx
    if listening(ctx):
        writes.append(dst.tensor.reinterpret("uint8").access(0, int(size)))
        emit(ctx, Pipe.V, "TMOV", nbytes=int(size), reads=tuple(reads), writes=tuple(writes), path=name,
             grp_axis=grp_axis, source=source)


__all__ = ["A5_MOVE_TYPES", "AccToVecMode", "REPACK_TYPES", "STPhase", "ZZ_SOURCES", "ZZ_TYPES", "acc_checks",
           "acc_move", "tmov", "tmov_zz", "tmov_zz_tmp_bytes", "ub_to_l1"]
