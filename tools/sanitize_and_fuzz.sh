#!/usr/bin/env bash
# The robustness stage (issue 11), which the README's test command runs after the ordinary suite:
# one clang build of everything with AddressSanitizer and UndefinedBehaviorSanitizer without
# recovery and libFuzzer coverage (build-sanitize/, -DFATHOM_FUZZ=ON); the Python package's tests
# and its fuzz harness (tools/fuzz/fuzz_python.py, SECONDS) with the sanitizer runtime preloaded
# into Debian's python3 (the extension is instrumented); every libFuzzer harness for SECONDS each
# from its seed corpus (tools/fuzz/run.sh); last, the whole test
# suite so built (its ctest summary closes the output). About 20 minutes on 2 cores with the
# default 60 s per harness. Exits non-zero on any failure, sanitizer report or fuzz finding.
#   tools/sanitize_and_fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=$root/build-sanitize
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFATHOM_BUILD_TESTS=ON -DFATHOM_SANITIZE=ON -DFATHOM_FUZZ=ON -DFATHOM_BUILD_PYTHON=ON \
  -DPython3_EXECUTABLE=/usr/bin/python3 -DFATHOM_BUILD_BENCH=OFF -DFATHOM_BUILD_CALIBRATION=OFF -DFATHOM_MPI=OFF >/dev/null
cmake --build "$build" -j2
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Python cannot load an ASan-instrumented extension unless the runtime comes first: preload it
# (leak checks off: the interpreter's own allocations would be reported).
echo "== Python package tests under AddressSanitizer"
LD_PRELOAD=$(clang-14 -print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0 \
  PYTHONPATH=$build/python FATHOM_SOURCE_DIR=$root FATHOM_CLI=$build/fathom FATHOM_DATA_DIR=$root \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/python"
echo "== the Python package's fuzz harness under AddressSanitizer for ${seconds}s"
LD_PRELOAD=$(clang-14 -print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0 \
  PYTHONPATH=$build/python FATHOM_DATA_DIR=$root /usr/bin/python3 "$root/tools/fuzz/fuzz_python.py" "$seconds"
FATHOM_FUZZ_BUILD=$build "$root/tools/fuzz/run.sh" "$seconds"
echo "== the whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer"
FATHOM_DATA_DIR=$root ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$build" -j2 --output-on-failure -LE python
