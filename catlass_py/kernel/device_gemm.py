"""CATLASS ``Gemm::Device::DeviceGemm<Kernel>`` (``gemm/device/device_gemm.hpp``): the host adapter."""

from __future__ import annotations

import dataclasses

import numpy as np

from catlass_py.arch.launch import LaunchResult, launch
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.errors import ArgumentError, ConfigError


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
