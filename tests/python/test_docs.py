"""Every ```python block of README.md and docs/python.md that starts with an import is a whole
program: it runs as written (in a fresh directory, so the files it saves land there)."""

import os
import re

import pytest

from conftest import REPO

PAGES = ("README.md", os.path.join("docs", "python.md"))


def programs():
    found = []
    for page in PAGES:
        text = open(os.path.join(REPO, page)).read()
        for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            code = match.group(1)
            if code.startswith(("import ", "from ")):
                line = text.count("\n", 0, match.start()) + 2
                found.append(pytest.param(code, id=f"{page}:{line}"))
    return found


def test_pages_hold_whole_programs():
    ids = [p.id for p in programs()]
    assert any(i.startswith("README.md") for i in ids) and any(i.startswith("docs") for i in ids), ids


@pytest.mark.parametrize("code", programs())
def test_python_block_runs_as_written(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<doc block>", "exec"), {"__name__": "__doc_block__"})
