"""What the plain-matmul operators share: operand layouts, dtype rules, GM wrapping and the launch."""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.errors import ArgumentError
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops._common import gm_output, initialize_and_run
from catlass_py.ops._validate import as_array, check_core_num
from catlass_py.numerics.dtypes import get_dtype

_LAYOUTS = {"row": RowMajor, "row_major": RowMajor, "rowmajor": RowMajor, "column": ColumnMajor,
            "col": ColumnMajor, "column_major": ColumnMajor, "columnmajor": ColumnMajor}

#: input element -> default output element (CATLASS examples keep C in the input type; int8 accumulates int32)
DEFAULT_OUT = {"float16": "float16", "bfloat16": "bfloat16", "int8": "int32"}
#: input element -> output elements the fixpipe can produce without quantisation
ALLOWED_OUT = {"float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"), "int8": ("int32",)}


def parse_layout(name: str, value) -> type:
    """``'row'``/``'column'`` (or RowMajor / ColumnMajor) -> the layout class an operand is stored in."""
    if value in (RowMajor, ColumnMajor):
        return value
    if isinstance(value, str) and value.lower() in _LAYOUTS:
        return _LAYOUTS[value.lower()]
    raise ArgumentError(f"{name}: expected 'row' or 'column' (RowMajor or ColumnMajor), got {value!r}")


def element_of(name: str, x: np.ndarray, allowed=("float16", "bfloat16", "int8")) -> str:
    """The registry name of ``x``'s dtype, checked against ``allowed``."""
    try:
        got = get_dtype(x.dtype).name
    except ArgumentError:
        got = str(x.dtype)
    if got not in allowed:
        raise ArgumentError(f"{name}: expected dtype {' or '.join(allowed)}, got {got}")
    return got


def out_element(element: str, out_dtype) -> str:
    """The output element for ``element`` inputs: ``out_dtype`` if given and allowed, else the default."""
    if out_dtype is None:
        return DEFAULT_OUT[element]
    try:
        out = get_dtype(out_dtype).name
    except ArgumentError:
        raise ArgumentError(f"out_dtype: expected one of {ALLOWED_OUT[element]}, got {out_dtype!r}") from None
    if out not in ALLOWED_OUT[element]:
        raise ArgumentError(f"out_dtype: {element} inputs give {' or '.join(ALLOWED_OUT[element])}, got {out}")
    return out


def check_extent(name: str, value: int, *, low: int = 0, limit: int = (1 << 32) - 1) -> None:
    """A problem extent must fit CATLASS's uint32 ``GemmCoord`` (and be >= ``low``)."""
    if not low <= value <= limit:
        raise ArgumentError(f"{name}: expected a size in [{low}, {limit}], got {value}")


def as_stored(x: np.ndarray, layout: type) -> np.ndarray:
    """The array whose C-order bytes are ``x`` stored in ``layout`` over its last two axes (no copy when ``x``
    is already laid out that way). ``x`` itself is never modified."""
    if layout is ColumnMajor:
        return np.ascontiguousarray(np.swapaxes(x, -1, -2))
    return np.ascontiguousarray(x)


def gm_input(name: str, x: np.ndarray, layout: type = RowMajor) -> GlobalTensor:
    """A read-only GM tensor holding ``x`` in ``layout``."""
    stored = as_stored(x, layout)
    return GlobalBuffer.from_array(stored, name, read_only=True).tensor(stored.dtype)


def validate_matmul_inputs(a, b, layout_a, layout_b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check the inputs of the plain matmul operators (``basic_matmul``, ``matmul_relu``): ``a`` [m, k] and ``b``
    [k, n] float16, bfloat16 or int8, the layouts, extents, output dtype and core count; return (m, n, k, input
    element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 2)
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    m, k = a.shape
    kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return m, n, k, elem, out


def launch(kernel, args, core_num: int, *, seed=None, observers=(), return_report=False, options=None):
    """``DeviceGemm(kernel)``: can_implement (an :class:`ArgumentError` if it rejects the arguments) ->
    initialize (workspace allocated, poisoned) -> run. Returns the workload report when asked (else None)."""
    op = DeviceGemm(kernel)
    if not op.can_implement(args):
        raise ArgumentError(f"{type(kernel).__name__}: CanImplement rejected the arguments")
    report, _ = initialize_and_run(op, args, core_num, seed=seed, observers=observers, return_report=return_report,
                                   options=options)
    return report


__all__ = ["ALLOWED_OUT", "DEFAULT_OUT", "as_stored", "check_extent", "element_of", "gm_input", "gm_output",
           "launch", "out_element", "parse_layout", "validate_matmul_inputs"]
