#!/usr/bin/env python3
"""Size limits of CONTRIBUTING.md: no source file over 500 lines, no function over 80 lines.

A function that is a declarative table (a key table, a registry's entries: data, one entry after
another, no control flow to follow) is exempt when the comment line right above its definition
says so, starting with "Declarative table". Function extents come from Universal Ctags (its `end`
field); lambdas count toward the function that holds them.

usage: check_sizes.py SOURCE_DIR [CTAGS]
"""
import pathlib
import subprocess
import sys

OWNED = ["sim", "hardware", "models", "workloads", "plans", "scenarios", "tools", "python", "tests"]
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
SUFFIXES = (".cpp", ".h", ".cu", ".py")


def sources(root):
    for folder in OWNED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                yield path


def functions(ctags, path):
    """(name, first line, last line) of every function or method defined in `path`, lambdas left out."""
    out = subprocess.run([ctags, "--fields=+ne", "--kinds-C++=f", "--kinds-Python=fm", "--language-force=" +
                          ("Python" if path.suffix == ".py" else "C++"), "-o", "-", str(path)],
                         check=True, capture_output=True, text=True).stdout
    for row in out.splitlines():
        parts = row.split("\t")
        name = parts[0]
        if name.startswith("__anon"):
            continue
        fields = dict(p.split(":", 1) for p in parts[3:] if ":" in p)
        if "line" in fields and "end" in fields:
            yield name, int(fields["line"]), int(fields["end"])


def exempt(lines, first):
    """The comment block right above line `first` (1-based) starts with 'Declarative table'."""
    i = first - 2
    block = []
    while i >= 0 and lines[i].strip().startswith(("//", "#")):
        block.insert(0, lines[i].strip().lstrip("/# "))
        i -= 1
    return bool(block) and block[0].startswith("Declarative table")


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    ctags = sys.argv[2] if len(sys.argv) > 2 else "ctags"
    problems = []
    files = list(sources(root))
    for path in files:
        rel = path.relative_to(root)
        lines = path.read_text(errors="replace").splitlines()
        if len(lines) > MAX_FILE_LINES:
            problems.append(f"{rel}: {len(lines)} lines (at most {MAX_FILE_LINES})")
        for name, first, last in functions(ctags, path):
            n = last - first + 1
            if n > MAX_FUNCTION_LINES and not exempt(lines, first):
                problems.append(f"{rel}:{first}: function {name} is {n} lines (at most {MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} over the limits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
