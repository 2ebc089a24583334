#!/usr/bin/env python3
"""A fuzz harness for the Python package's front door: mutated scenario dicts, YAML strings and
overrides given to fathom.load and fathom.validate (and, for what loads, a short fathom.run).

    tools/fuzz/fuzz_python.py [SECONDS] [--seed N]

The contract is the C++ harnesses' (tools/fuzz/fuzz_inputs.cpp): an input loads, or is refused with
fathom.InputError. Any other exception (a RecursionError, PyYAML's RepresenterError, a TypeError
from inside the package) is a finding: the input is printed and the harness exits 1; a crash kills
the interpreter, which fails the caller. Mutations come from a seeded random stream (the same seed
replays the same inputs) and start from the project's examples: replace a value by one from a pool
of bad ones (wrong types, non-finite and huge numbers, escape sequences, bytes that are not UTF-8,
sets and objects, a dict or list inside itself, nesting past 64 levels, numpy numbers), delete a
key, add an unknown one, or append YAML aliases, cycles and bombs to the text. The seed corpus is
tools/fuzz/corpus/scenario, the C++ scenario harness's.
"""
import argparse
import copy
import os
import random
import reprlib
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def bad_values(rng):
    """A pool of values a scenario key may be given by mistake (a fresh list each call: some are
    mutable and made to contain themselves)."""
    deep = leaf = {}
    for _ in range(rng.choice((10, 70, 1500))):
        leaf["x"] = {}
        leaf = leaf["x"]
    cyclic = []
    cyclic.append(cyclic)
    values = [None, True, -1, 0, 1, 2**31, 2**63, -2**63 - 1, 10**400, 1e308, float("inf"), float("nan"), -0.0,
              1.5, "", "x" * 10000, "\x1b[2J", "8 GiB", "1e400", "nan", "llama\x00", "\udcff", b"bytes",
              [], [1, "a", None], {}, {"unknown": 1}, {1: 2}, set([1]), object(), deep, cyclic, (1, 2), 3 + 4j]
    try:
        import numpy as np
        values += [np.int64(4), np.float32(1.5), np.int64(-1), np.array([1, 2])]
    except ImportError:
        pass
    return values


def leaves(d, path=(), within=()):
    """(path, value) of every entry of nested dicts and lists, down to 20 levels, once around a
    cycle (a mutation may have put a list inside itself)."""
    if len(path) > 20 or any(d is w for w in within):
        return
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        yield path + (k,), v
        yield from leaves(v, path + (k,), within + (d,))


def mutate(doc, rng):
    """A mutated copy of `doc` (a dict): one to three edits."""
    d = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p, _ in leaves(d)]
        if not paths:
            break
        path = rng.choice(paths)
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        op = rng.random()
        if op < 0.7:
            parent[path[-1]] = rng.choice(bad_values(rng))
        elif op < 0.85 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rng.choice(["bogus", "tpp", "", "\x1b", 3])] = rng.choice(bad_values(rng))
    return d


YAML_TAILS = ["notes: &a [*a]\n", "notes: " + "[" * 100 + "]" * 100 + "\n",
              "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9 if i else ["x"] * 9) + "]\n" for i in range(10)),
              "name: \"unterminated\n", "parallel: {tp: [1, 2\n", "---\nkind: training\n", "\t- x\n"]


def make_input(docs, rng):
    """The next fuzz input: (args, kwargs) for fathom.load."""
    doc = rng.choice(docs)
    r = rng.random()
    if r < 0.5:
        return (mutate(doc, rng),), {}
    if r < 0.75:
        # A YAML string: the example's text with a bad tail.
        return (yaml.safe_dump(doc, sort_keys=False) + rng.choice(YAML_TAILS),), {}
    key = rng.choice([".".join(map(str, p)) for p, _ in leaves(doc)] + ["parallel__tp", "bogus", "a..b"])
    return (doc,), {"overrides": {key: rng.choice(bad_values(rng))}}


def exercise(fathom, args, kwargs, rng):
    """The input through load and validate (and now and then a run); InputError is the refusal."""
    try:
        s = fathom.load(*args, **kwargs)
        fathom.validate(s)
        if s.kind == "training" and rng.random() < 0.05:
            fathom.run(s)
    except fathom.InputError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seconds", nargs="?", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import fathom
    docs = []
    for f in sorted((ROOT / "tools/fuzz/corpus/scenario").glob("*.yaml")):
        if f.name.startswith(("alias", "deep")):
            continue  # the alias and nesting seeds come as text (YAML_TAILS): as dicts the walk would expand them
        try:
            d = yaml.safe_load(f.read_text())
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # a malformed seed (an unterminated quote, bytes that are not UTF-8): not a dict to mutate
        if isinstance(d, dict):
            docs.append(d)
    rng = random.Random(a.seed)
    start, n = time.monotonic(), 0
    while time.monotonic() - start < a.seconds:
        args, kwargs = make_input(docs, rng)
        if os.environ.get("FUZZ_PYTHON_TRACE"):
            print(n, reprlib.repr(args)[:300], reprlib.repr(kwargs)[:300], file=sys.stderr, flush=True)
        try:
            exercise(fathom, args, kwargs, rng)
        except Exception as e:  # anything but InputError is a finding
            print(f"fuzz_python: finding at input {n} (seed {a.seed}): {type(e).__name__}: {e}", file=sys.stderr)
            print(f"input: args={reprlib.repr(args)} kwargs={reprlib.repr(kwargs)}", file=sys.stderr)
            return 1
        n += 1
    print(f"fuzz_python: {n} inputs in {time.monotonic() - start:.0f} s, no finding (seed {a.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
