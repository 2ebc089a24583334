#include "workloads/training/shared_fabric.h"

#include "hardware/network/transfer_timer.h"
#include "sim/error.h"

#include <algorithm>
#include <functional>
#include <memory>

namespace fathom::workloads {

namespace {

struct JobRun {
    std::vector<std::unique_ptr<StepReplay>> steps;
    StepCommunicators communicators;
    std::vector<double> start, end;
    uint64_t flows = 0;
    StepReport first;  // the first step's report
};

// Runs the jobs `which` together on a fresh engine and session, each starting new steps until
// `horizon` (s) has passed (0: one step each).
std::vector<JobRun> run_together(const std::vector<SharedJob>& jobs, const std::vector<size_t>& which,
                                 const hardware::NetworkModel& fabric, double horizon) {
    sim::Simulator sim;
    const auto timer = fabric.timer(sim);
    std::vector<JobRun> runs(which.size());
    // Lays job k's next step and hands its transfers to the timer; its graph starts later (the
    // first steps of every job declare their communicators before any transfer runs).
    std::function<sim::TaskGraph&(size_t)> lay = [&](size_t k) -> sim::TaskGraph& {
        JobRun& run = runs[k];
        run.steps.push_back(std::make_unique<StepReplay>(*jobs[which[k]].inputs, sim, *timer, jobs[which[k]].rank_of,
                                                         &run.communicators));
        StepReplay& step = *run.steps.back();
        sim::TaskGraph* graph = &step.graph();
        graph->on_finish.connect([&, k, graph](const sim::TaskRecord&) {
            if (graph->unfinished() != 0) return;
            runs[k].end.push_back(sim.now().seconds());
            runs[k].flows += timer->flows(*graph);
            if (sim.now().seconds() < horizon)
                sim.schedule_after(sim::Time::zero(), [&, k] {
                    runs[k].start.push_back(sim.now().seconds());
                    lay(k).start();
                });
        });
        return *graph;
    };
    std::vector<sim::TaskGraph*> first;
    for (size_t k = 0; k < which.size(); ++k) first.push_back(&lay(k));
    for (size_t k = 0; k < which.size(); ++k) {
        runs[k].start.push_back(0.0);
        first[k]->start();
    }
    timer->run();
    for (JobRun& run : runs) {
        run.first = run.steps.front()->report(sim);
        run.steps.clear();  // while the engine they were laid on exists
    }
    return runs;
}

}  // namespace

std::vector<SharedJobResult> simulate_shared_fabric(const std::vector<SharedJob>& jobs,
                                                    const hardware::NetworkModel& fabric, int steps,
                                                    const std::function<void(int64_t, int64_t)>& progress) {
    FATHOM_CHECK(steps >= 1, "shared fabric: at least one step");
    const auto total = static_cast<int64_t>(jobs.size() + 1);
    std::vector<SharedJobResult> r(jobs.size());
    std::vector<size_t> all;
    double slowest = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
        FATHOM_CHECK(jobs[j].inputs && static_cast<int>(jobs[j].rank_of.size()) == jobs[j].inputs->plan.gpus(),
                     "shared fabric: a job's placement must give every rank a GPU");
        const std::vector<JobRun> alone = run_together(jobs, {j}, fabric, 0.0);
        r[j].alone = alone.front().first;
        slowest = std::max(slowest, r[j].alone.step_time_s);
        all.push_back(j);
        if (progress) progress(static_cast<int64_t>(j + 1), total);
    }
    const std::vector<JobRun> shared = run_together(jobs, all, fabric, steps * slowest);
    for (size_t j = 0; j < jobs.size(); ++j) {
        const JobRun& run = shared[j];
        for (size_t k = 0; k < run.end.size(); ++k) r[j].shared_steps.push_back(run.end[k] - run.start[k]);
        r[j].shared_step_s = run.end.back() / static_cast<double>(run.end.size());
        r[j].shared_flows = run.flows;
    }
    if (progress) progress(total, total);
    return r;
}

std::vector<std::vector<int>> place_jobs(const std::vector<int>& gpus, int nodes, int gpus_per_node,
                                         const std::string& placement) {
    if (placement != "packed" && placement != "interleaved")
        throw sim::InputError("placement '" + placement + "': expected packed or interleaved");
    std::vector<int> need;
    int total = 0;
    for (size_t j = 0; j < gpus.size(); ++j) {
        if (gpus[j] % gpus_per_node != 0)
            throw sim::InputError("job " + std::to_string(j + 1) + " uses " + std::to_string(gpus[j]) +
                                  " GPUs, not whole nodes of " + std::to_string(gpus_per_node) +
                                  ": jobs share a fabric by nodes");
        need.push_back(gpus[j] / gpus_per_node);
        total += need.back();
    }
    if (total > nodes)
        throw sim::InputError("the jobs need " + std::to_string(total) + " nodes; the cluster has " +
                              std::to_string(nodes));
    std::vector<std::vector<int>> node_of(gpus.size());
    if (placement == "packed") {
        int next = 0;
        for (size_t j = 0; j < gpus.size(); ++j)
            for (int k = 0; k < need[j]; ++k) node_of[j].push_back(next++);
    } else {
        int next = 0;
        for (bool more = true; more;) {
            more = false;
            for (size_t j = 0; j < gpus.size(); ++j)
                if (static_cast<int>(node_of[j].size()) < need[j]) {
                    node_of[j].push_back(next++);
                    more = true;
                }
        }
    }
    std::vector<std::vector<int>> rank_of(gpus.size());
    for (size_t j = 0; j < gpus.size(); ++j)
        for (int r = 0; r < gpus[j]; ++r)
            rank_of[j].push_back(node_of[j][static_cast<size_t>(r / gpus_per_node)] * gpus_per_node +
                                 r % gpus_per_node);
    return rank_of;
}

}  // namespace fathom::workloads
