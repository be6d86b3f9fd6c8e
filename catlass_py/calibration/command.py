"""``catlass-py calibrate``: simulate every published point whose kernel catlass_py builds, print predicted against
published time and the ratio (a rich table, or JSON), the geometric-mean error of all, fitted and held-out points,
the direction of every published before -> after pair, and optionally the log-log picture."""

from __future__ import annotations

import json

from catlass_py.calibration.points import load_points, select
from catlass_py.calibration.predict import pair_checks, predict, summarize
from catlass_py.calibration.report import rich_table, scatter_plot
from catlass_py.errors import ArgumentError


def skipped_points(all_points, ids, points) -> list[tuple[str, str]]:
    """``(id, why)`` of each of the requested point ``ids`` that :func:`~catlass_py.calibration.points.select` left
    out of ``points``: its kernel is not built in catlass_py, or else it is one of the slow points (``--slow`` off)."""
    by_id = {p.id: p for p in all_points}
    running = {p.id for p in points}
    return [(i, f"has no kernel in catlass_py ({by_id[i].example} is not built)" if not by_id[i].modelled
             else "needs --slow (minutes to simulate)") for i in dict.fromkeys(ids) if i not in running]


def calibrate(ns, console) -> int:
    """Run the command for parsed arguments ``ns`` (``points``, ``slow``, ``plot``, ``json``); exit status 0 when
    the predictions meet the calibration targets, 1 otherwise. Requested points that cannot run are named (and an
    :class:`~catlass_py.errors.ArgumentError` when none can)."""
    all_points = load_points()
    ids = None
    if ns.points is not None:  # ids in any case, separated by commas (empty items ignored); naming none is an error
        ids = [i.strip().upper() for i in ns.points.split(",") if i.strip()]
        if not ids:
            raise ArgumentError(f"--points: expected comma-separated point ids such as T01,T02, got {ns.points!r}")
    points = select(all_points, ids, slow=ns.slow, label="--points")
    skipped = skipped_points(all_points, ids or [], points)
    if not points:
        raise ArgumentError(f"--points: nothing to run: {'; '.join(f'{i} {why}' for i, why in skipped)}")
    held_back = [p for p in select(all_points, None, slow=True) if p not in points and ns.points is None]
    preds = []
    for p in points:
        if not ns.json:
            console.print(f"[dim]{p.id}: {p.label} on {p.arch} ...[/dim]", highlight=False)
        preds.append(predict(p))
    summary = summarize(preds)
    pairs = pair_checks(preds)
    if ns.plot:
        scatter_plot(preds, ns.plot)
    if ns.json:
        print(json.dumps({
            "points": [{"id": p.point.id, "case": p.point.label, "arch": p.point.arch, "role": p.point.role,
                        "published_us": p.point.published_us, "predicted_us": round(p.predicted_us, 3),
                        "ratio": round(p.ratio, 4), "within": p.within} for p in preds],
            "geomean_error": round(summary.geomean_error, 4), "worst_factor": round(summary.worst_factor, 4),
            "by_role": {k: {"points": n, "geomean_error": round(g, 4), "worst_factor": round(w, 4)}
                        for k, (n, g, w) in summary.by_role.items()},
            "pairs": [{"before": c.before, "after": c.after, "published_change": round(c.published_change, 4),
                       "predicted_change": round(c.predicted_change, 4), "agrees": c.agrees} for c in pairs],
            "held_back": [p.id for p in held_back], "skipped": [{"id": i, "why": why} for i, why in skipped],
            "meets_targets": summary.meets_targets,
        }))
        return 0 if summary.meets_targets else 1
    console.print(rich_table(preds))
    console.print(f"geometric-mean error {summary.geomean_error:.1%} (target 10%), worst factor "
                  f"{summary.worst_factor:.3f} (target 1.25); outside: {', '.join(summary.outside) or 'none'}",
                  highlight=False)
    for role, (n, g, w) in summary.by_role.items():
        console.print(f"  {role}: {n} points, geometric-mean error {g:.1%}, worst factor {w:.3f}", highlight=False)
    for c in pairs:
        console.print(f"  {c.before} -> {c.after}: published {c.published_change:+.1%}, predicted "
                      f"{c.predicted_change:+.1%}, {'same direction' if c.agrees else 'OPPOSITE direction'} ({c.what})",
                      highlight=False)
    if held_back:
        console.print(f"held back (minutes each; --slow): {', '.join(p.id for p in held_back)}", highlight=False)
    if skipped:
        console.print(f"skipped: {'; '.join(f'{i} {why}' for i, why in skipped)}", highlight=False)
    if ns.plot:
        console.print(f"picture: {ns.plot}", highlight=False)
    return 0 if summary.meets_targets else 1


__all__ = ["calibrate"]
