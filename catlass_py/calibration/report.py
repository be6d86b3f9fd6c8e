"""The calibration table (markdown, or a rich table for the terminal) and the log-log picture of predicted against
published times (matplotlib, the optional ``plot`` extra)."""

from __future__ import annotations

from catlass_py.calibration.predict import TOLERANCE, Prediction


def _rows(predictions):
    for p in predictions:
        pt = p.point
        yield (pt.id, pt.label, pt.arch.replace("Ascend", ""), pt.role, f"{pt.published_us:.2f}",
               f"{p.predicted_us:.2f}",
               f"{p.ratio:.3f}", "yes" if p.within else "NO")


HEADER = ("id", "case", "device", "role", "published us", "predicted us", "ratio", f"within x{TOLERANCE}")


def table_markdown(predictions) -> str:
    """One markdown row per prediction: id, case, device, role, published, predicted, ratio, within tolerance."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(predictions)]
    return "\n".join(lines)


def rich_table(predictions, title: str = "cost model vs CATLASS's published timings"):
    """The same table as a :class:`rich.table.Table`."""
    from rich.table import Table

    table = Table(title=title)
    for name in HEADER:
        if name == "case":  # the one column that folds: the rest keep their values on one line at any width
            table.add_column(name, overflow="fold")
        else:  # two-word headers on two lines
            table.add_column(name.replace(" ", "\n"), justify="right" if name.endswith(("us", "ratio")) else "left",
                             no_wrap=True)
    for row in _rows(predictions):
        style = None if row[-1] == "yes" else "red"
        table.add_row(*row, style=style)
    return table


def scatter_plot(predictions: list[Prediction], path) -> None:
    """Log-log scatter of predicted against published time, fitted and held-out points apart, with the diagonal
    and the x1.25 band; written as a PNG to ``path`` (needs matplotlib: ``pip install 'catlass-py[plot]'``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the extra
        from catlass_py.errors import ArgumentError

        raise ArgumentError("the calibration picture needs matplotlib: pip install 'catlass-py[plot]'") from exc
    fig, ax = plt.subplots(figsize=(6.4, 6.0), dpi=120)
    values = [p.point.published_us for p in predictions] + [p.predicted_us for p in predictions]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, label="predicted = published")
    ax.fill_between([lo, hi], [lo / TOLERANCE, hi / TOLERANCE], [lo * TOLERANCE, hi * TOLERANCE], color="0.9",
                    label=f"within x{TOLERANCE}")
    for role, marker, color in (("fit", "o", "tab:blue"), ("held-out", "s", "tab:orange")):
        members = [p for p in predictions if p.point.role == role]
        if members:
            ax.scatter([p.point.published_us for p in members], [p.predicted_us for p in members], marker=marker,
                       color=color, label=f"{role} ({len(members)})", zorder=3)
            for p in members:
                ax.annotate(p.point.id, (p.point.published_us, p.predicted_us), textcoords="offset points",
                            xytext=(4, 3), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("published device time (us, CATLASS repository)")
    ax.set_ylabel("predicted device time (us, catlass_py cost model)")
    ax.set_title("Cost model calibration (Atlas A2 910B1/B2/B3)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["HEADER", "rich_table", "scatter_plot", "table_markdown"]
