"""Flow binding of a Chrome trace, recomputed two ways for the tests.

``spec_unbound``: the Trace Event Format's rule in exact arithmetic. Every ts and dur is read from the JSON text
as a decimal and must be a whole number of nanoseconds; an ``s`` event binds to a complete (``X``) slice of
its thread (same pid and tid) that encloses its ts (start <= ts <= end); an ``f`` event with ``bp: "e"`` binds
to the enclosing slice too, and here must sit at a slice's start. A flow also needs its ``s`` no later than
its ``f`` (viewers read flow events in time order and drop an end that comes before its start).

``catapult_unbound``: what chrome://tracing's importer (catapult, ``tracing/tracing/extras/importer/
trace_event_importer.html`` and ``tracing/tracing/model/slice_group.html``) computes, in IEEE doubles as
JavaScript does:

* times become milliseconds as ``us * (1e-6 / 1e-3)``; a slice's end is ``start + duration``;
* slices of a thread are sorted by start (ties: file order) and nested: each slice becomes a child of the
  nearest open ancestor that bounds it, where "bounds" compares start and end rounded to the display unit
  (``displayTimeUnit: "ns"``: ``Math.round(ms * 1e6)``), else it is a top-level slice;
* a flow event (sorted by ts, ties in file order) is looked up with ``findSliceAtTs``: binary search over the
  top-level slices for one whose closed interval [start, end] holds the ts, checking the slice before the
  first start >= ts and then that one, and descending into children the same way; no such top-level slice
  means the flow is dropped ("does not start/end at an actual slice").

The rounded nesting and the exact lookup disagree when a slice ends exactly where a flow sits: the slice
ending there may nest the flow's zero-length slice, while its end, computed in doubles, falls one unit in the
last place short of the flow's ts.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from decimal import Decimal

MS_PER_US = 1e-6 / 1e-3


def _ns(text_value: Decimal) -> int:
    n = text_value * 1000
    if n != n.to_integral_value():
        raise AssertionError(f"timestamp {text_value} us is not a whole number of nanoseconds")
    return int(n)


def spec_unbound(trace_text: str) -> list[dict]:
    """Flow events of a trace (JSON text) that do not bind by the Trace Event Format's rule, in exact
    arithmetic; also checks that every ts and dur is whole nanoseconds."""
    trace = json.loads(trace_text, parse_float=Decimal)
    slices: dict[tuple, list[tuple[int, int, str]]] = defaultdict(list)
    flows = []
    for e in trace["traceEvents"]:
        ph = e["ph"]
        if ph == "M":
            continue
        ts = _ns(Decimal(e["ts"]))
        if ph == "X":
            dur = _ns(Decimal(e["dur"]))
            assert dur >= 0
            slices[(e["pid"], e["tid"])].append((ts, ts + dur, e["name"]))
        elif ph in ("s", "f"):
            flows.append((e, ts))
    unbound = []
    starts: dict = {}
    for e, ts in flows:
        mine = slices.get((e["pid"], e["tid"]), ())
        if e["ph"] == "s":
            ok = any(a <= ts <= b for a, b, _ in mine)
            starts[e["id"]] = ts
        else:
            ok = e.get("bp") == "e" and any(a == ts for a, _b, _ in mine) and starts.get(e["id"], ts + 1) <= ts
        if not ok:
            unbound.append(e)
    return unbound


class _Slice:
    __slots__ = ("start", "duration", "name", "children", "parent")

    def __init__(self, start: float, duration: float, name: str):
        self.start = start
        self.duration = duration
        self.name = name
        self.children: list[_Slice] = []
        self.parent: _Slice | None = None

    @property
    def end(self) -> float:
        return self.start + self.duration


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)


def _bounds(outer: _Slice, inner: _Slice, scale: float) -> bool:
    starts_before = _js_round(inner.start * scale) < _js_round(outer.start * scale)
    ends_after = _js_round(outer.end * scale) < _js_round(inner.end * scale)
    return not starts_before and not ends_after


def _closed_index(slices: list[_Slice], t: float) -> int | None:
    """Index of a slice among sorted, non-overlapping ``slices`` whose [start, end] holds ``t`` (None if none)."""
    lo, hi, hit = 0, len(slices) - 1, -1
    while lo <= hi:  # first index whose start is >= t (the leftmost equal one if any)
        mid = (lo + hi) // 2
        d = slices[mid].start - t
        if d < 0:
            lo = mid + 1
        elif d > 0:
            hi = mid - 1
        else:
            hit, hi = mid, mid - 1
    i = hit if hit != -1 else lo
    for j in (i - 1, i):
        if 0 <= j < len(slices) and slices[j].start <= t <= slices[j].end:
            return j
    return None


def _find(top: list[_Slice], t: float) -> _Slice | None:
    i = _closed_index(top, t)
    if i is None:
        return None
    cur = top[i]
    while True:
        i = _closed_index(cur.children, t)
        if i is None:
            return cur
        cur = cur.children[i]


def catapult_bindings(trace_text: str) -> tuple[list[dict], list[tuple[dict, str]]]:
    """(flow events chrome://tracing drops, (flow event, name of the slice it binds to) for the others)."""
    trace = json.loads(trace_text)
    scale = 1e6 if trace.get("displayTimeUnit") == "ns" else 1e3
    per_thread: dict[tuple, list[_Slice]] = defaultdict(list)
    flows = []
    for e in trace["traceEvents"]:
        key = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            per_thread[key].append(_Slice(e["ts"] * MS_PER_US, e["dur"] * MS_PER_US, e["name"]))
        elif e["ph"] in ("i", "I") and e.get("s", "t") == "t":  # thread instants are zero-length slices
            per_thread[key].append(_Slice(e["ts"] * MS_PER_US, 0.0, e["name"]))
        elif e["ph"] in ("s", "t", "f"):
            flows.append(e)
    tops: dict[tuple, list[_Slice]] = {}
    for key, slices in per_thread.items():
        order = sorted(range(len(slices)), key=lambda i: (slices[i].start, i))
        top: list[_Slice] = []
        last: _Slice | None = None
        for i in order:
            s = slices[i]
            parent = last
            while parent is not None and not _bounds(parent, s, scale):
                parent = parent.parent
            if parent is None:
                top.append(s)
            else:
                parent.children.append(s)
                s.parent = parent
            last = s
        tops[key] = top
    dropped, bound = [], []
    open_flows: dict = {}
    for e in sorted(flows, key=lambda e: e["ts"]):  # stable: ties stay in file order
        found = _find(tops.get((e["pid"], e["tid"]), []), e["ts"] * MS_PER_US)
        fid = json.dumps([e["id"], e.get("cat"), e["name"]])
        if e["ph"] == "s":
            if found is None:
                dropped.append(e)
            else:
                open_flows[fid] = e
                bound.append((e, found.name))
        else:
            if fid not in open_flows or found is None or e.get("bp") != "e":
                dropped.append(e)
            else:
                del open_flows[fid]
                bound.append((e, found.name))
    return dropped, bound
