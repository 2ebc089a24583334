#!/usr/bin/env python3
"""The folder layering of CONTRIBUTING.md: a folder includes only from its own floor and the floors
below it, never from one above (an include that runs back up fails, with the file and line).

Floors, lowest first: sim, hardware, models, workloads, plans, scenarios, then the front ends
(tools, python) and tests, which may include anything. Inside workloads/, the training and serving
workloads are siblings: neither includes the other (what both need lives in workloads/ itself,
workloads/replay/, workloads/metrics/ or workloads/lengths/).

usage: check_layering.py SOURCE_DIR
"""
import pathlib
import re
import sys

FLOORS = ["sim", "hardware", "models", "workloads", "plans", "scenarios"]
FRONT_ENDS = ["tools", "python", "tests"]
# Sub-folders of one floor that must not include each other.
SIBLINGS = {("workloads/training", "workloads/serving"), ("workloads/serving", "workloads/training")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floor_of(rel):
    top = rel.split("/", 1)[0]
    return FLOORS.index(top) if top in FLOORS else None


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    checked = 0
    for folder in FLOORS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h") or not path.is_file():
                continue
            checked += 1
            rel = path.relative_to(root).as_posix()
            mine = floor_of(rel)
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                theirs = floor_of(target)
                if theirs is None:
                    continue
                if theirs > mine:
                    problems.append(f"{rel}:{number}: includes {target}: {FLOORS[theirs]}/ is above {FLOORS[mine]}/")
                for a, b in SIBLINGS:
                    if rel.startswith(a + "/") and target.startswith(b + "/"):
                        problems.append(f"{rel}:{number}: includes {target}: {a}/ and {b}/ are siblings")
    for p in problems:
        print(p)
    print(f"{checked} files checked, {len(problems)} includes against the layering")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
