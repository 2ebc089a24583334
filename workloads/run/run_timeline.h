#pragma once
// The timeline of one whole run (workloads/run/training_run.h) as a Chrome/Perfetto trace at day
// scale: a process for the run, a track of training (spans of training, checkpoint stalls, and
// stretches of whole checkpoint cycles with their count), one of recovery (detection, restart,
// load) and one of failures (an instant named by its cause).
#include "workloads/run/training_run.h"

#include <cstdint>
#include <ostream>

namespace fathom::workloads::run {

// Simulates `spec` at `seed` (the same run simulate_run gives) and writes its timeline to `out`.
RunReport write_run_trace(const RunSpec& spec, uint64_t seed, std::ostream& out);

}  // namespace fathom::workloads::run
