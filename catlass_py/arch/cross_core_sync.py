"""Cross-core flags with back-pressure: CATLASS ``Arch::CrossCoreFlagWithReverse`` and its set/wait helpers.

Counterpart of ``include/catlass/arch/cross_core_sync.hpp``. A flag counter may hold at most
``MAX_REVERSE_DEPTH`` (15) unconsumed sets; a producer that only ever sets (one-way synchronisation, e.g. a
cube core announcing every stored block to its vector cores) would overflow it if it ran far enough ahead.
The "with reverse" pair adds a second flag flowing the other way:

==========================  =====================================================================
who                         what
==========================  =====================================================================
setter (``set_...``)        set ``id``; after every ``depth``-th set, wait ``reverse_id``
waiter (``wait_...``)       wait ``id``; after every ``depth``-th wait, set ``reverse_id``
==========================  =====================================================================

so the setter is never more than ``depth`` sets ahead. The counters (``count``) belong to one core: every
core program builds its own :class:`CrossCoreFlagWithReverse` (in C++ each core has its own kernel object).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.integers import is_int

MAX_REVERSE_DEPTH = 15
"""CATLASS ``MAX_REVERSE_DEPTH``: sets a flag counter may take without being consumed."""

FFTS_MAX_FLAG = 7
"""CATLASS ``FFTS_MAX_FLAG``: user flags are 0..7 (8..10 are the reserved barrier ids)."""


@dataclass
class CrossCoreFlagWithReverse:
    """CATLASS ``Arch::CrossCoreFlagWithReverse<REVERSE_DEPTH>{id, reverseId}`` (mutable: ``count`` is the
    number of sets (or waits) since the last reverse synchronisation on this core)."""

    id: int
    reverse_id: int
    depth: int = MAX_REVERSE_DEPTH
    count: int = 0

    def __post_init__(self):
        for name in ("id", "reverse_id"):
            v = getattr(self, name)
            if not is_int(v) or v < 0:
                raise ConfigError(f"CrossCoreFlagWithReverse: {name} must be an int >= 0, got {v!r}")
            setattr(self, name, int(v))
        if self.id == self.reverse_id:
            raise ConfigError(f"CrossCoreFlagWithReverse: id and reverse_id must differ, both are {self.id}")
        if not is_int(self.depth) or not 1 <= self.depth <= MAX_REVERSE_DEPTH:
            raise ConfigError(
                f"CrossCoreFlagWithReverse: REVERSE_DEPTH must be in 1..{MAX_REVERSE_DEPTH} (the hardware counter "
                f"holds at most {MAX_REVERSE_DEPTH} sets), got {self.depth!r}"
            )

    def fresh(self) -> "CrossCoreFlagWithReverse":
        """A copy with ``count`` 0, for one core's program."""
        return CrossCoreFlagWithReverse(self.id, self.reverse_id, self.depth)


def cross_core_set_flag_with_reverse(ctx, flag: CrossCoreFlagWithReverse, mode: int = 2, pipe: Pipe = Pipe.S) -> None:
    """CATLASS ``Arch::CrossCoreSetFlagWithReverse<MODE, PIPE>(flag)``: set ``flag.id``; every ``depth``-th
    set, wait for the consumer's reverse flag."""
    ctx.cross_core_set_flag(flag.id, mode, pipe)
    flag.count += 1
    if flag.count >= flag.depth:
        ctx.cross_core_wait_flag(flag.reverse_id)
        flag.count = 0


def cross_core_wait_flag_with_reverse(ctx, flag: CrossCoreFlagWithReverse, mode: int = 2, pipe: Pipe = Pipe.S) -> None:
    """CATLASS ``Arch::CrossCoreWaitFlagWithReverse<MODE, PIPE>(flag)``: wait ``flag.id``; every ``depth``-th
    wait, set the reverse flag (``mode``/``pipe`` apply to that set)."""
    ctx.cross_core_wait_flag(flag.id)
    flag.count += 1
    if flag.count >= flag.depth:
        ctx.cross_core_set_flag(flag.reverse_id, mode, pipe)
        flag.count = 0


__all__ = [
    "FFTS_MAX_FLAG",
    "MAX_REVERSE_DEPTH",
    "CrossCoreFlagWithReverse",
    "cross_core_set_flag_with_reverse",
    "cross_core_wait_flag_with_reverse",
]
