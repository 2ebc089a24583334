#!/usr/bin/env bash
# Regenerates the golden outputs from a built fathom: tests/golden/update.sh build/fathom
# Commit the result only with a message naming which predictions moved and why.
set -euo pipefail
fathom=$(realpath "$1")
cd "$(dirname "$0")/../.."
for f in scenarios/examples/*.yaml; do
  "$fathom" run "$f" --json "tests/golden/run/$(basename "$f" .yaml).json" >/dev/null
done
"$fathom" compare tests/data/measured_frozen.yaml --other-metrics --json tests/golden/compare.json >/dev/null
git status --short tests/golden
