"""Synchronisation call sites of a kernel, and mutants that edit them at run time.

Every synchronisation call (``SetFlag``, ``WaitFlag``, ``PipeBarrier``, ``CrossCoreSetFlag``,
``CrossCoreWaitFlag``) has a *site*: the first source line outside the machine (``catlass_py/arch``) on the call
stack, i.e. the kernel, block or epilogue line that issued it, and the kind of call. A launch with
``LaunchParams(record_sync_sites=True)`` lists the sites it executed (:class:`SyncSiteRecord`: calls, event
types, ids, pipes, and which set sites fed which wait sites); a launch with ``LaunchParams(mutation=...)``
applies a :class:`Mutation` to every dynamic call of the sites it names, without touching the kernel's code:

===============  =============================================================================================
edit             effect at its site
===============  =============================================================================================
``drop``         the call is not issued
``move_pipe``    a ``CrossCoreSetFlag`` is issued on ``pipe`` instead of its own pipe
``swap_ids``     ids ``a`` and ``b`` are exchanged (event ids of Set/WaitFlag, flag ids of cross-core calls)
``delay``        a wait is issued after the next instruction of the pipe it blocks (``WaitFlag``) or after the
                 core's next instruction (``CrossCoreWaitFlag``): after the first use of what it protects
===============  =============================================================================================

There is no CATLASS counterpart; this is mutation testing of the checks (:mod:`catlass_py.arch.hazards`, the
deadlock and flag-pairing checks of the launch): a mutant that changes the order of work must be reported.
"""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ArgumentError

SYNC_KINDS = ("SetFlag", "WaitFlag", "PipeBarrier", "CrossCoreSetFlag", "CrossCoreWaitFlag")
EDIT_ACTIONS = ("drop", "move_pipe", "swap_ids", "delay")

_ARCH_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(_ARCH_DIR.rstrip(os.sep))) + os.sep


@dataclass(frozen=True, order=True)
class SyncSite:
    """A synchronisation call site: source file (relative to the directory holding ``catlass_py`` when inside
    it, else absolute), line, and kind of call."""

    file: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} at {self.file}:{self.line}"

    def source(self) -> str:
        """The text of the site's source line, stripped (empty when the file cannot be read)."""
        path = self.file if os.path.isabs(self.file) else os.path.join(_PACKAGE_ROOT, self.file)
        return linecache.getline(path, self.line).strip()


@dataclass
class SyncSiteRecord:
    """What one site did during a recorded launch."""

    site: SyncSite
    function: str = ""
    calls: int = 0
    events: set = field(default_factory=set)  # HardEvent names (intra-core) or pipe names (barriers)
    ids: set = field(default_factory=set)  # event ids or cross-core flag ids
    pipes: set = field(default_factory=set)  # pipes of cross-core sets
    partners: set = field(default_factory=set)  # for a set: the wait sites that consumed it (and vice versa)
    cores: set = field(default_factory=set)
    windows: dict = field(default_factory=dict)
    """(core, id) -> (instructions, waits) the core had issued when the site was called with that id: calls with
    equal counts had no instruction (and, for the wait count, no wait) between them."""
    pipe_idle: bool = True
    """For a cross-core set: whether, at every call, the pipe it is issued on had run no instruction and taken
    no wait on that core yet (it then knows nothing PIPE_S does not)."""
    followed: bool = False
    """For a wait or barrier: whether an instruction it orders ever came after one of its calls: one on the pipe
    it blocks (any pipe for a cross-core wait, ``PIPE_ALL`` and a wait of PIPE_S, which dispatches every pipe),
    or on a pipe that later synchronisation orders after that pipe (a ``SetFlag`` issued from it and the
    ``WaitFlag`` that consumed the set; a ``PipeBarrier<PIPE_ALL>``). A cross-core set issued from such a pipe
    (or on ``PIPE_ALL``) counts as followed: work on another core may follow it. One that was never followed
    orders nothing."""


@dataclass(frozen=True)
class Edit:
    """One edit of a :class:`Mutation` (see the module docstring)."""

    site: SyncSite
    action: str
    pipe: Any = None
    ids: tuple[int, int] | None = None

    def __post_init__(self):
        if self.action not in EDIT_ACTIONS:
            raise ArgumentError(f"Edit.action: expected one of {EDIT_ACTIONS}, got {self.action!r}")
        if self.action == "move_pipe" and (self.pipe is None or self.site.kind != "CrossCoreSetFlag"):
            raise ArgumentError("Edit: move_pipe applies to a CrossCoreSetFlag site and needs a pipe")
        if self.action == "swap_ids" and (self.ids is None or len(self.ids) != 2 or self.ids[0] == self.ids[1]):
            raise ArgumentError(f"Edit: swap_ids needs two different ids, got {self.ids!r}")
        if self.action == "delay" and self.site.kind not in ("WaitFlag", "CrossCoreWaitFlag"):
            raise ArgumentError(f"Edit: delay applies to a wait site, got {self.site}")

    def __str__(self) -> str:
        extra = f" to PIPE_{self.pipe}" if self.action == "move_pipe" else (
            f" {self.ids[0]}<->{self.ids[1]}" if self.action == "swap_ids" else "")
        return f"{self.action}{extra} {self.site}"


@dataclass(frozen=True)
class Mutation:
    """A set of edits applied together (e.g. dropping a set and the wait it pairs with)."""

    edits: tuple[Edit, ...]

    def __str__(self) -> str:
        return " + ".join(str(e) for e in self.edits)


DROP = object()
DELAY = object()


class SyncEditor:
    """Per launch: finds the site of each synchronisation call, records it, and applies the mutation."""

    def __init__(self, mutation: Mutation | None, record: bool):
        self.record = record
        self.records: dict[SyncSite, SyncSiteRecord] = {}
        self._set_site: dict[int, SyncSite] = {}
        self._carried: dict[int, list] = {}  # SetFlag seq -> watched entries whose order the set carries
        self._edits: dict[SyncSite, Edit] = {}
        if mutation is not None:
            if not isinstance(mutation, Mutation):
                raise ArgumentError(f"mutation: expected a Mutation, got {mutation!r}")
            for e in mutation.edits:
                self._edits[e.site] = e

    @staticmethod
    def site(kind: str) -> tuple[SyncSite, str]:
        """The call site of the synchronisation call being made (and the function it is in)."""
        f = sys._getframe(2)
        while f is not None and f.f_code.co_filename.startswith(_ARCH_DIR):
            f = f.f_back
        if f is None:  # pragma: no cover - a call made from inside the machine only
            return SyncSite("<machine>", 0, kind), ""
        path = os.path.abspath(f.f_code.co_filename)
        if path.startswith(_PACKAGE_ROOT):
            path = path[len(_PACKAGE_ROOT):]
        return SyncSite(path, f.f_lineno, kind), f.f_code.co_name

    def _note(self, site: SyncSite, function: str, ctx, event=None, ident=None, pipe=None) -> SyncSiteRecord | None:
        if not self.record:
            return None
        rec = self.records.get(site)
        if rec is None:
            rec = self.records[site] = SyncSiteRecord(site, function)
        rec.calls += 1
        rec.cores.add(ctx.core.short)
        if event is not None:
            rec.events.add(str(event))
        if ident is not None:
            rec.ids.add(ident)
            rec.windows.setdefault((ctx.core.short, ident), []).append((ctx._instructions, ctx._waits))
        if pipe is not None:
            rec.pipes.add(str(pipe))
        return rec

    def edit(self, kind: str, ctx, *, event=None, ident=None, pipe=None, orders=None):
        """Returns (site, edit or None) after recording the call. ``orders``: for a wait or barrier, the pipe
        whose later instructions it orders (``Pipe.ALL`` for every pipe)."""
        site, function = self.site(kind)
        rec = self._note(site, function, ctx, event, ident, pipe)
        if kind in ("WaitFlag", "CrossCoreWaitFlag"):
            ctx._waits += 1
            ctx._touched.add(event.dst if kind == "WaitFlag" else None)
        elif kind == "CrossCoreSetFlag" and rec is not None and pipe in ctx._touched:
            rec.pipe_idle = False
        if self.record and ctx._watch:
            self._propagate(kind, ctx, event, pipe)
        if rec is not None and orders is not None and not rec.followed:
            ctx._watch.append([rec, {Pipe.ALL if orders is Pipe.S else orders}])
        return site, self._edits.get(site)

    def _propagate(self, kind: str, ctx, event, pipe) -> None:
        """Carry the watched waits' and barriers' orders through this synchronisation call (see
        ``SyncSiteRecord.followed``)."""
        watch = [w for w in ctx._watch if not w[0].followed]
        if kind == "PipeBarrier" and event is Pipe.ALL:
            for w in watch:
                w[1].add(Pipe.ALL)
        elif kind == "CrossCoreSetFlag":
            for w in watch:
                if w[1] and (pipe is Pipe.ALL or Pipe.ALL in w[1] or pipe in w[1]):
                    w[0].followed = True
        ctx._watch = [w for w in watch if not w[0].followed]

    def set_issued(self, seq: int, site: SyncSite, ctx=None, src=None) -> None:
        """Note the set issued at ``site``; a ``SetFlag`` from pipe ``src`` of ``ctx`` carries the watched
        orders of that pipe to the wait that will consume it."""
        if self.record:
            self._set_site[seq] = site
            if src is not None and ctx._watch:
                carry = [w for w in ctx._watch if not w[0].followed and (Pipe.ALL in w[1] or src in w[1])]
                if carry:
                    self._carried[seq] = carry

    def wait_consumed(self, sources, site: SyncSite, dst=None) -> None:
        """Pair the wait at ``site`` with the sets it consumed; an intra-core wait (blocking pipe ``dst``) also
        takes over the watched orders its set carried (they stay watched on the same core)."""
        if not self.record:
            return
        if dst is not None:
            for s in sources:
                for w in self._carried.pop(s, ()):
                    w[1].add(Pipe.ALL if dst is Pipe.S else dst)
        for s in sources:
            set_site = self._set_site.get(s)
            if set_site is not None:
                self.records[set_site].partners.add(site)
                self.records[site].partners.add(set_site)


def swap(ident: int, ids: tuple[int, int]) -> int:
    a, b = ids
    return b if ident == a else a if ident == b else ident


__all__ = ["DELAY", "DROP", "EDIT_ACTIONS", "SYNC_KINDS", "Edit", "Mutation", "SyncEditor", "SyncSite",
           "SyncSiteRecord", "swap"]
