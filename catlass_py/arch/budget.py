"""The memory budget: the host memory a run will allocate, computed and checked before anything is allocated.

A simulated run keeps everything in host memory: the GM buffers (copies of inputs stored in another layout,
outputs), the workspace, every core's on-chip buffers and, for an example, its host inputs and its golden.
Operators (:mod:`catlass_py.ops.operator`) and examples (:class:`catlass_py.runner.ExampleRun`) compute that
figure first, as a :class:`Footprint` of named items, and :func:`check_footprint` raises
:class:`~catlass_py.errors.CapacityError` naming the figure and the budget when it does not fit. What the
observers record while the launch runs (a trace's events) is not part of the figure.

The budget (:func:`memory_limit`) is, in order: ``LaunchParams(memory_limit=...)`` (bytes, or text as the
environment variable takes it); the
``CATLASS_PY_MEMORY_LIMIT`` environment variable (a byte count such as ``8589934592`` or ``8G``, with a binary
``K``/``M``/``G``/``T`` suffix, a percentage of the memory available at the check such as ``50%``, or ``off``);
otherwise :data:`DEFAULT_FRACTION` of the memory available at the check (Linux: ``MemAvailable`` of
``/proc/meminfo``, lowered to what the process's cgroup still allows; elsewhere the available pages
``sysconf`` reports; no limit where neither is known).

Workspace sizes come from the kernel itself: :func:`workspace_size` calls ``kernel.get_workspace_size`` on
the kernel's Arguments built over :func:`placeholder` tensors - GM tensors of the right size with no memory
behind them - so that the size is known before any buffer exists. A run that allocates less (one that makes
no GM buffers, say) lists only what it allocates; :meth:`Footprint.without` drops whole kinds of items.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass

import numpy as np

from catlass_py.arch.memory import GlobalBuffer, GlobalTensor
from catlass_py.errors import ArgumentError, CapacityError
from catlass_py.integers import is_int
from catlass_py.numerics.dtypes import get_dtype

#: share of the available memory a run may allocate when nothing else sets the budget
DEFAULT_FRACTION = 0.8
#: the kinds of :class:`Footprint` items, in the order messages list them
KINDS = ("inputs", "gm", "workspace", "cores", "golden")
_ENV = "CATLASS_PY_MEMORY_LIMIT"
_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"([0-9]+)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)
_PERCENT = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*%")


def format_bytes(n: int) -> str:
    """``n`` bytes for a message: '512 B', '1.5 KiB', ... '1.8 TiB'."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def array_bytes(shape, dtype) -> int:
    """Bytes of an array of ``shape`` and ``dtype`` (a registry name or numpy type; 4-bit types pack two to a
    byte), in Python ints: a size never wraps."""
    count = math.prod(int(s) for s in shape)
    return get_dtype(dtype).nbytes(count)


@dataclass(frozen=True)
class Footprint:
    """What a run will allocate: ``items`` of (kind, label, bytes), kind one of :data:`KINDS`."""

    items: tuple[tuple[str, str, int], ...] = ()

    def add(self, kind: str, label: str, nbytes: int) -> "Footprint":
        """This footprint with one more item (nothing added for 0 bytes)."""
        if kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
        nbytes = int(nbytes)
        return self if nbytes == 0 else Footprint(self.items + ((kind, label, nbytes),))

    def array(self, kind: str, label: str, shape, dtype) -> "Footprint":
        """:meth:`add` of an array of ``shape`` and ``dtype``."""
        return self.add(kind, label, array_bytes(shape, dtype))

    def __add__(self, other: "Footprint") -> "Footprint":
        return Footprint(self.items + other.items)

    def without(self, *kinds: str) -> "Footprint":
        """This footprint without the items of ``kinds``."""
        return Footprint(tuple(i for i in self.items if i[0] not in kinds))

    @property
    def total(self) -> int:
        """Bytes of every item."""
        return sum(n for _, _, n in self.items)

    def by_kind(self) -> dict[str, int]:
        """Bytes per kind, in the order of :data:`KINDS` (kinds with items only)."""
        out = {}
        for kind in KINDS:
            n = sum(b for k, _, b in self.items if k == kind)
            if n:
                out[kind] = n
        return out

    def describe(self, largest: int = 4) -> str:
        """'1.0 TiB (golden 768.0 GiB, input a 128.0 GiB, input b 128.0 GiB, ...)': the total and the
        ``largest`` items."""
        top = sorted(self.items, key=lambda i: -i[2])[:largest]
        parts = ", ".join(f"{label} {format_bytes(n)}" for _, label, n in top)
        more = ", ..." if len(self.items) > largest else ""
        return format_bytes(self.total) + (f" ({parts}{more})" if parts else "")

    def __str__(self) -> str:
        return self.describe()


def _parse_limit(text: str, source: str = _ENV) -> tuple[int | None, float | None]:
    """(bytes, None), (None, fraction of the available memory) or (None, None) for 'off'; an error names
    ``source``."""
    t = text.strip()
    if t.lower() in ("off", "none", "unlimited"):
        return None, None
    m = _PERCENT.fullmatch(t)
    if m and t.isascii():
        pct = float(m.group(1))
        if 0 < pct <= 100:
            return None, pct / 100
    m = _SIZE.fullmatch(t)
    if m and t.isascii() and int(m.group(1)) > 0:
        return int(m.group(1)) * _SUFFIX[m.group(2).upper()], None
    raise ArgumentError(f"{source}: expected a byte count such as 8589934592 or 8G, a percentage of the available "
                        f"memory such as 50%, or 'off'; got {text!r}")


def check_limit_text(text: str, source: str) -> None:
    """Raise :class:`ArgumentError` naming ``source`` unless ``text`` is a budget as ``CATLASS_PY_MEMORY_LIMIT``
    writes one (``8G``, ``50%``, ``off``)."""
    _parse_limit(text, source)


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> int | None:
    """Bytes the process may still allocate without swapping, or None when the platform does not say."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            avail = None
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None and limit < (1 << 60):
            room = max(0, limit - usage)
            avail = room if avail is None else min(avail, room)
            break
    return avail


@dataclass(frozen=True)
class MemoryLimit:
    """A resolved budget: ``bytes`` (None: no limit) and where it came from (``source``, for messages)."""

    bytes: int | None
    source: str


def memory_limit(limit: int | str | None = None) -> MemoryLimit:
    """The budget of a run: ``limit`` (``LaunchParams.memory_limit``: bytes, or text as the environment variable
    takes it) when given, else ``CATLASS_PY_MEMORY_LIMIT``, else :data:`DEFAULT_FRACTION` of
    :func:`available_memory` (module doc). Raises :class:`ArgumentError` for a malformed limit."""
    if limit is not None and not isinstance(limit, str):
        if not is_int(limit) or limit < 1:
            raise ArgumentError(f"memory_limit: expected None, a byte count >= 1 or text such as '8G', '50%' or "
                                f"'off', got {limit!r}")
        return MemoryLimit(int(limit), "LaunchParams.memory_limit")
    name, text = ("LaunchParams.memory_limit", limit) if limit is not None else (_ENV, os.environ.get(_ENV, ""))
    fraction, source = DEFAULT_FRACTION, f"{DEFAULT_FRACTION:.0%} of the available memory"
    if text.strip():
        nbytes, fraction = _parse_limit(text, name if limit is None else "memory_limit")
        if nbytes is not None:
            return MemoryLimit(nbytes, f"{name}={text.strip()}")
        if fraction is None:
            return MemoryLimit(None, f"{name}={text.strip()}")
        source = f"{name}={text.strip()} of the available memory"
    avail = available_memory()
    if avail is None:
        return MemoryLimit(None, "the available memory is unknown")
    return MemoryLimit(int(avail * fraction), f"{source}, {format_bytes(avail)}")


def check_footprint(footprint: Footprint, what: str, limit: int | None = None) -> None:
    """Raise :class:`CapacityError` when ``footprint`` exceeds the budget (:func:`memory_limit` of ``limit``);
    ``what`` names the run in the message."""
    budget = memory_limit(limit)
    if budget.bytes is not None and footprint.total > budget.bytes:
        raise CapacityError(
            f"{what} would allocate {footprint.describe()}, more than the memory budget of "
            f"{format_bytes(budget.bytes)} ({budget.source}; set {_ENV} or LaunchParams(memory_limit=...) to "
            f"change it)")


def tile_scratch_bytes(arch) -> int:
    """Bytes of the scratch buffer the tile layer's fast path takes once per launch (shared by the launch's cores,
    of which one runs at a time): the float operands and product of one Mmad or one L1 tile's product, at most
    8 bytes (float64) per element of L1 (A and B) and 3 bytes per byte of L0C (float64 product and int32 copy
    of an int32 accumulator), plus alignment."""
    sizes = arch.buffer_sizes()
    return 8 * sizes["L1"] + 3 * sizes["L0C"] + 1024


def core_buffer_bytes(arch, block_dim: int, *, aic: bool = True, aiv: bool = True) -> int:
    """Bytes of the on-chip buffers of a launch on ``block_dim`` AI cores (each AIC's L1, L0A/B/C, BT and FB,
    each AIV's UB), the most its cores can allocate, and the tile layer's scratch of a launch with cube cores
    (:func:`tile_scratch_bytes`)."""
    sizes = arch.buffer_sizes()
    per_aic = sum(v for k, v in sizes.items() if k != "UB") if aic else 0
    per_aiv = sizes["UB"] * arch.aiv_per_aic if aiv else 0
    scratch = tile_scratch_bytes(arch) if aic and block_dim else 0
    return int(block_dim) * (per_aic + per_aiv) + scratch


def placeholder(name: str, nbytes: int, dtype="uint8") -> GlobalTensor:
    """A read-only GM tensor of ``nbytes`` with no memory behind it (every byte reads 0): what a kernel's
    ``get_workspace_size`` or a size check needs of an operand before it exists."""
    nbytes = int(nbytes)
    if nbytes > sys.maxsize:
        raise CapacityError(f"GM tensor {name!r}: {format_bytes(nbytes)} exceed the address space")
    raw = np.broadcast_to(np.zeros(1, np.uint8), (nbytes,))
    return GlobalBuffer(name, raw, read_only=True).tensor(dtype)


def workspace_size(kernel, arguments, tensors: dict) -> int:
    """``kernel.get_workspace_size(arguments(gm))`` (0 for a kernel without one), with ``gm`` a dict of
    :func:`placeholder` tensors: ``tensors`` maps each name to (bytes, dtype)."""
    get = getattr(kernel, "get_workspace_size", None)
    if get is None:
        return 0
    gm = {name: placeholder(name, nbytes, dtype) for name, (nbytes, dtype) in tensors.items()}
    return int(get(arguments(gm)))


__all__ = [
    "DEFAULT_FRACTION",
    "KINDS",
    "Footprint",
    "MemoryLimit",
    "array_bytes",
    "available_memory",
    "check_footprint",
    "core_buffer_bytes",
    "tile_scratch_bytes",
    "format_bytes",
    "memory_limit",
    "placeholder",
    "workspace_size",
]
