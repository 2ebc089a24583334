#!/usr/bin/env python3
"""Regenerates the key reference of scenarios/README.md (between <!-- keys:begin --> and
<!-- keys:end -->) from `fathom list keys`, the declarations of plans/*keys*.cpp. The test
`plans/keys_test.cpp` fails until this has run after a key's declaration changed.

usage: update_key_reference.py BUILD_DIR
"""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- keys:begin -->\n", "<!-- keys:end -->"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fathom = pathlib.Path(sys.argv[1]).resolve() / "fathom"
    table = subprocess.run([str(fathom), "list", "keys"], check=True, capture_output=True, text=True).stdout
    readme = ROOT / "scenarios" / "README.md"
    text = readme.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    if text[start:end] == table:
        print("scenarios/README.md: key reference already current")
        return 0
    readme.write_text(text[:start] + table + text[end:])
    print("scenarios/README.md: key reference regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
