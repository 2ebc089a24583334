#!/usr/bin/env python3
"""Compares a fathom JSON output with its golden copy.

usage: check_golden.py GOLDEN.json ACTUAL.json [--rel 1e-12]

Every key of the golden file must exist in the actual output with the same value: strings and
booleans exactly, numbers to the stated relative tolerance (1e-12 by default; |a - g| <= rel *
max(|a|, |g|), so 0 must stay 0). Keys the actual output adds are allowed (reports may grow);
lists must keep their length, and lists of objects with an "id" are matched by id. A golden file
changes only in a commit that says which predictions moved and why (tests/golden/README.md).
"""
import json
import sys


def compare(golden, actual, path, rel, errors, stats):
    if isinstance(golden, dict):
        if not isinstance(actual, dict):
            errors.append(f"{path}: expected an object, got {type(actual).__name__}")
            return
        for k, g in golden.items():
            if k not in actual:
                errors.append(f"{path}.{k}: missing")
                continue
            compare(g, actual[k], f"{path}.{k}", rel, errors, stats)
    elif isinstance(golden, list):
        if not isinstance(actual, list) or len(actual) != len(golden):
            errors.append(f"{path}: expected a list of {len(golden)}, got {actual!r:.80}")
            return
        if golden and all(isinstance(x, dict) and "id" in x for x in golden):
            by_id = {x.get("id"): x for x in actual if isinstance(x, dict)}
            for g in golden:
                if g["id"] not in by_id:
                    errors.append(f"{path}[{g['id']}]: missing")
                else:
                    compare(g, by_id[g["id"]], f"{path}[{g['id']}]", rel, errors, stats)
        else:
            for i, (g, a) in enumerate(zip(golden, actual)):
                compare(g, a, f"{path}[{i}]", rel, errors, stats)
    elif isinstance(golden, bool) or golden is None or isinstance(golden, str):
        if golden != actual:
            errors.append(f"{path}: expected {golden!r}, got {actual!r}")
    elif isinstance(golden, (int, float)):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            errors.append(f"{path}: expected a number {golden!r}, got {actual!r}")
            return
        stats["numbers"] += 1
        if golden == actual:
            return
        stats["inexact"] += 1
        scale = max(abs(golden), abs(actual))
        if abs(golden - actual) > rel * scale:
            errors.append(f"{path}: expected {golden!r}, got {actual!r} (relative {abs(golden - actual) / scale:.3g})")


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--rel"):
        print(__doc__, file=sys.stderr)
        return 2
    rel = float(argv[4]) if len(argv) == 5 else 1e-12
    with open(argv[1]) as f:
        golden = json.load(f)
    with open(argv[2]) as f:
        actual = json.load(f)
    errors, stats = [], {"numbers": 0, "inexact": 0}
    compare(golden, actual, "$", rel, errors, stats)
    if errors:
        print(f"{argv[2]} differs from golden {argv[1]} ({len(errors)} differences):", file=sys.stderr)
        for e in errors[:60]:
            print("  " + e, file=sys.stderr)
        return 1
    print(f"{argv[2]}: matches {argv[1]} ({stats['numbers']} numbers, {stats['inexact']} not bit-identical)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
