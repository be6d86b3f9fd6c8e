"""Numerics of the simulated machine: dtype registry, hardware casts, MX/HiF8 formats, compare rules."""

from catlass_py.numerics._grid import FloatFormat, RoundMode
from catlass_py.numerics.compare import (
    CompareResult,
    ErrorMetrics,
    compare_data,
    compare_data_bfloat16,
    compare_exact,
    compare_peak_bytes,
    error_metrics,
    isclose_summary,
    rtol_for,
)
from catlass_py.numerics.dtypes import ALL_DTYPES, DType, c0_of, dtype_bits, get_dtype
from catlass_py.numerics.e1m2 import e1m2_decode, e1m2_encode, e1m2_values
from catlass_py.numerics.hif8 import hif8_decode, hif8_encode, hif8_values
from catlass_py.numerics.mx import dequantize_mx, e8m0_decode, mx_scale_exponent, quantize_mx
from catlass_py.numerics.packing import pack_fp4, unpack_fp4
from catlass_py.numerics.rounding import cast, float_format, round_to_integral

__all__ = [
    "ALL_DTYPES",
    "CompareResult",
    "DType",
    "ErrorMetrics",
    "FloatFormat",
    "RoundMode",
    "c0_of",
    "cast",
    "compare_data",
    "compare_data_bfloat16",
    "compare_exact",
    "compare_peak_bytes",
    "dequantize_mx",
    "dtype_bits",
    "e8m0_decode",
    "e1m2_decode",
    "e1m2_encode",
    "e1m2_values",
    "error_metrics",
    "float_format",
    "get_dtype",
    "isclose_summary",
    "hif8_decode",
    "hif8_encode",
    "hif8_values",
    "mx_scale_exponent",
    "pack_fp4",
    "quantize_mx",
    "round_to_integral",
    "rtol_for",
    "unpack_fp4",
]
