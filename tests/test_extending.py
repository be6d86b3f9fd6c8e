"""docs/extending.md's worked examples run: each section's Python blocks in order, in a fresh interpreter (the
block policy registers itself, so it stays out of this process), with the blocks marked ``<!-- file: NAME -->``
also saved under NAME in the working directory; its ``catlass-py run`` command line; and its pytest file, which
uses the fixtures of the ``pytest11`` entry point."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "extending.md").read_text()
BLOCK = re.compile(r"(?:<!-- file: (?P<file>[\w.]+) -->\n)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S)


def sections() -> dict[str, list[tuple[str, str | None, str]]]:
    """Section title -> its code blocks as (language, file name or None, code)."""
    out = {}
    for part in re.split(r"^## ", DOC, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        out[title.strip()] = [(m["lang"], m["file"], m["code"]) for m in BLOCK.finditer(body)]
    return out


SECTIONS = sections()
FILES = {name: code for blocks in SECTIONS.values() for _, name, code in blocks if name}


def _python(cwd, *args, timeout=600):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def workdir(tmp_path):
    for name, code in FILES.items():
        (tmp_path / name).write_text(code)
    return tmp_path


def test_the_doc_has_the_three_worked_examples_and_the_command_line():
    assert {"A new epilogue: per-channel dequant, bias and ReLU", "A new kernel: cube and vector cores with "
            "cross-core flags", "A new block policy", "Run it from the command line"} <= set(SECTIONS)
    assert {"dequant_bias_relu.py", "matmul_scale.py", "matmul_scale_example.py", "test_matmul_relu.py"} <= set(FILES)


@pytest.mark.parametrize("title", ["A new epilogue: per-channel dequant, bias and ReLU",
                                   "A new kernel: cube and vector cores with cross-core flags",
                                   "A new block policy"])
def test_worked_example_runs(title, workdir):
    code = "\n".join(code for lang, _, code in SECTIONS[title] if lang == "python")
    (workdir / "section.py").write_text(code)
    done = _python(workdir, "section.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_user_script_runs_with_every_analysis_option(workdir):
    (command,) = [code.strip() for lang, _, code in SECTIONS["Run it from the command line"] if lang == "bash"]
    words = command.split()
    assert words[:3] == ["catlass-py", "run", "matmul_scale_example.py"]
    try:  # the timeline picture needs the optional 'plot' extra
        import matplotlib  # noqa: F401

        picture = ["--timeline", "timeline.png"]
    except ImportError:
        picture = []
    done = _python(workdir, "-m", "catlass_py.cli", *words[1:], *picture)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["passed"] and out["example"] == "matmul_scale" and out["cores"] == 3
    assert out["analysis"]["races"]["races"] == 0 and not out["analysis"]["interleavings"]["outputs_differ"]
    assert sum(out["blocks_per_core"]) == out["details"]["total_blocks"] == 4
    assert (workdir / "trace.json").stat().st_size > 0
    assert not picture or (workdir / "timeline.png").stat().st_size > 0
    direct = _python(workdir, "matmul_scale_example.py", "64", "256", "64", "--cores", "1")
    assert direct.returncode == 0 and "Compare success." in direct.stdout, direct.stdout + direct.stderr


def test_the_pytest_fixtures_are_registered(workdir):
    done = _python(workdir, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_matmul_relu.py")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
