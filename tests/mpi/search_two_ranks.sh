#!/usr/bin/env bash
# `mpirun -np 2 fathom search` on localhost gives the same JSON, byte for byte, as one process:
# a training search and a serving search, each cut to its first candidates.
#   search_two_ranks.sh MPIEXEC FATHOM SOURCE_DIR
set -euo pipefail
mpiexec=$1 fathom=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
extra=()
[ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
for spec in "search-llama3-70b-64xh100.yaml 150" "search-serving-llama3-70b-64xh100.yaml 120"; do
  read -r file n <<<"$spec"
  "$fathom" search "$src/scenarios/examples/$file" --threads 2 --max-candidates "$n" --json "$tmp/one.json" >"$tmp/one.txt"
  "$mpiexec" "${extra[@]}" --oversubscribe -np 2 "$fathom" search "$src/scenarios/examples/$file" --threads 1 \
    --max-candidates "$n" --json "$tmp/two.json" >"$tmp/two.txt"
  grep -q "x 2 MPI ranks" "$tmp/two.txt" || { echo "$file: the run did not use 2 ranks"; cat "$tmp/two.txt"; exit 1; }
  cmp "$tmp/one.json" "$tmp/two.json" || { echo "$file: 2 ranks differ from 1 process"; exit 1; }
  echo "$file: $n candidates, identical on 2 ranks"
done
