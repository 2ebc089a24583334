#!/usr/bin/env bash
# The robustness stage (issue 11), not part of the README's test command (it takes about 15
# minutes on 2 cores): the whole test suite built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer without recovery (build-sanitize/); the Python package's tests with
# the sanitizer runtime preloaded into Debian's python3 (the extension is instrumented); then every
# fuzz harness for SECONDS each (tools/fuzz/run.sh). Exits non-zero on any failure or finding.
#   tools/sanitize_and_fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$root/build-sanitize" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFATHOM_BUILD_TESTS=ON -DFATHOM_SANITIZE=ON -DFATHOM_BUILD_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3 -DFATHOM_BUILD_BENCH=OFF \
  -DFATHOM_BUILD_CALIBRATION=OFF -DFATHOM_MPI=OFF >/dev/null
cmake --build "$root/build-sanitize" -j2
FATHOM_DATA_DIR=$root ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-sanitize" -j2 --output-on-failure -LE python
# Python cannot load an ASan-instrumented extension unless the runtime comes first: preload it
# (leak checks off: the interpreter's own allocations would be reported).
LD_PRELOAD=$(clang-14 -print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0 \
  UBSAN_OPTIONS=print_stacktrace=1 PYTHONPATH=$root/build-sanitize/python FATHOM_SOURCE_DIR=$root \
  FATHOM_CLI=$root/build-sanitize/fathom FATHOM_DATA_DIR=$root \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/python"
"$root/tools/fuzz/run.sh" "$seconds"
