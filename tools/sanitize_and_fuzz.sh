#!/usr/bin/env bash
# The robustness stage (issue 11), not part of the README's test command (it takes about 15
# minutes on 2 cores): the whole test suite built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer without recovery (build-sanitize/), then every fuzz harness for
# SECONDS each (tools/fuzz/run.sh). Exits non-zero on any failure or finding.
#   tools/sanitize_and_fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$root/build-sanitize" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFATHOM_BUILD_TESTS=ON -DFATHOM_SANITIZE=ON -DFATHOM_BUILD_PYTHON=OFF -DFATHOM_BUILD_BENCH=OFF \
  -DFATHOM_BUILD_CALIBRATION=OFF -DFATHOM_MPI=OFF >/dev/null
cmake --build "$root/build-sanitize" -j2
FATHOM_DATA_DIR=$root ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-sanitize" -j2 --output-on-failure
"$root/tools/fuzz/run.sh" "$seconds"
