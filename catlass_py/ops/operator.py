"""What every numpy-in / numpy-out operator shares: the keyword set and its parsing, the argument checks (clear
:class:`~catlass_py.errors.ArgumentError` s before anything runs), GM buffers over host arrays, and the launch
with its return value.

Every operator takes the same keywords, parsed by :func:`op_options`:

* ``core_num`` - AI cores to launch on (an int or a numpy integer, 1..``arch.core_num``);
* ``arch`` - the :class:`~catlass_py.arch.ArchSpec` (or its name) the kernel is assembled for and runs on;
* ``seed``, ``observers``, ``options`` - the launch's interleaving seed, extra observers and
  :class:`~catlass_py.arch.LaunchParams` (``detect_races``, ``preempt_on_set``, ...);
* ``return_report`` / ``return_launch`` - also return the :class:`~catlass_py.analysis.WorkloadReport` and/or
  the :class:`~catlass_py.arch.LaunchResult`, in that order after the output;
* ``kernel`` - an assembled kernel to run instead of the operator's default one;

and, where the output type is a choice, ``out_dtype`` (a name, numpy dtype or type), parsed by
:func:`parse_out_dtype`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catlass_py.analysis.workload import WorkloadRecorder, WorkloadReport
from catlass_py.arch.launch import LaunchResult, launch
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.spec import ArchSpec, get_arch
from catlass_py.errors import ArgumentError
from catlass_py.kernel.device_gemm import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.virtual import is_virtual, virtual_array

#: operand dtypes of the float-only operators, and the outputs their fixpipe or vector cast can give
FLOAT_TYPES = ("float16", "bfloat16")
FLOAT_OUT_TYPES = ("float16", "bfloat16", "float32")
#: input element -> default output element (CATLASS examples keep C in the input type; int8 accumulates int32)
DEFAULT_OUT = {"float16": "float16", "bfloat16": "bfloat16", "int8": "int32"}
#: input element -> output elements the fixpipe can produce without quantisation
ALLOWED_OUT = {"float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"), "int8": ("int32",)}

_LAYOUTS = {
    "row": RowMajor, "row_major": RowMajor, "rowmajor": RowMajor, "nd": RowMajor,
    "column": ColumnMajor, "col": ColumnMajor, "column_major": ColumnMajor, "columnmajor": ColumnMajor,
}


# -- the keyword set ----------------------------------------------------------------------------------


def check_core_num(core_num, arch: ArchSpec) -> int:
    """``core_num`` as an int: an int or numpy integer in 1..``arch.core_num``."""
    if isinstance(core_num, (bool, np.bool_)) or not isinstance(core_num, (int, np.integer)) \
            or not 1 <= core_num <= arch.core_num:
        raise ArgumentError(f"core_num: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {core_num!r}")
    return int(core_num)


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class OpOptions:
    """An operator's parsed keywords (:func:`op_options`) and its launch: :meth:`run` (through
    :class:`~catlass_py.kernel.DeviceGemm`), :meth:`run_kernel` (a kernel launched with its params directly),
    :meth:`empty` (nothing to launch)."""

    core_num: int
    arch: ArchSpec
    seed: int | None = None
    observers: tuple = ()
    options: LaunchParams | None = None
    return_report: bool = False
    return_launch: bool = False

    @property
    def numerics(self) -> bool:
        """False for a timing-only launch (``options=LaunchParams(numerics=False)``): the output is a shape-only
        array (:func:`catlass_py.virtual.virtual_array`) and inputs may be shape-only too."""
        return self.options is None or self.options.numerics

    def zeros(self, shape, dtype) -> np.ndarray:
        """The host array of an output: zeros, or a shape-only array on a timing-only launch."""
        return np.zeros(shape, dtype) if self.numerics else virtual_array(shape, dtype)

    def copy(self, x: np.ndarray) -> np.ndarray:
        """A C-ordered copy of ``x`` for an output that starts as an input (shape-only on a timing-only launch or
        for a shape-only ``x``)."""
        if not self.numerics or is_virtual(x):
            return virtual_array(x.shape, x.dtype)
        return np.array(x, dtype=x.dtype, copy=True, order="C")

    def _launch(self, start):
        recorder = WorkloadRecorder() if self.return_report else None
        observers = self.observers + ((recorder,) if recorder else ())
        result = start(observers)
        return (recorder.report if recorder else None), result

    def run(self, kernel, args, out, workspace=None):
        """``DeviceGemm(kernel)``: can_implement (an :class:`ArgumentError` if it rejects ``args``) ->
        initialize (a poisoned workspace unless one is given) -> run on ``core_num`` cores. Returns
        :meth:`result` for the host array ``out`` the kernel wrote."""
        op = DeviceGemm(kernel)
        if not op.can_implement(args):
            raise ArgumentError(f"{type(kernel).__name__}: CanImplement rejected the arguments")
        op.initialize(args, workspace)
        report, result = self._launch(
            lambda obs: op.run(self.core_num, seed=self.seed, observers=obs, options=self.options))
        return self.result(out, report, result)

    def run_kernel(self, kernel, params, out):
        """:func:`catlass_py.arch.launch` of ``kernel`` with its device-side ``params`` on ``arch``; returns
        :meth:`result`."""
        report, result = self._launch(
            lambda obs: launch(kernel, params, self.core_num, arch=self.arch, seed=self.seed, observers=obs,
                               options=self.options))
        return self.result(out, report, result)

    def empty(self, shape, dtype):
        """The result of an operator with an empty output: nothing is launched, as on the device where no block
        would exist (the report is empty, the LaunchResult None)."""
        return self.result(np.zeros(shape, dtype=dtype), WorkloadReport(), None)

    def result(self, out, report: WorkloadReport | None, launch_result: LaunchResult | None):
        """The operator's return value: ``out``, then the report and/or the LaunchResult when asked for."""
        extra = ((report,) if self.return_report else ()) + ((launch_result,) if self.return_launch else ())
        return (out, *extra) if extra else out


def op_options(*, core_num, arch, seed=None, observers=(), options=None, return_report=False,
               return_launch=False) -> OpOptions:
    """Parse an operator's launch keywords (module doc) into an :class:`OpOptions`."""
    arch = get_arch(arch)
    core_num = check_core_num(core_num, arch)
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))):
        raise ArgumentError(f"seed: expected None or an int, got {seed!r}")
    if options is not None and not isinstance(options, LaunchParams):
        raise ArgumentError(f"options: expected a LaunchParams or None, got {options!r}")
    try:
        observers = tuple(observers)
    except TypeError:
        raise ArgumentError(f"observers: expected a sequence of observers, got {observers!r}") from None
    return OpOptions(core_num, arch, None if seed is None else int(seed), observers, options,
                     _check_flag("return_report", return_report), _check_flag("return_launch", return_launch))


def parse_out_dtype(out_dtype, allowed, default: str) -> str:
    """The output dtype name: ``default`` for None, else ``out_dtype`` (a name or alias such as 'fp16', a numpy
    dtype or scalar type such as ``np.float32``, an ml_dtypes type) if it is one of ``allowed``."""
    if out_dtype is None:
        return default
    try:
        name = get_dtype(out_dtype).name
    except ArgumentError:
        name = None
    if name not in allowed:
        raise ArgumentError(f"out_dtype: expected one of {tuple(allowed)}, got {out_dtype!r}")
    return name


def out_element(element: str, out_dtype) -> str:
    """The output element of a plain matmul of ``element`` inputs (:data:`ALLOWED_OUT`; default
    :data:`DEFAULT_OUT`)."""
    return parse_out_dtype(out_dtype, ALLOWED_OUT[element], DEFAULT_OUT[element])


# -- argument checks ------------------------------------------------------------------------------------


def parse_layout(name: str, value) -> type:
    """``'row'``/``'column'`` (``'row_major'``/``'column_major'``, or RowMajor / ColumnMajor) -> the layout class
    an operand is stored in."""
    if value in (RowMajor, ColumnMajor):
        return value
    if isinstance(value, str) and value.lower() in _LAYOUTS:
        return _LAYOUTS[value.lower()]
    raise ArgumentError(f"{name}: expected 'row' or 'column' ('row_major' / 'column_major', RowMajor / ColumnMajor), "
                        f"got {value!r}")


def as_array(name: str, x, dtypes, ndim: int) -> np.ndarray:
    """``x`` as a numpy array, checked for one of ``dtypes`` (registry names) and rank ``ndim``. Never copies
    or modifies the caller's array."""
    if not isinstance(x, np.ndarray):
        raise ArgumentError(f"{name}: expected a numpy array, got {type(x).__name__}")
    element_of(name, x, (dtypes,) if isinstance(dtypes, str) else tuple(dtypes))
    if x.ndim != ndim:
        raise ArgumentError(f"{name}: expected a {ndim}-D array, got shape {x.shape}")
    return x


def element_of(name: str, x: np.ndarray, allowed=("float16", "bfloat16", "int8")) -> str:
    """The registry name of ``x``'s dtype, checked against ``allowed``."""
    try:
        got = get_dtype(x.dtype).name
    except ArgumentError:
        got = str(x.dtype)
    if got not in allowed:
        raise ArgumentError(f"{name}: expected dtype {' or '.join(allowed)}, got {got}")
    return got


def check_matmul_operands(a, b, dtypes) -> tuple[int, int, int, str]:
    """``a`` [m, k] (one of ``dtypes``) and ``b`` [k, n] of the same dtype; returns (m, n, k, element)."""
    a = as_array("a", a, dtypes, 2)
    element = element_of("a", a, dtypes)
    b = as_array("b", b, element, 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    return m, b.shape[1], k, element


def check_shape(name: str, x: np.ndarray, expected: tuple, what: str) -> None:
    """``x.shape == expected`` (``what`` says what the extents are)."""
    if tuple(x.shape) != tuple(expected):
        raise ArgumentError(f"{name}: expected shape {tuple(expected)} ({what}), got {tuple(x.shape)}")


def check_positive(name: str, value: int, what: str) -> None:
    """:class:`ArgumentError` unless ``value > 0``."""
    if value <= 0:
        raise ArgumentError(f"{name}: expected {what} > 0, got {value}")


def check_extent(name: str, value: int, *, low: int = 0, limit: int = (1 << 32) - 1) -> None:
    """A problem extent must fit CATLASS's uint32 ``GemmCoord`` (and be >= ``low``)."""
    if not low <= value <= limit:
        raise ArgumentError(f"{name}: expected a size in [{low}, {limit}], got {value}")


def check_group_list(group_list, group_count: int, total: int, *, axis: str = "m") -> np.ndarray:
    """A prefix-sum group list: int64, one entry per group, non-decreasing, in [0, total]."""
    gl = as_array("group_list", group_list, "int64", 1)
    if gl.shape[0] != group_count:
        raise ArgumentError(f"group_list: expected {group_count} entries (one per group of b), got {gl.shape[0]}")
    if group_count and gl.min() < 0:
        raise ArgumentError(f"group_list: prefix sums must be >= 0, got {int(gl.min())} at index {int(np.argmin(gl))}")
    if group_count > 1:
        dec = np.flatnonzero(np.diff(gl) < 0)
        if dec.size:
            i = int(dec[0])
            raise ArgumentError(
                f"group_list: prefix sums must not decrease, got {int(gl[i])} then {int(gl[i + 1])} at index {i + 1}"
            )
    if group_count and gl.max() > total:
        raise ArgumentError(f"group_list: prefix sums must be <= {axis} = {total}, got {int(gl.max())}")
    return gl


def check_kernel_group_list(kernel, group_list_dtype: str) -> None:
    """A kernel passed in by the caller must have been assembled for the group list's element type."""
    if kernel.element_group_list.name != group_list_dtype:
        raise ArgumentError(f"group_list: the kernel was assembled for {kernel.element_group_list} group lists, "
                            f"got {group_list_dtype}")


def validate_matmul_inputs(a, b, layout_a, layout_b, out_dtype, core_num, arch) -> tuple[int, int, int, str, str]:
    """Check the inputs of the plain matmul operators (``basic_matmul``, ``matmul_relu``): ``a`` [m, k] and ``b``
    [k, n] float16, bfloat16 or int8, the layouts, extents, output dtype and core count; return (m, n, k, input
    element, output element)."""
    m, n, k, elem = check_matmul_operands(a, b, ("float16", "bfloat16", "int8"))
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, get_arch(arch))
    return m, n, k, elem, out


# -- GM buffers ---------------------------------------------------------------------------------------


def as_stored(x: np.ndarray, layout: type = RowMajor) -> np.ndarray:
    """The array whose C-order bytes are ``x`` stored in ``layout`` over its last two axes: ``x`` itself
    (row-major) or its transpose (column-major). No copy when ``x`` is already laid out that way; ``x`` itself
    is never modified. A shape-only ``x`` gives a shape-only array."""
    if is_virtual(x):
        return np.swapaxes(x, -1, -2) if layout is ColumnMajor else x
    if layout is ColumnMajor:
        return np.ascontiguousarray(np.swapaxes(x, -1, -2))
    return np.ascontiguousarray(x)


def gm_input(name: str, x: np.ndarray, layout: type = RowMajor, dtype=None) -> GlobalTensor:
    """A read-only GM tensor holding the host array ``x`` stored in ``layout``, typed ``dtype`` (default: the
    array's)."""
    stored = as_stored(x, layout)
    return GlobalBuffer.from_array(stored, name, read_only=True).tensor(stored.dtype if dtype is None else dtype)


def gm_output(name: str, x: np.ndarray, dtype=None) -> GlobalTensor:
    """A writable GM tensor over the host array ``x`` (written in place), typed ``dtype`` (default: the array's)."""
    return GlobalBuffer.from_array(x, name).tensor(x.dtype if dtype is None else dtype)


__all__ = [
    "ALLOWED_OUT",
    "DEFAULT_OUT",
    "FLOAT_OUT_TYPES",
    "FLOAT_TYPES",
    "OpOptions",
    "as_array",
    "as_stored",
    "check_core_num",
    "check_extent",
    "check_group_list",
    "check_kernel_group_list",
    "check_matmul_operands",
    "check_positive",
    "check_shape",
    "element_of",
    "gm_input",
    "gm_output",
    "op_options",
    "out_element",
    "parse_layout",
    "parse_out_dtype",
    "validate_matmul_inputs",
]
