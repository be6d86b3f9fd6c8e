"""Pipes of an AI core and the intra-core hardware events that order them.

Counterparts: Ascend C ``pipe_t`` (PIPE_MTE1 ...) and ``AscendC::HardEvent`` (``MTE2_MTE1`` ...). On the
simulated core every instruction runs in program order, so these events change no data; they are
recorded for the cost model and checked for pairing.
"""

from __future__ import annotations

import enum


class CoreType(enum.Enum):
    """Ascend C ``g_coreType``: the cube core (AIC) or a vector core (AIV)."""

    AIC = "AIC"
    AIV = "AIV"

    __hash__ = object.__hash__  # singletons: identity hashing (see HardEvent); CoreId hashes it per event

    def __str__(self) -> str:
        return self.value


class Pipe(enum.Enum):
    """Ascend C ``pipe_t``: the instruction queues of a core.

    AIC: MTE2 (GM->L1), MTE1 (L1->L0A/L0B/BT), M (cube), FIX (L0C->GM), S (scalar).
    AIV: MTE2 (GM->UB), V (vector), MTE3 (UB->GM), S.
    """

    S = "S"
    V = "V"
    M = "M"
    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    FIX = "FIX"
    ALL = "ALL"

    __hash__ = object.__hash__  # singletons: identity hashing (see HardEvent); pipe-keyed dicts on every event

    def __str__(self) -> str:
        return self.value


class HardEvent(enum.Enum):
    """Ascend C ``HardEvent``: ``SetFlag<X_Y>`` on pipe X, ``WaitFlag<X_Y>`` blocks pipe Y."""

    MTE2_MTE1 = ("MTE2", "MTE1")
    MTE1_MTE2 = ("MTE1", "MTE2")
    MTE1_M = ("MTE1", "M")
    M_MTE1 = ("M", "MTE1")
    MTE2_M = ("MTE2", "M")
    M_MTE2 = ("M", "MTE2")
    M_FIX = ("M", "FIX")
    FIX_M = ("FIX", "M")
    FIX_MTE2 = ("FIX", "MTE2")
    MTE2_FIX = ("MTE2", "FIX")
    FIX_MTE1 = ("FIX", "MTE1")
    MTE1_FIX = ("MTE1", "FIX")
    MTE2_V = ("MTE2", "V")
    V_MTE2 = ("V", "MTE2")
    V_MTE3 = ("V", "MTE3")
    MTE3_V = ("MTE3", "V")
    MTE2_MTE3 = ("MTE2", "MTE3")
    MTE3_MTE2 = ("MTE3", "MTE2")
    S_V = ("S", "V")
    V_S = ("V", "S")
    S_MTE2 = ("S", "MTE2")
    MTE2_S = ("MTE2", "S")
    S_MTE3 = ("S", "MTE3")
    MTE3_S = ("MTE3", "S")
    M_S = ("M", "S")
    S_M = ("S", "M")
    FIX_S = ("FIX", "S")
    S_FIX = ("S", "FIX")

    # Members are singletons: identity hashing is correct and avoids Enum's Python-level __hash__ on the hot
    # path (every SetFlag/WaitFlag looks its event up in a dict).
    __hash__ = object.__hash__

    @property
    def src(self) -> Pipe:
        """Pipe on which the set is issued."""
        return _ENDS[self][0]

    @property
    def dst(self) -> Pipe:
        """Pipe that the wait blocks."""
        return _ENDS[self][1]

    def __str__(self) -> str:
        return self.name


_ENDS = {ev: (Pipe(ev.value[0]), Pipe(ev.value[1])) for ev in HardEvent}
"""(src, dst) pipes of every HardEvent, computed once (the properties run for every set and wait)."""
