#!/usr/bin/env bash
# One golden check: runs `FATHOM ARGS... --json OUT` and compares OUT with GOLDEN (check_golden.py).
# usage: golden_test.sh PYTHON FATHOM GOLDEN.json ARGS...
set -euo pipefail
python=$1 fathom=$2 golden=$3
shift 3
out=$(mktemp --suffix=.json)
trap 'rm -f "$out"' EXIT
"$fathom" "$@" --json "$out" >/dev/null
"$python" "$(dirname "$0")/check_golden.py" "$golden" "$out"
