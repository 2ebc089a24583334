#!/usr/bin/env python3
"""Runs every notebook of python/examples/ top to bottom (nbclient, Debian's python3-nbclient),
with their figures written as PNG files under OUT_DIR (FATHOM_FIGURES); a notebook that raises,
or writes no figure, fails the run (exit 1).

    PYTHONPATH=build/python python3 python/examples/run_notebooks.py build/figures
"""
import glob
import os
import sys
import time

import nbformat
from nbclient import NotebookClient


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "figures")
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ["FATHOM_FIGURES"] = out
    os.environ.setdefault("FATHOM_SOURCE_DIR", os.path.abspath(os.path.join(here, "..", "..")))
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger note on frozen modules
    os.makedirs(out, exist_ok=True)
    failed = []
    for path in sorted(glob.glob(os.path.join(here, "*.ipynb"))):
        name = os.path.basename(path)
        before = set(os.listdir(out))
        start = time.time()
        nb = nbformat.read(path, as_version=4)
        try:
            NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": here}}).execute()
        except Exception as e:  # the cell's traceback is in the message
            failed.append(name)
            print(f"{name}: FAILED\n{e}", flush=True)
            continue
        figures = sorted(set(os.listdir(out)) - before) or [f for f in os.listdir(out) if f.startswith(name.split(".")[0])]
        if not figures:
            failed.append(name)
            print(f"{name}: wrote no figure", flush=True)
            continue
        print(f"{name}: ok in {time.time() - start:.1f} s, figures {', '.join(figures)}", flush=True)
    if failed:
        print("failed:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
