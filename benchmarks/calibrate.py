"""Calibration of the cost model against CATLASS's published timings (catlass_py.calibration).

    python benchmarks/calibrate.py                 # predict every modelled point that simulates quickly
    python benchmarks/calibrate.py --slow          # also the points that take minutes (T13-T16)
    python benchmarks/calibrate.py --fit           # re-fit the "fitted" cost parameters on the role=fit points
    python benchmarks/calibrate.py --slow --docs   # the table and picture of docs/performance-model.md

Recordings of each point's event stream are kept in --cache (default ~/.cache/catlass_py/calibration) so that a
fit or a second table costs replays only; delete the directory after changing a kernel. The table's predictions
come from replaying those recordings under the shipped parameters (the same numbers `catlass-py calibrate`
computes from fresh simulations).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from catlass_py.arch import get_arch
from catlass_py.calibration import (
    FITTED,
    Prediction,
    fit,
    load_or_record,
    load_points,
    pair_checks,
    replay,
    scatter_plot,
    select,
    summarize,
    table_markdown,
)

ROOT = Path(__file__).resolve().parents[1]


BEGIN = "<!-- calibration table: python benchmarks/calibrate.py --slow --docs -->"
END = "<!-- end of the calibration table -->"


def report_markdown(preds) -> str:
    """The table, the summary (all, fitted, held-out points) and the published pairs, as markdown."""
    s = summarize(preds)
    summary = (f"All {s.count} points: geometric-mean error {s.geomean_error:.1%}, worst factor {s.worst_factor:.3f}, "
               f"outside x1.25: {', '.join(s.outside) or 'none'}.")
    lines = [table_markdown(preds), "", summary]
    for role, (n, g, w) in s.by_role.items():
        lines.append(f"{role.capitalize()} points: {n}, geometric-mean error {g:.1%}, worst factor {w:.3f}.")
    lines += ["", "| before -> after | what changes | published | predicted | direction |", "|---|---|---|---|---|"]
    for c in pair_checks(preds):
        lines.append(f"| {c.before} -> {c.after} | {c.what} | {c.published_change:+.1%} | {c.predicted_change:+.1%} | "
                     f"{'same' if c.agrees else 'OPPOSITE'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slow", action="store_true", help="include the points that take minutes to simulate")
    ap.add_argument("--points", default=None, help="comma-separated ids (default: every modelled point)")
    ap.add_argument("--fit", action="store_true", help="re-fit the fitted parameters on the role=fit points")
    ap.add_argument("--max-evaluations", type=int, default=200)
    ap.add_argument("--params", default=None, help="JSON of cost parameters to predict with (default: the shipped)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "catlass_py" / "calibration"))
    ap.add_argument("--docs", action="store_true",
                    help="write docs/calibration.png and the table of docs/performance-model.md")
    ns = ap.parse_args(argv)

    cache = Path(ns.cache)
    points = select(load_points(), ns.points.split(",") if ns.points else None, slow=ns.slow)
    recordings = {}
    for p in points:
        t0 = time.perf_counter()
        recordings[p.id] = load_or_record(p, cache)
        print(f"{p.id}: recorded ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)

    params = json.loads(ns.params) if ns.params else {}
    if ns.fit:
        train = [p for p in points if p.role == "fit"]
        count = [0]

        def log(value, trial):
            count[0] += 1
            if count[0] % 10 == 0:
                print(f"  evaluation {count[0]}: {value:.5f} {json.dumps({k: round(v, 4) for k, v in trial.items()})}",
                      file=sys.stderr, flush=True)

        start = dict(FITTED)  # the starting values of the documented fit
        params = fit(train, recordings, start, max_evaluations=ns.max_evaluations, log=log)
        print("fitted:", json.dumps(params))

    preds = []
    for p in points:
        arch = get_arch(p.arch)
        if params:
            arch = arch.model_copy(update={"cost": arch.cost.model_copy(update=params)})
        t0 = time.perf_counter()
        preds.append(Prediction(p, replay(recordings[p.id], arch), time.perf_counter() - t0))
    s = summarize(preds)
    text = report_markdown(preds)
    print(text)
    if ns.docs:
        scatter_plot(preds, ROOT / "docs" / "calibration.png")
        doc = ROOT / "docs" / "performance-model.md"
        old = doc.read_text(encoding="utf-8")
        start, end = old.index(BEGIN) + len(BEGIN), old.index(END)
        doc.write_text(old[:start] + "\n" + text + "\n" + old[end:], encoding="utf-8")
        print(f"wrote docs/calibration.png and the table of {doc.relative_to(ROOT)}", file=sys.stderr)
    return 0 if s.meets_targets else 1


if __name__ == "__main__":
    sys.exit(main())
