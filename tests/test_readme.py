"""README.md must stay true: its Python blocks run, its quoted error is the real one, CI runs its test command."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_quoted_config_error_is_the_real_message():
    from catlass_py.errors import ConfigError
    from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
    from catlass_py.gemm.block import BlockMmad
    from catlass_py.layout import RowMajor

    quoted = re.search(r"`ConfigError: (.*?)`", README).group(1)
    a, c = GemmType("int8", RowMajor), GemmType("int32", RowMajor)
    policy = MmadAtlasA2PreloadAsyncWithCallback(1, 2, 2, 3, 1, False, True)  # three L0B stages
    try:
        BlockMmad(policy, GemmShape(128, 256, 512), GemmShape(128, 256, 128), a, a, c)
    except ConfigError as exc:
        assert str(exc) == quoted
    else:
        raise AssertionError("three L0B stages should not fit")


def test_ci_runs_the_readme_test_command():
    cmd = subprocess.run(
        ["awk", "/<!-- ci:test-command/{found=1; next} found && /^```bash/{grab=1; next} grab && /^```/{exit} grab{print}",
         str(ROOT / "README.md")], capture_output=True, text=True, check=True).stdout.strip()
    assert cmd.endswith("pytest") and "pip install" in cmd
    assert "README.md" in (ROOT / ".ci" / "run").read_text()


def test_the_cli_section_states_the_exit_statuses_the_cli_returns():
    from catlass_py import cli

    section = README[README.index("## Command line"):README.index("## Supported kernels")]
    status = section[section.index("Exit status:"):]
    for phrase in ("0 pass", "1 a finding", "2 the run could not be made", "memory budget exceeded",
                   "never a traceback", "Ctrl-C exits 130"):
        assert phrase in status, phrase
    assert "CATLASS_PY_MEMORY_LIMIT" in section
    assert "1 - a finding about the kernel" in cli.__doc__ and "2 - the run could not be made" in cli.__doc__
