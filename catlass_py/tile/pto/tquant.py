"""PTO ``TQUANT`` (MX and INT8 forms) and ``TDEQUANT`` on Vec tiles.

Counterparts: ``docs/isa/TQUANT.md``, ``docs/isa/TQUANT_DN.md``, ``docs/isa/TDEQUANT.md`` and the Ascend 950
implementations ``include/pto/npu/a5/TQuant.hpp`` / ``TDeQuant.hpp`` of ``hw-native-sys/pto-isa``, checked against the
goldens of ``tests/npu/a5/src/st/testcase/{tquant,tquant_dn,tdequant}``.

MX (:func:`tquant`, ``TQUANT<grp_axis, MxQuantAlg>(dst, src, &exp, &max, &scaling)``): groups of 32 along the columns
(``grp_axis=1``, "ND") or along the rows (``grp_axis=0``, "DN"); the arithmetic is
:func:`~catlass_py.numerics.mx.quantize_mx` (OCP FLOOR or NV RCEIL scale, RNE cast with clamp, an infinite group
maximum keeps the exponent arithmetic, fp4 NaN -> code 0x7). What the instruction reads and writes, as
``TQuant.hpp`` does it:

* bf16 / fp16 sources have their padding columns ``[ValidCol, Cols)`` of every valid row zeroed *in the source tile*
  first (``ZeroPadSourceTile``); fp32 sources are read as they are;
* ND: every valid row is quantised over the full static width ``Cols`` (``G = Cols / 32`` groups per row). The
  exponent tile is flat when it has one row (group ``r * G + g`` at byte ``r * G + g``), else two-dimensional (row
  ``r`` at ``r * exp.Cols``, ``ceil(ValidCol / 32)`` groups). The data tile is written row by row at the source's row
  stride (fp8 bytes, or fp4 codes two per byte), i.e. flat from its first byte;
* DN: ``ValidRow`` must be a multiple of 32 (64 with ``interleave``); a 2-D destination is written through its own
  layout (row stride ``dst.Cols``, as ``calcQuantizedFP8Values_DN_*`` with ``DstStaticCols``); exponent ``E[h, c]`` of rows ``32h..32h+31`` of
  column ``c`` goes to row ``h`` of the exponent tile, or with ``interleave`` to ``E_FLAT[p, 2c + d] = E[2p + d, c]``
  (``aclnnDynamicMxQuant`` order);
* ``max`` / ``scaling`` scratch tiles receive the group maxima and the reciprocal scales ``2**(127 - e)`` as TQuant.hpp
  stores them (fp32 for fp32 sources, bf16 bit patterns otherwise; fp16 OCP maxima are bf16-truncated, fp16 NV maxima
  stay fp16), packed flat for ND, ``[M/32, N]`` at the tiles' row stride for DN.

INT8 (:func:`tquant_int8`, ``TQUANT<QuantType::INT8_SYM|INT8_ASYM>(dst, src, scale[, tmp][, offset])``): per row
``q = sat(rint(fp32(fp32(x * scale[r]) + offset[r])))`` through s32 -> fp32 -> fp16 -> int8 / uint8 casts
(``TQuant_Int8Sym`` / ``TQuant_Int8Asym``); ``scale`` / ``offset`` element ``r`` is read at flat position ``r`` of the
parameter tile (a broadcast load at offset ``row``), and ``tmp`` is accepted and unused on Ascend 950 (Atlas A2/A3
need it, of the source's size).

TDEQUANT (:func:`tdequant`): ``dst = fp32(fp32(src - offset[r]) * scale[r])`` for int8 / int16 sources.

All run on the vector pipe (PIPE_V). On a core of a timing-only launch (:attr:`Tile.computes` False) each makes the
same checks (for MX also those :func:`~catlass_py.numerics.mx.quantize_mx` makes of its options) and publishes the
same event, with the written byte counts and regions taken from the shapes, and reads or writes no tile bytes.
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.numerics.mx import (
    E8M0_NAN,
    check_rounding_options,
    check_scale_options,
    quantize_mx,
)
from catlass_py.numerics.packing import pack_fp4
from catlass_py.tile.pto._common import arch_of, emit, is950, listening, region, whole
from catlass_py.tile.pto.tile import Tile, TileType

MX_GROUP = 32


class MxQuantAlg(enum.Enum):
    """PTO ``MxQuantAlg``: destination format and scale algorithm of an MX TQUANT."""

    OcpMxFp8E4M3 = 0
    NvMxFp8E4M3 = 1
    OcpMxFp4E2M1 = 2
    NvMxFp4E2M1 = 3

    @property
    def elem(self) -> str:
        return "float8_e4m3fn" if self in (MxQuantAlg.OcpMxFp8E4M3, MxQuantAlg.NvMxFp8E4M3) else "float4_e2m1fn"

    @property
    def scale_alg(self) -> str:
        return "nv" if self in (MxQuantAlg.NvMxFp8E4M3, MxQuantAlg.NvMxFp4E2M1) else "ocp"


class QuantType(enum.Enum):
    """PTO ``QuantType`` of the INT8 TQUANT forms (the MX forms use :class:`MxQuantAlg`)."""

    INT8_SYM = "INT8_SYM"
    INT8_ASYM = "INT8_ASYM"


_SRC_TYPES = ("float32", "bfloat16", "float16")
_FP8_DST = ("float8_e4m3fn", "int8", "uint8")  # PTO's MXFP8 output is an int8_t alias of e4m3


def _vec(t, role: str, what: str) -> None:
    if not isinstance(t, Tile) or t.loc is not TileType.Vec:
        raise ConfigError(f"{what}: the {role} must be a Vec tile, got {t!r}")


def _nd(t: Tile, role: str, what: str) -> None:
    if t.fmt != "ND":
        raise ConfigError(f"{what}: the {role} tile must be RowMajor / NoneBox (ND), got {t.fmt}")


def _flat_bytes(tile: Tile) -> np.ndarray:
    """The tile's bytes (packed fp4 bytes for 4-bit tiles), a view."""
    v = tile._bound().view()
    return v if tile.dtype.packed else v.view(np.uint8)


def _put_flat(tile: Tile, values: np.ndarray | None, nbytes: int, role: str, what: str) -> int:
    """Store ``values`` (``nbytes`` bytes of storage) at the start of the tile, flat, after checking that they fit;
    ``values`` None (a timing-only core) makes the check only. Returns ``nbytes``."""
    have = tile._bound().nbytes
    if nbytes > have:
        raise ConfigError(f"{what}: the {role} tile ({have} bytes) cannot hold the {nbytes} bytes TQUANT writes")
    if values is not None:
        _flat_bytes(tile)[:nbytes] = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    return nbytes


def _scratch_max(amax32: np.ndarray, src_dtype: str, alg: MxQuantAlg) -> np.ndarray:
    """Group maxima as TQuant.hpp leaves them in the ``max`` tile: fp32 for fp32 sources, bf16 for bf16, and for fp16
    the bf16 truncation (OCP, which reduces fp16 through bf16 with ROUND_Z) or the fp16 value (NV)."""
    if src_dtype == "float32":
        return amax32.astype(np.float32)
    if src_dtype == "bfloat16":
        return amax32.astype(ml_dtypes.bfloat16)
    if alg.scale_alg == "nv":
        return amax32.astype(np.float16)
    bits = (np.ascontiguousarray(amax32, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits.view(np.float16)  # the bf16 bit pattern in the fp16-typed scratch


def _scratch_scale(e: np.ndarray, src_dtype: str, alg: MxQuantAlg) -> np.ndarray:
    """Reciprocal scales ``2**(127 - e)`` as TQuant.hpp stores them: fp32 bits for fp32 sources, bf16 bits otherwise
    (also for fp16 sources); a NaN scale stores the format's NaN pattern (fp32 0x7FC00000; bf16 0x7F81 for e4m3,
    0x7FC0 for e2m1)."""
    e = e.astype(np.int64)
    if src_dtype == "float32":
        bits = np.where(e == E8M0_NAN, 0x7FC00000, np.where(e == 254, 0x00400000, (254 - e) << 23)).astype(np.uint32)
        return bits.view(np.float32)
    nan = 0x7F81 if alg.elem == "float8_e4m3fn" else 0x7FC0
    bits = np.where(e == E8M0_NAN, nan, np.where(e == 254, 0x0040, (254 - e) << 7)).astype(np.uint16)
    return bits.view(ml_dtypes.bfloat16 if src_dtype == "bfloat16" else np.float16)


def tquant(dst: Tile, src: Tile, exp: Tile, max: Tile, scaling: Tile, *,  # noqa: A002 - PTO's operand name
           alg: MxQuantAlg = MxQuantAlg.OcpMxFp8E4M3, grp_axis: int = 1, interleave: bool = False,
           inf_scale: str = "exponent", fp4_nan: str = "max", rounding: str = "rne", rng=None,
           emax: int | None = None) -> None:
    """PTO ``TQUANT<grp_axis, mx_alg[, interleave]>(dst, src, &exp, &max, &scaling)`` (Ascend 950): MX-quantise
    ``src`` into ``dst`` with E8M0 exponents in ``exp`` (see the module docstring for the layouts).

    Checks (:class:`ConfigError` naming the rule, as ``CheckTQuantMxTypes`` / ``TQUANT_IMPL``): Ascend 950 only;
    MXFP8 input fp32 / bf16 / fp16, output e4m3 (or its int8 / uint8 byte alias); MXFP4 input fp16 / bf16 only, output
    ``float4_e2m1fn``; ``src.Cols % 32 == 0``; ``exp`` uint8 / e8m0; DN: ``ValidRow % 32 == 0`` (64 with
    ``interleave``), interleave only for DN; every output tile large enough for what is written. The remaining
    keywords select the numerics options of :func:`~catlass_py.numerics.mx.quantize_mx` (defaults: PTO-ISA's code).
    """
    what = f"TQUANT<{grp_axis}, {getattr(alg, 'name', alg)}>"
    alg = MxQuantAlg(alg) if not isinstance(alg, MxQuantAlg) else alg
    for t, role in ((dst, "destination"), (src, "source"), (exp, "exponent"), (max, "max"), (scaling, "scaling")):
        _vec(t, role, what)
    arch = arch_of(what, dst, src, exp, max, scaling)
    if not is950(arch):
        raise ConfigError(f"{what}: MX quantisation (MXFP8 / MXFP4) is supported on Ascend 950 only, not on {arch.name}")
    if grp_axis not in (0, 1):
        raise ConfigError(f"{what}: grp_axis must be 0 (DN) or 1 (ND), got {grp_axis!r}")
    if interleave and grp_axis != 0:
        raise ConfigError(f"{what}: exponent interleave is only supported for DN (grp_axis=0)")
    sname = src.dtype.name
    if alg.elem == "float8_e4m3fn":
        if sname not in _SRC_TYPES:
            raise ConfigError(f"{what}: MXFP8 input has to be float32, bfloat16 or float16, got {sname}")
        if dst.dtype.name not in _FP8_DST:
            raise ConfigError(f"{what}: the MXFP8 output is float8_e4m3fn (or its int8 / uint8 byte view), got "
                              f"{dst.dtype.name}")
    else:
        if sname not in ("bfloat16", "float16"):
            raise ConfigError(f"{what}: MXFP4_E2M1 input has to be float16 (half) or bfloat16, got {sname}")
        if dst.dtype.name != "float4_e2m1fn":
            raise ConfigError(f"{what}: MXFP4_E2M1 output has to be float4_e2m1fn (float4_e2m1x2_t), got {dst.dtype.name}")
    if exp.dtype.name not in ("uint8", "float8_e8m0fnu"):
        raise ConfigError(f"{what}: the exponent tile holds E8M0 bytes (uint8 or float8_e8m0fnu), got {exp.dtype.name}")
    for t, role in ((src, "source"), (dst, "destination"), (exp, "exponent")):
        _nd(t, role, what)
    if grp_axis == 1 and src.cols % MX_GROUP:
        raise ConfigError(f"{what}: N mod 32 = 0 is required (group size 32): the source has {src.cols} columns")
    vr, vc = src.valid
    cols = src.cols
    if grp_axis == 0 and vr % MX_GROUP:
        raise ConfigError(f"{what}: M mod 32 = 0 is required for DN (axis-0 groups): {vr} valid rows")
    if interleave and vr % 64:
        raise ConfigError(f"{what}: DN interleave requires 64-aligned valid rows, got {vr}")
    if grp_axis == 1 and dst.rows > 1 and dst.cols != cols:
        raise ConfigError(f"{what}: the destination is written at the source's row stride; a 2-D destination needs "
                          f"the source's Cols ({cols}), got {dst.cols} (a 1-row destination is written flat)")
    if grp_axis == 0 and dst.rows > 1 and (dst.rows < vr or dst.cols < cols):
        raise ConfigError(f"{what}: the DN destination ({dst.rows}x{dst.cols}) must hold the {vr}x{cols} quantised rows")
    computes = src.computes  # a timing-only core: the checks, sizes and regions from the shapes, no bytes
    reads, writes = [], []
    if sname != "float32" and vc < cols and vr:
        if computes:
            pad = np.zeros((vr, cols - vc), dtype=src.dtype.numpy)
            src.write(np.concatenate([src.read(vr, vc), pad], axis=1))  # ZeroPadSourceTile, in the source tile
        writes.append(region(src, vr, cols - vc, col0=vc))
    reads.append(region(src, vr, cols))
    if computes:
        data = src.read(vr, cols)
        q, e = quantize_mx(data, alg.elem, MX_GROUP, axis=1 if grp_axis == 1 else 0, scale_alg=alg.scale_alg,
                           inf_scale=inf_scale, fp4_nan=fp4_nan, rounding=rounding, rng=rng, emax=emax)
        codes = q.view(np.uint8) if q.dtype != np.uint8 else q
    else:
        # the option checks quantize_mx makes (its element type and array checks pass for TQUANT's operands)
        check_rounding_options(rounding, fp4_nan, rng)
        check_scale_options(get_dtype(alg.elem), inf_scale=inf_scale, scale_alg=alg.scale_alg, emax=emax)
        data = e = codes = None
    # codes: one byte per element (fp4 packed two per byte when written flat); e: one E8M0 byte per group, [vr, G]
    # (ND) or [vr / 32, cols] (DN); the max / scaling values are as wide as the source type
    if grp_axis == 0 and dst.rows > 1:  # DN: through the destination's layout (its own row stride)
        if computes:
            dst.write(codes if dst.dtype.packed else codes.view(dst.dtype.numpy))
        writes.append(region(dst, vr, cols))
    elif alg.elem == "float4_e2m1fn":
        writes.append(whole(dst, _put_flat(dst, pack_fp4(codes.reshape(-1)) if computes else None, vr * cols // 2,
                                           "destination", what)))
    else:
        writes.append(whole(dst, _put_flat(dst, codes.reshape(-1) if computes else None, vr * cols, "destination",
                                           what)))
    # exponents, maxima, scales
    if computes:
        with np.errstate(invalid="ignore"):
            amax = np.max(np.abs(data.astype(np.float32).reshape(vr, cols // MX_GROUP, MX_GROUP)), axis=-1) \
                if grp_axis == 1 else np.max(np.abs(data.astype(np.float32).reshape(vr // MX_GROUP, MX_GROUP, cols)),
                                             axis=1)
        recip = _scratch_scale(e, sname, alg)
        amax = _scratch_max(amax, sname, alg)
    else:
        amax = recip = None
    width = src.dtype.numpy.itemsize  # of the max / scaling values (_scratch_max, _scratch_scale)
    if grp_axis == 1:
        g = cols // MX_GROUP
        if exp.rows == 1:
            writes.append(whole(exp, _put_flat(exp, e.reshape(-1) if computes else None, vr * g, "exponent", what)))
        else:
            gv = -(-vc // MX_GROUP)
            if vr > exp.rows or gv > exp.cols:
                raise ConfigError(f"{what}: the 2-D exponent tile {exp.rows}x{exp.cols} cannot hold {vr} rows of {gv} "
                                  "groups")
            if computes:
                exp.layout.write(exp.elements(), e[:, :gv].view(exp.dtype.numpy) if exp.dtype.numpy != np.uint8
                                 else e[:, :gv])
            writes.append(region(exp, vr, gv))
        for t, vals, role in ((max, amax, "max"), (scaling, recip, "scaling")):
            writes.append(whole(t, _put_flat(t, vals.reshape(-1) if computes else None, vr * g * width, role, what)))
    else:
        hat = vr // MX_GROUP
        if interleave:
            rows_i = -(-hat // 2)
            if rows_i > exp.rows or 2 * cols > exp.cols:
                raise ConfigError(f"{what}: the interleaved exponent tile must be [ceil(M/64), 2*N] = [{rows_i}, "
                                  f"{2 * cols}] or larger, got {exp.rows}x{exp.cols}")
            if computes:
                ei = e.reshape(rows_i, 2, cols).transpose(0, 2, 1).reshape(rows_i, 2 * cols)
                exp.layout.write(exp.elements(), ei.view(exp.dtype.numpy))
            writes.append(region(exp, rows_i, 2 * cols))
        else:
            if hat > exp.rows or cols > exp.cols:
                raise ConfigError(f"{what}: the DN exponent tile must be [M/32, N] = [{hat}, {cols}] or larger, got "
                                  f"{exp.rows}x{exp.cols}")
            if computes:
                exp.layout.write(exp.elements(), e.view(exp.dtype.numpy))
            writes.append(region(exp, hat, cols))
        for t, vals, role in ((max, amax, "max"), (scaling, recip, "scaling")):
            _nd(t, role, what)
            if hat > t.rows or cols > t.cols:
                raise ConfigError(f"{what}: the DN {role} tile must be [M/32, N] = [{hat}, {cols}] or larger, got "
                                  f"{t.rows}x{t.cols}")
            if t.dtype.numpy.itemsize != width:
                raise ConfigError(f"{what}: the {role} tile holds {width}-byte values of the source type, got "
                                  f"{t.dtype.name}")
            if computes:
                t.layout.write(t.elements(), vals.view(t.dtype.numpy))
            writes.append(region(t, hat, cols))
    ctx = src.ctx
    if listening(ctx):
        emit(ctx, Pipe.V, "TQUANT", nbytes=src.dtype.nbytes(vr * cols), flops=vr * cols * 3, reads=tuple(reads),
             writes=tuple(writes), alg=alg.name, grp_axis=grp_axis, interleave=interleave, rows=vr, cols=cols)


def tquant_int8(dst: Tile, src: Tile, scale: Tile, offset: Tile | None = None, tmp: Tile | None = None, *,
                quant_type: QuantType = QuantType.INT8_SYM) -> None:
    """PTO ``TQUANT<QuantType::INT8_SYM | INT8_ASYM>(dst, src, scale[, tmp][, offset])``: per-row affine quantisation
    of an fp32 tile (module docstring). SYM writes int8 and takes no offset; ASYM writes uint8 and needs ``offset``.

    Checks (:class:`ConfigError`): "Input has to be float 32", the output dtype of the mode, Vec operands, row-major
    source / destination, parameter tiles of fp32 holding ``ValidRow`` values; on Atlas A2/A3 ``tmp`` must be an fp32
    tile of the source's size (the S32 cast intermediate), on Ascend 950 it is unused.
    """
    quant_type = QuantType(quant_type)
    what = f"TQUANT<QuantType::{quant_type.value}>"
    tiles = [dst, src, scale] + ([offset] if offset is not None else []) + ([tmp] if tmp is not None else [])
    for t in tiles:
        _vec(t, "operand", what)
    arch = arch_of(what, *tiles)
    if src.dtype.name != "float32":
        raise ConfigError(f"{what}: Input has to be float 32, got {src.dtype.name}")
    want = "int8" if quant_type is QuantType.INT8_SYM else "uint8"
    if dst.dtype.name != want:
        raise ConfigError(f"{what}: Out data type has to be {want}, got {dst.dtype.name}")
    if quant_type is QuantType.INT8_ASYM and offset is None:
        raise ConfigError(f"{what}: the asymmetric form needs an offset tile")
    if quant_type is QuantType.INT8_SYM and offset is not None:
        raise ConfigError(f"{what}: the symmetric form takes no offset (offset = nullptr)")
    for t, role in ((src, "source"), (dst, "destination")):
        if t.fmt != "ND":
            raise ConfigError(f"{what}: the {role} tile must be row-major (ND), got {t.fmt}")
    vr, vc = src.valid
    for t, role in ((scale, "scale"),) + (((offset, "offset"),) if offset is not None else ()):
        if t.dtype.name != "float32":
            raise ConfigError(f"{what}: the {role} tile holds fp32 values, got {t.dtype.name}")
        if t.capacity < vr:
            raise ConfigError(f"{what}: the {role} tile holds {t.capacity} values, fewer than the {vr} valid rows")
    if not is950(arch):
        if tmp is None or tmp.dtype.name != "float32" or tmp.capacity < src.rows * src.cols:
            raise ConfigError(f"{what}: on {arch.name} tmp must be an fp32 tile of the source's size "
                              f"({src.rows}x{src.cols}), the S32 cast intermediate")
    if vr > dst.rows or vc > dst.cols:
        raise ConfigError(f"{what}: the {vr}x{vc} valid region does not fit the destination {dst}")
    if dst.computes:  # a timing-only core reads, computes and writes nothing
        x = src.read(vr, vc).astype(np.float32)
        s = scale._bound().view(vr).astype(np.float32)[:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            y = (x * s).astype(np.float32)
            if offset is not None:
                y = (y + offset._bound().view(vr).astype(np.float32)[:, None]).astype(np.float32)
            r = np.rint(y.astype(np.float64))
        lo, hi = (-128, 127) if want == "int8" else (0, 255)
        q = np.where(np.isnan(r), 0, np.clip(np.nan_to_num(r, nan=0.0), lo, hi)).astype(dst.dtype.numpy)
        dst.write(q)
    ctx = src.ctx
    if listening(ctx):
        reads = [region(src, vr, vc), scale._bound().access(0, vr)]
        if offset is not None:
            reads.append(offset._bound().access(0, vr))
        emit(ctx, Pipe.V, "TQUANT", nbytes=src.dtype.nbytes(vr * vc), flops=vr * vc * 4, reads=tuple(reads),
             writes=(region(dst, vr, vc),), quant_type=quant_type.value, rows=vr, cols=vc)


def tdequant(dst: Tile, src: Tile, scale: Tile, offset: Tile) -> None:
    """PTO ``TDEQUANT(dst, src, scale, offset)``: ``dst[i, j] = fp32(fp32(src[i, j] - offset[i]) * scale[i])`` over
    ``dst``'s valid region (``TDeQuant.hpp``: ``vsub`` then ``vmul``; int8 / int16 widened exactly to fp32; ``scale`` /
    ``offset`` element ``i`` at flat position ``i * paraStride`` of the parameter tiles, ``paraStride`` being their row
    stride, i.e. logical element ``(i, 0)``).

    Checks (:class:`ConfigError` naming the rule, as ``TDeQuantCheck``): dst fp32, src int8 / int16, parameters of
    dst's dtype; row-major dst / src; src valid shape equal to dst's; parameter valid rows equal to dst's valid rows.
    """
    what = "TDEQUANT"
    for t, role in ((dst, "destination"), (src, "source"), (scale, "scale"), (offset, "offset")):
        _vec(t, role, what)
    arch_of(what, dst, src, scale, offset)
    if dst.dtype.name != "float32" or src.dtype.name not in ("int8", "int16"):
        raise ConfigError(f"{what}: invalid data type: dst must be float32 and src int8 or int16, got "
                          f"{dst.dtype.name} <- {src.dtype.name}")
    if scale.dtype != dst.dtype or offset.dtype != dst.dtype:
        raise ConfigError(f"{what}: dst and parameter tile data types mismatch (scale {scale.dtype.name}, offset "
                          f"{offset.dtype.name}, dst {dst.dtype.name})")
    if dst.blayout.name != "RowMajor" or src.blayout.name != "RowMajor":
        raise ConfigError(f"{what}: only row-major layouts are supported (dst {dst.fmt}, src {src.fmt})")
    vr, vc = dst.valid
    if src.valid != (vr, vc):
        raise ConfigError(f"{what}: input tile src valid shape {src.valid_row}x{src.valid_col} mismatches the output "
                          f"tile dst's {vr}x{vc}")
    if scale.valid_row != vr or offset.valid_row != vr:
        raise ConfigError(f"{what}: parameter valid rows (scale {scale.valid_row}, offset {offset.valid_row}) mismatch "
                          f"the output tile's {vr}")
    if dst.computes:  # a timing-only core reads, computes and writes nothing
        x = src.read(vr, vc).astype(np.float32)
        sc = scale.read(vr, 1).astype(np.float32)
        of = offset.read(vr, 1).astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            out = ((x - of).astype(np.float32) * sc).astype(np.float32)
        dst.write(out)
    ctx = dst.ctx
    if listening(ctx):
        emit(ctx, Pipe.V, "TDEQUANT", nbytes=dst.dtype.nbytes(vr * vc), flops=2 * vr * vc,
             reads=(region(src, vr, vc), region(scale, vr, 1), region(offset, vr, 1)), writes=(region(dst, vr, vc),),
             rows=vr, cols=vc)


__all__ = ["MX_GROUP", "MxQuantAlg", "QuantType", "tdequant", "tquant", "tquant_int8"]
