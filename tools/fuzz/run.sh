#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan; in build-fuzz/, or in the instrumented
# build FATHOM_FUZZ_BUILD names: tools/sanitize_and_fuzz.sh passes its own) and runs each for SECONDS
# (default 60) from its seed corpus (tools/fuzz/corpus/<target>, copied: the runs add inputs to a
# scratch copy, not to the project) with the dictionary tools/fuzz/fathom.dict.
#   tools/fuzz/run.sh [SECONDS] [TARGET...]     targets: scenario trace calibration_csv layers_csv measured
# A finding leaves crash-* / leak-* / timeout-* files in build-fuzz/findings/ and exits non-zero.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario trace calibration_csv layers_csv measured)
build=${FATHOM_FUZZ_BUILD:-$root/build-fuzz}
if [ -z "${FATHOM_FUZZ_BUILD:-}" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFATHOM_FUZZ=ON \
    -DFATHOM_BUILD_TESTS=OFF -DFATHOM_BUILD_BENCH=OFF -DFATHOM_BUILD_PYTHON=OFF -DFATHOM_BUILD_CALIBRATION=OFF -DFATHOM_MPI=OFF >/dev/null
fi
cmake --build "$build" -j2 --target $(printf 'fuzz_%s ' "${targets[@]}")
mkdir -p "$build/findings"
status=0
for t in "${targets[@]}"; do
  work=$build/corpus-$t
  rm -rf "$work" && mkdir -p "$work" && cp "$here/corpus/$t"/* "$work/" 2>/dev/null || true
  echo "== fuzz_$t for ${seconds}s"
  if ! FATHOM_DATA_DIR=$root ASAN_OPTIONS=detect_leaks=1 "$build/tools/fuzz/fuzz_$t" "$work" -dict="$here/fathom.dict" \
      -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=8192 -artifact_prefix="$build/findings/$t-" \
      -print_final_stats=1 2>&1 | tail -12; then
    status=1
  fi
done
exit $status
