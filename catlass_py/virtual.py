"""Shape-only host arrays: what a timing-only run (``LaunchParams(numerics=False)``) passes where the inputs and
outputs of a kernel would be.

A :class:`VirtualArray` is a numpy array with a shape and a dtype but no bytes of its own: every element aliases
one zero, so a 4096 x 40000 fp16 operand costs nothing. Views keep it virtual (``reshape``, ``swapaxes``,
``transpose``, ``.T``, slicing; ``astype`` and ``copy`` give another virtual array); anything that would read its
values (arithmetic, reductions, a scalar element, most numpy functions) raises :class:`~catlass_py.errors.NoDataError`, so a run never computes on made-up numbers by accident.
:meth:`catlass_py.arch.memory.GlobalBuffer.from_array` turns it into a virtual GM buffer: bounds-checked, no bytes.
"""

from __future__ import annotations

import math

import numpy as np

from catlass_py.errors import ArgumentError, NoDataError

#: numpy functions that only look at shapes or make views (a virtual array stays virtual through them)
_VIEW_FUNCTIONS = frozenset({
    np.shape, np.ndim, np.size, np.reshape, np.swapaxes, np.transpose, np.moveaxis, np.squeeze,
    np.expand_dims, np.broadcast_to, np.result_type, np.may_share_memory, np.shares_memory,
})


class VirtualArray(np.ndarray):
    """A numpy array of a shape and dtype with no values (every element aliases one zero; see the module doc).
    Make one with :func:`virtual_array`."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NoDataError(f"a shape-only array {self.shape} {self.dtype} has no values for {ufunc.__name__}.{method} "
                          "(timing-only run)")

    def __array_function__(self, func, types, args, kwargs):
        if func in _VIEW_FUNCTIONS:
            return super().__array_function__(func, types, args, kwargs)
        raise NoDataError(f"a shape-only array {self.shape} {self.dtype} has no values for numpy.{func.__name__} "
                          "(timing-only run)")

    def __getitem__(self, index):
        out = super().__getitem__(index)
        if not isinstance(out, np.ndarray):
            raise NoDataError(f"a shape-only array {self.shape} {self.dtype} has no element values (timing-only run)")
        return out

    def _no_data(self, what: str):
        raise NoDataError(f"a shape-only array {self.shape} {self.dtype} has no values to {what} (timing-only run)")

    def astype(self, dtype, *args, **kwargs):
        """A virtual array of ``dtype`` (no values to convert)."""
        return virtual_array(self.shape, dtype)

    def copy(self, *args, **kwargs):
        """Another virtual array of the same shape and dtype."""
        return virtual_array(self.shape, self.dtype)

    def tobytes(self, *args, **kwargs):
        self._no_data("serialise")

    def __reduce__(self):
        return (virtual_array, (self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"VirtualArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__


def virtual_array(shape, dtype) -> VirtualArray:
    """A shape-only array of ``shape`` and ``dtype`` (a numpy dtype or type, ml_dtypes types included)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise NoDataError(f"virtual_array: negative extent in shape {shape}")
    base = np.zeros(1, dtype=np.dtype(dtype))
    if math.prod(shape) * base.itemsize >= 2**63:
        raise ArgumentError(f"virtual_array: shape {shape} of {base.dtype} holds {math.prod(shape)} elements, more "
                            "bytes than a numpy array can address (2**63)")
    arr = np.ndarray(shape, dtype=base.dtype, buffer=base, strides=(0,) * len(shape)).view(VirtualArray)
    arr.flags.writeable = False
    return arr


def is_virtual(x) -> bool:
    """Whether ``x`` is a shape-only array."""
    return isinstance(x, VirtualArray)


__all__ = ["VirtualArray", "is_virtual", "virtual_array"]
