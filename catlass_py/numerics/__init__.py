"""Numerics of the simulated machine: dtype registry, hardware casts, MX/HiF8 formats, compare rules."""

from catlass_py.numerics.dtypes import ALL_DTYPES, DType, c0_of, dtype_bits, get_dtype

__all__ = ["ALL_DTYPES", "DType", "c0_of", "dtype_bits", "get_dtype"]
