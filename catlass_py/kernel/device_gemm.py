"""CATLASS ``Gemm::Device::DeviceGemm<Kernel>`` (``gemm/device/device_gemm.hpp``): the host adapter."""

from __future__ import annotations

import dataclasses

import numpy as np

from catlass_py.arch.launch import LaunchResult, launch
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.gemm_type import GemmType


class DeviceGemm:
    """Host-side adapter of a kernel: ``can_implement`` -> ``get_workspace_size`` -> ``initialize`` -> ``run``.

    ``run(block_dim)`` is the ``<<<blockDim>>>`` launch of ``KernelAdapter<Kernel>`` on the simulated cores;
    it returns the :class:`LaunchResult` (with any observers passed in).
    """

    def __init__(self, kernel):
        self.kernel = kernel
        self.params = None

    def can_implement(self, args) -> bool:
        """CATLASS ``DeviceGemm::CanImplement``: whether the kernel supports ``args``."""
        return bool(self.kernel.can_implement(args))

    def get_workspace_size(self, args) -> int:
        """CATLASS ``DeviceGemm::GetWorkspaceSize``: GM workspace bytes the kernel needs (0 if none)."""
        get = getattr(self.kernel, "get_workspace_size", None)
        return int(get(args)) if get is not None else 0

    def initialize(self, args, workspace: GlobalTensor | GlobalBuffer | None = None) -> None:
        """``params = Kernel::ToUnderlyingArguments(args, workspace)``. With ``workspace=None`` a workspace of
        ``get_workspace_size(args)`` bytes is allocated (uninitialised, i.e. poisoned)."""
        _check_operands(args)
        _check_storage(self.kernel, args)
        size = self.get_workspace_size(args)
        if workspace is None and size > 0:
            workspace = GlobalBuffer.empty(size, "workspace", fill=0xFF).tensor("uint8")
        elif isinstance(workspace, GlobalBuffer):
            workspace = workspace.tensor("uint8")
        if workspace is not None and workspace.buffer.nbytes - workspace.byte_offset < size:
            raise ArgumentError(
                f"workspace: expected at least {size} bytes, got {workspace.buffer.nbytes - workspace.byte_offset}"
            )
        self.params = self.kernel.to_underlying_arguments(args, workspace)

    def run(self, block_dim: int, **launch_options) -> LaunchResult:
        """Launch on ``block_dim`` AI cores; ``launch_options`` go to :func:`catlass_py.arch.launch`
        (``seed``, ``observers``, ``options``). The arch is the kernel's."""
        if self.params is None:
            raise ConfigError("DeviceGemm.run: call initialize(args, workspace) first")
        launch_options.setdefault("arch", getattr(self.kernel, "arch", None) or launch_options.get("arch"))
        if launch_options["arch"] is None:
            launch_options.pop("arch")
        return launch(self.kernel, self.params, block_dim, **launch_options)

    __call__ = run


def operand_storage(kernel) -> dict[str, tuple[str, str]]:
    """How ``kernel`` reads A, B, C and the bias in GM: ``{"a": (element, layout name), ...}`` as its BlockMmad (or
    the padding prologue before it) reads and writes them; a padding layout reads its base layout's storage
    (``PaddingRowMajor`` reads a row-major matrix). Operands the kernel has no type for are left out."""
    out: dict[str, tuple[str, str]] = {}
    mm = getattr(kernel, "block_mmad", None) or getattr(kernel, "block_mmad_qk", None)
    if mm is None:
        return out
    for op in ("a", "b", "c", "bias"):
        prologue = getattr(kernel, f"prologue_{op}", None)
        t = getattr(mm, f"{op}_type", None)
        if prologue is not None and hasattr(prologue, "layout_in"):
            out[op] = (str(prologue.element), _storage_name(prologue.layout_in))
        elif isinstance(t, GemmType):
            out[op] = (str(t.element), _storage_name(t.layout))
        elif getattr(mm, f"layout_tag_{op}", None) is not None:
            out[op] = (str(getattr(mm, f"element_{op}", "?")), _storage_name(getattr(mm, f"layout_tag_{op}")))
    return out


def _storage_name(layout) -> str:
    """A layout (class or TLA tag name) as the GM storage it reads: a padding layout reads its base layout's."""
    name = layout if isinstance(layout, str) else getattr(layout, "__name__", str(layout))
    return name.removeprefix("Padding")


def _check_storage(kernel, args) -> None:
    """An input whose buffer records how its matrix was stored (``catlass_py.ops.operator.gm_input``) in another
    layout than the kernel reads that operand in, or with another shape than the problem's (A and B: the inputs a
    kernel reads through its BlockMmad; the shape when the Arguments hold a ``problem_shape``): an
    :class:`ArgumentError` naming the field, instead of a launch that reads the bytes in another order and computes
    other values."""
    storage = None
    shape = getattr(args, "problem_shape", None)
    for op in ("a", "b"):
        value = getattr(args, f"ptr_{op}", None)
        buffer = value.buffer if isinstance(value, GlobalTensor) else None
        stored = getattr(buffer, "stored_layout", None)
        if stored is None:
            continue
        if storage is None:
            storage = operand_storage(kernel)
        what = f"{type(args).__name__}.ptr_{op}"
        want = storage.get(op)
        if want is not None and want[1] != stored:
            raise ArgumentError(
                f"{what}: its {op.upper()} was stored {stored} (gm_input(..., layout={stored})), but the kernel reads "
                f"{op.upper()} as {want[1]} (as it was assembled); store the logical matrix with layout={want[1]}")
        dims = (("m", "k") if op == "a" else ("k", "n"))
        if all(hasattr(shape, d) for d in dims) and buffer.stored_shape is not None:
            expect = tuple(int(getattr(shape, d)) for d in dims)
            if buffer.stored_shape != expect:
                raise ArgumentError(
                    f"{what}: its {op.upper()} is a {buffer.stored_shape[0]} x {buffer.stored_shape[1]} matrix, but "
                    f"the problem's {op.upper()} is {dims[0]} x {dims[1]} = {expect[0]} x {expect[1]} (gm_input takes "
                    f"the logical matrix and stores it in the layout it is given)")


def _check_operands(args) -> None:
    """An Arguments field holding a host array where the kernel reads GM: an :class:`ArgumentError` naming the field
    (a kernel reads GlobalTensors: ``catlass_py.ops.operator.gm_input`` / ``gm_output`` or ``runner.to_device``
    wrap an array in one)."""
    items = ([(f.name, getattr(args, f.name)) for f in dataclasses.fields(args)] if dataclasses.is_dataclass(args)
             else list(getattr(args, "__dict__", {}).items()))
    for name, value in items:
        if isinstance(value, np.ndarray):
            raise ArgumentError(f"{type(args).__name__}.{name}: expected a GlobalTensor, got a numpy array (wrap it "
                                f"with catlass_py.ops.operator.gm_input / gm_output)")
