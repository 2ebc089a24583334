#!/usr/bin/env bash
# Regenerates the golden outputs from a built fathom: tests/golden/update.sh build/fathom
# Commit the result only with a message naming which predictions moved and why.
set -euo pipefail
fathom=$(realpath "$1")
cd "$(dirname "$0")/../.."
# The validation bands first: every run's --json carries its intervals.
if [[ -f ../shared/reference/measured.yaml ]]; then
  "$fathom" compare ../shared/reference/measured.yaml --other-metrics --intervals scenarios/intervals.yaml >/dev/null
fi
for f in scenarios/examples/*.yaml; do
  "$fathom" run "$f" --json "tests/golden/run/$(basename "$f" .yaml).json" >/dev/null
done
"$fathom" compare tests/data/measured_frozen.yaml --other-metrics --json tests/golden/compare.json >/dev/null
# The cost-model baseline (tests/scenarios/cost_model_regression_test.cpp).
tests=$(dirname "$fathom")/tests/fathom_tests
if [[ -x $tests ]]; then FATHOM_WRITE_COST_BASELINE=1 "$tests" "[cost-regression]" >/dev/null; fi
git status --short tests/golden scenarios/intervals.yaml tests/data/cost_model_baseline.tsv
