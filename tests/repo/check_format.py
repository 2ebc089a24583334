#!/usr/bin/env python3
"""Every C++ source of the tree is formatted as .clang-format says (clang-format-14, the Debian 12
package tools/install_deps.sh installs). Prints each file that differs and the command that fixes
it; exit 1 if any does.

usage: check_format.py SOURCE_DIR [CLANG_FORMAT]
"""
import pathlib
import subprocess
import sys

# Folders of sources fathom owns (build trees, worktrees and vendored code are elsewhere).
OWNED = ["sim", "hardware", "models", "workloads", "plans", "scenarios", "tools", "python", "tests"]


def sources(root: pathlib.Path):
    for folder in OWNED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".h", ".cu") and path.is_file():
                yield path


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    tool = sys.argv[2] if len(sys.argv) > 2 else "clang-format-14"
    bad = []
    files = list(sources(root))
    for path in files:
        formatted = subprocess.run([tool, f"--style=file:{root / '.clang-format'}", str(path)], check=True,
                                   capture_output=True).stdout
        if formatted != path.read_bytes():
            bad.append(path.relative_to(root))
    for rel in bad:
        print(f"{rel}: not formatted (clang-format-14 -i {rel})")
    print(f"{len(files)} files checked, {len(bad)} not formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
