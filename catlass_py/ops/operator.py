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
* ``kernel`` - an assembled kernel to run instead of the operator's default one (other tiles, swizzles, stages or
  policies): it must be of the operator's kernel class and assembled for the call's operands
  (:func:`check_kernel`; an :class:`~catlass_py.errors.ArgumentError` names what differs);

and, where the output type is a choice, ``out_dtype`` (a name, numpy dtype or type), parsed by
:func:`parse_out_dtype`.

Before an operator allocates anything it computes what it will allocate - copies of inputs stored in another
layout, its outputs, the kernel's workspace, the cores' on-chip buffers - and checks it against the memory
budget (:mod:`catlass_py.arch.budget`; ``options.memory_limit``): :meth:`OpOptions.device_arguments` does
both for a :class:`~catlass_py.kernel.DeviceGemm` operator, :meth:`OpOptions.reserve` checks a footprint an
operator computed itself. Too much is a :class:`~catlass_py.errors.CapacityError` naming the figure and the
budget. A timing-only launch (``options=LaunchParams(numerics=False)``) allocates no output, workspace or
on-chip buffer (shape-only outputs, :meth:`OpOptions.zeros`; buffers made on first use, which its cores never
make) and copies no shape-only input, so none of those count.

Every array operand may be any array object: a numpy array, or anything with ``__dlpack__`` (the DLPack
protocol: torch, jax, cupy arrays in host memory, ...) or ``__array__`` - bf16 and fp8 included, which numpy's
own ``from_dlpack`` refuses (:func:`to_numpy`). The :func:`array_op` decorator converts an operator's operands
and gives the result back as a torch tensor when the first operand is one (:func:`like_input`); torch is never
imported unless the caller's tensors are torch's.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, Union

import numpy as np
from numpy.typing import NDArray

from catlass_py.analysis.workload import WorkloadRecorder, WorkloadReport
from catlass_py.arch.budget import Footprint, array_bytes, check_footprint, core_buffer_bytes, workspace_size
from catlass_py.arch.launch import LaunchResult, launch
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.spec import ArchSpec, get_arch
from catlass_py.errors import ArgumentError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.kernel.device_gemm import DeviceGemm, operand_storage
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.numerics.dtypes import DType, get_dtype
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


# -- array interop: DLPack / __array__ in, the caller's kind of array out -------------------------------------

if TYPE_CHECKING:
    import torch


class SupportsArray(Protocol):
    """Anything numpy can read with ``np.asarray`` through ``__array__``."""

    def __array__(self) -> NDArray[Any]: ...


class SupportsDLPack(Protocol):
    """Anything that exports its memory through the DLPack protocol (torch, jax, cupy, ...)."""

    def __dlpack__(self) -> Any: ...


#: an operand: a numpy array or any array object (the static type of an operator's arguments)
ArrayLike = Union[NDArray[Any], SupportsArray, SupportsDLPack]
#: the kind of array an operator returns: that of its first operand (numpy for anything but a torch tensor)
ArrayT = TypeVar("ArrayT", "torch.Tensor", NDArray[Any])
_R = TypeVar("_R")
#: what an operator returns when ``return_report`` / ``return_launch`` are plain bools rather than literals: its
#: result alone or followed by the report and/or the launch. Spelled out (not ``tuple[Any, ...]``) so that mypy
#: resolves the literal overloads before it even when torch is not installed (``torch.Tensor`` is then Any)
OperatorResult = Union[_R, tuple[_R, WorkloadReport], tuple[_R, LaunchResult | None],
                       tuple[_R, WorkloadReport, LaunchResult | None]]
#: an element type: a registry name or alias ('bf16'), a numpy dtype or scalar type, an ml_dtypes type
DTypeLike = Union[str, np.dtype, type, None]
#: a storage order: 'row' / 'column' (or 'row_major', ...), or the layout class RowMajor / ColumnMajor
LayoutLike = Union[str, type]

#: torch dtype name -> (a same-size integer torch dtype, the registry dtype numpy holds it as); numpy has none
#: of these types, so they cross as their bits
_TORCH_BITS = {"bfloat16": ("int16", "bfloat16"), "float8_e4m3fn": ("uint8", "float8_e4m3fn"),
               "float8_e5m2": ("uint8", "float8_e5m2"), "float8_e8m0fnu": ("uint8", "float8_e8m0fnu")}
#: DLPack ``DLDataTypeCode`` (dlpack.h) of the types numpy's from_dlpack refuses -> (bits, registry dtype)
_DLPACK_BITS = {4: (16, "bfloat16"), 10: (8, "float8_e4m3fn"), 12: (8, "float8_e5m2"), 14: (8, "float8_e8m0fnu")}
_DL_UINT = 1
#: DLPack device types whose memory the host reads directly (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged)
_DL_HOST_DEVICES = {1, 3, 11, 13}


def _torch_module(x) -> Any:
    """The torch module if ``x`` is a torch tensor (torch is then imported already), else None."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(x, torch.Tensor) else None


def _from_torch(name: str, t, torch) -> np.ndarray:
    if t.layout != torch.strided:
        raise ArgumentError(f"{name}: expected a dense (strided) tensor, got layout {t.layout}")
    if t.device.type != "cpu":
        raise ArgumentError(f"{name}: expected a tensor in host memory (the simulator reads host arrays), got one "
                            f"on {t.device}; move it with .cpu()")
    t = t.detach().resolve_conj().resolve_neg()
    kind = str(t.dtype).removeprefix("torch.")
    if kind in _TORCH_BITS:
        bits, dtype = _TORCH_BITS[kind]
        return t.view(getattr(torch, bits)).numpy().view(get_dtype(dtype).numpy)
    return t.numpy()


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


# DLManagedTensorVersioned (DLPack >= 1.0) puts its DLTensor after the version (2 x uint32), manager_ctx,
# deleter and flags (uint64); the legacy DLManagedTensor starts with it.
_VERSIONED_TENSOR_OFFSET = 8 + 2 * ctypes.sizeof(ctypes.c_void_p) + 8


class _Capsule:
    """A DLPack producer around a capsule already taken from one (what numpy's ``from_dlpack`` needs)."""

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, **_kw):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _dl_tensor(capsule) -> tuple[_DLTensor, bool]:
    """The DLTensor inside a DLPack capsule, and whether the capsule is a versioned one."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    cname = get_name(capsule)
    address = get_pointer(capsule, cname)
    versioned = cname == b"dltensor_versioned"
    offset = _VERSIONED_TENSOR_OFFSET if versioned else 0
    return _DLTensor.from_address(address + offset), versioned


def _from_dlpack(name: str, x) -> np.ndarray:
    device = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if int(device[0]) not in _DL_HOST_DEVICES:
        raise ArgumentError(f"{name}: expected an array in host memory (the simulator reads host arrays), got one "
                            f"on DLPack device type {int(device[0])}; copy it to the host first")
    try:
        capsule = x.__dlpack__()
    except TypeError:
        capsule = x.__dlpack__(stream=None)
    tensor, _ = _dl_tensor(capsule)
    code, bits = int(tensor.dtype.code), int(tensor.dtype.bits)
    view = None
    if code in _DLPACK_BITS and _DLPACK_BITS[code][0] == bits and tensor.dtype.lanes == 1:
        view = get_dtype(_DLPACK_BITS[code][1]).numpy
        tensor.dtype.code = _DL_UINT  # the same bits as an unsigned integer, which numpy knows
    try:
        arr = np.from_dlpack(_Capsule(capsule, device))
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        raise ArgumentError(f"{name}: cannot read {type(x).__name__} through DLPack: {exc}") from None
    return arr if view is None else arr.view(view)


def to_numpy(name: str, x) -> np.ndarray:
    """``x`` as a numpy array, without a copy where possible and never modifying it: a numpy array as it is; a
    torch tensor (on the CPU; detached) through its bits for bf16/fp8; anything with ``__dlpack__`` through DLPack
    (bf16 and fp8 as ml_dtypes arrays); anything else with ``__array__`` through ``np.asarray``. An
    :class:`ArgumentError` names the operand for anything else (lists included) or memory the host cannot read."""
    if isinstance(x, np.ndarray):
        return x
    torch = _torch_module(x)
    if torch is not None:
        return _from_torch(name, x, torch)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(name, x)
    if hasattr(x, "__array__"):
        arr = np.asarray(x)
        if arr.dtype == object:
            raise ArgumentError(f"{name}: expected an array of numbers, got {type(x).__name__} of Python objects")
        return arr
    raise ArgumentError(f"{name}: expected an array (numpy, or any object with __dlpack__ or __array__ such as a "
                        f"torch tensor or a jax array), got {type(x).__name__}")


def to_torch(x: np.ndarray) -> Any:
    """A numpy result as a torch tensor sharing its memory (bf16 and fp8 through their bits); torch must be
    importable."""
    import torch

    kind = x.dtype.name
    if kind in _TORCH_BITS:
        bits, _ = _TORCH_BITS[kind]
        return torch.from_numpy(np.ascontiguousarray(x).view(getattr(np, bits))).view(getattr(torch, kind))
    return torch.from_numpy(x if x.flags.writeable else x.copy())


def like_input(first, out):
    """The operator's result ``out`` (an array, a list of arrays, or a tuple whose first item is one) in the kind
    of the caller's first operand ``first``: torch tensors for a torch tensor (or a list of them), numpy
    otherwise."""
    probe = first[0] if isinstance(first, (list, tuple)) and first else first
    if _torch_module(probe) is None:
        return out

    def conv(v):
        return [to_torch(a) for a in v] if isinstance(v, list) else to_torch(v)

    if isinstance(out, tuple):
        return (conv(out[0]), *out[1:])
    return conv(out)


F = TypeVar("F", bound=Callable[..., Any])


def array_op(fn: F | None = None, *, lists: tuple[str, ...] = (), keywords: tuple[str, ...] = ()) -> Any:
    """Decorator of an operator: its positional parameters (the array operands) go through :func:`to_numpy`
    before the call - element by element for the parameters named in ``lists`` (``a_list``, ...) - and so do
    the keyword-only operands named in ``keywords`` when they hold an array object (None, a string such as
    ``mask='causal'`` or a Python list is passed on as it is); the result comes back in the kind of the first
    operand (:func:`like_input`). ``@array_op``, ``@array_op(lists=("a_list", "b_list"))`` or
    ``@array_op(keywords=("block_table",))``."""
    if fn is None:
        return functools.partial(array_op, lists=lists, keywords=keywords)
    sig = inspect.signature(fn)
    operands = [p.name for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:  # a Python call error, named as Python names it for a plain function
            raise TypeError(f"{fn.__name__}() {exc}") from None
        first = bound.arguments.get(operands[0]) if operands else None
        for name in operands:
            if name not in bound.arguments:
                continue
            value = bound.arguments[name]
            if name in lists:
                if isinstance(value, (list, tuple)):
                    bound.arguments[name] = [to_numpy(f"{name}[{i}]", v) for i, v in enumerate(value)]
            else:
                bound.arguments[name] = to_numpy(name, value)
        for name in keywords:
            value = bound.arguments.get(name)
            if value is not None and not isinstance(value, (str, list, tuple, np.ndarray)) \
                    and (hasattr(value, "__dlpack__") or hasattr(value, "__array__")):
                bound.arguments[name] = to_numpy(name, value)
        return like_input(first, fn(*bound.args, **bound.kwargs))

    return wrapper


# -- the keyword set ----------------------------------------------------------------------------------


def check_core_num(core_num, arch: ArchSpec) -> int:
    """``core_num`` as an int: an int or numpy integer in 1..``arch.core_num``."""
    if not is_int(core_num) or not 1 <= core_num <= arch.core_num:
        raise ArgumentError(f"core_num: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {core_num!r}")
    return int(core_num)


def check_flag(name: str, value) -> bool:
    """A flag keyword: True or False (a numpy bool too), nothing else; as a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class OpOptions:
    """An operator's parsed keywords (:func:`op_options`), its memory budget (:meth:`device_arguments`,
    :meth:`reserve`) and its launch: :meth:`run` (through :class:`~catlass_py.kernel.DeviceGemm`),
    :meth:`run_kernel` (a kernel launched with its params directly), :meth:`empty` (nothing to launch)."""

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

    def reserve(self, footprint: Footprint, what: str, kernel=None) -> Footprint:
        """Check ``footprint`` plus the on-chip buffers of the launch (of ``kernel``'s core types; every type
        without a kernel) against the memory budget (``options.memory_limit``, else the environment's or the
        default, :func:`~catlass_py.arch.budget.memory_limit`); a :class:`CapacityError` names ``what``, the
        figure and the budget. Returns the footprint checked."""
        aic = kernel is None or getattr(kernel, "aic", None) is not None
        aiv = kernel is None or getattr(kernel, "aiv", None) is not None
        if self.numerics:  # a timing-only core allocates no on-chip buffer
            footprint = footprint.add("cores", "core buffers", core_buffer_bytes(self.arch, self.core_num, aic=aic,
                                                                                 aiv=aiv))
        check_footprint(footprint, what, self.options.memory_limit if self.options is not None else None)
        return footprint

    def device_arguments(self, what: str, kernel, arguments, *, inputs: dict, outputs: dict):
        """The kernel's Arguments over GM buffers, allocated only once they fit the memory budget.

        ``inputs`` maps a name to an array (stored in C order), ``(array, layout)`` or ``(array, layout, dtype)``
        (a read-only GM tensor of the array stored in ``layout`` - RowMajor, ColumnMajor, or zN / nZ for a 2-D
        array -, :func:`gm_input`, which ``DeviceGemm.initialize`` checks), ``outputs`` a name to ``(shape, numpy
        dtype)`` or ``(shape, numpy dtype, initial)`` (a host array, zeroed or a copy of ``initial``, written in place,
        :func:`gm_output`); ``arguments(gm)`` builds the Arguments from the
        dict of GM tensors by name. First the copies the inputs need (:func:`stored_copy_bytes`), the outputs
        and the core buffers are checked (:meth:`reserve`), then the workspace
        (``arguments`` over :func:`~catlass_py.arch.budget.placeholder` tensors asks the kernel for its size)
        with them; then everything is allocated. Returns (Arguments, dict of output host arrays by name).

        On a timing-only launch the outputs are shape-only arrays (:meth:`zeros`) and neither they nor the
        workspace (allocated on first use, never by a timing-only core) count."""
        inputs = {name: (spec, None, None) if isinstance(spec, np.ndarray) else (tuple(spec) + (None,))[:3]
                  for name, spec in inputs.items()}
        outputs = {name: (tuple(spec) + (None,))[:3] for name, spec in outputs.items()}
        footprint = Footprint()
        for name, (x, layout, _) in inputs.items():
            footprint = footprint.add("gm", f"copy of {name}", stored_copy_bytes(x, layout))
        if self.numerics:
            for name, (shape, dtype, _) in outputs.items():
                footprint = footprint.array("gm", name, shape, dtype)
        self.reserve(footprint, what, kernel)
        if self.numerics:
            sizes = {name: (x.nbytes, x.dtype if dt is None else dt) for name, (x, _, dt) in inputs.items()}
            sizes.update({name: (array_bytes(shape, dtype), dtype) for name, (shape, dtype, _) in outputs.items()})
            footprint = footprint.add("workspace", "workspace", workspace_size(kernel, arguments, sizes))
            self.reserve(footprint, what, kernel)
        gm = {name: gm_input(name, x, layout, dt) for name, (x, layout, dt) in inputs.items()}
        hosts = {}
        for name, (shape, dtype, initial) in outputs.items():
            if not self.numerics or (initial is not None and is_virtual(initial)):
                hosts[name] = virtual_array(shape, dtype)
            else:
                hosts[name] = np.zeros(shape, dtype)
                if initial is not None:
                    np.copyto(hosts[name], initial)
            gm[name] = gm_output(name, hosts[name])
        return arguments(gm), hosts

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
    if seed is not None and not is_int(seed):
        raise ArgumentError(f"seed: expected None or an int, got {seed!r}")
    if options is not None and not isinstance(options, LaunchParams):
        raise ArgumentError(f"options: expected a LaunchParams or None, got {options!r}")
    try:
        observers = tuple(observers)
    except TypeError:
        raise ArgumentError(f"observers: expected a sequence of observers, got {observers!r}") from None
    return OpOptions(core_num, arch, None if seed is None else int(seed), observers, options,
                     check_flag("return_report", return_report), check_flag("return_launch", return_launch))


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
    """``x`` as a numpy array (:func:`to_numpy`: any array object), checked for one of ``dtypes`` (registry
    names) and rank ``ndim``. Never copies or modifies the caller's array."""
    x = to_numpy(name, x)
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


def kernel_interface(kernel) -> dict[str, str]:
    """What an assembled kernel expects of the data an operator hands it: the element type and GM layout of A, B,
    C and the bias as its BlockMmad (or the padding prologue before it) reads and writes them, its epilogue's
    operand types, and the kernel-level choices that shape the data (group-list type and form, element, paged
    cache, MX dtypes and permutation, saturation). Tile shapes, swizzles, stages and policies are not in it: they
    change how a kernel works, not what it computes."""
    sig: dict[str, str] = {}
    for name in ("element", "element_group_list", "group_list_segmented", "paged_cache", "in_dtype", "out_dtype",
                 "perm_x2", "saturation"):
        if name in getattr(kernel, "__dict__", {}):
            sig[name] = str(getattr(kernel, name))
    for op, (element, layout) in operand_storage(kernel).items():
        sig[op.upper() if op != "bias" else op] = f"{element} {layout}"
    epilogue = getattr(kernel, "block_epilogue", None)
    for name, v in getattr(epilogue, "__dict__", {}).items():
        if isinstance(v, GemmType):
            sig[f"epilogue {name}"] = f"{v.element} {v.layout.__name__}"
        elif name.startswith("element_") and isinstance(v, DType):
            sig[f"epilogue {name}"] = str(v)
    return sig


def check_kernel(kernel, expected, *, adopts: tuple[str, ...] = ()) -> None:
    """A kernel passed in by the caller (``kernel=``) must be of the operator's kernel class (``expected`` is the
    kernel the operator assembles for the call's operands) and expect the same data (:func:`kernel_interface`):
    otherwise an :class:`ArgumentError` naming what differs, before anything runs. ``adopts`` names what the
    operator takes from the caller's kernel instead of from the call: ``"A"`` / ``"B"`` the layout that operand is
    stored in (its element type must still agree), any other key of the interface (an epilogue's ``d_type``, say)
    entirely."""
    if not isinstance(kernel, type(expected)):
        raise ArgumentError(f"kernel: expected a {type(expected).__name__} (the operator's kernel class, assembled "
                            f"for these operands), got {type(kernel).__name__} {_short_repr(kernel)}")
    got, want = kernel_interface(kernel), kernel_interface(expected)
    for key in adopts:
        for sig in (got, want):
            if key in ("A", "B") and key in sig:
                sig[key] = sig[key].split()[0]  # the element type only
            elif key not in ("A", "B"):
                sig.pop(key, None)
    diff = [f"{key} {got.get(key, '-')} where the call's operands need {want.get(key, '-')}"
            for key in dict.fromkeys([*want, *got]) if got.get(key) != want.get(key)]
    if diff:
        raise ArgumentError("kernel: assembled for " + "; ".join(diff))


def chosen_kernel(kernel, expected, *, adopts: tuple[str, ...] = ()):
    """The kernel an operator launches: ``expected`` (the one it assembles for the call's operands) when the caller
    passed none, else the caller's ``kernel`` once :func:`check_kernel` accepts it (``adopts`` as there)."""
    if kernel is None:
        return expected
    check_kernel(kernel, expected, adopts=adopts)
    return kernel


def _short_repr(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


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
    (row-major) or its transpose (column-major), no copy when ``x`` is already laid out that way; for the
    fractal layouts zN / nZ (a 2-D ``x``) a new flat buffer of ``layout.make_layout(dtype, rows, cols)``, its
    padding zero. ``x`` itself is never modified. A shape-only ``x`` gives a shape-only array."""
    if layout in (zN, nZ):
        fractal = layout.make_layout(get_dtype(x.dtype).name, *x.shape)
        if is_virtual(x):
            return virtual_array(fractal.capacity, x.dtype)
        stored = np.zeros(fractal.capacity, x.dtype)
        fractal.write(stored, x)
        return stored
    if is_virtual(x):
        return np.swapaxes(x, -1, -2) if layout is ColumnMajor else x
    if layout is ColumnMajor:
        return np.ascontiguousarray(np.swapaxes(x, -1, -2))
    return np.ascontiguousarray(x)


def stored_copy_bytes(x: np.ndarray, layout: type = RowMajor) -> int:
    """Bytes :func:`as_stored` allocates for ``x`` in ``layout``: 0 when ``x`` is already laid out that way, else
    a whole copy (a broadcast or strided view becomes a full array), always a buffer of the fractal layout's
    capacity for zN / nZ; 0 for a shape-only ``x`` (its stored form is shape-only too)."""
    if is_virtual(x):
        return 0
    if layout in (zN, nZ):
        return get_dtype(x.dtype).nbytes(layout.make_layout(get_dtype(x.dtype).name, *x.shape).capacity)
    stored = np.swapaxes(x, -1, -2) if layout is ColumnMajor else x
    return 0 if stored.flags.c_contiguous else int(x.size) * x.dtype.itemsize


def gm_input(name: str, x: np.ndarray, layout: type | None = None, dtype=None) -> GlobalTensor:
    """A read-only GM tensor holding the host array ``x`` stored in ``layout`` (RowMajor, ColumnMajor, zN or nZ;
    :func:`as_stored`), typed ``dtype`` (default: the array's). The buffer remembers ``layout`` and the matrix's
    shape (its last two axes), and ``DeviceGemm.initialize`` refuses it as a kernel's A or B read in another
    layout or of another shape. Without ``layout`` the array is stored in C order (row-major over its shape; an
    array already in a layout's storage order, e.g. from :func:`as_stored`, keeps its bytes) and nothing is
    remembered, unless that rearranged it: a non-C-contiguous ``x`` (a transposed or Fortran-ordered view) is then
    remembered as stored RowMajor."""
    if layout is not None and layout not in (RowMajor, ColumnMajor, zN, nZ):
        raise ArgumentError(f"gm_input: layout must be RowMajor, ColumnMajor, zN or nZ (the layouts as_stored stores "
                            f"a matrix in), got {layout!r}")
    stored = as_stored(x, RowMajor if layout is None else layout)
    buffer = GlobalBuffer.from_array(stored, name, read_only=True)
    if layout is None and not is_virtual(x) and x.ndim >= 2 and not x.flags.c_contiguous:
        layout = RowMajor  # rearranged into row-major: the bytes are now that, whatever the caller meant
    if layout is not None and x.ndim >= 2:
        buffer.stored_layout = layout.__name__
        buffer.stored_shape = tuple(int(v) for v in x.shape[-2:])
    return buffer.tensor(stored.dtype if dtype is None else dtype)


def gm_output(name: str, x: np.ndarray, dtype=None) -> GlobalTensor:
    """A writable GM tensor over the host array ``x`` (written in place), typed ``dtype`` (default: the array's)."""
    return GlobalBuffer.from_array(x, name).tensor(x.dtype if dtype is None else dtype)


__all__ = [
    "ALLOWED_OUT",
    "ArrayLike",
    "ArrayT",
    "OperatorResult",
    "DTypeLike",
    "LayoutLike",
    "SupportsArray",
    "SupportsDLPack",
    "array_op",
    "like_input",
    "to_numpy",
    "to_torch",
    "DEFAULT_OUT",
    "FLOAT_OUT_TYPES",
    "FLOAT_TYPES",
    "OpOptions",
    "as_array",
    "as_stored",
    "check_core_num",
    "check_extent",
    "check_flag",
    "check_group_list",
    "check_kernel",
    "check_matmul_operands",
    "check_positive",
    "check_shape",
    "chosen_kernel",
    "element_of",
    "gm_input",
    "gm_output",
    "stored_copy_bytes",
    "op_options",
    "out_element",
    "parse_layout",
    "parse_out_dtype",
    "validate_matmul_inputs",
]
