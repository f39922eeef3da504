"""The loop of docs/python.md runs as written (its first python code block, asserts included)."""

import pathlib
import re

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_documented_loop_runs_and_checks_its_gradient(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert blocks, f"no python block in {PAGE}"
    exec(compile(blocks[0], str(PAGE), "exec"), {})
    assert capsys.readouterr().out == "revolve(c = 20) 3747 forward steps\n"  # l + p(1000, 20)
