"""The README's Python examples run as written, and its two commands are where CI finds them."""

import re
from pathlib import Path

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_main_and_test_commands_are_marked():
    for marker in ("<!-- main-command -->", "<!-- test-command -->"):
        after = README.split(marker, 1)[1].lstrip()
        assert after.startswith("```bash\npython3 -m venv .venv && "), marker
