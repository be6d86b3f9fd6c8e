"""Cross-core flags: the hardware counters behind Ascend C ``CrossCoreSetFlag`` / ``CrossCoreWaitFlag``.

Counterparts: CATLASS ``Arch::CrossCoreFlag`` (``include/catlass/arch/cross_core_sync.hpp``) and the
counter semantics of the Ascend C documentation. Every core has one counter per flag id (starting at 0).
A wait blocks while its own counter is 0 and then decrements it. What a set increments depends on the mode:

=====  ===========================  =====================================================================
mode   issued by                    effect
=====  ===========================  =====================================================================
0      every AIC (or every AIV)     once *all* cores of that type have set the id, every one of them gets
                                    +1 (an inter-AI-core barrier)
1      an AIV                       once *both* AIVs of the AI core have set the id, both get +1
2      the AIC                      both AIVs of the same AI core get +1
2      an AIV                       the AIC gets +1 once *both* AIVs of the AI core have set the id
=====  ===========================  =====================================================================

"Once all have set" is modelled with a queue of pending sets per participant: whenever every participant
has at least one pending set, one of each is consumed and the targets' counters grow by one. A counter
(or a pending queue) may hold at most ``max_pending_sets`` (15) unconsumed sets; one more would hang the
hardware and raises :class:`FlagOverflowError` here.

Each counter is a queue of the sequence numbers of the set events that produced it, so a completed wait
knows exactly which sets it consumed: the happens-before edges the race detector needs.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable

from catlass_py.arch.events import CoreId
from catlass_py.arch.pipes import CoreType
from catlass_py.errors import ArgumentError, FlagOverflowError
from catlass_py.integers import is_int


@dataclass(frozen=True)
class CrossCoreFlag:
    """A cross-core flag id (CATLASS ``Arch::CrossCoreFlag``)."""

    id: int

    def __int__(self) -> int:
        return self.id


def flag_id_of(flag) -> int:
    """The integer id of a :class:`CrossCoreFlag` or an int."""
    if isinstance(flag, CrossCoreFlag):
        return flag.id
    if not is_int(flag):
        raise ArgumentError(f"flag: expected a CrossCoreFlag or an int id, got {flag!r}")
    return int(flag)


class FlagBoard:
    """All cross-core flag counters of one launch."""

    def __init__(self, arch, cores: Iterable[CoreId]):
        self.arch = arch
        self.cores = tuple(cores)
        self.limit = arch.max_pending_sets
        self.count = arch.flag_id_count
        self._counters: dict[CoreId, list[deque]] = {c: [deque() for _ in range(self.count)] for c in self.cores}
        self._aic: dict[int, CoreId] = {}
        self._aivs: dict[int, list[CoreId]] = {}
        for c in self.cores:
            if c.type is CoreType.AIC:
                self._aic[c.ai_core] = c
            else:
                self._aivs.setdefault(c.ai_core, []).append(c)
        self._by_type = {t: [c for c in self.cores if c.type is t] for t in CoreType}
        # (group key, flag id) -> {participant: deque of pending set seqs}
        self._pending: dict[tuple, dict[CoreId, deque]] = {}

    # -- queries ---------------------------------------------------------------------------------
    def check_id(self, flag_id: int) -> None:
        if not 0 <= flag_id < self.count:
            raise ArgumentError(f"flag id: expected 0..{self.count - 1} on {self.arch.name}, got {flag_id}")

    def counter(self, core: CoreId, flag_id: int) -> int:
        """Current counter value of ``flag_id`` on ``core``."""
        return len(self._counters[core][flag_id])

    def describe(self, core: CoreId, flag_id: int) -> str:
        """Counter and pending sets relevant to a wait of ``core`` on ``flag_id`` (for deadlock messages)."""
        parts = [f"counter {self.counter(core, flag_id)}"]
        for (group, fid), queues in self._pending.items():
            if fid != flag_id or not any(len(q) for q in queues.values()):
                continue
            if core in self._targets(group):
                pend = ", ".join(f"{p.short}={len(q)}" for p, q in queues.items())
                parts.append(f"pending sets {group[0]} [{pend}]")
        return "; ".join(parts)

    def leftover(self) -> list[tuple[CoreId, int, int]]:
        """(core, flag id, count) of every set that no wait consumed, and pending partial sets."""
        out = []
        for core, queues in self._counters.items():
            for fid, q in enumerate(queues):
                if q:
                    out.append((core, fid, len(q)))
        for (group, fid), queues in self._pending.items():
            for part, q in queues.items():
                if q:
                    out.append((part, fid, len(q)))
        return out

    # -- set / wait ------------------------------------------------------------------------------
    def set(self, core: CoreId, flag_id: int, mode: int, seq: int) -> list[CoreId]:
        """Apply a set of ``flag_id`` issued by ``core`` in ``mode``; return the cores whose counter grew."""
        self.check_id(flag_id)
        if mode == 2:
            if core.type is CoreType.AIC:
                targets = self._aivs.get(core.ai_core, [])
                if not targets:
                    raise ArgumentError(
                        f"mode-2 set of flag {flag_id} on {core}: the launch has no vector cores to receive it"
                    )
                for t in targets:
                    self._push(t, flag_id, (seq,), core)
                return list(targets)
            aivs = self._aivs[core.ai_core]
            aic = self._aic.get(core.ai_core)
            if aic is None:
                raise ArgumentError(f"mode-2 set of flag {flag_id} on {core}: the launch has no cube core to receive it")
            return self._join(("mode 2 AIV->AIC", core.ai_core), aivs, [aic], core, flag_id, seq)
        if mode == 1:
            if core.type is not CoreType.AIV:
                raise ArgumentError(f"mode 1 synchronises the two AIVs of an AI core; {core} cannot set it")
            aivs = self._aivs[core.ai_core]
            return self._join(("mode 1", core.ai_core), aivs, aivs, core, flag_id, seq)
        if mode == 0:
            peers = self._by_type[core.type]
            return self._join((f"mode 0 {core.type}", -1), peers, peers, core, flag_id, seq)
        raise ArgumentError(f"cross-core flag mode: expected 0, 1 or 2, got {mode}")

    def try_wait(self, core: CoreId, flag_id: int) -> tuple[int, ...] | None:
        """Consume one count of ``flag_id`` on ``core``; return the set seqs behind it, or None if 0."""
        self.check_id(flag_id)
        q = self._counters[core][flag_id]
        return q.popleft() if q else None

    # -- internals -------------------------------------------------------------------------------
    def _targets(self, group) -> list[CoreId]:
        kind, ai_core = group
        if kind.startswith("mode 2"):
            return [self._aic[ai_core]] if ai_core in self._aic else []
        if kind == "mode 1":
            return self._aivs.get(ai_core, [])
        return self._by_type[CoreType.AIC if "AIC" in kind else CoreType.AIV]

    def _push(self, target: CoreId, flag_id: int, sources: tuple[int, ...], setter: CoreId) -> None:
        q = self._counters[target][flag_id]
        if len(q) >= self.limit:
            raise FlagOverflowError(
                f"{setter} sets flag {flag_id} but the counter on {target} already holds {len(q)} unconsumed "
                f"sets (hardware limit {self.limit}); the device would hang"
            )
        q.append(sources)

    def _join(self, group, participants, targets, core, flag_id, seq) -> list[CoreId]:
        queues = self._pending.get((group, flag_id))
        if queues is None:  # (made once per group and flag: not on every set)
            queues = self._pending[(group, flag_id)] = {p: deque() for p in participants}
        mine = queues[core]
        if len(mine) >= self.limit:
            raise FlagOverflowError(
                f"{core} sets flag {flag_id} ({group[0]}) for the {len(mine) + 1}th time before its peers did; "
                f"at most {self.limit} sets may be pending"
            )
        mine.append(seq)
        pending = [queues[p] for p in participants]
        for q in pending:
            if not q:
                return []
        sources = tuple([q.popleft() for q in pending])
        for t in targets:
            self._push(t, flag_id, sources, core)
        return list(targets)
