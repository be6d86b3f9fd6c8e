"""Mutation testing of the synchronisation checks: every synchronisation call of a kernel, edited one way at a
time, must be reported.

A kernel is given as one or more *runners*: callables ``run(options)`` that launch it on a fixed problem with
the given :class:`~catlass_py.arch.LaunchParams`. :func:`record_sites` runs each with
``record_sync_sites=True``; :func:`catalogue` turns the sites into mutants (:mod:`catlass_py.arch.mutation`):

================  ===============================================================================================
site              mutants
================  ===============================================================================================
``SetFlag``       drop; drop with each wait site it fed (the pair); swap its id with the next id its event type
                  uses in the kernel
``WaitFlag``      drop; delay past the first use of what it protects; swap ids
``PipeBarrier``   drop
cross-core set    drop; drop with each wait site it fed; issue on PIPE_S instead of its pipe; swap ids
cross-core wait   drop; delay; swap ids
================  ===============================================================================================

(Moving an intra-core ``SetFlag<X_Y>`` to another pipe is not expressible: the event type names its pipe.)
:func:`check` runs every mutant on every runner with the hazard detector on and reports which error found it:
:class:`~catlass_py.errors.RaceError`, :class:`~catlass_py.errors.DeadlockError`,
:class:`~catlass_py.errors.FlagOverflowError` or :class:`~catlass_py.errors.UnpairedFlagError`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from catlass_py.arch.mutation import Edit, Mutation, SyncSite, SyncSiteRecord
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import CatlassError, DeadlockError, FlagOverflowError, RaceError, UnpairedFlagError

REPORTING_ERRORS = (RaceError, DeadlockError, FlagOverflowError, UnpairedFlagError)

Runner = Callable[[LaunchParams], object]


@dataclass(frozen=True)
class MutantResult:
    """A mutant and what reported it (``detected_by`` is None when no runner reported it; ``error`` names
    another failure, e.g. a wrong output caught by the runner itself)."""

    mutation: Mutation
    detected_by: str | None
    runner: int | None = None
    message: str = ""

    @property
    def detected(self) -> bool:
        return self.detected_by is not None


def record_sites(runners: Sequence[Runner], options: LaunchParams | None = None) -> list[SyncSiteRecord]:
    """The synchronisation sites the runners execute (merged over runners), in source order."""
    base = options or LaunchParams()
    merged: dict[SyncSite, SyncSiteRecord] = {}
    for i, run in enumerate(runners):
        result = run(dataclasses.replace(base, record_sync_sites=True, detect_races=True))
        for rec in getattr(result, "sync_sites", None) or []:
            m = merged.get(rec.site)
            if m is None:
                merged[rec.site] = dataclasses.replace(
                    rec, events=set(rec.events), ids=set(rec.ids), pipes=set(rec.pipes), partners=set(rec.partners),
                    cores=set(rec.cores), windows={("runner %d" % i,) + k: list(v) for k, v in rec.windows.items()})
            else:
                m.calls += rec.calls
                m.events |= rec.events
                m.ids |= rec.ids
                m.pipes |= rec.pipes
                m.partners |= rec.partners
                m.cores |= rec.cores
                m.followed = m.followed or rec.followed
                m.pipe_idle = m.pipe_idle and rec.pipe_idle
                for key, counts in rec.windows.items():
                    m.windows.setdefault(("runner %d" % i,) + key, []).extend(counts)
    return sorted(merged.values(), key=lambda r: r.site)


def catalogue(sites: Iterable[SyncSiteRecord]) -> list[Mutation]:
    """Every mutant of the module docstring's table for ``sites``."""
    sites = list(sites)
    by_site = {r.site: r for r in sites}
    ids_of: dict[tuple[str, str], set] = {}  # (set/wait family, event type) -> ids used anywhere
    for r in sites:
        for ev in r.events or {"flag"}:
            ids_of.setdefault((_family(r.site.kind), ev), set()).update(r.ids)
    out: list[Mutation] = []
    for r in sites:
        s, kind = r.site, r.site.kind
        out.append(Mutation((Edit(s, "drop"),)))
        if kind in ("SetFlag", "CrossCoreSetFlag"):
            for w in sorted(r.partners):
                if w in by_site:
                    out.append(Mutation((Edit(s, "drop"), Edit(w, "drop"))))
        if kind == "CrossCoreSetFlag" and r.pipes and r.pipes != {"S"}:
            out.append(Mutation((Edit(s, "move_pipe", pipe=Pipe.S),)))
        if kind in ("WaitFlag", "CrossCoreWaitFlag"):
            out.append(Mutation((Edit(s, "delay"),)))
        if kind != "PipeBarrier":
            for a, b in _swaps(r, ids_of):
                out.append(Mutation((Edit(s, "swap_ids", ids=(a, b)),)))
    return out


def _family(kind: str) -> str:
    return "cross" if kind.startswith("CrossCore") else "intra"


def _swaps(r: SyncSiteRecord, ids_of) -> list[tuple[int, int]]:
    """Id pairs to swap at a site: consecutive ids it uses; a site using one id swaps it with the next id its
    event type uses elsewhere in the kernel."""
    mine = sorted(r.ids)
    if len(mine) >= 2:
        return list(zip(mine, mine[1:]))
    if not mine:
        return []
    pool = set()
    for ev in r.events or {"flag"}:
        pool |= ids_of.get((_family(r.site.kind), ev), set())
    others = sorted(pool - set(mine))
    if not others:
        return []
    bigger = [i for i in others if i > mine[0]]
    return [(mine[0], bigger[0] if bigger else others[-1])]


def automatic_equivalence(mutation: Mutation, sites: dict[SyncSite, SyncSiteRecord]) -> str | None:
    """Why ``mutation`` cannot change any order, when one of these arguments, which need no reading of the
    kernel, applies (None otherwise):

    * dropping or delaying a wait or barrier that no instruction it orders ever followed, directly or through
      later sets and barriers (``SyncSiteRecord.followed``; the end of a program: a destructor draining its
      events, a final ``PipeBarrier<PIPE_ALL>``): there is nothing after it to order;
    * issuing on PIPE_S a cross-core set whose own pipe had run no instruction and taken no wait on its core at
      any call: that pipe knew nothing PIPE_S does not, so the set publishes no less;
    * swapping two ids at a site that, on every core, is called with both ids equally often at the same points
      of the program (no instruction and no wait between the calls: a constructor's burst of initial sets, a
      destructor's drain): the swap only permutes calls that take effect together;
    * dropping a ``SetFlag`` site together with the ``WaitFlag`` site it fed, when the two pair only with each
      other (every set of the one was consumed by the other, which consumed nothing else) and no instruction
      the wait orders ever followed it (a constructor's set that only the destructor's drain consumes: the
      accumulator event FIX_M of a block that runs with the unit flag). The hardware pairs the sets and waits
      of one (core, event, id) first in, first out: as the pair's waits consumed exactly the pair's sets, the
      j-th wait of the other sites consumed the j-th set of the other sites, and still does once the pair's
      calls leave the queue together. So every other wait orders what it ordered, and the dropped waits
      ordered nothing.
    """
    if len(mutation.edits) == 2:
        return _pair_with_nothing_after(mutation, sites)
    if len(mutation.edits) != 1:
        return None
    e = mutation.edits[0]
    rec = sites.get(e.site)
    if rec is None:
        return None
    kind = e.site.kind
    if e.action in ("drop", "delay") and kind in ("WaitFlag", "CrossCoreWaitFlag", "PipeBarrier") and not rec.followed:
        if e.action == "drop" and kind != "PipeBarrier":
            return None  # its set stays unconsumed: reported, not equivalent
        return "no instruction it orders ever follows it: there is nothing after it to order"
    if e.action == "move_pipe" and rec.pipe_idle:
        return "its own pipe had done no work when it was issued: PIPE_S publishes no less"
    if e.action == "swap_ids":
        a, b = e.ids
        # A set publishes what its pipe knows, which a wait can change; a wait only joins: for sets the calls
        # must have no instruction and no wait between them, for waits no instruction.
        point = (lambda w: w) if kind in ("SetFlag", "CrossCoreSetFlag") else (lambda w: w[0])
        keys = {k[:-1] for k in rec.windows}
        at = lambda k, i: sorted(point(w) for w in rec.windows.get(k + (i,), []))  # noqa: E731
        if any(at(k, a) for k in keys) and all(at(k, a) == at(k, b) for k in keys):
            return "the site issues both ids at the same points of the program: the swap only permutes them"
    return None


def _pair_with_nothing_after(mutation: Mutation, sites: dict[SyncSite, SyncSiteRecord]) -> str | None:
    """The pair argument of :func:`automatic_equivalence` (intra-core flags only)."""
    s_edit, w_edit = mutation.edits
    if s_edit.action != "drop" or w_edit.action != "drop":
        return None
    s, w = sites.get(s_edit.site), sites.get(w_edit.site)
    if s is None or w is None or s.site.kind != "SetFlag" or w.site.kind != "WaitFlag":
        return None
    if s.partners == {w.site} and w.partners == {s.site} and not w.followed:
        return ("the set and the wait pair only with each other and nothing the wait orders ever follows it: "
                "no other wait changes its set, and the dropped waits ordered nothing")
    return None


def mutant_key(mutation: Mutation, sites: dict[SyncSite, SyncSiteRecord]) -> str:
    """A description of ``mutation`` that does not depend on line numbers: for each edit, the edit, the kind of
    call, the function the site is in and the text of its source line, e.g. ``delay WaitFlag in mmad_l1_tile:
    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])``."""
    parts = []
    for e in mutation.edits:
        rec = sites.get(e.site)
        extra = f" to PIPE_{e.pipe}" if e.action == "move_pipe" else (
            f" {e.ids[0]}<->{e.ids[1]}" if e.action == "swap_ids" else "")
        parts.append(f"{e.action}{extra} {e.site.kind} in {rec.function if rec else '?'}: {e.site.source()}")
    return " + ".join(parts)


def check(runners: Sequence[Runner], mutants: Iterable[Mutation], options: LaunchParams | None = None) -> list[MutantResult]:
    """Run every mutant on each runner (hazard detector on) until one reports it."""
    base = dataclasses.replace(options or LaunchParams(), detect_races=True)
    results = []
    for mut in mutants:
        found = None
        for i, run in enumerate(runners):
            try:
                run(dataclasses.replace(base, mutation=mut))
            except REPORTING_ERRORS as exc:
                found = MutantResult(mut, type(exc).__name__, i, str(exc).split("\n", 1)[0])
                break
            except CatlassError as exc:
                found = MutantResult(mut, None, i, f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
            except AssertionError as exc:  # the runner's own output check
                found = MutantResult(mut, None, i, f"wrong output: {exc}")
        results.append(found if found is not None and found.detected else
                       (found or MutantResult(mut, None)))
    return results


__all__ = ["MutantResult", "REPORTING_ERRORS", "automatic_equivalence", "catalogue", "check", "mutant_key",
           "record_sites"]
