// `fathom share A.yaml B.yaml ... [--placement packed|interleaved] [--json FILE]`: training jobs
// on one fabric (the first scenario's kind of cluster with the nodes of all the jobs, as the flow
// network: cluster.network simgrid with its routing). Each job is priced as its own scenario says, placed on whole
// nodes of the fabric, and run alone there and then with every other job at once; the table gives each job's step time
// both ways and its slowdown (workloads/training/shared_fabric.h).
#include "hardware/network/simgrid_network.h"
#include "plans/constraints.h"
#include "plans/evaluate.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "workloads/training/shared_fabric.h"

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

namespace fathom::cli {
namespace {

// A percentage to print with one decimal: one that rounds to zero prints 0.0, not -0.0.
double unsigned_zero(double percent) { return std::fabs(percent) < 0.05 ? 0.0 : percent; }

}  // namespace

namespace {

constexpr int kSteps = 3;  // the horizon together, in steps of the slowest job alone

// What makes two clusters one fabric: the same nodes, NICs and scale-out network (node counts
// may differ; the first scenario's is the fabric's).
std::string fabric_of(const hardware::ClusterSpec& c) {
    std::ostringstream o;
    o << c.accelerator.id << " x " << c.gpus_per_node << " per node, " << c.nics_per_node << " x " << c.nic.id << ", "
      << sim::name(c.topology) << " " << c.nodes_per_leaf << " nodes per leaf, oversubscription " << c.oversubscription
      << ", routing " << c.routing;
    return o.str();
}

// Every job priced on its own cluster's flow network, as `fathom run --network simgrid` would.
struct PricedJobs {
    std::vector<std::unique_ptr<models::CostModel>> costs;
    std::vector<std::unique_ptr<hardware::FlowNetworkModel>> networks;
    std::vector<std::unique_ptr<workloads::StepInputs>> inputs;
    std::vector<int> gpus;
    std::optional<plans::CostModelKind> cost_kind;  // Mixed when the jobs' kinds differ
};

PricedJobs price_jobs(const std::vector<plans::Scenario>& scen, const plans::EvaluationContext& context,
                      const Args& a) {
    PricedJobs out;
    for (const auto& s : scen) {
        const auto& plan = *s.training();
        const auto violations = plans::check_training_plan(s.model, s.cluster, plan);
        if (!violations.empty()) throw plans::plan_error(violations, s.file);
        plans::CostModelKind kind{};
        out.costs.push_back(plans::cost_model_for(s.cluster.accelerator, context, kind));
        out.cost_kind = !out.cost_kind || out.cost_kind == kind ? kind : plans::CostModelKind::Mixed;
        out.networks.push_back(hardware::make_simgrid_network(s.cluster, s.cluster.routing, a.algorithm));
        out.inputs.push_back(std::make_unique<workloads::StepInputs>(
            workloads::StepInputs{s.model, s.cluster, plan, *out.costs.back(), *out.networks.back()}));
        out.gpus.push_back(plan.gpus());
    }
    return out;
}

}  // namespace

int cmd_share(const Args& a) {
    if (a.positional.size() < 2)
        throw sim::InputError("share: give two or more training scenarios (jobs on one fabric)");
    const auto catalog = scenarios::load_catalog();
    std::vector<plans::Scenario> scen;
    for (const auto& f : a.positional) {
        scen.push_back(scenarios::load_scenario(f, *catalog, a.sets));
        for (const auto& w : scen.back().warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
        if (!scen.back().training())
            throw sim::InputError("share: a job must be a training scenario (kind: training)", f);
    }
    hardware::ClusterSpec fabric = scen.front().cluster;
    fabric.network = hardware::NetworkBackend::Simgrid;
    for (size_t j = 1; j < scen.size(); ++j)
        if (fabric_of(scen[j].cluster) != fabric_of(fabric))
            throw sim::InputError("share: the jobs must run on one fabric; " + scen[j].file + " has " +
                                      fabric_of(scen[j].cluster) + ", " + scen.front().file + " " + fabric_of(fabric),
                                  scen[j].file);

    // One context: the calibration tables are read once (a training step does not use the seed).
    const plans::EvaluationContext context = cli_context(catalog, scen.front().seed, a);
    const PricedJobs priced = price_jobs(scen, context, a);
    const std::vector<int>& gpus = priced.gpus;
    const auto& cost_kind = priced.cost_kind;
    // The fabric: the first job's kind of cluster, as many nodes as the jobs take together.
    fabric.nodes = 0;
    for (int g : gpus) fabric.nodes += (g + fabric.gpus_per_node - 1) / fabric.gpus_per_node;
    const std::string placement = a.placement.empty() ? "packed" : a.placement;
    const auto rank_of = workloads::place_jobs(gpus, fabric.nodes, fabric.gpus_per_node, placement);
    std::vector<workloads::SharedJob> jobs;
    for (size_t j = 0; j < scen.size(); ++j) jobs.push_back({priced.inputs[j].get(), rank_of[j]});
    const auto fabric_net = hardware::make_simgrid_network(fabric, fabric.routing, a.algorithm);
    std::vector<workloads::SharedJobResult> r;
    {
        Progress bar("share: simulations");
        r = workloads::simulate_shared_fabric(jobs, *fabric_net, kSteps, [&bar](int64_t d, int64_t t) { bar(d, t); });
    }

    std::printf("fabric          %s: %d nodes x %d %s, %s\n", scen.front().file.c_str(), fabric.nodes,
                fabric.gpus_per_node, fabric.accelerator.id.c_str(), fabric_of(fabric).c_str());
    std::printf("placement       %s (whole nodes)\n", placement.c_str());
    std::printf("together        from a common start, steps back to back until %d x the slowest job's step alone\n\n",
                kSteps);
    std::printf("%-4s %-32s %6s %-12s %10s %10s %6s %9s\n", "job", "scenario", "gpus", "nodes", "alone_s", "shared_s",
                "steps", "slowdown");
    nlohmann::json out = nlohmann::json::array();
    for (size_t j = 0; j < scen.size(); ++j) {
        const int gpn = fabric.gpus_per_node;
        const int first = rank_of[j].front() / gpn, last = rank_of[j].back() / gpn;
        const std::string nodes = placement == "packed" ? std::to_string(first) + "-" + std::to_string(last)
                                                        : std::to_string(first) + ".." + std::to_string(last) + " /" +
                                                              std::to_string(scen.size());
        const double alone = r[j].alone.step_time_s, shared = r[j].shared_step_s;
        std::printf("%-4zu %-32s %6d %-12s %10.4f %10.4f %6zu %8.1f%%\n", j + 1, scen[j].name.c_str(), gpus[j],
                    nodes.c_str(), alone, shared, r[j].shared_steps.size(), unsigned_zero(100 * (shared / alone - 1)));
        out.push_back({{"scenario", scen[j].name},
                       {"file", scen[j].file},
                       {"gpus", gpus[j]},
                       {"gpu_of_rank", rank_of[j]},
                       {"alone_step_time_s", alone},
                       {"shared_step_time_s", shared},
                       {"shared_step_times_s", r[j].shared_steps},
                       {"slowdown", shared / alone - 1},
                       {"alone_flows", r[j].alone.flows},
                       {"shared_flows", r[j].shared_flows}});
    }
    std::printf("\nop costs        %s; each job priced on its own cluster, its transfers flows on the shared fabric\n",
                cost_kind == plans::CostModelKind::Table   ? "calibrated tables"
                : cost_kind == plans::CostModelKind::Mixed ? "calibrated tables and roofline"
                                                           : "roofline");
    if (!a.json.empty()) write_json(a.json, {{"placement", placement}, {"fabric", scen.front().file}, {"jobs", out}});
    return 0;
}

}  // namespace fathom::cli
