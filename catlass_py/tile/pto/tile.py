"""PTO tiles: a statically shaped, laid-out view of one on-chip buffer (PTO ``pto::Tile``).

Counterpart of ``Tile<TileType, DType, Rows, Cols, BLayout, ValidRow, ValidCol, SLayout, SFractalSize, PadVal,
Compact>`` (``include/pto/common/pto_tile.hpp``) plus ``TASSIGN``. The static part is checked at construction
exactly like the C++ ``static_assert``s (:class:`ConfigError` naming the rule); the valid region may change at
run time (dynamic ``ValidRow``/``ValidCol``).

Every PTO layout is a CATLASS layout (pto-mx-semantics 1.2; ``R``/``C`` static rows/cols, ``IR``/``IC`` the
inner box)::

    PTO  BLayout / SLayout      offset(r, c)                               CATLASS
    ND   RowMajor / NoneBox     r*C + c                                    RowMajor
    DN   ColMajor / NoneBox     c*R + r                                    ColumnMajor
    NZ   ColMajor / RowMajor    c1*R*IC + r1*IR*IC + r0*IC + c0            zN
    ZN   RowMajor / ColMajor    r1*C*IR + c1*IR*IC + c0*IR + r0            nZ
    ZZ   RowMajor / RowMajor    r1*C*IR + c1*IR*IC + r0*IC + c0            zZ
    NN   ColMajor / ColMajor    c1*R*IC + r1*IR*IC + c0*IR + r0            nN

CANN and PTO write the order between boxes first ("NZ"); CATLASS writes the order inside a box first, so PTO
"NZ" is CATLASS ``zN`` and PTO "ZN" is CATLASS ``nZ``. The inner box is 16 x C0 (row-major inside) or
C0 x 16 (column-major inside) for 512-byte fractals (C0 = 32 bytes of elements: 32 for 8-bit, 64 for fp4),
16 x 16 for the 1024-byte accumulator fractal and 16 x 2 / 2 x 16 for the 32-byte MX-scale box.

4-bit types (fp4 e2m1 / e1m2) are stored two per byte, even element in the low nibble; :meth:`Tile.read` and
:meth:`Tile.write` exchange one code per numpy item (ml_dtypes ``float4_e2m1fn`` or uint8 e1m2 codes).
"""

from __future__ import annotations

import enum

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.errors import ArgumentError, CapacityError, ConfigError
from catlass_py.layout import ColumnMajor, RowMajor, nN, nZ, zN, zZ
from catlass_py.numerics.dtypes import DType, get_dtype
from catlass_py.numerics.packing import pack_fp4, unpack_fp4


class TileType(enum.Enum):
    """PTO ``TileType``: which buffer a tile lives in (``Vec`` UB, ``Mat`` L1, ``Left`` L0A, ``Right`` L0B,
    ``Acc`` L0C, ``Bias`` bias table, ``Scaling`` fixpipe buffer, ``ScaleLeft``/``ScaleRight`` the Ascend 950
    MX-scale buffers L0A_MX / L0B_MX)."""

    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    Scaling = "Scaling"
    ScaleLeft = "ScaleLeft"
    ScaleRight = "ScaleRight"


class BLayout(enum.IntEnum):
    """PTO ``BLayout``: order of the outer boxes (or of the elements of an unboxed tile)."""

    RowMajor = 0
    ColMajor = 1


class SLayout(enum.IntEnum):
    """PTO ``SLayout``: order inside one inner box; ``NoneBox`` means the tile is not boxed (ND / DN)."""

    NoneBox = 0
    RowMajor = 1
    ColMajor = 2


class CompactMode(enum.Enum):
    """PTO ``CompactMode`` (``include/pto/common/type.hpp``): how much of a boxed destination an instruction
    writes beyond the valid region. ``Null`` (default) and ``Normal`` differ only in the extract paths
    (``Normal`` moves the valid rows/cols rounded to whole boxes, ``Null`` the static tile);
    ``RowPlusOne`` destinations carry one dead row per column block (``Rows`` = valid rows + 1) to dodge UB
    bank conflicts; ``RowAlignedPadding`` makes TFILLPAD pad only up to the valid rows rounded to 16. The
    layout formulas are the same for all."""

    Null = "Null"
    Normal = "Normal"
    RowPlusOne = "RowPlusOne"
    RowAlignedPadding = "RowAlignedPadding"


class PadValue(enum.Enum):
    """PTO ``PadValue``: the value TLOAD / TFILLPAD write outside a tile's valid region. ``Min`` / ``Max`` are -inf
    / +inf for fp32, fp16 and bf16 and the integer limits for integer types; the 8-bit float, fp4 and e8m0 types
    pad with 0 whatever the choice (``GetPadValue`` / ``PadValueMap`` in ``include/pto/common/constants.hpp``).
    A custom value is :func:`pad_custom`."""

    Null = "Null"
    Zero = "Zero"
    Max = "Max"
    Min = "Min"


class PadCustom:
    """PTO ``PadValueCustom(value)``: a pad value given by the bit pattern of ``value`` in the type it was made
    from; a tile of another width takes the low 16 / 8 bits of that pattern, as ``GetPadValue`` does."""

    __slots__ = ("bits", "source")

    def __init__(self, bits: int, source: str):
        self.bits = int(bits) & 0xFFFFFFFF
        self.source = source

    def __eq__(self, other):
        return isinstance(other, PadCustom) and other.bits == self.bits

    def __hash__(self):
        return hash(("PadCustom", self.bits))

    def __repr__(self) -> str:
        return f"PadValueCustom(0x{self.bits:X} from {self.source})"


def pad_custom(value, dtype="float32") -> PadCustom:
    """PTO ``PadValueCustom(value)``: ``value`` stored as ``dtype`` (float32 by default, like ``-1.0f``)."""
    t = get_dtype(dtype)
    if t.bits not in (8, 16, 32) or t.packed:
        raise ArgumentError(f"pad_custom: dtype must be a 1-, 2- or 4-byte type, got {t.name}")
    try:
        raw = np.array([value]).astype(t.numpy)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(f"pad_custom: {value!r} is not a {t.name} value") from None
    return PadCustom(int(raw.view(f"u{t.bits // 8}")[0]), t.name)


_FLOAT_LIMITS = {"float32": (0xFF800000, 0x7F800000), "float16": (0xFC00, 0x7C00), "bfloat16": (0xFF80, 0x7F80)}


def pad_bits(pad, dtype) -> int:
    """The raw bit pattern ``pad`` (a :class:`PadValue` or :class:`PadCustom`) gives an element of ``dtype``."""
    t = get_dtype(dtype)
    if isinstance(pad, PadCustom):
        return pad.bits & ((1 << max(t.bits, 8)) - 1) if t.bits < 32 else pad.bits
    pad = PadValue(pad)
    if pad in (PadValue.Null, PadValue.Zero) or t.bits <= 8 and t.kind == "float" or t.bits == 64:
        return 0
    if t.name in _FLOAT_LIMITS:
        lo, hi = _FLOAT_LIMITS[t.name]
        return lo if pad is PadValue.Min else hi
    if t.kind == "uint":
        return 0 if pad is PadValue.Min else (1 << t.bits) - 1
    if t.kind == "int":
        return (1 << (t.bits - 1)) if pad is PadValue.Min else (1 << (t.bits - 1)) - 1
    return 0


def pad_element(pad, dtype) -> np.ndarray:
    """``pad`` as a one-element array of ``dtype``'s storage."""
    t = get_dtype(dtype)
    bits = pad_bits(pad, t)
    if t.packed:
        return np.array([bits & 0xF], np.uint8)
    raw = np.array([bits], dtype=f"u{t.numpy.itemsize}")
    return raw.view(t.numpy)


FRACTAL_AB = 512  # TileConfig::fractalABSize: cube operand box, 16 x C0
FRACTAL_C = 1024  # TileConfig::fractalCSize: accumulator box, 16 x 16
FRACTAL_MX = 32  # TileConfig::fractalMxSize: MX scale box, 16 x 2 (or 2 x 16)
ALIGNED_BYTES = 32  # TileConfig::alignedSize

#: the buffer each tile type lives in (``TASSIGN`` resolves it the same way)
HOME = {
    TileType.Vec: "UB",
    TileType.Mat: "L1",
    TileType.Left: "L0A",
    TileType.Right: "L0B",
    TileType.Acc: "L0C",
    TileType.Bias: "BT",
    TileType.Scaling: "FB",
    TileType.ScaleLeft: "L0A_MX",
    TileType.ScaleRight: "L0B_MX",
}
_RESOURCE_FIELD = {"UB": "ub_buf", "L1": "l1_buf", "L0A": "l0a_buf", "L0B": "l0b_buf", "L0C": "l0c_buf",
                   "BT": "bt_buf", "FB": "fb_buf"}
MX_BUFFER_RATIO = 16  # L0A_MX / L0B_MX hold the scales of L0A / L0B: scale address = data address >> 4

#: PTO format name -> (BLayout, SLayout) and the CATLASS layout class that implements it
FORMATS = {
    "ND": (BLayout.RowMajor, SLayout.NoneBox),
    "DN": (BLayout.ColMajor, SLayout.NoneBox),
    "NZ": (BLayout.ColMajor, SLayout.RowMajor),
    "ZN": (BLayout.RowMajor, SLayout.ColMajor),
    "ZZ": (BLayout.RowMajor, SLayout.RowMajor),
    "NN": (BLayout.ColMajor, SLayout.ColMajor),
}
CATLASS_NAME = {"ND": "RowMajor", "DN": "ColumnMajor", "NZ": "zN", "ZN": "nZ", "ZZ": "zZ", "NN": "nN"}


def format_of(blayout: BLayout, slayout: SLayout) -> str:
    """PTO format name ("ND", "DN", "NZ", "ZN", "ZZ", "NN") of a (BLayout, SLayout) pair."""
    for name, pair in FORMATS.items():
        if pair == (BLayout(blayout), SLayout(slayout)):
            return name
    raise ConfigError(f"no PTO format for BLayout {blayout!r} / SLayout {slayout!r}")  # pragma: no cover


def pto_layout(fmt: str, rows: int, cols: int, inner_rows: int = 1, inner_cols: int = 1):
    """The CATLASS layout of a ``rows x cols`` PTO tile of format ``fmt`` with ``inner_rows x inner_cols`` boxes
    (PTO ``GetTileElementOffset``; see the module table). ``rows``/``cols`` are the *static* sizes, which set the
    strides; NZ uses ``rows`` as its column-block stride even when it is not a multiple of the box (RowPlusOne).
    """
    fmt = fmt.upper()
    if fmt not in FORMATS:
        raise ArgumentError(f"fmt: expected one of {sorted(FORMATS)}, got {fmt!r}")
    if fmt == "ND":
        return RowMajor(rows, cols)
    if fmt == "DN":
        return ColumnMajor(rows, cols)
    ir, ic = inner_rows, inner_cols
    shape = (ir, -(-rows // ir), ic, -(-cols // ic))
    if fmt == "NZ":
        return zN(rows, cols, shape, (ic, ir * ic, 1, rows * ic))
    if fmt == "ZN":
        return nZ(rows, cols, shape, (1, cols * ir, ir, ir * ic))
    if fmt == "ZZ":
        return zZ(rows, cols, shape, (ic, cols * ir, 1, ir * ic))
    return nN(rows, cols, shape, (1, ir * ic, ir, rows * ic))


def inner_box(dtype, slayout: SLayout, fractal: int) -> tuple[int, int]:
    """(InnerRows, InnerCols) of PTO ``getInnerRow``/``getInnerCol``."""
    slayout = SLayout(slayout)
    if slayout is SLayout.NoneBox:
        return (1, 1)
    if fractal == FRACTAL_C:
        return (16, 16)
    if fractal == FRACTAL_MX:
        return (16, 2) if slayout is SLayout.RowMajor else (2, 16)
    c0 = get_dtype(dtype).c0
    return (16, c0) if slayout is SLayout.RowMajor else (c0, 16)


class Tile:
    """PTO ``Tile<Loc, DType, Rows, Cols, BLayout, ValidRow, ValidCol, SLayout, SFractalSize, PadVal, Compact>``.

    Construct with the static configuration (checked like the C++ ``static_assert``s), bind it to a buffer
    with :meth:`assign` (``TASSIGN``), then move data with the PTO instructions. ``valid`` defaults to the
    static shape and may be changed with :meth:`set_valid` (dynamic valid rows/cols); ``pad`` is the
    ``PadVal`` template argument (:class:`PadValue` or :func:`pad_custom`).
    """

    __slots__ = ("loc", "dtype", "rows", "cols", "blayout", "slayout", "fractal", "compact", "valid_row",
                 "valid_col", "tensor", "layout", "inner", "fmt", "pad")

    def __init__(self, loc: TileType, dtype, rows: int, cols: int, *, blayout: BLayout = BLayout.RowMajor,
                 slayout: SLayout = SLayout.NoneBox, fractal: int = FRACTAL_AB, valid=None,
                 compact: CompactMode = CompactMode.Null, pad=PadValue.Null):
        self.tensor: LocalTensor | None = None
        self.pad = pad if isinstance(pad, PadCustom) else PadValue(pad)
        self.loc = TileType(loc)
        self.dtype: DType = get_dtype(dtype)
        self.blayout = BLayout(blayout)
        self.slayout = SLayout(slayout)
        self.compact = CompactMode(compact)
        self.fractal = int(fractal)
        self.rows = int(rows)
        self.cols = int(cols)
        self.fmt = format_of(self.blayout, self.slayout)
        self._check_static()
        self.inner = inner_box(self.dtype, self.slayout, self.fractal)
        self.layout = pto_layout(self.fmt, self.rows, self.cols, *self.inner)
        self.valid_row, self.valid_col = self.rows, self.cols
        if valid is not None:
            self.set_valid(*valid)

    @classmethod
    def of(cls, fmt: str, loc: TileType, dtype, rows: int, cols: int, **kwargs) -> "Tile":
        """A tile given its PTO format name ("ND", "DN", "NZ", "ZN", "ZZ", "NN") instead of BLayout/SLayout."""
        key = fmt.upper()
        if key not in FORMATS:
            raise ArgumentError(f"fmt: expected one of {sorted(FORMATS)}, got {fmt!r}")
        b, s = FORMATS[key]
        return cls(loc, dtype, rows, cols, blayout=b, slayout=s, **kwargs)

    # -- static checks (pto_tile.hpp) --------------------------------------------------------------
    def _check_static(self) -> None:
        name = f"Tile<{self.loc.value}, {self.dtype.name}, {self.rows}, {self.cols}, {self.fmt}>"
        if self.rows <= 0 or self.cols <= 0:
            raise ConfigError(f"{name}: Rows and Cols must be positive")
        if self.fractal not in (FRACTAL_AB, FRACTAL_C, FRACTAL_MX):
            raise ConfigError(f"{name}: SFractalSize must be 512, 1024 or 32 (TileConfig), got {self.fractal}")
        ir, ic = inner_box(self.dtype, self.slayout, self.fractal)
        bits = self.dtype.bits
        if self.slayout is SLayout.NoneBox:
            if self.blayout is BLayout.RowMajor and self.cols * bits % (8 * ALIGNED_BYTES):
                raise ConfigError(f"{name}: a RowMajor NoneBox tile needs Cols * sizeof(DType) % 32 == 0 "
                                  f"(got {self.cols * bits // 8} bytes per row)")
            if self.blayout is BLayout.ColMajor and self.rows * bits % (8 * ALIGNED_BYTES):
                raise ConfigError(f"{name}: a ColMajor NoneBox tile needs Rows * sizeof(DType) % 32 == 0 "
                                  f"(got {self.rows * bits // 8} bytes per column)")
            return
        exempt = self.loc is TileType.Vec or self.fractal == FRACTAL_MX or self.rows == 1
        if not exempt and self.rows % ir:
            raise ConfigError(f"{name}: Rows % InnerRows == 0 is required (Rows {self.rows}, inner box {ir}x{ic})")
        if self.cols % ic:
            raise ConfigError(f"{name}: Cols % InnerCols == 0 is required (Cols {self.cols}, inner box {ir}x{ic})")

    # -- valid region ------------------------------------------------------------------------------
    def set_valid(self, valid_row: int, valid_col: int) -> "Tile":
        """Set the dynamic valid region (``0 <= valid <= static``); returns the tile."""
        vr, vc = int(valid_row), int(valid_col)
        if not (0 <= vr <= self.rows and 0 <= vc <= self.cols):
            raise ConfigError(f"{self}: valid region {vr}x{vc} must lie within the static {self.rows}x{self.cols} "
                              "(ValidRow <= Rows, ValidCol <= Cols)")
        self.valid_row, self.valid_col = vr, vc
        return self

    @property
    def valid(self) -> tuple[int, int]:
        return (self.valid_row, self.valid_col)

    # -- binding -----------------------------------------------------------------------------------
    @property
    def home(self) -> str:
        """Name of the buffer this tile type lives in."""
        return HOME[self.loc]

    @property
    def capacity(self) -> int:
        """Elements the static tile spans (its box grid, padding included)."""
        return max(self.layout.capacity, self.rows * self.cols)

    @property
    def nbytes(self) -> int:
        return self.dtype.nbytes(self.capacity)

    def assign(self, where, byte_offset: int = 0) -> "Tile":
        """PTO ``TASSIGN``: bind the tile to a core's buffer at ``byte_offset`` (``where`` is a
        :class:`~catlass_py.arch.CoreContext`) or to an existing :class:`LocalTensor` in the right buffer. A Mat
        tile assigned on an Ascend 950 vector core binds to its AI core's L1
        (:meth:`~catlass_py.arch.CoreContext.cube_l1`), the destination of UB -> L1 moves."""
        if isinstance(where, LocalTensor):
            if where.position != self.home:
                raise ConfigError(f"TASSIGN: a {self.loc.value} tile lives in {self.home}, got a tensor in {where.position}")
            t = where if where.dtype == self.dtype else where.reinterpret(self.dtype)
            if t.count < self.capacity:
                raise CapacityError(f"TASSIGN: {self} needs {self.nbytes} bytes, the tensor has {t.nbytes}")
            self.tensor = LocalTensor(t.arena, t.byte_offset, self.dtype, self.capacity)
            return self
        ctx = where
        home = self.home
        if home == "L1" and ctx.is_aiv:
            arena = ctx.cube_l1()  # Ascend 950: the AI core's L1, reached by UB -> L1 moves
        elif home in _RESOURCE_FIELD:
            arena = getattr(ctx.resource, _RESOURCE_FIELD[home])
        else:
            if ctx.arch.arch_code < 3510:
                raise ConfigError(f"TASSIGN: {self.loc.value} tiles ({home}) exist only on Ascend 950, not on {ctx.arch.name}")
            base = ctx.resource.l0a_buf if home == "L0A_MX" else ctx.resource.l0b_buf
            arena = ctx.extra_buffer(home, base.size // MX_BUFFER_RATIO)
        self.tensor = arena.tensor(self.dtype, byte_offset, self.capacity)
        return self

    @property
    def ctx(self):
        """The core owning the bound buffer (None when unbound)."""
        return None if self.tensor is None else self.tensor.ctx

    @property
    def computes(self) -> bool:
        """Whether instructions on this tile do their data work (False on a timing-only core, where they publish
        their events only; see ``LaunchParams.numerics``)."""
        return self._bound().computes

    def _bound(self) -> LocalTensor:
        if self.tensor is None:
            raise ConfigError(f"{self} is not bound to a buffer; call assign() (TASSIGN) first")
        return self.tensor

    # -- element access (used by the instructions; also handy in tests) -----------------------------
    def elements(self) -> np.ndarray:
        """The flat element storage (a view; 4-bit types: a copy of the unpacked codes)."""
        t = self._bound()
        if self.dtype.packed:
            return unpack_fp4(t.view(), self.capacity)
        return t.view()

    def _store_elements(self, flat: np.ndarray) -> None:
        t = self._bound()
        t.view()[:] = pack_fp4(flat)

    def read(self, rows: int | None = None, cols: int | None = None) -> np.ndarray:
        """Logical region ``[0:rows, 0:cols]`` (default: the valid region) as a 2-D numpy array of the
        dtype's storage (4-bit: one code per item, ml_dtypes ``float4_e2m1fn`` or uint8 e1m2 codes)."""
        rows = self.valid_row if rows is None else rows
        cols = self.valid_col if cols is None else cols
        out = self.layout.read(self.elements(), rows, cols)
        if self.dtype.packed and not self.dtype.codes and self.dtype.numpy != np.uint8:
            out = out.view(self.dtype.numpy)
        return out

    def write(self, data: np.ndarray) -> None:
        """Store ``data`` (shape (r, c) within the static shape) as the region ``[0:r, 0:c]``."""
        data = np.asarray(data)
        if self.dtype.packed:
            flat = self.elements()
            codes = data.view(np.uint8) if data.dtype.itemsize == 1 and data.dtype.kind not in "iu" else data
            self.layout.write(flat, np.ascontiguousarray(codes, dtype=np.uint8))
            self._store_elements(flat)
            return
        if data.dtype != self.dtype.numpy:
            raise ArgumentError(f"{self}: data of dtype {data.dtype} does not match the tile dtype {self.dtype.name}")
        self.layout.write(self.elements(), data)

    def __repr__(self) -> str:
        if not hasattr(self, "valid_row"):  # failed construction
            return f"Tile<{getattr(self, 'loc', '?')}, incomplete>"
        where = "" if self.tensor is None else f" @ {self.tensor.arena._where()}+{self.tensor.byte_offset}"
        return (f"Tile<{self.loc.value}, {self.dtype.name}, {self.rows}x{self.cols}, {self.fmt}, "
                f"valid {self.valid_row}x{self.valid_col}{where}>")


# -- standard aliases (pto_tile.hpp) ---------------------------------------------------------------------


def _is_950(arch) -> bool:
    from catlass_py.arch.spec import get_arch

    return get_arch(arch).arch_code >= 3510


def tile_left(dtype, rows: int, cols: int, *, arch="Ascend950", valid=None) -> Tile:
    """PTO ``TileLeft``: L0A, 512-byte boxes; NZ (16 x C0) on Ascend 950, ZZ on Atlas A2/A3."""
    return Tile.of("NZ" if _is_950(arch) else "ZZ", TileType.Left, dtype, rows, cols, valid=valid)


def tile_right(dtype, rows: int, cols: int, *, valid=None) -> Tile:
    """PTO ``TileRight``: L0B, ZN with C0 x 16 boxes."""
    return Tile.of("ZN", TileType.Right, dtype, rows, cols, valid=valid)


def tile_acc(dtype, rows: int, cols: int, *, valid=None) -> Tile:
    """PTO ``TileAcc``: L0C, NZ with 16 x 16 boxes (1024-byte fractal)."""
    return Tile.of("NZ", TileType.Acc, dtype, rows, cols, fractal=FRACTAL_C, valid=valid)


def tile_left_scale(rows: int, cols: int, *, valid=None) -> Tile:
    """PTO ``TileLeftScale``: L0A_MX, e8m0, ZZ with 16 x 2 boxes (CATLASS ``zZ``); rows = M, cols = K/32."""
    return Tile.of("ZZ", TileType.ScaleLeft, "float8_e8m0fnu", rows, cols, fractal=FRACTAL_MX, valid=valid)


def tile_right_scale(rows: int, cols: int, *, valid=None) -> Tile:
    """PTO ``TileRightScale``: L0B_MX, e8m0, NN with 2 x 16 boxes (CATLASS ``nN``); rows = K/32, cols = N."""
    return Tile.of("NN", TileType.ScaleRight, "float8_e8m0fnu", rows, cols, fractal=FRACTAL_MX, valid=valid)


__all__ = [
    "ALIGNED_BYTES",
    "BLayout",
    "CATLASS_NAME",
    "CompactMode",
    "PadCustom",
    "PadValue",
    "FORMATS",
    "FRACTAL_AB",
    "FRACTAL_C",
    "FRACTAL_MX",
    "HOME",
    "SLayout",
    "Tile",
    "TileType",
    "format_of",
    "inner_box",
    "pad_bits",
    "pad_custom",
    "pad_element",
    "pto_layout",
    "tile_acc",
    "tile_left",
    "tile_left_scale",
    "tile_right",
    "tile_right_scale",
]
