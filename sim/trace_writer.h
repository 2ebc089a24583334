#pragma once
// Writes a TaskGraph's executed tasks as Chrome trace-event JSON ("Trace Event Format"), which the
// Perfetto UI (ui.perfetto.dev) and chrome://tracing open. One process per stream group (device),
// one thread (track) per stream; each task is a complete event ("ph":"X") with ts/dur in
// microseconds. Call after the simulation has run.
#include "sim/task_graph.h"

#include <functional>
#include <ostream>
#include <string>

namespace fathom::sim {

// `describe` turns a task into its display name (and may be empty to use the interned name).
void write_chrome_trace(const TaskGraph& graph, std::ostream& out,
                        const std::function<std::string(const TaskRecord&)>& describe = {});

}  // namespace fathom::sim
