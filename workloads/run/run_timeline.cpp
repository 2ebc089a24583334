#include "workloads/run/run_timeline.h"

#include "sim/trace_writer.h"

#include <string>
#include <vector>

namespace fathom::workloads::run {

RunReport write_run_trace(const RunSpec& spec, uint64_t seed, std::ostream& out) {
    std::vector<RunEvent> events;
    const RunReport report = simulate_run(spec, seed, &events);
    sim::TraceWriter w(out);
    constexpr int kPid = 1, kTraining = 1, kRecovery = 2, kFailures = 3;
    w.process_name(kPid, "whole run, seed " + std::to_string(seed));
    w.thread_name(kPid, kTraining, "training");
    w.thread_name(kPid, kRecovery, "recovery");
    w.thread_name(kPid, kFailures, "failures");
    using Kind = RunEvent::Kind;
    for (const RunEvent& e : events) {
        switch (e.kind) {
            case Kind::Train: w.complete_seconds(kPid, kTraining, "training", e.start_s, e.duration_s); break;
            case Kind::SlowTrain:
                w.complete_seconds(kPid, kTraining, "training, slower (a straggler, or replicas out)", e.start_s,
                                   e.duration_s);
                break;
            case Kind::Eviction: w.complete_seconds(kPid, kFailures, "straggler evicted", e.start_s, 0); break;
            case Kind::Checkpoint:
                w.complete_seconds(kPid, kTraining, "checkpoint stall", e.start_s, e.duration_s);
                break;
            case Kind::Cycles:
                w.complete_seconds(kPid, kTraining, "training and checkpoints", e.start_s, e.duration_s,
                                   {{"checkpoints", e.checkpoints}});
                break;
            case Kind::Failure: {
                const std::string cause = e.cause >= 0 && static_cast<size_t>(e.cause) < spec.failures.size()
                                              ? spec.failures[static_cast<size_t>(e.cause)].name
                                              : std::string("failure");
                w.complete_seconds(kPid, kFailures, cause, e.start_s, 0);
                break;
            }
            case Kind::Detect: w.complete_seconds(kPid, kRecovery, "detection", e.start_s, e.duration_s); break;
            case Kind::NodeWait:
                w.complete_seconds(kPid, kRecovery, "waiting for a node", e.start_s, e.duration_s);
                break;
            case Kind::Restart: w.complete_seconds(kPid, kRecovery, "restart", e.start_s, e.duration_s); break;
            case Kind::Load: w.complete_seconds(kPid, kRecovery, "checkpoint load", e.start_s, e.duration_s); break;
            case Kind::Reconfigure:
                w.complete_seconds(kPid, kRecovery, "reconfiguration", e.start_s, e.duration_s);
                break;
            case Kind::Rejoin: w.complete_seconds(kPid, kFailures, "replicas rejoin", e.start_s, 0); break;
        }
    }
    w.close();
    return report;
}

}  // namespace fathom::workloads::run
