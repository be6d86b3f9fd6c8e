"""The command line behaves like the tools people know: --version, python -m catlass_py, list --json, a
schema_version in every JSON, output paths checked before the run, messages that name the user's argument and
value, a summary that names its reference and times each phase, a labelled progress bar, long per-core dicts
summarised (whole in --json), and OS errors that end in a message instead of a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from catlass_py import JSON_SCHEMA_VERSION, __version__, cli
from catlass_py.runner import BlockProgress

SMALL10 = ["run", "10", "2", "40", "64", "32", "--cores", "2"]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")  # summary rows on one line each


def _no_run(monkeypatch):
    """Make any attempt to load (and so run) an example fail the test: checks must come first."""
    def boom(name):
        raise AssertionError(f"the example {name} was loaded although an option was bad")
    monkeypatch.setattr(cli, "load_script", boom)


def test_version_from_the_one_source(capsys):
    assert cli.main(["--version"]) == 0  # argparse's status, returned
    assert capsys.readouterr().out.strip() == f"catlass-py {__version__}"
    from importlib.metadata import version

    assert version("catlass-py") == __version__  # pyproject reads catlass_py.__version__


def test_python_dash_m_runs_the_command():
    out = subprocess.run([sys.executable, "-m", "catlass_py", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"catlass-py {__version__}"


def test_list_json_has_a_schema_version_and_every_example(capsys):
    assert cli.main(["list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == JSON_SCHEMA_VERSION and doc["version"] == __version__
    names = [e["name"] for e in doc["examples"]]
    assert names == cli.example_names()
    ten = doc["examples"][names.index("10_grouped_matmul_slice_m_per_token_dequant")]
    assert ten["usage"] == "problem_count m n k [device_id]"
    assert ten["command"] == "catlass-py run 10_grouped_matmul_slice_m_per_token_dequant problem_count m n k [device_id]"
    assert "int8" in ten["summary"]


def test_script_info_reads_a_user_file_without_running_it(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text('raise SystemExit("imported!")\nUSAGE = "m n"\nSUMMARY = "mine"\n')
    assert cli.script_info(str(f)) == {"name": "mine", "usage": "m n", "summary": "mine", "path": str(f)}


def test_run_json_has_schema_version_reference_and_timings(capsys):
    assert cli.main([*SMALL10, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert next(iter(doc)) == "schema_version" and doc["schema_version"] == JSON_SCHEMA_VERSION
    assert doc["reference"] == "fp32 golden" and doc["output_dtype"] == "bf16"
    assert set(doc["timings"]) == {"host_inputs", "launch", "golden", "load", "wall"}
    assert doc["timings"]["launch"] == doc["seconds"]
    assert doc["timings"]["wall"] >= doc["timings"]["launch"] + doc["timings"]["golden"]


def test_trace_json_has_a_schema_version(tmp_path, capsys):
    trace = tmp_path / "t.json"
    assert cli.main([*SMALL10, "--json", "--trace", str(trace)]) == 0
    assert json.loads(trace.read_text())["otherData"]["schema_version"] == JSON_SCHEMA_VERSION


@pytest.mark.parametrize("option", ["--trace", "--timeline"])
def test_unwritable_output_paths_fail_before_the_run(option, tmp_path, monkeypatch, capsys):
    _no_run(monkeypatch)
    missing = str(tmp_path / "no_such_dir" / "out.file")
    assert cli.main([*SMALL10, option, missing]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option}: cannot write {missing!r}: the directory") and "does not exist" in err
    assert cli.main([*SMALL10, option, str(tmp_path)]) == 2  # a directory
    assert f"error: {option}: expected a file path, got {str(tmp_path)!r} (a directory)" in capsys.readouterr().err
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert cli.main([*SMALL10, option, str(blocker / "out")]) == 2  # the 'directory' is a file
    assert "is not a directory" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [blocker]  # the check leaves nothing behind


def test_the_path_check_keeps_an_existing_file_and_leaves_no_new_one(tmp_path):
    existing = tmp_path / "keep.json"
    existing.write_text("old")
    assert cli.check_output_path("--trace", str(existing)) == existing and existing.read_text() == "old"
    fresh = tmp_path / "new.json"
    cli.check_output_path("--trace", str(fresh))
    assert not fresh.exists()


def test_bad_counts_and_core_selections_fail_before_the_run(monkeypatch, capsys, tmp_path):
    _no_run(monkeypatch)
    png = str(tmp_path / "t.png")
    cases = [
        (["--seeds", "-1"], "error: argument --seeds: expected a decimal integer (ASCII digits), got '-1'"),
        (["--cores", "0"], "error: argument --cores: expected an integer in [1, 4294967295], got 0"),
        (["--timeline-cores", "0-1"], "error: --timeline-cores: selects the cores of a --timeline picture"),
        (["--timeline", png, "--timeline-cores", "x"], "error: --timeline-cores: expected AI core ids like '0-3,7', got 'x'"),
        (["--timeline", png, "--timeline-cores", "3-1"], "error: --timeline-cores: expected ascending ranges"),
        (["--timeline", png, "--timeline-cores", "0,5"],
         "error: --timeline-cores: the run has AI cores 0..1 (--cores 2), got core 5"),
    ]
    for extra, message in cases:
        assert cli.main([*SMALL10, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith(message) or f"catlass-py run: {message}" in err, extra
    assert cli.parse_core_selection("--timeline-cores", "0-2, 7,1") == (0, 1, 2, 7)


@pytest.mark.parametrize("argv, message", [
    (["00", "-5", "8", "8"], "error: m: expected a decimal integer (ASCII digits), got '-5' "
                             "(usage: 00_basic_matmul m n k [device_id])"),
    (["01", "2", "-5", "8", "8"], "error: m: expected a decimal integer (ASCII digits), got '-5'"),
    (["10", "2", "40", "4294967296", "32"], "error: n: expected an integer in [0, 4294967295], got 4294967296"),
    (["00", "5", "8", "x"], "error: k: expected a decimal integer (ASCII digits), got 'x'"),
])
def test_size_messages_name_the_argument_and_the_value_typed(argv, message, capsys):
    assert cli.main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1  # one line, never wrapped


def test_an_ambiguous_prefix_is_a_sentence(capsys):
    assert cli.main(["run", "1", "2", "3", "3", "3"]) == 2
    starting = [name for name in cli.example_names() if name.startswith("1")]
    assert starting[:2] == ["10_grouped_matmul_slice_m_per_token_dequant", "11_grouped_matmul_slice_k_per_token_dequant"]
    assert capsys.readouterr().err == (
        f"error: example: '1' is ambiguous: {', '.join(starting)} all start with it; give more of the name\n")
    assert cli.main(["run", "zz"]) == 2
    assert capsys.readouterr().err.startswith("error: example: no example is called 'zz' (or starts with it); "
                                              "expected one of 00_basic_matmul, ")


def test_summary_names_its_reference_and_times_each_phase(capsys):
    assert cli.main(SMALL10) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "max |error| vs fp32 golden" in out
    assert "bit-exact vs bf16(golden) │ True" in out
    for row in ("host inputs", "launch (simulation)", "golden and compare", "wall time"):
        assert row in out
    assert "loading the library and the example" in out


def test_long_per_core_dicts_are_summarised_and_whole_in_json(capsys):
    argv = ["run", "09", "64", "64", "2048", "--cores", "12"]
    assert cli.main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "tiles per aiv │ min 1, max 1, total 22 over 22 AIVs (each: --json)" in out
    assert "AIV0.0" not in out
    assert cli.main([*argv, "--json"]) == 0
    tiles = json.loads(capsys.readouterr().out)["details"]["tiles_per_aiv"]
    assert len(tiles) == 22 and tiles["AIV0.0"] == 1


def test_progress_hook_hears_each_phase():
    phases, totals = [], []
    hook = BlockProgress(lambda n: None, totals.append, phases.append)
    example = cli.load_script("10")
    example.run(["2", "40", "64", "32"], cores=2, progress=hook)
    assert phases == ["host inputs", "launch", "golden"]
    assert totals == [2]


def test_the_terminal_progress_bar_labels_its_phases(monkeypatch):
    from rich.progress import Progress

    seen = []
    original = Progress.update

    def update(self, task_id, **kw):
        if "description" in kw:
            seen.append(kw["description"])
        return original(self, task_id, **kw)

    monkeypatch.setattr(Progress, "update", update)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("TTY_INTERACTIVE", "1")
    assert cli.main(SMALL10) == 0
    assert seen == ["generating host inputs", "simulating blocks", "golden and compare"]


def test_os_errors_end_in_a_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    import catlass_py.analysis as analysis

    def fail(cost, path, **kw):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(analysis, "write_chrome_trace", fail)
    assert cli.main([*SMALL10, "--trace", str(tmp_path / "t.json")]) == 2  # the run could not be made
    err = capsys.readouterr().err
    assert err.startswith("error: OSError: [Errno 28] No space left on device") and "Traceback" not in err


def test_help_and_list_import_nothing_heavy():
    code = ("import sys; from catlass_py.cli import main\n"
            "for argv in (['list'], ['list', '--json']):\n"
            "    main(argv)\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('numpy', 'ml_dtypes', 'rich', 'pydantic', 'catlass_py.arch', 'catlass_py.runner')"
            " if m in sys.modules)\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "NO_COLOR": "1"}).stdout
    assert out.splitlines()[-1] == "HEAVY []"
    out = subprocess.run([sys.executable, "-c", "import sys, catlass_py; print(sorted(m for m in sys.modules "
                          "if m.split('.')[0] in ('numpy', 'ml_dtypes', 'rich', 'pydantic')))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_timeline_cores_reach_the_picture(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "t.png"
    assert cli.main([*SMALL10, "--json", "--timeline", str(png), "--timeline-cores", "1"]) == 0
    timeline = json.loads(capsys.readouterr().out)["analysis"]["timeline"]
    assert timeline["path"] == str(png) and timeline["cores"] == [1] and timeline["stalls"] > 0
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "1"], "--seeds: expected a count >= 2"),
    (["--arch", "Ascend910B4", "--cores", "24", "--predict-only"], "--cores: Ascend910B4 (--arch) has 20 AI cores"),
])
def test_options_that_would_check_nothing_or_price_a_device_it_is_not_are_refused(argv, message, capsys):
    assert cli.main(["run", "00", "64", "64", "64", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_the_summary_says_when_the_kernel_launched_on_fewer_cores(capsys):
    # example 44's host launches min(cores, blocks) AI cores, as the C++ does: one block, one core
    assert cli.main(["run", "44", "128", "256", "512", "--cores", "2"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "AI cores" in line)
    assert "2 (launched on 1: min(cores, blocks)" in row
