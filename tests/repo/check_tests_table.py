#!/usr/bin/env python3
"""tests/README.md's table names every test file of the tree, and names no file that does not exist;
no test case's name holds a ';' (ctest would not run it).

Test files: tests/**/*_test.cpp, tests/python/test_*.py, tests/mpi/*.sh, tests/repo/check_*.py. A
table row's first cell holds one or more backticked paths relative to tests/ (or to the root) (a folder ends in
`/`, a `*` matches within a folder); the other cells are free text.

usage: check_tests_table.py SOURCE_DIR
"""
import pathlib
import re
import sys

PATTERNS = ["**/*_test.cpp", "python/test_*.py", "mpi/*.sh", "repo/check_*.py"]


def main():
    tests = pathlib.Path(sys.argv[1]).resolve() / "tests"
    named = []
    for line in (tests / "README.md").read_text().splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        named += re.findall(r"`([^`]+)`", first)
    problems = []
    covered = set()
    for entry in named:
        path = entry.split(" ")[0]
        if not ("/" in path or "." in path):
            continue  # a ctest name, not a path
        matches = []
        for base in (tests, tests.parent):  # relative to tests/, or to the root (tools/...)
            found = list(base.glob(path.rstrip("/"))) if "*" in path else [base / path.rstrip("/")]
            matches += [m for m in found if m.exists()]
        if not matches:
            problems.append(f"tests/README.md names `{entry}`, which does not exist")
        for m in matches:
            covered.update([m] + (list(m.rglob("*")) if m.is_dir() else []))
    files = sorted({f for pattern in PATTERNS for f in tests.glob(pattern)})
    for f in files:
        if f not in covered:
            problems.append(f"tests/{f.relative_to(tests)} is not in tests/README.md's table")
    # catch_discover_tests splits a test name at ';' (a CMake list): ctest would run two names that
    # match no test case instead of the test.
    for f in tests.glob("**/*_test.cpp"):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            m = re.search(r'TEST_CASE\("([^"]*)"', line)
            if m and ";" in m.group(1):
                problems.append(f"tests/{f.relative_to(tests)}:{n}: a test name with ';' (ctest splits it there)")
    for p in problems:
        print(p)
    print(f"{len(files)} test files, {len(named)} table entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
