"""Error hierarchy of catlass_py.

CATLASS reports misuse at compile time (``static_assert``) or hangs/corrupts on the device; catlass_py
turns each of those into an exception derived from :class:`CatlassError`.
"""

from __future__ import annotations


class CatlassError(Exception):
    """Base class of every error raised by catlass_py."""


class ConfigError(CatlassError):
    """An assembly-time rule is broken (the CATLASS ``static_assert`` counterpart).

    The message names the rule and the numbers that break it.
    """


class ArgumentError(CatlassError, ValueError):
    """Bad user input: names the argument, what was expected and what was received."""


class SettingError(ArgumentError, ConfigError):
    """An assembly keyword chosen by the user (``catlass-py run --set``, a tuner configuration) breaks an assembly
    rule: the assembly's :class:`ConfigError`, raised as a bad argument."""


class CapacityError(CatlassError):
    """A view or transfer does not fit in a local buffer (L1, L0A/B/C, UB, BT, FB)."""


class AlignmentError(CatlassError):
    """A local-buffer byte offset or length breaks the hardware alignment rule (32 bytes)."""


class OutOfBoundsError(CatlassError, IndexError):
    """A global-memory access falls outside its tensor, or writes a read-only tensor."""


class DeadlockError(CatlassError):
    """Every unfinished simulated core waits on a flag that nobody will set.

    ``blocked`` lists one entry per waiting core: (core name, flag id, counter values).
    """

    def __init__(self, message: str, blocked: tuple = ()):
        super().__init__(message)
        self.blocked = tuple(blocked)


class FlagOverflowError(CatlassError):
    """A cross-core flag counter would exceed its hardware limit of pending sets (15)."""


class RaceError(CatlassError):
    """Two accesses to overlapping bytes of one memory, at least one a write, have no happens-before order:
    between two cores, or between two pipes of one core (see :mod:`catlass_py.arch.pipe_order`)."""


class UnpairedFlagError(CatlassError):
    """Flag sets (intra-core ``SetFlag`` or cross-core ``CrossCoreSetFlag``) were never consumed by a wait when
    the launch ended. ``cross_core`` / ``intra_core`` list them."""


class NoDataError(CatlassError):
    """Values were asked of memory that has none: a shape-only (virtual) array or GM buffer of a timing-only
    run (``LaunchParams(numerics=False)``), which has a shape, a dtype and bounds but no bytes."""


class KernelError(CatlassError):
    """A non-catlass exception escaped a simulated core; ``__cause__`` holds the original."""


__all__ = [
    "CatlassError",
    "ConfigError",
    "ArgumentError",
    "SettingError",
    "CapacityError",
    "AlignmentError",
    "OutOfBoundsError",
    "DeadlockError",
    "FlagOverflowError",
    "RaceError",
    "UnpairedFlagError",
    "NoDataError",
    "KernelError",
]
