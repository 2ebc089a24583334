#pragma once
// Chrome trace-event JSON ("Trace Event Format"), which the Perfetto UI (ui.perfetto.dev) and
// chrome://tracing open: a TraceWriter streams events into one document; write_chrome_trace writes
// a TaskGraph's executed tasks with it (one process per stream group (device), one thread (track)
// per stream, each task a complete event). Times are sim::Time, written in microseconds with six
// decimals (picoseconds, exact).
//
// Event kinds: metadata ("ph":"M": process and thread names, process order), complete events
// ("ph":"X": a span with its start and duration, and integer arguments) and counters ("ph":"C": the
// values of named series at an instant, drawn as a track per process, e.g. KV blocks in use or
// queue lengths).
#include "sim/task_graph.h"
#include "sim/time.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>

namespace fathom::sim {

struct TraceArg {
    const char* name;
    int64_t value;
};

class TraceWriter {
public:
    // Opens the document on `out`; close() ends it (an unclosed document is not valid JSON).
    explicit TraceWriter(std::ostream& out);
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    void process_name(int pid, std::string_view name);
    void process_sort_index(int pid, int index);
    void thread_name(int pid, int tid, std::string_view name);
    void complete(int pid, int tid, std::string_view name, Time start, Time duration,
                  std::initializer_list<TraceArg> args = {});
    // A span at day scale, in seconds (a whole training run outlasts sim::Time's ~106 days): written
    // in microseconds with three decimals (nanoseconds), exact to a nanosecond below ~100 years.
    void complete_seconds(int pid, int tid, std::string_view name, double start_s, double duration_s,
                          std::initializer_list<TraceArg> args = {});
    void counter(int pid, std::string_view name, Time t, std::initializer_list<TraceArg> values);
    void close();

private:
    void begin_event();  // the separator before every event but the first
    // A complete event's head (kind, process, track, name) and its arguments and end; the
    // times between them are the caller's.
    void begin_complete(int pid, int tid, std::string_view name);
    void end_complete(std::initializer_list<TraceArg> args);

    std::ostream& out_;
    bool first_ = true;
    bool closed_ = false;
};

// `describe` turns a task into its display name (and may be empty to use the interned name).
// Call after the simulation has run.
void write_chrome_trace(const TaskGraph& graph, std::ostream& out,
                        const std::function<std::string(const TaskRecord&)>& describe = {});

}  // namespace fathom::sim
