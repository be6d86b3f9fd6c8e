"""PTO ``TEXTRACT`` / ``TEXTRACT_FP`` and ``TINSERT`` / ``TINSERT_FP``: sub-tile moves at a (row, column) offset.

Counterparts: ``docs/isa/TEXTRACT.md``, ``TEXTRACT_FP.md``, ``TINSERT.md``, ``TINSERT_FP.md`` and the Ascend 950
implementations ``include/pto/npu/a5/TExtract.hpp`` / ``TInsert.hpp`` of ``hw-native-sys/pto-isa``.

``TEXTRACT``: ``dst[i, j] = src[indexRow + i, indexCol + j]``. ``TINSERT``: ``dst[indexRow + i, indexCol + j] =
src[i, j]``. The forms and how much each writes, as the reference code does it:

=========================  =======================================================================================
pair (pipe)                what moves
=========================  =======================================================================================
Mat -> Left / Right        TEXTRACT; the cube load (MTE1) of a window of ``dst``'s static shape (``CompactMode.Null``)
                           or of its valid region rounded up to whole boxes (``Normal``); the offsets must sit on
                           the source's box grid; a 1-row row-major source loads a GEMV vector for Left
Mat -> ScaleLeft / Right   TEXTRACT of MX scales (MTE1): ``indexRow`` / ``indexCol`` on the [16, 2] (Left, ZZ) or
                           [2, 16] (Right, NN) box grid; the static shape, or the valid rows rounded to 16 (Normal)
Acc -> Mat / Vec           TEXTRACT / TINSERT through the fixpipe (FIX), with relu, scalar quant
                           (``pre_quant_scalar``) or vector quant (``fp``; TEXTRACT_FP points FPC at the quant word
                           of column ``indexCol``, truncated to 128-byte units as SetFPC does); TEXTRACT writes the
                           valid columns rounded up to the 32-byte block of the destination type; TINSERT into Mat
                           writes the source's static rows and its valid columns rounded up to C0; the relu variant
                           of TEXTRACT to Vec applies no relu (``TEXTRACT_IMPL<..., reluMode>`` passes NoRelu to the
                           Vec path)
Vec -> Mat                 the Ascend 950 UB -> L1 DMA (MTE3): TEXTRACT as ``TExtractVecToMat``
                           (:func:`~catlass_py.tile.pto.tmov.ub_to_l1`), TINSERT as ``TInsertVecToMatImpl``
                           (row-major ND / ZZ sources: ND row bursts at ``indexRow * Cols + indexCol``; NZ
                           column-block bursts; ZN row-block bursts; ``split`` = 2 / 4 issues the NZ bursts in that
                           many pieces of whole 16-row blocks)
Vec -> Vec                 a logical window copy on V (ND and NZ tiles)
Vec ND -> 2 x Vec NZ       TEXTRACT with two destinations (:func:`textract_2xnz`): two windows, each written
                           as NZ (box rows padded with zeros, as the ND -> NZ repack)
=========================  =======================================================================================

Every check raises :class:`ConfigError` naming the rule before any data moves. On a core of a timing-only launch
(:attr:`Tile.computes` False) every form makes the same checks and publishes the same event, but reads and writes
no tile bytes.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.tile.pto._common import arch_of, burst_copy, emit, is950, listening, region
from catlass_py.tile.pto.fixpipe import DEFAULT_OPTIONS, FixpipeOptions, ReluPreMode
from catlass_py.tile.pto.tile import CompactMode, Tile, TileType
from catlass_py.tile.pto.tmov import (
    A5_MOVE_TYPES,
    REPACK_TYPES,
    AccToVecMode,
    _padded_shape,
    _window,
    _write_window,
    acc_checks,
    acc_move,
    ub_to_l1,
)

T = TileType
#: element types of the Vec -> Vec window copies, as ``TEXTRACT_IMPL``'s static_assert lists them (TEXTRACT.md's
#: text names uint8 / int16 / uint16 / uint32 instead of the 8-bit float and fp4 types; the code is followed)
VEC_TYPES = frozenset({"float16", "bfloat16", "float32", "int32", "int8", "hifloat8", "float8_e4m3fn", "float8_e5m2",
                       "float8_e8m0fnu", "float4_e2m1fn", "float4_e1m2"})
#: element types TINSERT moves between UB and L1 (``TINSERT_IMPL``)
INSERT_TYPES = frozenset({"float16", "bfloat16", "float32", "int32", "float8_e4m3fn", "float8_e5m2", "hifloat8", "int8",
                          "float8_e8m0fnu", "float4_e2m1fn", "float4_e1m2", "uint8"})


def _index(value, name: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < 65536:
        raise ConfigError(f"{what}: {name} must be an integer in [0, 65535] (uint16_t), got {value!r}")
    return int(value)


def _window_fits(tile: Tile, r0: int, c0: int, rows: int, cols: int, role: str, what: str) -> None:
    if r0 + rows > tile.rows or c0 + cols > tile.cols:
        raise ConfigError(f"{what}: the {rows}x{cols} window at ({r0}, {c0}) exceeds the {role}'s static "
                          f"{tile.rows}x{tile.cols} (index + extent <= Rows / Cols)")


def _emit_move(ctx, pipe, op, nbytes, reads, writes, **info) -> None:
    if listening(ctx):
        emit(ctx, pipe, op, nbytes=nbytes, reads=reads, writes=writes, **info)


# -- TEXTRACT ------------------------------------------------------------------------------------------------------


def _cube_load(dst: Tile, src: Tile, r0: int, c0: int, what: str) -> None:
    """Mat -> Left / Right / ScaleLeft / ScaleRight (``TExtractToA`` / ``ToB`` / ``ToAmx`` / ``ToBmx``)."""
    if dst.dtype != src.dtype:
        raise ConfigError(f"{what}: destination and source tile data types must be the same "
                          f"({dst.dtype.name} vs {src.dtype.name})")
    scale = dst.loc in (T.ScaleLeft, T.ScaleRight)
    if scale:
        if dst.dtype.name != "float8_e8m0fnu":
            raise ConfigError(f"{what}: MX scale tiles hold float8_e8m0, got {dst.dtype.name}")
        want = "ZZ" if dst.loc is T.ScaleLeft else "NN"
        if src.fmt != want or dst.fmt != want:
            raise ConfigError(f"{what}: {dst.loc.value} extraction needs {want} source and destination tiles "
                              f"(SrcTile/DstTile Invalid Fractal), got {src.fmt} -> {dst.fmt}")
        ir, ic = (16, 2) if dst.loc is T.ScaleLeft else (2, 16)
        if r0 % ir or c0 % ic:
            raise ConfigError(f"{what}: the start index ({r0}, {c0}) must sit on the {ir}x{ic} scale box grid "
                              f"(rowStartPosition = indexRow >> 4, colStartPosition = indexCol >> 1)")
        if dst.compact is CompactMode.Normal or dst.rows == 1 and dst.loc is T.ScaleLeft:
            rows = dst.rows if dst.rows == 1 else -(-dst.valid_row // ir) * ir
            cols = -(-dst.valid_col // ic) * ic
        else:
            rows, cols = dst.rows, dst.cols
    else:
        if dst.dtype.name not in A5_MOVE_TYPES | {"float8_e8m0fnu"}:
            raise ConfigError(f"{what}: unsupported data type {dst.dtype.name} (supported: {sorted(A5_MOVE_TYPES)})")
        want = "NZ" if dst.loc is T.Left else "ZN"
        if dst.fmt != want:
            raise ConfigError(f"{what}: DstTile Invalid Fractal: {dst.loc.value} is {want}, got {dst.fmt}")
        gemv = dst.loc is T.Left and src.rows == 1 and src.blayout.name == "RowMajor"
        if not gemv and src.fmt not in ("ZN", "NZ"):
            raise ConfigError(f"{what}: SrcTile Invalid Fractal: the source must be ZN or NZ (or a 1-row row-major "
                              f"GEMV vector for Left), got {src.fmt}")
        if gemv:
            frac = 512 * 8 // dst.dtype.bits  # elements of one 512-byte fractal
            if c0 % frac or src.cols % frac or dst.cols % frac:
                raise ConfigError(f"{what}: the GEMV load needs indexCol, srcCol and dstCol aligned to 512 bytes "
                                  f"({frac} elements)")
            rows, cols = 1, -(-dst.valid_col // frac) * frac
        else:
            ir, ic = src.inner
            if r0 % ir or c0 % ic:
                raise ConfigError(f"{what}: the start index ({r0}, {c0}) must sit on the source's {ir}x{ic} box grid")
            dr, dc = dst.inner
            if dst.compact is CompactMode.Normal:
                if src.fmt != dst.fmt:  # transposing load: both sides aligned to max(16, C0)
                    a = max(dr, dc)
                    rows, cols = -(-dst.valid_row // a) * a, -(-dst.valid_col // a) * a
                else:
                    rows, cols = -(-dst.valid_row // dr) * dr, -(-dst.valid_col // dc) * dc
                rows, cols = min(rows, dst.rows), min(cols, dst.cols)
            else:
                rows, cols = dst.rows, dst.cols
    _window_fits(src, r0, c0, rows, cols, "source", what)
    if dst.computes:
        dst.write(_window(src, r0, c0, rows, cols))
    else:  # timing-only: the write's shape check (a scale box grid may outgrow the static rows), no bytes
        dst.layout.check_fits(rows, cols)
    _emit_move(dst.ctx, Pipe.MTE1, "TEXTRACT", dst.dtype.nbytes(rows * cols),
               (region(src, rows, cols, row0=r0, col0=c0),), (region(dst, rows, cols),), path=f"Mat->{dst.loc.value}",
               index=(r0, c0), rows=rows, cols=cols)


def _vec_to_vec(dst: Tile, src: Tile, r0: int, c0: int, what: str, *, insert: bool) -> None:
    """Vec -> Vec window copy (ND or NZ tiles of the same format and type)."""
    if dst.dtype != src.dtype:
        raise ConfigError(f"{what}: destination and source data types must be the same "
                          f"({dst.dtype.name} vs {src.dtype.name})")
    if dst.dtype.name not in (VEC_TYPES if not insert else INSERT_TYPES):
        raise ConfigError(f"{what}: Vec -> Vec: Unsupported data type {dst.dtype.name}")
    if src.fmt != dst.fmt or src.fmt not in ("ND", "NZ"):
        raise ConfigError(f"{what}: Vec -> Vec needs ND -> ND or NZ -> NZ tiles, got {src.fmt} -> {dst.fmt}")
    if insert:
        rows, cols = src.valid
        _window_fits(dst, r0, c0, rows, cols, "destination", what)
        if dst.computes:  # a timing-only core moves no bytes
            _write_window(dst, r0, c0, src.read(rows, cols))
        reads, writes = (region(src, rows, cols),), (region(dst, rows, cols, row0=r0, col0=c0),)
    else:
        rows, cols = dst.valid
        _window_fits(src, r0, c0, rows, cols, "source", what)
        if dst.computes:  # a timing-only core moves no bytes
            dst.write(_window(src, r0, c0, rows, cols))
        reads, writes = (region(src, rows, cols, row0=r0, col0=c0),), (region(dst, rows, cols),)
    ctx = dst.ctx
    _emit_move(ctx, Pipe.V, "TINSERT" if insert else "TEXTRACT", dst.dtype.nbytes(rows * cols), reads, writes,
               path=f"Vec->Vec {src.fmt}", index=(r0, c0), rows=rows, cols=cols)


def textract(dst: Tile, src: Tile, index_row: int = 0, index_col: int = 0, *, relu: ReluPreMode = ReluPreMode.NoRelu,
             mode: AccToVecMode | None = None, pre_quant_scalar: int | None = None, fp: Tile | None = None,
             options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TEXTRACT(dst, src, indexRow, indexCol)`` and its relu / ``AccToVecMode`` / scalar-quant forms, and
    ``TEXTRACT_FP(dst, src, fp, indexRow, indexCol)`` (``fp`` given): ``dst[i, j] = src[indexRow + i, indexCol + j]``
    (module docstring for every pair). ``dst`` is a pair of Vec tiles for the dual ``AccToVecMode``\\ s."""
    what = "TEXTRACT_FP" if fp is not None else "TEXTRACT"
    r0, c0 = _index(index_row, "indexRow", what), _index(index_col, "indexCol", what)
    dsts = tuple(dst) if isinstance(dst, (tuple, list)) else (dst,)
    arch = arch_of(what, src, *dsts, *((fp,) if fp is not None else ()))
    if not is950(arch):
        raise ConfigError(f"{what}: this model implements the Ascend 950 forms; {arch.name} is not supported")
    if src.loc is T.Acc:
        relu = ReluPreMode(relu)
        if relu is ReluPreMode.NormalRelu and fp is None and pre_quant_scalar is None and mode is None \
                and dsts[0].loc is T.Vec:
            relu = ReluPreMode.NoRelu  # TEXTRACT_IMPL<dst, src, reluMode> passes NoRelu to the Acc -> Vec copy
        for d in dsts:
            if not ((d.fmt == "NZ") or (d.fmt == "ND")):
                raise ConfigError(f"{what} Acc: Dst fractal format should be (ColMajor, RowMajor) or (RowMajor, "
                                  f"NoneBox), got {d.fmt}")
        qmode, mode, kind = acc_checks(dsts, src, arch, mode, pre_quant_scalar, fp, options)
        d0 = dsts[0]
        m, n = d0.valid
        dual = mode in (AccToVecMode.DualModeSplitM, AccToVecMode.DualModeSplitN)
        if dual:
            m, n = src.valid
        c0size = 32 * 8 // d0.dtype.bits
        n = -(-n // c0size) * c0size  # whole 32-byte blocks of the destination type
        _window_fits(src, r0, c0, m, n, "source", what)
        acc_move(dsts, src, qmode, kind, pre_quant_scalar, fp, relu, mode, options, m=m, n=n, op=what, src_row0=r0,
                 src_col0=c0, fp_col0=c0, info={"path": f"Acc->{d0.loc.value}", "index": (r0, c0)})
        return
    if relu is not ReluPreMode.NoRelu or mode is not None or pre_quant_scalar is not None or fp is not None:
        raise ConfigError(f"{what}: relu, AccToVecMode and quant forms exist only for Acc sources "
                          f"(got a {src.loc.value} source)")
    if len(dsts) != 1:
        raise ConfigError(f"{what}: two destinations are the ND -> 2xNZ form (textract_2xnz) or the dual Acc modes")
    dst = dsts[0]
    if src.loc is T.Mat and dst.loc in (T.Left, T.Right, T.ScaleLeft, T.ScaleRight):
        _cube_load(dst, src, r0, c0, what)
    elif src.loc is T.Vec and dst.loc is T.Mat:
        if dst.dtype != src.dtype:
            raise ConfigError(f"{what}: destination and source tile data types must be the same")
        reads, writes = ub_to_l1(dst, src, r0, c0, what)
        _emit_move(src.ctx, Pipe.MTE3, what, sum(a.nbytes for a in writes), reads, writes, path="Vec->Mat",
                   index=(r0, c0))
    elif src.loc is T.Vec and dst.loc is T.Vec:
        _vec_to_vec(dst, src, r0, c0, what, insert=False)
    else:
        raise ConfigError(f"{what}: {src.loc.value} -> {dst.loc.value} is not a TEXTRACT pair (Mat -> Left / Right / "
                          "ScaleLeft / ScaleRight, Acc -> Mat / Vec, Vec -> Mat, Vec -> Vec)")


#: element types of the ND -> 2 x NZ extraction on Ascend 950
ND2NZ_TYPES = frozenset({"int8", "float16", "bfloat16", "float32", "int32", "hifloat8", "float8_e4m3fn", "float8_e5m2",
                         "float8_e8m0fnu", "float4_e2m1fn", "float4_e1m2", "uint8"})


def textract_2xnz(dst0: Tile, dst1: Tile, src: Tile, index_row0: int = 0, index_col0: int = 0, index_row1: int = 0,
                  index_col1: int = 0) -> None:
    """PTO ``TEXTRACT(dst0, dst1, src, indexRow0, indexCol0, indexRow1, indexCol1)``: two windows of one Vec ND tile
    written as two Vec NZ tiles (each ``dst_k[i, j] = src[indexRow_k + i, indexCol_k + j]`` over ``dst_k``'s valid
    region, the rest of its box grid zero-filled as the ND -> NZ repack). Checks (``CheckTExtractNdToNz``): Vec ND
    source, Vec NZ destinations (RowPlusOne allowed), same type, destination Cols on the C0 grid, each window within
    the source's static shape. Runs on V."""
    what = "TEXTRACT ND->2xNZ"
    arch = arch_of(what, dst0, dst1, src)
    if not is950(arch):
        raise ConfigError(f"{what}: this model implements the Ascend 950 form; {arch.name} is not supported")
    if src.loc is not T.Vec or src.fmt != "ND":
        raise ConfigError(f"{what}: the source must be a Vec ND tile (RowMajor / NoneBox), got {src!r}")
    if src.dtype.name not in ND2NZ_TYPES:
        raise ConfigError(f"{what}: unsupported data type {src.dtype.name} (supported: {sorted(ND2NZ_TYPES)})")
    reads, writes = [], []
    for k, (d, r0, c0) in enumerate(((dst0, index_row0, index_col0), (dst1, index_row1, index_col1))):
        r0, c0 = _index(r0, f"indexRow{k}", what), _index(c0, f"indexCol{k}", what)
        if d.loc is not T.Vec or d.fmt != "NZ":
            raise ConfigError(f"{what}: destination {k} must be a Vec NZ tile (ColMajor / RowMajor), got {d!r}")
        if d.dtype != src.dtype:
            raise ConfigError(f"{what}: destination {k} type {d.dtype.name} differs from the source's {src.dtype.name}")
        if d.cols % d.inner[1]:
            raise ConfigError(f"{what}: destination cols must be c0-aligned ({d.cols} % {d.inner[1]})")
        rows, cols = d.valid
        _window_fits(src, r0, c0, rows, cols, "source", what)
        pr, pc = _padded_shape(d, rows, cols)
        if d.computes:  # a timing-only core moves no bytes
            data = _window(src, r0, c0, rows, cols)
            full = np.zeros((pr, pc), dtype=data.dtype)
            full[:rows, :cols] = data
            d.write(full)
        reads.append(region(src, rows, cols, row0=r0, col0=c0))
        writes.append(region(d, pr, pc))
    _emit_move(src.ctx, Pipe.V, "TEXTRACT", src.dtype.nbytes(dst0.valid_row * dst0.valid_col +
                                                            dst1.valid_row * dst1.valid_col),
               tuple(reads), tuple(writes), path="ND->2xNZ")


# -- TINSERT -------------------------------------------------------------------------------------------------------


def _vec_to_mat_insert(dst: Tile, src: Tile, r0: int, c0: int, split: int, what: str) -> None:
    """``TInsertVecToMatImpl`` / ``TInsertSplitImpl``: the UB -> L1 bursts of a TINSERT."""
    if dst.dtype != src.dtype:
        raise ConfigError(f"{what}: Source and destination data types must match ({src.dtype.name} vs "
                          f"{dst.dtype.name})")
    if src.dtype.name not in INSERT_TYPES:
        raise ConfigError(f"{what}: Unsupported data type {src.dtype.name}")
    bits = src.dtype.bits
    c0size = 256 // max(bits, 8)  # 32-byte block of the storage unit (a byte holds two fp4 codes)
    vr, vc = src.valid
    byte_el = 2 if src.dtype.packed else 1  # elements per storage unit
    if split not in (1, 2, 4):
        raise ConfigError(f"{what}: split must be 1, 2 (SPLIT2) or 4 (SPLIT4), got {split!r}")
    if split > 1 and src.fmt != "NZ":
        raise ConfigError(f"{what}: the split modes need an NZ source (column-major, RowMajor fractal), got {src.fmt}")
    if src.fmt == "ZN":
        if dst.fmt != "ZN":
            raise ConfigError(f"{what}: TINSERT ZN: destination must be ZN format (row-major, ColMajor fractal)")
        ir = c0size
        if r0 % (ir * byte_el) or vr % (ir * byte_el):
            raise ConfigError(f"{what}: TINSERT ZN: indexRow and validRow must be aligned to the fractal row size "
                              f"({ir * byte_el}); got indexRow {r0}, validRow {vr}")
        if src.compact is CompactMode.Null:
            stride_cols = src.cols
        else:
            stride_cols = -(-vc // 16) * 16 + (1 if src.compact is CompactMode.RowPlusOne else 0)
        dst_off = (r0 // byte_el // ir) * dst.cols * ir + c0 * ir + (r0 // byte_el) % ir
        reads, writes = burst_copy(dst, src, dst_off * byte_el, 0, -(-vr // byte_el // ir), vc, stride_cols - vc,
                                   dst.cols - vc, what)
    elif src.fmt == "NZ":
        if dst.fmt != "NZ":
            raise ConfigError(f"{what}: an NZ source inserts into an NZ destination, got {dst.fmt}")
        dst_rows = dst.rows
        bvc, bic = vc // byte_el, c0 // byte_el
        if split == 1:
            if r0 + vr > dst_rows:
                raise ConfigError(f"{what}: TINSERT NZ: indexRow + validRow exceeds destination rows ({r0} + {vr} > "
                                  f"{dst_rows})")
            off = (bic // c0size) * dst_rows * c0size + r0 * c0size + bic % c0size
            reads, writes = burst_copy(dst, src, off * byte_el, 0, -(-bvc // c0size), vr, src.rows - vr,
                                       dst_rows - vr, what)
        else:
            if r0 + vr > dst.rows or c0 + vc > dst.cols:
                raise ConfigError(f"{what}: TINSERT: indexRow + validRow / indexCol + validCol exceed the destination")
            ar = -(-vr // 16) * 16
            total = -(-bvc // c0size)
            part = total // split
            last = total - part * (split - 1)
            off = (bic // c0size) * dst.rows * c0size + r0 * c0size + bic % c0size
            src_blk = src.rows * c0size  # (burstLen + srcGap) blocks of c0size storage units
            reads, writes = (), ()
            for p in range(split):
                nb = last if p == split - 1 else part
                rd, wr = burst_copy(dst, src, (off + p * part * dst.rows * c0size) * byte_el,
                                    p * part * src_blk * byte_el, nb, ar, src.rows - ar, dst.rows - ar, what)
                reads, writes = reads + rd, writes + wr
    elif src.fmt in ("ND", "ZZ"):  # any row-major source but ZN takes TInsertNDImpl's row bursts
        dcols = dst.cols
        esz = bits / 8
        total = int(vr * vc * esz)
        off = r0 * dcols + c0
        if vc == src.cols and vc == dcols and total >= 32:
            reads, writes = burst_copy(dst, src, off, 0, 1, total // 32, 0, 0, what)
        elif vc * esz >= 32:
            reads, writes = burst_copy(dst, src, off, 0, vr, int(vc * esz) // 32, int((src.cols - vc) * esz) // 32,
                                       int((dcols - vc) * esz) // 32, what)
        else:
            reads, writes = burst_copy(dst, src, off, 0, 1, -(-total // 32), 0, 0, what)
    else:
        raise ConfigError(f"{what}: Vec -> Mat inserts ND / ZZ (row bursts), NZ or ZN sources, got {src.fmt}")
    _emit_move(src.ctx, Pipe.MTE3, "TINSERT", src.dtype.nbytes(vr * vc), reads, writes, path=f"Vec->Mat {src.fmt}",
               index=(r0, c0), split=split)


def tinsert(dst, src: Tile, index_row: int = 0, index_col: int = 0, *, relu: ReluPreMode = ReluPreMode.NoRelu,
            mode: AccToVecMode | None = None, pre_quant_scalar: int | None = None, fp: Tile | None = None,
            split: int = 1, options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """PTO ``TINSERT(dst, src, indexRow, indexCol)`` with its relu / ``AccToVecMode`` / scalar-quant forms,
    ``TINSERT_FP(dst, src, fp, indexRow, indexCol)`` (``fp`` given) and ``TINSERT<TInsertMode::SPLIT2|SPLIT4>``
    (``split``): ``dst[indexRow + i, indexCol + j] = src[i, j]`` over ``src``'s valid region (module docstring)."""
    what = "TINSERT_FP" if fp is not None else "TINSERT"
    r0, c0 = _index(index_row, "indexRow", what), _index(index_col, "indexCol", what)
    dsts = tuple(dst) if isinstance(dst, (tuple, list)) else (dst,)
    arch = arch_of(what, src, *dsts, *((fp,) if fp is not None else ()))
    if src.loc is T.Acc:
        qmode, mode, kind = acc_checks(dsts, src, arch, mode, pre_quant_scalar, fp, options)
        d0 = dsts[0]
        m, n = src.valid
        if d0.loc is T.Mat:  # TInsertAccToMat: the source's static rows, valid cols rounded up to C0
            c0size = 32 * 8 // d0.dtype.bits if d0.fractal != 1024 else 64 * 8 // d0.dtype.bits
            m, n = src.rows, -(-n // c0size) * c0size
        elif d0.fmt == "NZ":  # TInsertAccToVec nz2nz: all source rows, aligned columns
            m = src.rows
            n = -(-n // 16) * 16 if d0.dtype.name == "float32" else -(-n // (32 * 8 // d0.dtype.bits)) * \
                (32 * 8 // d0.dtype.bits)
        n = min(n, src.cols)
        acc_move(dsts, src, qmode, kind, pre_quant_scalar, fp, ReluPreMode(relu), mode, options, m=m, n=n, op=what,
                 dst_row0=r0, dst_col0=c0, info={"path": f"Acc->{d0.loc.value}", "index": (r0, c0)})
        return
    if relu is not ReluPreMode.NoRelu or mode is not None or pre_quant_scalar is not None or fp is not None:
        raise ConfigError(f"{what}: relu, AccToVecMode and quant forms exist only for Acc sources "
                          f"(got a {src.loc.value} source)")
    if len(dsts) != 1:
        raise ConfigError(f"{what}: only the dual Acc -> Vec modes take two destination tiles")
    dst = dsts[0]
    if not is950(arch):
        raise ConfigError(f"{what}: Vec sources are inserted on Ascend 950 only, not on {arch.name}")
    if src.loc is T.Vec and dst.loc is T.Mat:
        _vec_to_mat_insert(dst, src, r0, c0, split, what)
    elif src.loc is T.Vec and dst.loc is T.Vec:
        if split != 1:
            raise ConfigError(f"{what}: the split modes insert a Vec tile into a Mat tile")
        _vec_to_vec(dst, src, r0, c0, what, insert=True)
    else:
        raise ConfigError(f"{what}: {src.loc.value} -> {dst.loc.value} is not a TINSERT pair (Acc -> Mat / Vec, "
                          "Vec -> Mat, Vec -> Vec)")


__all__ = ["INSERT_TYPES", "ND2NZ_TYPES", "VEC_TYPES", "textract", "textract_2xnz", "tinsert"]
