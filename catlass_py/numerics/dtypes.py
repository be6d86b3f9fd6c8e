"""Element-type registry: bit width, C0 and numpy storage of every dtype the simulated cores know.

Counterpart of CATLASS ``SizeOfBits<T>`` / ``ELE_NUM_PER_C0`` (``include/catlass/numeric_size.hpp``,
``catlass.hpp``): C0 is the number of elements in one 32-byte block, ``256 // bits``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from catlass_py.errors import ArgumentError

BYTES_PER_C0 = 32

#: the installed ml_dtypes as (major, minor): its casts differ between releases (numerics.rounding)
ML_DTYPES_VERSION = tuple(int(part) for part in ml_dtypes.__version__.split(".")[:2])


@dataclass(frozen=True)
class DType:
    """One element type of the simulated machine (CATLASS element types such as ``int8_t``, ``half``).

    ``numpy`` is the numpy dtype that holds one element per item (for 4-bit types one element per byte,
    unpacked); ``None`` never occurs. ``packed`` is True for 4-bit types, which the hardware stores two
    per byte (even element in the low nibble). ``codes`` is True for formats that numpy/ml_dtypes lack
    (fp4 e1m2, HiFloat8): their numpy items are raw uint8 codes and ``catlass_py.numerics`` converts them.
    """

    name: str
    bits: int
    kind: str  # "int" | "uint" | "float"
    numpy: np.dtype = field(compare=False)
    aliases: tuple[str, ...] = field(default=(), compare=False)
    codes: bool = field(default=False, compare=False)

    @property
    def c0(self) -> int:
        """Elements per 32-byte block (CATLASS ``ELE_NUM_PER_C0``)."""
        return 8 * BYTES_PER_C0 // self.bits

    @property
    def packed(self) -> bool:
        """True when two elements share one byte in local/global memory."""
        return self.bits < 8

    def nbytes(self, count: int) -> int:
        """Bytes occupied by ``count`` elements (4-bit types round up to whole bytes)."""
        return (count * self.bits + 7) // 8

    def __repr__(self) -> str:
        return f"DType({self.name})"

    def __str__(self) -> str:
        return self.name


def _d(name, bits, kind, np_dtype, aliases=(), codes=False) -> DType:
    return DType(name, bits, kind, np.dtype(np_dtype), tuple(aliases), codes)


INT4 = _d("int4", 4, "int", ml_dtypes.int4, ("int4b_t", "s4"))
INT8 = _d("int8", 8, "int", np.int8, ("int8_t", "s8"))
UINT8 = _d("uint8", 8, "uint", np.uint8, ("uint8_t", "u8"))
INT16 = _d("int16", 16, "int", np.int16, ("int16_t", "s16"))
INT32 = _d("int32", 32, "int", np.int32, ("int32_t", "s32"))
INT64 = _d("int64", 64, "int", np.int64, ("int64_t", "s64"))
UINT64 = _d("uint64", 64, "uint", np.uint64, ("uint64_t", "u64"))
UINT16 = _d("uint16", 16, "uint", np.uint16, ("uint16_t", "u16"))
UINT32 = _d("uint32", 32, "uint", np.uint32, ("uint32_t", "u32"))
FLOAT16 = _d("float16", 16, "float", np.float16, ("fp16", "half", "f16"))
BFLOAT16 = _d("bfloat16", 16, "float", ml_dtypes.bfloat16, ("bf16", "bfloat16_t"))
FLOAT32 = _d("float32", 32, "float", np.float32, ("fp32", "float", "f32"))
FLOAT8_E4M3FN = _d("float8_e4m3fn", 8, "float", ml_dtypes.float8_e4m3fn, ("fp8_e4m3fn", "e4m3", "fp8_e4m3", "float8_e4m3"))
FLOAT8_E5M2 = _d("float8_e5m2", 8, "float", ml_dtypes.float8_e5m2, ("fp8_e5m2", "e5m2"))
FLOAT8_E8M0 = _d("float8_e8m0fnu", 8, "float", ml_dtypes.float8_e8m0fnu, ("e8m0", "fp8_e8m0", "float8_e8m0"))
FLOAT4_E2M1 = _d("float4_e2m1fn", 4, "float", ml_dtypes.float4_e2m1fn, ("fp4_e2m1", "e2m1", "float4_e2m1"))
FLOAT4_E1M2 = _d("float4_e1m2", 4, "float", np.uint8, ("fp4_e1m2", "e1m2"), codes=True)
HIFLOAT8 = _d("hifloat8", 8, "float", np.uint8, ("hif8", "hifloat8_t"), codes=True)

ALL_DTYPES: tuple[DType, ...] = (
    INT4, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT16, BFLOAT16, FLOAT32,
    FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT8_E8M0, FLOAT4_E2M1, FLOAT4_E1M2, HIFLOAT8,
)

_BY_NAME: dict[str, DType] = {}
for _t in ALL_DTYPES:
    for _n in (_t.name, *_t.aliases):
        _BY_NAME[_n.lower()] = _t
# numpy dtypes map back to the registry; uint8 wins over the code-only formats that also store uint8.
_BY_NUMPY: dict[np.dtype, DType] = {t.numpy: t for t in reversed(ALL_DTYPES) if not t.codes}


def get_dtype(x) -> DType:
    """Return the registry entry for ``x``: a :class:`DType`, a name or alias, a numpy/ml_dtypes dtype or
    scalar type, or an array (its dtype). Raises :class:`ArgumentError` for anything else."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        t = _BY_NAME.get(x.lower())
        if t is None:
            raise ArgumentError(f"dtype: expected one of {sorted({d.name for d in ALL_DTYPES})}, got {x!r}")
        return t
    if isinstance(x, np.ndarray):
        x = x.dtype
    try:
        npd = np.dtype(x)
    except TypeError:
        raise ArgumentError(f"dtype: expected a dtype, name or array, got {x!r}") from None
    t = _BY_NUMPY.get(npd)
    if t is None:
        raise ArgumentError(f"dtype: numpy dtype {npd} is not a dtype of the simulated machine")
    return t


def dtype_bits(x) -> int:
    """Bit width of ``x`` (CATLASS ``SizeOfBits``)."""
    return get_dtype(x).bits


def c0_of(x) -> int:
    """Elements per 32-byte block of ``x`` (CATLASS ``ELE_NUM_PER_C0``)."""
    return get_dtype(x).c0
