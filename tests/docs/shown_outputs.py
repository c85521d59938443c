"""Every `$ neuronsim ...` example in README.md and docs/*.md prints what the page shows.

Usage: shown_outputs.py NEURONSIM SOURCE_DIR [DOC.md ...] (default: README.md and docs/*.md).

An example is a line of a fenced code block starting with `$ neuronsim` (continued by trailing
backslashes) and the lines after it up to the next `$ ` line or the block's end: the standard
output the page promises. A line that is `...` (indented or not) stands for any lines. The
command runs from SOURCE_DIR's copy of the page's fixtures (command_lines.fixtures) with the
source's tests/ and examples/ at hand. Exit status 1 and a diff per example that differs.
"""

import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import command_lines  # noqa: E402


def examples(path):
    """(line number, command, shown output lines) of each example in `path`."""
    found, fenced, lines, i = [], False, open(path).read().splitlines(), 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        if not (fenced and lines[i].startswith("$ neuronsim")):
            i += 1
            continue
        start, command = i + 1, lines[i][2:]
        while command.rstrip().endswith("\\"):
            i += 1
            command = command.rstrip()[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ ") and not lines[i].lstrip().startswith("```"):
            shown.append(lines[i])
            i += 1
        found.append((start, command, shown))
    return found


def matches(shown, got):
    """`got` is `shown` with each `...` line standing for any lines (none included)."""
    pattern = "".join("(?:.*\n)*" if line.strip() == "..." else re.escape(line) + "\n"
                      for line in shown)
    return re.fullmatch(pattern, "".join(line + "\n" for line in got)) is not None


def main():
    neuronsim, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = sys.argv[3:] or command_lines.doc_pages(source)
    failures = checked = 0
    for page in pages:
        found = examples(page)
        if not found:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            for name in ("tests", "examples"):
                os.symlink(os.path.join(source, name), os.path.join(scratch, name))
            os.chdir(scratch)
            command_lines.fixtures(os.path.basename(page), neuronsim)
            os.makedirs("out", exist_ok=True)
            for line, command, shown in found:
                args = shlex.split(command)
                run = subprocess.run([neuronsim] + args[1:], capture_output=True, text=True,
                                     env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
                got = run.stdout.rstrip("\n").split("\n")
                checked += 1
                if not matches(shown, got):
                    failures += 1
                    print(f"{os.path.relpath(page, source)}:{line}: {command} (exit {run.returncode})")
                    print("\n".join(difflib.unified_diff(shown, got, "shown", "printed", lineterm="", n=1)))
            os.chdir(source)
    print(f"shown outputs: {checked - failures} passed, {failures} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
