"""The records the cost model (:mod:`catlass_py.analysis.cost`) queues per core, and a template of them compiled
into one Python function.

A core's queue is a flat list of numbers, five per record, ``(kind, pipe index, a, b, x)`` (a ``_READ`` record is
followed by its reads, ``b`` numbers); :meth:`CostModel.on_event <catlass_py.analysis.cost.CostModel.on_event>`
says what each kind holds. A *template* (the records of a repeated piece of a core's program, which the machine
replays instead of publishing its events again, :class:`~catlass_py.arch.events.ObserverBus`) made only of
instructions that touch no GM, intra-core flags and one-pipe barriers - an L1 tile's L1 -> L0 loads and Mmads
with their flags, unit-flag Mmads included - is queued as one ``_MACRO`` record, ``(_MACRO, function index,
number of flag slots, 0, -1)`` followed by the replay's flag sequence numbers, and timed by the function
:func:`compile_template` made of it: the statements the timing loop runs for each of those records, written out
one after the other, with the core's pipe times in local variables.

=============  ====================================================================================
record         what the compiled statements do (the same operations, in the same order, as the loop)
=============  ====================================================================================
instruction    start = max(issue, pipe free), the core's clock = max(clock, start); the pipe is busy until
               start + duration, done after the landing cycles; issue advances by ``sic`` (to the end, for a
               scalar instruction)
set            fire = max(issue, pipe done, pipe free) becomes the token of its sequence number
wait           the token of its set (if any) holds the pipe (and issue, for a wait into S)
barrier        the pipe starts nothing before its issued work is done
unit-flag      an instruction as above (its duration computed once, when the template was kept), after
instruction    joining the core's unit-flag tokens of the other pipe on overlapping L0C bytes; a closing
               Mmad or a Fixpipe then publishes its end as the core's token for its L0C bytes
               (:meth:`PipeOrder._instruction_at <catlass_py.arch.pipe_order.PipeOrder._instruction_at>`)
=============  ====================================================================================

Every number is the same Python value the loop computes (the same expressions on the same operands). Timing the
records one by one, the loop may stop between two of them and let another core go (when the core's clock, the
latest start it timed, passes the other core's); the function therefore returns the core's clock after each of
its instructions, and the loop brings the core back at the clocks where it would have stopped. None of these
records meets another core (no GM access, no cross-core flag), so every core's records are timed in the same
order as one by one, the GM reads the L2 model orders included (``tools/record_streams.py`` and the tuner's
predictions compare the two).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from catlass_py.arch.pipe_order import PIPE_INDEX, PIPES, _overlapping, _replace
from catlass_py.arch.pipes import Pipe

_INSTR, _READ, _SET, _WAIT, _BARRIER, _EVENT, _MACRO = 0, 1, 2, 3, 4, 5, 6
"""Kinds of the queued records."""

MAX_RECORDS = 512
"""Templates longer than this are not compiled (their records are queued as they are)."""

_S = PIPE_INDEX[Pipe.S]
_M = PIPE_INDEX[Pipe.M]
_compiled: OrderedDict = OrderedDict()  # a template's steps (kinds, pipes, unit flags) -> _compile's maker (LRU)
_CACHE_SIZE = 256


def compilable(records: list, units: dict) -> bool:
    """Whether :func:`compile_template` takes ``records``: instructions that touch no GM (``_INSTR`` with ``x`` -1
    and numeric duration and landing), ``SetFlag``/``WaitFlag``, one-pipe barriers and the unit-flag instructions
    ``units`` describes (``_EVENT``), from 2 up to :data:`MAX_RECORDS` of them, one at least an instruction."""
    n = len(records)
    if n > 5 * MAX_RECORDS or n < 10 or n % 5:
        return False
    for j in range(0, n, 5):
        code = records[j]
        if code == _INSTR:
            if (records[j + 4] != -1 or type(records[j + 2]) not in (int, float)
                    or type(records[j + 3]) not in (int, float)):
                return False
        elif code == _EVENT:
            if j not in units:
                return False
        elif code not in (_SET, _WAIT, _BARRIER):
            return False
    return any(records[j] == _INSTR or records[j] == _EVENT for j in range(0, n, 5))


def compile_template(records: list, units: dict) -> Callable:
    """The function timing the :func:`compilable` ``records`` on a core: ``run(t, q, p, tokens, sic, st)`` with
    ``t`` the core's timing state (``issue``, ``clock``, and ``free``/``done``/``last_end``/``busy`` per pipe), the
    replay's flag sequence numbers at ``q[p], q[p + 1], ...`` (one per SetFlag or WaitFlag of the records, in
    order), the launch's intra-core tokens, the cycles one scalar issue takes and the core's
    :class:`~catlass_py.arch.pipe_order.CoreOrder` (its unit-flag tokens); it returns the core's clock after each
    instruction. ``units`` maps the position of each unit-flag instruction (``_EVENT``) to ``(pipe index, its L0C
    accesses, whether it publishes, duration, landing cycles)``.

    The code depends only on the records' kinds, pipes and unit flags (compiled once per such sequence, kept for
    the process, the least recently used dropped past a few hundred); the durations, landing cycles and L0C
    accesses are bound to it per template, so the tiles of other shapes with the same steps reuse it."""
    shape, numbers = [], []
    for j in range(0, len(records), 5):
        code = records[j]
        if code == _EVENT:
            a, accs, publishes, dur, lat = units[j]
            shape.append((code, a, bool(accs), publishes))
            numbers += (dur, lat, accs)
        elif code == _INSTR:
            shape.append((code, records[j + 1]))
            numbers += (records[j + 2], records[j + 3])
        else:
            shape.append((code, records[j + 1]))
    key = tuple(shape)
    make = _compiled.get(key)
    if make is None:
        make = _compiled[key] = _compile(key)
        while len(_compiled) > _CACHE_SIZE:
            try:
                _compiled.popitem(last=False)
            except KeyError:  # emptied meanwhile by a launch in another thread
                break
    else:
        try:
            _compiled.move_to_end(key)
        except KeyError:  # dropped meanwhile by a launch in another thread: it has the function anyway
            pass
    return make(*numbers)


def _compile(shape: tuple) -> Callable:
    """``make(*numbers)``: the timing function of a template whose records have the kinds and pipes ``shape``,
    given each instruction's duration and landing cycles (and a unit-flag instruction's L0C accesses) in order."""
    used = sorted({step[1] for step in shape})
    namespace: dict = {f"P{a}": PIPES[a] for a in used}
    namespace.update(_overlapping=_overlapping, _replace=_replace)
    params: list[str] = []
    body = ["    free = t.free; done = t.done; last = t.last_end; busy = t.busy",
            "    issue = t.issue; clock = t.clock"]
    body += [f"    f{a} = free[P{a}]; d{a} = done[P{a}]; l{a} = last[P{a}]; b{a} = busy[P{a}]" for a in used]
    slot = 0
    for i, step in enumerate(shape):
        code, a = step[0], step[1]
        if code == _INSTR or code == _EVENT:
            dur, lat = f"n{i}", f"m{i}"
            params += [dur, lat]
            if code == _EVENT:
                params.append(f"u{i}")
                joins, own = ("unit_fix", "unit_mmad") if a == _M else ("unit_mmad", "unit_fix")
                if step[2]:
                    body += [f"    if st.{joins}:",
                             f"        for tok in _overlapping(st.{joins}, u{i}):",
                             f"            if tok > f{a}:",
                             f"                f{a} = tok"]
            body += [f"    start = issue if issue > f{a} else f{a}",
                     "    if start > clock:",
                     "        clock = start",
                     f"    c{i} = clock",
                     f"    end = start + {dur}",
                     f"    f{a} = end",
                     f"    l{a} = end + {lat}",
                     f"    if end + {lat} > d{a}:",
                     f"        d{a} = end + {lat}",
                     f"    b{a} += {dur}",
                     f"    issue = end + {lat}" if a == _S else "    issue = issue + sic"]
            if code == _EVENT and step[2] and step[3]:
                body.append(f"    _replace(st.{own}, u{i}, l{a})")
        elif code == _SET:
            body += ["    fire = issue",
                     f"    if d{a} > fire:",
                     f"        fire = d{a}",
                     f"    if f{a} > fire:",
                     f"        fire = f{a}",
                     "    issue += sic",
                     f"    tokens[q[p + {slot}]] = fire"]
            slot += 1
        elif code == _WAIT:
            body += [f"    token = tokens.pop(q[p + {slot}], None)",
                     "    if token is not None:",
                     f"        if token > f{a}:",
                     f"            f{a} = token"]
            if a == _S:
                body += ["        if token > issue:",
                         "            issue = token"]
            body.append("        issue += sic")
            slot += 1
        elif code == _BARRIER:
            body += [f"    if d{a} > f{a}:",
                     f"        f{a} = d{a}"]
    body.append("    t.issue = issue; t.clock = clock")
    body += [f"    free[P{a}] = f{a}; done[P{a}] = d{a}; last[P{a}] = l{a}; busy[P{a}] = b{a}" for a in used]
    clocks = [f"c{i}" for i, step in enumerate(shape) if step[0] == _INSTR or step[0] == _EVENT]
    body.append(f"    return ({', '.join(clocks)},)")
    lines = [f"def make({', '.join(params)}):", "  def run(t, q, p, tokens, sic, st):"]
    lines += ["  " + line for line in body]
    lines.append("  return run")
    exec(compile("\n".join(lines) + "\n", "<cost model template>", "exec"), namespace)  # noqa: S102 - no data
    return namespace["make"]
