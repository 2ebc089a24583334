#!/usr/bin/env python3
"""Feeds a fathom binary the classes of bad input of issue 11 and counts what it does with them.

    tools/bad_input_report.py BUILD/fathom [--json report.json] [--verbose] [--no-memory-limit] [--data-dir DIR]

Every input is wrong on purpose (malformed YAML, values that cannot mean anything, integers that
do not fit, broken measurement files, CSVs and traces, inputs that would exhaust memory, escape
sequences). Each run ends in one outcome:
  clear     exit 2 with a message naming the input file or the command-line key (what fathom promises)
  reported  compare ran and listed the case as unsupported with its reason (exit 0, nothing predicted)
  answered  an input at the edge of what is valid (ANSWERED) answered: exit 0 before the timeout
  internal  exit 1 ("internal error": a fault that is not the input's)
  crash     killed by a signal (segfault, abort)
  killed    ran past the time limit or out of the memory limit (8 GiB address space; --no-memory-limit
            for sanitizer builds, whose shadow memory needs terabytes of address space)
  silent    exit 0 although the input is wrong: an answer to another question
  unsafe    a raw escape character from the input reached the terminal
  partial   an output file was left behind by a run that failed
  wrong-message  the right outcome, but the message does not say what EXPECT says it must (the
            file, line and key at fault and the reason)
The inputs (tools/bad_input_cases.py) are generated from the project's own examples (quickstart, a measured case, a
calibration CSV, a request trace), so the same corpus runs against any build, old or new: issue 11's
before/after counts come from running this on the commit before the issue and on the current one
(--data-dir: the catalogs that binary reads, its own checkout's; default this one).
Exit status 0 when every input ended `clear` or `reported` with the expected message, or
`answered`; 1 otherwise.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from bad_input_cases import ANSWERED, ESC, EXPECT, ROOT, cases


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def run_case(binary, name, files, args, workdir, timeout, memory_limit=True, data_dir=ROOT):
    d = Path(tempfile.mkdtemp(dir=workdir))
    first = None
    for fname, text in files.items():
        (d / fname).write_bytes(text.encode("utf-8", "surrogateescape"))  # "\udcff": the raw byte 0xff
        first = first or d / fname
    out = d / "out.json"
    argv = [binary] + [str(first) if a == "IN" else str(out) if a == "OUT" else str(d) if a == "DIR" else a for a in args]
    env = dict(os.environ, FATHOM_DATA_DIR=str(data_dir))
    start = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=timeout, preexec_fn=limit_memory if memory_limit else None)
    except subprocess.TimeoutExpired:
        return "killed", "timeout"
    text = (p.stdout + p.stderr).decode("utf-8", "replace")
    if p.returncode < 0 or p.returncode >= 128:
        return "crash", f"signal/exit {p.returncode}"
    if ESC in text:
        return "unsafe", "raw escape in output"
    if p.returncode != 0 and out.exists():
        return "partial", "output file left behind"
    if p.returncode == 2:
        names = [f for f in files] + ["--set", "command line", "set "] + ([str(d)] if "DIR" in args else [])
        if any(n in text for n in names):
            return "clear", text.strip().splitlines()[-1] if text.strip() else ""
        return "clear-unnamed", text.strip()[:160]
    if p.returncode == 1:
        killed = "bad_alloc" in text or "memory" in text
        return ("killed" if killed else "internal"), text.strip()[:160]
    if p.returncode == 0 and name in ANSWERED:
        return "answered", f"exit 0 in {time.monotonic() - start:.1f} s"
    listed = re.search(r"unsupported:\n[ \t]+(\S+[ \t]+\S[^\n]*)", text)
    if p.returncode == 0 and args[0] == "compare" and listed:
        return "reported", listed.group(1)
    return ("silent" if p.returncode == 0 else f"exit {p.returncode}"), text.strip()[-160:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--no-memory-limit", action="store_true")
    ap.add_argument("--data-dir", default=str(ROOT))
    a = ap.parse_args()
    binary = str(Path(a.binary).resolve())
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for cls, name, files, args in cases():
            outcome, detail = run_case(binary, name, files, args, work, a.timeout, not a.no_memory_limit, a.data_dir)
            # Right outcome, wrong words: the message must say what EXPECT says (file, line, key, why).
            said = re.sub(r"\S*/([^/\s]+\.(yaml|csv))", r"\1", detail)
            if outcome in ("clear", "reported") and name in EXPECT and EXPECT[name] not in said:
                outcome, detail = "wrong-message", f"expected {EXPECT[name]!r}, got {said!r}"
            rows.append({"class": cls, "input": name, "outcome": outcome, "detail": detail})
            if a.verbose:
                print(f"{cls:15s} {outcome:9s} {name:45s} {detail!r}"[:240], flush=True)
    by = defaultdict(Counter)
    for r in rows:
        by[r["class"]][r["outcome"]] += 1
    outcomes = ["clear", "reported", "answered", "wrong-message", "clear-unnamed", "internal", "crash", "killed", "silent", "unsafe", "partial"]
    outcomes += sorted({r["outcome"] for r in rows} - set(outcomes))
    print(f"{'class':15s} {'inputs':>6s} " + " ".join(f"{o:>8s}" for o in outcomes))
    for cls, cnt in list(by.items()) + [("all", sum(by.values(), Counter()))]:
        print(f"{cls:15s} {sum(cnt.values()):6d} " + " ".join(f"{cnt[o]:8d}" for o in outcomes))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    good = all(r["outcome"] in ("clear", "reported", "answered") for r in rows)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
