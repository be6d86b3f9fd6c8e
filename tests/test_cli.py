"""The catlass-py command: list, run (summary and --json), bad arguments."""

import json

from catlass_py import cli


def test_list_shows_example_10(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "10_grouped_matmul_slice_m_per_token_dequant" in out


def test_run_json_reports_the_catlass_verdict_and_the_split(capsys):
    rc = cli.main(["run", "10_grouped_matmul_slice_m_per_token_dequant", "4", "64", "256", "96", "--cores", "3", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert result["passed"] is True and result["error_count"] == 0 and result["verdict"] == "Compare success."
    assert len(result["blocks_per_core"]) == 3
    assert sum(result["blocks_per_core"]) == result["details"]["total_blocks"]
    assert result["seconds"] > 0 and result["max_abs_error"] >= 0
    assert result["details"]["bit_exact"] is True


def test_run_prints_compare_success_and_a_summary(capsys):
    # a trailing device_id is accepted like CATLASS's argv[5]
    assert cli.main(["run", "10", "2", "40", "64", "32", "0", "--cores", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Compare success."
    assert "blocks per core" in out


def test_bad_arguments_exit_2_with_usage(capsys):
    assert cli.main(["run", "10", "2", "40"]) == 2
    assert "usage: 10_grouped_matmul_slice_m_per_token_dequant problem_count m n k" in capsys.readouterr().err
    assert cli.main(["run", "10", "2", "40", "x", "32"]) == 2
    assert cli.main(["run", "no_such_example"]) == 2
    assert cli.main(["run", "10", "2", "40", "64", "32", "--cores", "99"]) == 2
