"""Global and local memories of the simulated machine.

* :class:`GlobalBuffer` / :class:`GlobalTensor`: device global memory (Ascend C ``GlobalTensor<T>``). A
  tensor is (buffer, byte offset, dtype); ``gm[i]`` shifts by ``i`` elements like the C++ operator and
  every access is bounds-checked against the buffer.
* :class:`LocalArena` / :class:`LocalTensor`: one on-chip buffer of one core (CATLASS
  ``Arch::LocalTensorBuffer``: L1, L0A, L0B, L0C, UB, BT, FB) and typed views carved from it by byte offset
  (``GetBufferByByte<T>``), checked for capacity and 32-byte alignment. Arenas start poisoned so that
  reading bytes nobody wrote shows up (0xFF is NaN in every float format and -1 in every int format).
* :class:`Resource`: the set of arenas of one core (CATLASS ``Arch::Resource<ArchTag>``).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from catlass_py.arch.events import MemAccess
from catlass_py.errors import AlignmentError, ArgumentError, CapacityError, ConfigError, NoDataError, OutOfBoundsError
from catlass_py.numerics.dtypes import DType, get_dtype
from catlass_py.virtual import is_virtual

if TYPE_CHECKING:  # pragma: no cover
    from catlass_py.arch.context import CoreContext

_buffer_ids = itertools.count(1)


def next_buffer_id() -> int:
    """A fresh memory identity (GM buffers, on-chip arenas and registers share one numbering)."""
    return next(_buffer_ids)


def _byte_count(dtype: DType, count: int) -> int:
    return dtype.nbytes(count)


def _element_access(label: str, buffer_id: int, space: str, byte_offset: int, bits: int, start: int, length: int,
                    stride: int, count: int) -> "MemAccess":
    """A byte-level MemAccess for element runs of a ``bits``-bit dtype (4-bit runs round out to whole bytes)."""
    first = byte_offset + start * bits // 8
    return MemAccess(label, buffer_id, first, (length * bits + 7) // 8 if length else 0,
                     stride * bits // 8 if count > 1 else 0, count if length else 0, space)


def _typed(raw: np.ndarray, dtype: DType, count: int) -> np.ndarray:
    """View ``count`` elements of ``dtype`` at the start of the byte array ``raw``."""
    if dtype.packed:
        # Two 4-bit elements per byte: callers get the packed bytes and (un)pack them themselves.
        return raw[: _byte_count(dtype, count)]
    return raw[: count * dtype.numpy.itemsize].view(dtype.numpy)


class GlobalBuffer:
    """One allocation of device global memory (an ``aclrtMalloc`` block) holding raw bytes.

    Built from a host array without copying (:meth:`from_array`), allocated (:meth:`empty`: the bytes are made on
    first use, so a buffer a timing-only run never reads or writes costs nothing) or shape-only
    (:meth:`virtual`: a size and bounds, no bytes; what a timing-only run gives its operands). A read-only buffer
    refuses writes with :class:`OutOfBoundsError`; asking a virtual buffer for bytes raises :class:`NoDataError`.
    """

    __slots__ = ("name", "_raw", "_nbytes", "_fill", "read_only", "id", "_host", "_views", "_scalars", "stored_layout",
                 "stored_shape", "__weakref__")

    def __init__(self, name: str, raw: np.ndarray | None, read_only: bool = False, host: np.ndarray | None = None,
                 *, nbytes: int | None = None, fill: int | None = None):
        if raw is not None and (raw.dtype != np.uint8 or raw.ndim != 1):
            raise ArgumentError(f"GlobalBuffer {name!r}: raw storage must be a 1-D uint8 array")
        self.name = name
        self._raw = raw
        self._nbytes = raw.size if raw is not None else int(nbytes)
        self._fill = fill
        self.read_only = read_only
        self.id = next_buffer_id()
        self._host = host
        self._views: dict = {}  # numpy dtype -> the whole buffer as that dtype (GlobalTensor.view)
        self._scalars: dict = {}  # (byte offset, bits, index) -> MemAccess of one element (GlobalTensor.scalar_access)
        self.stored_layout: str | None = None  # the layout a host matrix was stored in, when its maker says so
        self.stored_shape: tuple | None = None  # that matrix's (rows, cols) (the last two axes of a batch)

    @classmethod
    def from_array(cls, array: np.ndarray, name: str, *, read_only: bool = False) -> "GlobalBuffer":
        """Wrap a host array's bytes. A read-only buffer never writes the array; a writable one writes it
        in place (pass a copy if the caller's array must stay untouched). A shape-only array
        (:class:`~catlass_py.virtual.VirtualArray`) gives a :meth:`virtual` buffer of its size."""
        if is_virtual(array):
            return cls.virtual(array.size * array.dtype.itemsize, name, read_only=read_only)
        arr = np.ascontiguousarray(array)
        raw = arr.reshape(-1).view(np.uint8)
        if read_only:
            raw = raw.view()
            raw.flags.writeable = False
        return cls(name, raw, read_only, host=arr)

    @classmethod
    def empty(cls, nbytes: int, name: str, *, fill: int | None = 0xFF) -> "GlobalBuffer":
        """Allocate ``nbytes`` of device memory, filled with ``fill`` (None leaves numpy's empty memory). The bytes
        are allocated when first used (a timing-only run that never touches them allocates nothing)."""
        if nbytes < 0:
            raise ArgumentError(f"GlobalBuffer {name!r}: nbytes must be >= 0, got {nbytes}")
        return cls(name, None, nbytes=nbytes, fill=-1 if fill is None else fill)

    @classmethod
    def virtual(cls, nbytes: int, name: str, *, read_only: bool = False) -> "GlobalBuffer":
        """A shape-only buffer of ``nbytes``: bounds-checked like any other, but without bytes (reading or
        writing its values raises :class:`NoDataError`). Timing-only runs use it for their operands."""
        if nbytes < 0:
            raise ArgumentError(f"GlobalBuffer {name!r}: nbytes must be >= 0, got {nbytes}")
        return cls(name, None, read_only, nbytes=nbytes)

    @property
    def is_virtual(self) -> bool:
        """True for a shape-only buffer (:meth:`virtual`)."""
        return self._raw is None and self._fill is None

    @property
    def raw(self) -> np.ndarray:
        """The bytes (allocated on first use for :meth:`empty`)."""
        raw = self._raw
        if raw is None:
            if self._fill is None:
                raise NoDataError(f"GM buffer {self.name!r} is shape-only ({self._nbytes} B, a timing-only run's "
                                  "operand): it has no bytes to read or write")
            raw = np.empty(self._nbytes, np.uint8)
            if self._fill >= 0:
                raw.fill(self._fill)
            self._raw = raw
        return raw

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def tensor(self, dtype) -> "GlobalTensor":
        """A :class:`GlobalTensor` of ``dtype`` at the start of this buffer (``SetGlobalBuffer``)."""
        return GlobalTensor(self, 0, get_dtype(dtype))

    def __repr__(self) -> str:
        ro = ", read-only" if self.read_only else ""
        virtual = ", shape-only" if self.is_virtual else ""
        return f"GlobalBuffer({self.name!r}, {self.nbytes} B{ro}{virtual})"


class GlobalTensor:
    """Typed pointer into a :class:`GlobalBuffer` (Ascend C ``GlobalTensor<T>``).

    ``gm[i]`` returns the tensor shifted by ``i`` elements; :meth:`view` returns the numpy elements from
    the pointer to the end of the buffer (bounds-checked when a count is given).
    """

    __slots__ = ("buffer", "byte_offset", "dtype")

    def __init__(self, buffer: GlobalBuffer, byte_offset: int, dtype: DType):
        self.buffer = buffer
        self.byte_offset = byte_offset
        self.dtype = dtype

    @property
    def name(self) -> str:
        return self.buffer.name

    @property
    def size(self) -> int:
        """Elements from this pointer to the end of the buffer."""
        return (self.buffer._nbytes - self.byte_offset) * 8 // self.dtype.bits

    @property
    def element_offset(self) -> int:
        """Offset of this pointer from the buffer start, in elements."""
        return self.byte_offset * 8 // self.dtype.bits

    def __getitem__(self, offset: int) -> "GlobalTensor":
        if offset.__class__ is not int:
            offset = int(offset)
        bits = offset * self.dtype.bits
        if bits % 8:
            raise AlignmentError(f"GM tensor {self.name!r}: offset {offset} splits a byte of 4-bit {self.dtype}")
        byte_offset = self.byte_offset + bits // 8
        if byte_offset < 0 or byte_offset > self.buffer._nbytes:
            raise OutOfBoundsError(
                f"GM tensor {self.name!r}: offset {offset} moves the pointer to byte {byte_offset}, outside "
                f"[0, {self.buffer.nbytes}]"
            )
        return GlobalTensor(self.buffer, byte_offset, self.dtype)

    def reinterpret(self, dtype) -> "GlobalTensor":
        """Same bytes seen as another dtype (``ReinterpretCast``)."""
        return GlobalTensor(self.buffer, self.byte_offset, get_dtype(dtype))

    def check(self, extent: int, *, write: bool = False, what: str = "access") -> None:
        """Raise unless elements ``[0, extent)`` from this pointer lie inside the buffer (and it is writable)."""
        if write and self.buffer.read_only:
            raise OutOfBoundsError(f"GM tensor {self.name!r} is read-only; {what} would write it")
        if extent < 0 or self.byte_offset + _byte_count(self.dtype, extent) > self.buffer.nbytes:
            first = self.element_offset
            raise OutOfBoundsError(
                f"GM tensor {self.name!r}: {what} touches elements [{first}, {first + extent}) but the buffer "
                f"holds {self.buffer.nbytes * 8 // self.dtype.bits} {self.dtype} elements"
            )

    def view(self, count: int | None = None, *, write: bool = False) -> np.ndarray:
        """numpy view of ``count`` elements (default: to the end of the buffer) starting at this pointer."""
        if count is None:
            count = self.size
            if write and self.buffer.read_only:
                self.check(0, write=True)
        else:
            self.check(count, write=write)
        dtype = self.dtype
        if not dtype.packed:
            npd = dtype.numpy
            isz = npd.itemsize
            if self.byte_offset % isz == 0:  # a slice of the cached whole-buffer view (the same elements)
                buf = self.buffer
                whole = buf._views.get(npd)
                if whole is None:
                    raw = buf.raw
                    whole = buf._views[npd] = raw[: raw.size - raw.size % isz].view(npd)
                start = self.byte_offset // isz
                return whole[start:start + count]
        return _typed(self.buffer.raw[self.byte_offset:], dtype, count)

    def element(self, index: int):
        """Element ``index`` from this pointer (a numpy scalar): ``self.view(index + 1)[index]``, with the same
        checks, read straight from the cached whole-buffer view when there is one."""
        dtype = self.dtype
        if index.__class__ is int and index >= 0 and not dtype.packed:
            npd = dtype.numpy
            isz = npd.itemsize
            off = self.byte_offset
            if off % isz == 0 and off + (index + 1) * isz <= self.buffer.nbytes:
                whole = self.buffer._views.get(npd)
                if whole is not None:
                    return whole[off // isz + index]
        return self.view(index + 1)[index]

    def access(self, start: int, length: int, stride: int = 0, count: int = 1) -> "MemAccess":
        """Describe touched elements ``count`` runs of ``length`` elements every ``stride`` elements from
        ``start`` (relative to this pointer) as a byte-level :class:`~catlass_py.arch.events.MemAccess`."""
        return _element_access(self.buffer.name, self.buffer.id, "GM", self.byte_offset, self.dtype.bits,
                               start, length, stride, count)

    def scalar_access(self, index: int) -> "MemAccess":
        """``access(index, 1)``, kept by the buffer: every core of a grouped kernel reads the same group-list
        entries."""
        key = (self.byte_offset, self.dtype.bits, index)
        a = self.buffer._scalars.get(key)
        if a is None:
            a = self.buffer._scalars[key] = self.access(index, 1)
        return a

    def __repr__(self) -> str:
        return f"GlobalTensor({self.name!r}, {self.dtype}, element offset {self.element_offset})"


class LocalArena:
    """One on-chip buffer of one core (CATLASS ``LocalTensorBuffer``): ``size`` bytes, poisoned at launch.

    The bytes are allocated on first use so that cores which never touch a buffer cost nothing.
    """

    __slots__ = ("name", "size", "ctx", "alignment", "id", "label", "_poison", "_raw", "_typed", "_sparse_index")

    def __init__(self, name: str, size: int, ctx: "CoreContext | None" = None, *, alignment: int = 32, poison: int = 0xFF):
        self.name = name
        self.size = size
        self.id = next_buffer_id()
        #: how accesses name this buffer in messages: 'UB of AIV0.1'
        self.label = f"{name} of {ctx.short}" if ctx is not None else name
        self.ctx = ctx
        self.alignment = alignment
        self._poison = poison
        self._raw: np.ndarray | None = None
        self._typed: dict = {}
        self._sparse_index: np.ndarray | None = None

    @property
    def raw(self) -> np.ndarray:
        if self._raw is None:
            self._raw = np.full(self.size, self._poison, np.uint8)
        return self._raw

    @property
    def sparse_index(self) -> np.ndarray:
        """The 2-bit sparsity indices L0B keeps beside the dense weights ``LoadDataWithSparse`` wrote
        (:mod:`catlass_py.tile.copy_sparse_tla`): byte ``i`` holds the four indices of arena bytes ``4i .. 4i+3``
        (the first in the low bits, as in L1). Where the hardware stores them is not documented; here they are a
        shadow of the arena addressed by its bytes, poisoned like it (an index of 3 is invalid, so reading one
        nobody loaded is caught)."""
        if self._sparse_index is None:
            self._sparse_index = np.full(-(-self.size // 4), self._poison, np.uint8)
        return self._sparse_index

    def release(self) -> None:
        """Free the bytes and drop the owner (the launch that created this buffer has ended)."""
        self._raw = None
        self._typed = {}
        self._sparse_index = None
        self.ctx = None

    def typed_view(self, byte_offset: int, dtype: DType, count: int) -> np.ndarray:
        """``count`` elements of ``dtype`` at ``byte_offset`` as a numpy view of the arena."""
        if dtype.bits >= 8:
            npd = dtype.numpy
            isz = npd.itemsize
            if byte_offset % isz == 0:
                whole = self._typed.get(npd)
                if whole is None:
                    raw = self.raw
                    whole = self._typed[npd] = raw[: raw.size - raw.size % isz].view(npd)
                start = byte_offset // isz
                return whole[start:start + count]
        return _typed(self.raw[byte_offset:], dtype, count)

    def get_buffer_by_byte(self, dtype, byte_offset: int = 0, count: int | None = None) -> "LocalTensor":
        """Typed view at ``byte_offset`` (CATLASS ``GetBufferByByte<T>(offset)``), by default to the end of
        the buffer. Raises :class:`AlignmentError` / :class:`CapacityError`."""
        dtype = get_dtype(dtype)
        byte_offset = int(byte_offset)
        if byte_offset % self.alignment:
            raise AlignmentError(
                f"{self._where()}: byte offset {byte_offset} is not a multiple of {self.alignment}"
            )
        if byte_offset < 0 or byte_offset > self.size:
            raise CapacityError(f"{self._where()}: byte offset {byte_offset} is outside the {self.size}-byte buffer")
        avail = (self.size - byte_offset) * 8 // dtype.bits
        if count is None:
            count = avail
        elif count < 0 or count > avail:
            raise CapacityError(
                f"{self._where()}: {count} {dtype} elements ({_byte_count(dtype, count)} B) at byte {byte_offset} "
                f"exceed the {self.size}-byte buffer by {_byte_count(dtype, count) + byte_offset - self.size} B"
            )
        return LocalTensor(self, byte_offset, dtype, count)

    # Short alias used throughout the tile layer.
    tensor = get_buffer_by_byte

    def _where(self) -> str:
        return f"{self.name} of {self.ctx.short}" if self.ctx is not None else self.name

    def __repr__(self) -> str:
        return f"LocalArena({self._where()}, {self.size} B)"


class _AbsentArena:
    """Stands in for a buffer the core type does not have (UB on the AIC, L1 on an AIV)."""

    __slots__ = ("name", "ctx")

    def __init__(self, name: str, ctx):
        self.name = name
        self.ctx = ctx

    def _fail(self, *args, **kwargs):
        owner = "vector cores (AIV)" if self.name == "UB" else "the cube core (AIC)"
        raise ConfigError(f"{self.ctx}: has no {self.name}; {self.name} belongs to {owner}")

    get_buffer_by_byte = tensor = _fail

    @property
    def size(self) -> int:
        return 0

    @property
    def raw(self):
        self._fail()


class LocalTensor:
    """Typed view of a :class:`LocalArena` (Ascend C ``LocalTensor<T>``): ``count`` elements from a byte offset.

    ``t[i]`` shifts by ``i`` elements (the C++ ``operator[]``); :meth:`view` gives the numpy elements.
    """

    __slots__ = ("arena", "byte_offset", "dtype", "count")

    def __init__(self, arena: LocalArena, byte_offset: int, dtype: DType, count: int):
        self.arena = arena
        self.byte_offset = byte_offset
        self.dtype = dtype
        self.count = count

    @property
    def ctx(self) -> "CoreContext | None":
        """The core that owns this buffer (tile operations publish their events through it)."""
        return self.arena.ctx

    @property
    def position(self) -> str:
        """Buffer name (Ascend C ``TPosition``): 'L1', 'L0A', 'L0B', 'L0C', 'UB', 'BT' or 'FB'."""
        return self.arena.name

    @property
    def nbytes(self) -> int:
        return _byte_count(self.dtype, self.count)

    def __getitem__(self, offset: int) -> "LocalTensor":
        offset = int(offset)
        if offset < 0 or offset > self.count:
            raise CapacityError(
                f"{self.arena._where()}: element offset {offset} is outside a {self.count}-element {self.dtype} view"
            )
        bits = offset * self.dtype.bits
        if bits % 8:
            raise AlignmentError(f"{self.arena._where()}: offset {offset} splits a byte of 4-bit {self.dtype}")
        return LocalTensor(self.arena, self.byte_offset + bits // 8, self.dtype, self.count - offset)

    def reinterpret(self, dtype) -> "LocalTensor":
        """Same bytes as another dtype (``ReinterpretCast``)."""
        dtype = get_dtype(dtype)
        return LocalTensor(self.arena, self.byte_offset, dtype, self.nbytes * 8 // dtype.bits)

    def view(self, count: int | None = None) -> np.ndarray:
        """numpy view of the first ``count`` elements (default all); writes go to the arena."""
        if count is None:
            count = self.count
        elif count > self.count:
            self.check(count)
        return self.arena.typed_view(self.byte_offset, self.dtype, count)

    def check(self, count: int) -> None:
        """The capacity check of :meth:`view` without touching the bytes (timing-only runs): raise
        :class:`CapacityError` when ``count`` elements do not fit this view."""
        if count > self.count:
            raise CapacityError(
                f"{self.arena._where()}: {count} {self.dtype} elements requested from a {self.count}-element view "
                f"at byte {self.byte_offset}"
            )

    @property
    def computes(self) -> bool:
        """Whether tile operations on this tensor do their data work: False on a core of a timing-only launch
        (``LaunchParams(numerics=False)``), where they publish their instruction events only."""
        ctx = self.arena.ctx
        return ctx is None or ctx.numerics

    def access(self, start: int = 0, length: int | None = None, stride: int = 0, count: int = 1) -> "MemAccess":
        """The bytes of ``count`` runs of ``length`` elements every ``stride`` elements from element ``start``
        of this view (default: the whole view) as a :class:`~catlass_py.arch.events.MemAccess` for the
        instruction events of the pipe model."""
        if length is None:
            length = self.count - start
        a = self.arena
        return _element_access(a.label, a.id, a.name, self.byte_offset, self.dtype.bits, start, length, stride, count)

    def __repr__(self) -> str:
        return f"LocalTensor({self.arena._where()}, {self.dtype}, byte {self.byte_offset}, {self.count} elements)"


class Resource:
    """The on-chip buffers of one core (CATLASS ``Arch::Resource<ArchTag>``).

    Attribute names follow CATLASS (``l1Buf`` -> ``l1_buf``). A buffer the core type lacks raises
    :class:`ConfigError` when used.
    """

    _FIELDS = {"L1": "l1_buf", "L0A": "l0a_buf", "L0B": "l0b_buf", "BT": "bt_buf", "L0C": "l0c_buf", "UB": "ub_buf", "FB": "fb_buf"}
    _AIC_BUFFERS = ("L1", "L0A", "L0B", "BT", "L0C", "FB")
    _AIV_BUFFERS = ("UB",)

    __slots__ = ("ctx", "l1_buf", "l0a_buf", "l0b_buf", "bt_buf", "l0c_buf", "ub_buf", "fb_buf")

    def __init__(self, arch, ctx: "CoreContext", *, poison: int = 0xFF):
        self.ctx = ctx
        present = self._AIC_BUFFERS if ctx.core.type.value == "AIC" else self._AIV_BUFFERS
        for name, size in arch.buffer_sizes().items():
            arena = (
                LocalArena(name, size, ctx, alignment=arch.local_alignment, poison=poison)
                if name in present
                else _AbsentArena(name, ctx)
            )
            setattr(self, self._FIELDS[name], arena)

    def arenas(self) -> dict[str, LocalArena]:
        """Buffers present on this core, by name."""
        return {n: getattr(self, f) for n, f in self._FIELDS.items() if isinstance(getattr(self, f), LocalArena)}

    def __repr__(self) -> str:
        return f"Resource({self.ctx.short}: {', '.join(self.arenas())})"
