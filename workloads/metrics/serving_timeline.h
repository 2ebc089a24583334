#pragma once
// The timeline of a serving run (`fathom run --trace`), written through sim::TraceWriter from the
// serving engine's signals (workloads/serving/serving_events.h): process 0 names the run
// ("serving"); each replica is the process of its first global rank, with one complete event
// "iteration" per batch (args: prefill_tokens, prefills, decodes) and a counter "kv_blocks" (arg
// `used`: blocks its sequences reference) at the end of each batch.
#include "sim/trace_writer.h"
#include "workloads/serving/serving_events.h"

#include <ostream>

namespace fathom::workloads {

class ServingTimeline {
public:
    // Opens the document on `out` and subscribes to `signals`; attach before the engine runs.
    ServingTimeline(serving::ServingSignals& signals, std::ostream& out);
    ServingTimeline(const ServingTimeline&) = delete;  // the signals refer to it
    ServingTimeline& operator=(const ServingTimeline&) = delete;

    void close() { writer_.close(); }  // after the run

private:
    sim::TraceWriter writer_;
};

}  // namespace fathom::workloads
