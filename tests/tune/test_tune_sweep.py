"""The tuner: search spaces and their legality, the roofline bound, the sweep (serial and on a process pool, the
same table), pruning that keeps the ranked table exact, the result cache, the CLI, and CATLASS's tuner README
case (example 00, 256 x 512 x 1024)."""

from __future__ import annotations

import csv
import json

import pytest

from catlass_py import cli
from catlass_py.arch import ATLAS_A2
from catlass_py.runner import example_names, load_script
from catlass_py.tune import (
    LocalExecutor,
    Ranking,
    ResultCache,
    SearchSpace,
    SerialExecutor,
    SweepStats,
    Task,
    TileRange,
    evaluate,
    legal_configs,
    roofline_us,
    space_of,
    sweep,
    task_key,
)
from catlass_py.tune.space import SPACES, Problem, check_config, is_mix

EX00 = "00_basic_matmul"
#: a small space of example 00: 2 x 2 x 1 tiles x 2 swizzles
SMALL = SearchSpace("small", "test", TileRange((64, 128), (128, 256), (128, 128), (64, 64), step=64),
                    (("swizzle", ("3,0", "3,1")),), problem=lambda a: Problem(*a[:3]))


def _table(rows_or_ranking, shape):
    ranking = rows_or_ranking if isinstance(rows_or_ranking, Ranking) else _rank(rows_or_ranking)
    return [(r.key, r.time_us, r.record["cycles"]) for r in ranking.table(shape)]


def _rank(rows, top=10):
    ranking = Ranking(top)
    for r in rows:
        ranking.add(r)
    return ranking


def test_every_shipped_example_has_a_search_space_whose_default_candidates_assemble():
    assert sorted(SPACES) == example_names()
    for name in example_names():
        example = load_script(name)
        space = space_of(name)
        first = next(space.candidates())
        assert check_config(example.assemble, first, ATLAS_A2 if name != "transpose_quant_batch_matmul" else None) \
            is None or name == "transpose_quant_batch_matmul", (name, first)
        assert space.size() >= 8 or name in ("19_mla", "23_flash_attention_infer"), name  # tiles fixed by the blocks


@pytest.mark.parametrize("name, shape", [
    ("13_basic_matmul_tla", ("200", "520", "384")), ("14_optimized_matmul_tla", ("200", "300", "256")),
    ("41_sparse_matmul_tla", ("160", "320", "256")), ("42_quant_optimized_matmul_tla", ("200", "300", "512")),
    ("44_quant_matmul_full_loadA_tla", ("300", "200", "256")),
    ("45_strided_batched_matmul_tla", ("2", "130", "200", "128")),
    ("52_quant_multi_core_splitk_matmul_tla", ("64", "300", "1100")),
])
def test_the_tla_examples_spaces_sweep(name, shape):
    # the first legal configurations of each TLA example's space predict (timing-only) without an error, and where
    # the space carries a roofline it bounds every prediction from below
    example, space = load_script(name), space_of(name)
    rows = list(sweep(example, [shape], space, arch="AtlasA2", cores=6, executor=SerialExecutor(), prune=False,
                      limit=2))
    assert len(rows) == 2 and all(r.record["status"] == "ok" and r.record["cycles"] > 0 for r in rows), rows
    if space.problem is not None:
        problem = space.problem_for(example, shape)
        for r in rows:
            assert roofline_us(problem, r.config["l1_tile"], ATLAS_A2, 6) <= r.time_us


def test_catlass_space_of_example_00_is_the_readme_one():
    space = space_of(EX00)
    assert space.name == "catlass" and space.size() == 1701 * 2  # 7 x 9 x 9 L1 tiles x 3 L0 K x 2 swizzles
    cands = list(space.candidates())
    assert {"l1_tile": "64x128x128", "l0_tile": "64x128x64", "swizzle": "3,1"} in cands
    assert {"l1_tile": "32x128x128", "l0_tile": "32x128x32", "swizzle": "3,0"} in cands


def test_legality_is_the_assemblys_own_check():
    example = load_script(EX00)
    big = SearchSpace("big", "test", TileRange((128, 256), (256, 256), (256, 512), (64, 128), step=128))
    rejected = []
    legal = list(legal_configs(example.assemble, big, ATLAS_A2, rejected=rejected))
    # 256 x 256 x 512 fp16 A and B tiles, 2 stages each, overflow the 512 KiB L1; a 256 x 256 fp32 L0C tile
    # overflows the 128 KiB L0C
    assert {"l1_tile": "128x256x256", "l0_tile": "128x256x64"} in legal
    reasons = {c["l1_tile"] + "/" + c["l0_tile"]: r for c, r in rejected}
    assert "ConfigError" in reasons["256x256x512/256x256x64"] and "L1" in reasons["256x256x512/256x256x64"]
    assert "L0C" in reasons["256x256x256/256x256x64"]
    assert len(legal) + len(rejected) == big.size()


def test_the_roofline_bound_never_exceeds_the_prediction():
    example = load_script(EX00)
    for cfg in SMALL.candidates():
        rec = evaluate(Task(EX00, ("200", "520", "384"), tuple(cfg.items()), "AtlasA2", 6))
        bound = roofline_us(Problem(200, 520, 384), cfg["l1_tile"], ATLAS_A2, 6)
        assert rec["status"] == "ok" and 0 < bound <= rec["time_us"], (cfg, bound, rec)
    assert example.NAME == EX00


def test_a_mix_kernels_bound_includes_its_launch_head_and_stays_below_the_prediction():
    # example 12 runs cube and vector cores: its launch pays mix_launch_overhead_us on top
    example = load_script("12")
    space = space_of(example.NAME, "catlass")
    cfgs = list(legal_configs(example.assemble, space, ATLAS_A2))[::40][:6]
    assert cfgs and is_mix(example.assemble, cfgs[0], ATLAS_A2) and not is_mix(load_script(EX00).assemble, {}, ATLAS_A2)
    problem = space.problem_for(example, ("256", "512", "1024"))
    mix = Problem(problem.m, problem.n, problem.k, problem.batch, problem.elem, problem.dtype, mix=True)
    for cfg in cfgs:
        rec = evaluate(Task(example.NAME, ("256", "512", "1024"), tuple(cfg.items()), "AtlasA2", 2))
        bound = roofline_us(mix, cfg["l1_tile"], ATLAS_A2, 2)
        plain = roofline_us(problem, cfg["l1_tile"], ATLAS_A2, 2)
        assert bound == pytest.approx(plain + ATLAS_A2.cost.mix_launch_overhead_us)
        assert rec["status"] == "ok" and bound <= rec["time_us"], (cfg, bound, rec)


def test_a_rejected_configuration_is_reported_not_raised():
    rec = evaluate(Task(EX00, ("64", "64", "64"), (("l1_tile", "256x256x512"),), "AtlasA2", 2))
    assert rec["status"] == "illegal" and "L1" in rec["error"]


def test_serial_and_process_pool_sweeps_give_the_same_table():
    example = load_script(EX00)
    shapes = [["200", "520", "384"], ["64", "300", "128"]]
    serial = list(sweep(example, shapes, SMALL, arch="AtlasA2", cores=6, executor=SerialExecutor(), prune=False,
                        limit=3))
    pool = LocalExecutor(2)
    try:
        pooled = list(sweep(example, shapes, SMALL, arch="AtlasA2", cores=6, executor=pool, prune=False, limit=3,
                            batch=2, wave=3))
    finally:
        pool.close()
    assert [(r.shape, r.key, r.record["cycles"]) for r in serial] == \
        [(r.shape, r.key, r.record["cycles"]) for r in pooled]
    for shape in (tuple(s) for s in shapes):
        assert _table(serial, shape) == _table(pooled, shape) and len(_table(serial, shape)) == 3


def test_pruning_keeps_the_ranked_table_exact():
    example = load_script(EX00)
    # Rows from 16 (steps of 16): the thin tiles are predicted slow enough for the roofline bound (launch head,
    # compulsory misses, landing latencies) to rule them out once the top 2 are known.
    space = SearchSpace("prune", "test", TileRange((16, 128), (128, 256), (128, 128), (64, 64), step=16),
                        problem=lambda a: Problem(*a[:3]))
    shape = ("256", "512", "256")
    full = list(sweep(example, [shape], space, arch="AtlasA2", cores=8, executor=SerialExecutor(), prune=False))
    stats = SweepStats()
    pruned = list(sweep(example, [shape], space, arch="AtlasA2", cores=8, executor=SerialExecutor(), top=2,
                        wave=4, stats=stats))
    assert stats.pruned > 0 and stats.pruning_disabled == 0 and len(pruned) == len(full)
    assert _table(_rank(pruned, 2), shape) == _table(_rank(full, 2), shape)


def test_example_45_s_roofline_reads_its_own_arguments_and_bounds_every_prediction():
    name = "45_strided_batched_matmul_tla"
    example = load_script(name)
    space = SPACES[name]["default"]
    shape = ("3", "200", "300", "256", "0", "row", "col")  # the example's parser: layouts as trailing words
    problem = space.problem_for(example, shape)
    assert (problem.batch, problem.m, problem.n, problem.k) == (3, 200, 300, 256)
    full = list(sweep(example, [shape], space, arch="AtlasA2", cores=8, executor=SerialExecutor(), prune=False,
                      limit=24))
    assert len(full) == 24
    for row in full:
        assert row.record["status"] == "ok"
        assert 0 < roofline_us(problem, row.config["l1_tile"], ATLAS_A2, 8) <= row.record["time_us"], row.config
    stats = SweepStats()
    pruned = list(sweep(example, [shape], space, arch="AtlasA2", cores=8, executor=SerialExecutor(), top=2,
                        wave=4, stats=stats, limit=24))
    assert stats.pruning_disabled == 0 and len(pruned) == len(full)
    assert _table(_rank(pruned, 2), shape) == _table(_rank(full, 2), shape)


def test_the_cache_makes_a_rerun_cost_nothing(tmp_path):
    example = load_script(EX00)
    shape = [["200", "520", "384"]]
    first_stats, again_stats = SweepStats(), SweepStats()
    with ResultCache(tmp_path) as cache:
        first = list(sweep(example, shape, SMALL, arch="AtlasA2", cores=6, executor=SerialExecutor(), cache=cache,
                           prune=False, stats=first_stats, limit=4))
    with ResultCache(tmp_path) as cache:
        again = list(sweep(example, shape, SMALL, arch="AtlasA2", cores=6, executor=SerialExecutor(), cache=cache,
                           prune=False, stats=again_stats, limit=4))
    assert first_stats.evaluated == 4 and again_stats.evaluated == 0 and again_stats.cached == 4
    assert {r.source for r in again} == {"cache"}
    assert [(r.key, r.record["cycles"]) for r in first] == [(r.key, r.record["cycles"]) for r in again]
    base = Task(EX00, ("200", "520", "384"), (("swizzle", "3,0"),), "AtlasA2", 6)
    keys = {task_key(base), task_key(Task(EX00, ("200", "520", "385"), base.config, "AtlasA2", 6)),
            task_key(Task(EX00, base.args, (("swizzle", "3,1"),), "AtlasA2", 6)),
            task_key(Task(EX00, base.args, base.config, "AtlasA2", 5)),
            task_key(Task(EX00, base.args, base.config, "Ascend950", 6))}
    assert len(keys) == 5 and task_key(base) == task_key(Task(EX00, ("200", "520", "384"), base.config, "AtlasA2", 6))


def test_readme_case_published_best_is_predicted_well_ahead_of_the_baseline():
    # CATLASS tools/tuner/README.md: 00_basic_matmul 256 x 512 x 1024 fp16 on the board: baseline (case 1) L1
    # 32x128x128, L0 32x128x32, <3,0>: 19.38 us; best (case 489) L1 64x128x128, L0 64x128x64, <3,1>: 12.74 us
    best = evaluate(Task(EX00, ("256", "512", "1024"),
                         (("l1_tile", "64x128x128"), ("l0_tile", "64x128x64"), ("swizzle", "3,1")), "AtlasA2", 24))
    base = evaluate(Task(EX00, ("256", "512", "1024"),
                         (("l1_tile", "32x128x128"), ("l0_tile", "32x128x32"), ("swizzle", "3,0")), "AtlasA2", 24))
    assert best["status"] == base["status"] == "ok"
    assert best["time_us"] < 0.85 * base["time_us"]  # the board: 12.74 / 19.38 = 0.66


def test_tune_command_ranks_writes_draws_and_verifies(tmp_path, capsys):
    out, pic = tmp_path / "rows.csv", tmp_path / "search.png"
    rc = cli.main(["tune", EX00, "128", "256", "200", "--space", "quick", "--limit", "6", "--jobs", "1",
                   "--cores", "4", "--top", "3", "--out", str(out), "--plot", str(pic), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0
    (shape,) = result["shapes"]
    assert shape["verify"]["passed"] and len(shape["top"]) == 3
    times = [r["time_us"] for r in shape["top"]]
    assert times == sorted(times)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and {"l1_tile", "l0_tile", "swizzle", "time_us", "status"} <= set(rows[0])
    assert pic.stat().st_size > 1000
    json_out = tmp_path / "rows.json"
    assert cli.main(["tune", EX00, "128", "256", "200", "--space", "quick", "--limit", "2", "--jobs", "1",
                     "--cores", "4", "--out", str(json_out), "--no-verify"]) == 0
    assert len(json.loads(json_out.read_text())) == 2
    assert "best predicted configurations" in capsys.readouterr().out


def test_tune_command_bad_arguments_exit_2(capsys):
    assert cli.main(["tune", EX00, "128", "256", "200", "--space", "nope"]) == 2
    assert cli.main(["tune", EX00, "128", "256", "200", "--set", "l1_tile=x"]) == 2
    assert "expected MxNxK" in capsys.readouterr().err


def test_tune_help_lists_the_search_spaces(capsys):
    assert cli.main(["tune", EX00, "--help"]) == 0
    out = capsys.readouterr().out
    assert "search spaces of 00_basic_matmul" in out and "catlass:" in out and "3402 candidates" in out


def test_shapes_file(tmp_path, capsys):
    f = tmp_path / "shapes.txt"
    f.write_text("# m n k\n64 128 64\n\n96 128 64  # a second shape\n")
    rc = cli.main(["tune", EX00, "--shapes", str(f), "--space", "quick", "--limit", "2", "--jobs", "1", "--cores",
                   "2", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and [s["args"] for s in result["shapes"]] == [["64", "128", "64"], ["96", "128", "64"]]
    assert all(s["verify"]["passed"] for s in result["shapes"])


def test_docs_tuning_is_true(capsys):
    import pathlib
    import re
    import shlex

    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "tuning.md").read_text()
    # the table of search spaces names every space with its candidate count
    for example, spaces in SPACES.items():
        for name, space in spaces.items():
            assert re.search(rf"^\| {re.escape(example)} \| {name} \| {space.size()} \|", doc, re.M), (example, name)
    # the quoted --set errors are the real ones
    quoted = re.findall(r"^\$ catlass-py (run .*)\n(error: .*)$", doc, re.M)
    assert len(quoted) == 4
    for command, error in quoted:
        assert cli.main(shlex.split(command)) == 2
        assert capsys.readouterr().err.strip() == error


def test_a_set_keyword_the_space_varies_narrows_the_space_to_it(capsys):
    base = ["tune", EX00, "128", "256", "200", "--space", "quick", "--jobs", "1", "--cores", "2", "--top", "50",
            "--no-verify", "--json"]
    assert cli.main([*base, "--set", "swizzle=3,1"]) == 0
    (shape,) = json.loads(capsys.readouterr().out)["shapes"]
    assert shape["top"] and {r["swizzle"] for r in shape["top"]} == {"3,1"}
    # a value the space does not list is taken too: every candidate has it
    assert cli.main([*base, "--set", "l1_tile=64x128x128", "--set", "l0_tile=64x128x64"]) == 0
    (shape,) = json.loads(capsys.readouterr().out)["shapes"]
    assert {(r["l1_tile"], r["l0_tile"]) for r in shape["top"]} == {("64x128x128", "64x128x64")}
    assert len(shape["top"]) == 2  # the two swizzles of quick: the tile pairs collapsed into one


def test_configurations_that_fail_in_the_simulator_are_counted_and_named(capsys):
    # example 44 with one L1B stage and two K tiles: the in-order simulator refuses the block (a ConfigError)
    argv = ["tune", "44", "256", "512", "512", "--cores", "2", "--jobs", "1", "--no-verify", "--limit", "8",
            "--set", "l1b_stages=1"]
    assert cli.main([*argv, "--json"]) in (0, 1)
    result = json.loads(capsys.readouterr().out)
    assert result["stats"]["errors"] > 0
    cli.main(argv)
    out, err = capsys.readouterr()
    text = " ".join((out + err).split())  # (the rich footer wraps)
    assert "failed in the simulator (not cached)" in text and "L1B_STAGES = 1" in err
    assert "configuration(s) failed in the simulator" in err or "no configuration could be predicted" in err


def test_unreadable_shapes_and_unwritable_out_paths_are_named(tmp_path, capsys):
    assert cli.main(["tune", EX00, "--shapes", str(tmp_path / "none.txt"), "--space", "quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --shapes: cannot read") and "\n" not in err
    assert cli.main(["tune", EX00, "64", "64", "64", "--space", "quick", "--out", str(tmp_path / "no" / "x.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --out: cannot write") and "does not exist" in err


def test_the_ranked_table_fits_80_columns_with_the_fixed_settings_in_its_title():
    from rich.console import Console

    from catlass_py.tune.command import _ranked_table

    cfg = {"l1_tile": "128x256x256", "l0_tile": "128x256x64", "swizzle": "3,0", "layout_a": "ColumnMajor"}
    row = type("R", (), {"time_us": 23.373, "config": cfg, "record": {"bound_by": "timeline", "cube_utilisation": 0.4},
                         "source": "cache"})()
    console = Console(width=80, record=True, force_terminal=False)
    console.print(_ranked_table(EX00, ("256", "512", "1024"), [row], ["l1_tile", "l0_tile", "swizzle", "layout_a"],
                                "stats", {"layout_a": "ColumnMajor"}))
    text = console.export_text()
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    assert "layout_a=ColumnMajor" in " ".join(text.split())  # in the title, not a column
    line = next(line for line in text.splitlines() if "23.373" in line)
    for value in ("1", "128x256x256", "128x256x64", "3,0", "timeline", "40%", "cache"):
        assert value in line
