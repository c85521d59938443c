"""Every `neuronsim ...` command line in a fenced code block of README.md and docs/*.md must parse.

Usage: command_lines.py NEURONSIM SOURCE_DIR [DOC.md ...] (default: README.md and docs/*.md).

A `run` of a library kernel, an `asm` and a `sweep` get --dry-run: every argument, parameter
value, shape, machine, input file header and output path is checked, nothing is simulated.
`list`, `report`, `view`, `diff`, `sweep merge` and Python kernels (whose options the Python
package parses) run for real, on small fixtures made below. A synopsis line (with [optional]
parts) and `calibrate` (20 s of simulation, no dry run) are checked against the command's
--help: every option it names must exist (and calibrate's --machine be one the usage lists).
Each page's commands run in order in a fresh directory, so a file one line writes is there for
the next. Run on the whole documentation, it also fails for an option some --help lists that
no page mentions. Exit status 1 and one block per failure.
"""

import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

COMMANDS = ("list", "run", "asm", "report", "view", "diff", "sweep", "calibrate")
COMMAND_LINE = re.compile(r"(?:^|\s)(?:build/)?neuronsim\s+(" + "|".join(COMMANDS) + r")\b")

# Placeholders a page uses for "any such thing", by page: each becomes one real value.
PLACEHOLDERS = {
    "kernels.md": {"KERNEL": "matmul"},
    "pooling.md": {"KERNEL": "max_pooling_3d_backward"},
    "traces.md": {"KERNEL": "matmul", "T.json": "t.json"},
    # GNU parallel's slot and a Slurm array task's variables.
    "sweep.md": {"{}": "1", '"$SLURM_CPUS_PER_TASK"': "1", '"$SLURM_ARRAY_TASK_ID/16"': "1/16",
                 '"shard$SLURM_ARRAY_TASK_ID.json"': "shard1.json"},
}

# Commands that are not meant to run as written, and why (page, text the command contains).
SKIPS = []

# The tiny run whose trace stands for the traces a page's commands read.
SMALL_RUN = ["run", "matmul", "--shape", "lhsT=128x128", "--shape", "rhs=128x64", "--timing-only"]


def fixtures(page, neuronsim):
    """Makes the files `page`'s command lines read before any of its lines writes them (a dry
    run writes nothing), in the current directory."""
    rng = np.random.default_rng(0)

    def npy(name, *shape):
        np.save(name, rng.standard_normal(shape).astype(np.float32))

    def trace(name):
        subprocess.run([neuronsim] + SMALL_RUN + ["--trace", name], check=True,
                       stdout=subprocess.DEVNULL)

    if page == "README.md":
        npy("a.npy", 128, 128)  # matmul lhsT [K, M]
        npy("b.npy", 128, 64)   # matmul rhs [K, N]
        for name in ("t.json", "before.json", "after.json"):  # t.json: what line 2's --trace writes
            trace(name)
        subprocess.run([neuronsim, "run", "matmul", "--timing-only", "--dump-asm", "m.nsasm"], check=True,
                       stdout=subprocess.DEVNULL)  # what the --dump-asm line writes, for the asm line
    elif page == "assembly.md":
        npy("a.npy", 64, 32)  # tests/programs/add_matmul.nsasm's declarations
        npy("b.npy", 64, 32)
        npy("w.npy", 64, 16)
    elif page == "traces.md":
        for name in ("t.json", "A.json", "B.json"):
            trace(name)
    elif page == "python.md":
        npy("x.npy", 128, 64)  # examples/rmsnorm.py: x [rows, d], weight [d]
        npy("w.npy", 64)
    elif page == "sweep.md":
        for shard in (1, 2, 3):
            subprocess.run([neuronsim, "sweep", "matmul_tutorial", "--shape", "lhsT=128x128",
                            "--shape", "rhs=128x512", "--param", "variant=t1_tiled,t1_hoisted",
                            "--param", "loop_buffers=1,2", "--jobs", "1", "--shard", f"{shard}/3",
                            "--json", f"shard{shard}.json"], check=True, capture_output=True)


def command_lines(path):
    """(line number, text) of each neuronsim command line in `path`'s fenced code blocks."""
    lines = open(path).read().splitlines()
    found, fenced, i = [], False, 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        start, text = i, lines[i]
        while fenced and text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1].rstrip() + " " + lines[i].strip()
        if fenced and COMMAND_LINE.search(text):
            found.append((start + 1, text))
        i += 1
    return found


def expand(words):
    """Shell globs (`shard*.json`) expanded in the current directory, as the shell would."""
    out = []
    for word in words:
        out += sorted(glob.glob(word)) if "*" in word and glob.glob(word) else [word]
    return out


def commands_of(text, page):
    """The neuronsim commands on one line, as argument lists after `neuronsim`: the comment
    (`# ...`) or description (after two spaces) dropped, a shell prompt, GNU parallel and its
    `::: ...` dropped, `&&` splitting commands; a `mkdir -p DIR` among them is done."""
    text = text.split(" #")[0].strip()
    text = re.split(r"(?<=\S) {2,}", text)[0]
    text = re.sub(r"^\$ ", "", text)
    text = re.sub(r"^parallel ", "", text)
    text = text.split(" ::: ")[0]
    for placeholder, value in PLACEHOLDERS.get(page, {}).items():
        text = text.replace(placeholder, value)
    commands = []
    for part in text.split("&&"):
        words = shlex.split(part)
        if words[:2] == ["mkdir", "-p"]:  # a directory the next command writes into
            for folder in words[2:]:
                os.makedirs(folder, exist_ok=True)
        if words and words[0] in ("neuronsim", "build/neuronsim"):
            commands.append(expand(words[1:]))
    return commands


def help_options(neuronsim, path):
    """The options `neuronsim PATH... --help` lists."""
    out = subprocess.run([neuronsim] + path + ["--help"], capture_output=True, text=True)
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-o)\b", out.stdout))


def check_synopsis(neuronsim, args):
    """A synopsis ("asm FILE [--input NAME=FILE.npy]... "): every option it names exists."""
    path = args[:2] if args[:2] == ["sweep", "merge"] else args[:1]
    if path == ["run"]:
        path = ["run", "matmul"]
    known = help_options(neuronsim, path)
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-o)\b", " ".join(args)))
    missing = sorted(named - known)
    return (1, f"not in `neuronsim {' '.join(path)} --help`: {', '.join(missing)}") if missing else (0, "")


def check_calibrate(neuronsim, args):
    """calibrate simulates every published case (20 s on a loaded 2-core machine) and has no
    dry run: its options must be in `calibrate --help`, and a value the usage line spells out
    (`--machine trn2|trn1`) one of those."""
    usage = subprocess.run([neuronsim, "calibrate", "--help"], capture_output=True, text=True).stdout
    status, output = check_synopsis(neuronsim, args)
    for option, value in zip(args, args[1:]):
        choices = re.search(re.escape(option) + r" ([a-z0-9]+(?:\|[a-z0-9]+)+)\]", usage)
        if choices and value not in choices.group(1).split("|"):
            return 1, f"{option} {value}: `calibrate --help` allows {choices.group(1)}"
    return status, output


def run_command(neuronsim, args):
    """Runs one command line the cheapest honest way; (exit status, output)."""
    if args[0] == "calibrate" and "--help" not in args:
        return check_calibrate(neuronsim, args)
    library_run = args[0] == "run" and len(args) > 1 and ".py:" not in args[1]
    if "--help" not in args and (library_run or args[0] == "asm" or
                                 (args[0] == "sweep" and args[1:2] != ["merge"])):
        args = args + ["--dry-run"]
    done = subprocess.run([neuronsim] + args, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout[-2000:] + done.stderr[-2000:]


def undocumented_options(neuronsim, docs_text):
    """Options some --help lists that no page mentions: `--name` anywhere, a kernel parameter
    also as its snake_case name or in a family (`--tiles-in-block-m/-n/-k`)."""
    kernels = re.findall(r"^([a-z][a-z0-9_]*)$", subprocess.run(
        [neuronsim, "list"], capture_output=True, text=True).stdout, re.M)
    paths = [["list"], ["run"], ["asm"], ["report"], ["view"], ["diff"], ["sweep"],
             ["sweep", "merge"], ["calibrate"]] + [["run", kernel] for kernel in kernels]
    missing = []
    for path in paths:
        for option in sorted(help_options(neuronsim, path) - {"--help", "-o"}):
            stem, _, last = option.rpartition("-")
            family = re.findall(re.escape(stem) + r"-[a-z](?:/-[a-z])+", docs_text)
            kernel_param = len(path) == 2 and path[0] == "run"
            if not (re.search(re.escape(option) + r"(?![\w-])", docs_text) or kernel_param and (
                    re.search(r"\b" + option[2:].replace("-", "_") + r"\b", docs_text) or
                    any(f"-{last}" in f.split("/") or f.endswith(f"-{last}") for f in family))):
                missing.append(f"neuronsim {' '.join(path)} --help lists {option}; no page mentions it")
    return missing


def doc_pages(source):
    """README.md and every docs/*.md page under `source`."""
    docs = os.path.join(source, "docs")
    return [os.path.join(source, "README.md")] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))


def main():
    neuronsim, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = sys.argv[3:] or doc_pages(source)
    checked = skipped = 0
    failures = []
    for page_path in pages:
        page = os.path.basename(page_path)
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as work:
            os.chdir(work)
            for folder in ("examples", "tests"):  # the paths the pages name, from the root
                os.symlink(os.path.join(source, folder), folder)
            os.symlink(os.path.dirname(neuronsim), "build")
            fixtures(page, neuronsim)
            for number, text in command_lines(page_path):
                for args in commands_of(text, page):
                    reason = next((r for p, t, r in SKIPS if p == page and t in shlex.join(args)),
                                  None)
                    if reason:
                        print(f"skip {page}:{number}: neuronsim {shlex.join(args)}: {reason}")
                        skipped += 1
                        continue
                    synopsis = "[" in " ".join(args)
                    status, output = (check_synopsis(neuronsim, args) if synopsis
                                      else run_command(neuronsim, args))
                    checked += 1
                    if status != 0:
                        failures.append(f"{page}:{number}: neuronsim {shlex.join(args)}\n"
                                        f"  exit {status}: {output.strip()}")
            os.chdir(source)
        print(f"{page}: {time.monotonic() - started:.1f} s")
    docs_text = "\n".join(open(page).read() for page in pages)
    if not sys.argv[3:]:  # only against the whole documentation
        failures += undocumented_options(neuronsim, docs_text)
    for failure in failures:
        print(failure)
    print(f"{checked} command lines checked, {skipped} skipped, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
