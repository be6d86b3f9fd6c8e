"""``catlass-py calibrate``: predicted against published time for the chosen points, JSON or a table, the
picture, and the exit status (0 when the points meet the targets)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from catlass_py import cli


def test_calibrate_json_reports_the_published_and_predicted_times(capsys):
    rc = cli.main(["calibrate", "--points", "T01,T02", "--json"])
    out = json.loads(capsys.readouterr().out)
    by_id = {p["id"]: p for p in out["points"]}
    assert set(by_id) == {"T01", "T02"}
    assert (by_id["T01"]["published_us"], by_id["T02"]["published_us"]) == (19.38, 12.74)  # tools/tuner/README.md
    for p in by_id.values():
        assert p["ratio"] == pytest.approx(p["predicted_us"] / p["published_us"], rel=1e-3)
        assert p["arch"] == "Ascend910B2"
    (pair,) = out["pairs"]
    assert (pair["before"], pair["after"], pair["agrees"]) == ("T01", "T02", True)
    assert pair["published_change"] == pytest.approx(12.74 / 19.38 - 1, abs=1e-4)
    assert rc == (0 if out["meets_targets"] else 1)


def test_calibrate_prints_a_table_and_draws_the_picture(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "calibration.png"
    cli.main(["calibrate", "--points", "T02,T10", "--plot", str(path)])
    out = capsys.readouterr().out
    assert "T02" in out and "T10" in out and "12.74" in out and "15.50" in out and "geometric-mean error" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_refuses_unknown_points(capsys):
    assert cli.main(["calibrate", "--points", "T99"]) == 2
    assert "T99" in capsys.readouterr().err


def test_calibrate_names_requested_points_it_cannot_run(capsys):
    # T13 takes minutes (--slow), T31 is an example catlass_py does not build: nothing to run is an error
    assert cli.main(["calibrate", "--points", "T13"]) == 2
    assert capsys.readouterr().err == "error: --points: nothing to run: T13 needs --slow (minutes to simulate)\n"
    assert cli.main(["calibrate", "--points", "T31,T13", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: --points: nothing to run: T31 has no kernel in "
                                                          "catlass_py (46_ascend950_matmul_fixpipe is not built); "
                                                          "T13 needs --slow")
    # some run, some cannot: the ones skipped are named
    rc = cli.main(["calibrate", "--points", "T01,T13", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in out["points"]] == ["T01"]
    assert out["skipped"] == [{"id": "T13", "why": "needs --slow (minutes to simulate)"}]
    assert rc == (0 if out["meets_targets"] else 1)
    cli.main(["calibrate", "--points", "T01,T31"])
    assert "skipped: T31 has no kernel in catlass_py" in capsys.readouterr().out


def test_the_table_keeps_every_value_whole_in_an_80_column_terminal():
    from rich.console import Console

    from catlass_py.calibration.points import load_points
    from catlass_py.calibration.report import rich_table

    points = {p.id: p for p in load_points()}
    # what the table reads of a Prediction (whose times come from a cost report)
    rows = [SimpleNamespace(point=points[i], predicted_us=us, ratio=us / points[i].published_us, within=True)
            for i, us in (("T01", 18.06), ("Y01", 32.18))]
    console = Console(width=80, record=True, force_terminal=False)
    console.print(rich_table(rows))
    text = console.export_text()
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    for p in rows:  # id, device, role and the numbers each on one line; the case folds but keeps every character
        line = next(line for line in text.splitlines() if f" {p.point.id} " in line)
        for value in (p.point.arch.replace("Ascend", ""), p.point.role, f"{p.point.published_us:.2f}",
                      f"{p.predicted_us:.2f}", f"{p.ratio:.3f}"):
            assert value in line
        case = "".join(line.split("│")[2].strip() for line in text.splitlines() if line.count("│") > 5)
        assert p.point.label.replace(" ", "") in case.replace(" ", "")


@pytest.mark.parametrize("points, message", [("", "expected comma-separated point ids"),
                                             (",", "expected comma-separated point ids"),
                                             ("T01,T99", "--points: unknown id(s) T99")])
def test_calibrate_points_must_name_known_points(points, message, capsys):
    assert cli.main(["calibrate", "--points", points, "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_calibrate_points_ignore_case_and_empty_items(capsys):
    cli.main(["calibrate", "--points", "t01,", "--json"])
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["points"]] == ["T01"]
