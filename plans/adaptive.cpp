#include "plans/adaptive.h"

#include "plans/run.h"
#include "sim/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace fathom::plans {

namespace {

// integral_{p0}^{p1} (1 + B / b(p)) dp with b(p) = b0 r^p, r = b1 / b0:
// (p1 - p0) + B / b0 x (r^-p0 - r^-p1) / ln r (the limit B / b0 (p1 - p0) when r = 1).
double examples_factor(double batch, double b0, double b1, double p0, double p1) {
    const double r = b1 / b0;
    const double lr = std::log(r);
    const double noise = std::fabs(lr) < 1e-12 ? (p1 - p0) : (std::pow(r, -p0) - std::pow(r, -p1)) / lr;
    return (p1 - p0) + batch / b0 * noise;
}

// The layout a checkpoint-and-restart changes: everything but the global batch.
auto layout_key(const workloads::TrainingPlan& p) {
    workloads::TrainingPlan q = p;
    q.training.global_batch = 0;
    return q.describe();
}

}  // namespace

double adaptive_phase_seconds(double min_sequences, int64_t seq_len, double batch, double tokens_per_s, double b0,
                              double b1, double p0, double p1) {
    const double sequences = min_sequences * examples_factor(batch, b0, b1, p0, p1);
    return sequences * static_cast<double>(seq_len) / tokens_per_s;
}

namespace {

void check_inputs(const SearchSpace& space) {
    if (space.phases < 1) throw sim::InputError("an adaptive run needs at least one phase", "", 0, "search.phases");
    if (!(space.target_tokens > 0))
        throw sim::InputError("an adaptive run needs the tokens the run trains at the scenario's batch", "", 0,
                              "search.target_tokens");
    if (!(space.b_noise > 0))
        throw sim::InputError("an adaptive run needs the gradient noise scale", "", 0, "search.b_noise");
}

// One checkpoint-and-restart: save to, load from the nodes' SSDs, reshard over the NICs.
double reconfigure_seconds(const hardware::ClusterSpec& cluster, double checkpoint_bytes, double restart_s) {
    if (!cluster.ssd)
        throw sim::InputError(
            "adaptive phases that change the layout checkpoint to the nodes' SSDs: set cluster.ssd "
            "(`fathom list hardware`)",
            "", 0, "cluster.ssd");
    const double nodes = cluster.nodes;
    const double nic = cluster.node_nic_achievable();
    return checkpoint_bytes / (nodes * cluster.ssds_per_node * cluster.ssd->write_bandwidth) +
           checkpoint_bytes / (nodes * cluster.ssds_per_node * cluster.ssd->read_bandwidth) +
           (cluster.nodes > 1 ? checkpoint_bytes / (nodes * nic) : 0.0) + restart_s;
}

// The evaluated candidates of a search (in enumeration order: ties go to the lower index) and
// what the phases need of them: their layout group (a checkpoint-and-restart leaves a group) and
// the seconds each takes over phase k.
struct Phases {
    const SearchResult& result;
    const AdaptiveRun& run;
    int64_t seq_len;
    double b0, b1;
    int count;
    std::vector<size_t> ev;  // candidate indices
    std::vector<int> group;  // of each, by layout
    size_t groups = 0;

    const Candidate& at(size_t j) const { return result.candidates[ev[j]]; }
    double seconds(size_t j, int k) const {
        return adaptive_phase_seconds(run.min_sequences, seq_len, at(j).plan.training.global_batch, at(j).tokens_per_s,
                                      b0, b1, static_cast<double>(k) / count, static_cast<double>(k + 1) / count);
    }
};

// The cheapest sequence of candidates over the phases (a dynamic programme: cost[k][j] is the least
// time to finish phase k on candidate j, from[k][j] the candidate of phase k - 1), its time set on
// `run`.
std::vector<size_t> cheapest_sequence(const Phases& ph, AdaptiveRun& run) {
    const int K = ph.count;
    const size_t M = ph.ev.size();
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> cost(static_cast<size_t>(K), std::vector<double>(M, inf));
    std::vector<std::vector<int64_t>> from(static_cast<size_t>(K), std::vector<int64_t>(M, -1));
    for (size_t j = 0; j < M; ++j) cost[0][j] = ph.seconds(j, 0);
    for (int k = 1; k < K; ++k) {
        // Staying in a layout group is free; leaving any state for another group costs one restart.
        std::vector<double> best_in(ph.groups, inf);
        std::vector<int64_t> arg_in(ph.groups, -1);
        double best_any = inf;
        int64_t arg_any = -1;
        for (size_t j = 0; j < M; ++j) {
            const double c = cost[static_cast<size_t>(k - 1)][j];
            const size_t g = static_cast<size_t>(ph.group[j]);
            if (c < best_in[g]) best_in[g] = c, arg_in[g] = static_cast<int64_t>(j);
            if (c < best_any) best_any = c, arg_any = static_cast<int64_t>(j);
        }
        for (size_t j = 0; j < M; ++j) {
            const size_t g = static_cast<size_t>(ph.group[j]);
            double prev = best_in[g];
            int64_t arg = arg_in[g];
            if (best_any + run.reconfigure_one_s < prev) prev = best_any + run.reconfigure_one_s, arg = arg_any;
            cost[static_cast<size_t>(k)][j] = prev + ph.seconds(j, k);
            from[static_cast<size_t>(k)][j] = arg;
        }
    }
    const auto& last = cost[static_cast<size_t>(K - 1)];
    int64_t j = std::min_element(last.begin(), last.end()) - last.begin();
    run.seconds = last[static_cast<size_t>(j)];
    std::vector<size_t> chosen(static_cast<size_t>(K));
    for (int k = K - 1; k >= 0; --k) {
        chosen[static_cast<size_t>(k)] = static_cast<size_t>(j);
        if (k > 0) j = from[static_cast<size_t>(k)][static_cast<size_t>(j)];
    }
    return chosen;
}

// The phases of `run` on the chosen candidates, a restart charged where the layout changes.
void fill_phases(const Phases& ph, const std::vector<size_t>& chosen, AdaptiveRun& run) {
    const double b0 = ph.b0, b1 = ph.b1;
    run.phases.resize(static_cast<size_t>(ph.count));
    for (int k = 0; k < ph.count; ++k) {
        const size_t jk = chosen[static_cast<size_t>(k)];
        AdaptivePhase& p = run.phases[static_cast<size_t>(k)];
        p.progress_begin = static_cast<double>(k) / ph.count;
        p.progress_end = static_cast<double>(k + 1) / ph.count;
        p.b_noise_begin = b0 * std::pow(b1 / b0, p.progress_begin);
        p.b_noise_end = b0 * std::pow(b1 / b0, p.progress_end);
        const Candidate& c = ph.at(jk);
        p.candidate = c.index;
        p.sequences =
            run.min_sequences * examples_factor(c.plan.training.global_batch, b0, b1, p.progress_begin, p.progress_end);
        p.seconds = ph.seconds(jk, k);
        if (k > 0 && ph.group[jk] != ph.group[chosen[static_cast<size_t>(k - 1)]]) {  // a layout change
            p.reconfigure_s = run.reconfigure_one_s;
            run.reconfigure_s += run.reconfigure_one_s;
            ++run.switches;
        }
    }
}

}  // namespace

AdaptiveRun plan_adaptive_run(const SearchResult& result, const SearchSpace& space, const models::ModelSpec& model,
                              const hardware::ClusterSpec& cluster, int64_t seq_len) {
    check_inputs(space);
    const double b0 = space.b_noise, b1 = space.b_noise_final > 0 ? space.b_noise_final : space.b_noise;
    AdaptiveRun run;
    const double n0 = space.target_tokens / static_cast<double>(seq_len);
    run.min_sequences = n0 / examples_factor(result.base_global_batch, b0, b1, 0, 1);

    Phases ph{result, run, seq_len, b0, b1, space.phases, {}, {}, 0};
    for (int64_t i : result.ranking) ph.ev.push_back(static_cast<size_t>(i));
    if (ph.ev.empty()) return run;
    std::sort(ph.ev.begin(), ph.ev.end());
    std::map<std::string, int> groups;
    for (size_t i : ph.ev) groups.emplace(layout_key(result.candidates[i].plan), static_cast<int>(groups.size()));
    for (size_t i : ph.ev) ph.group.push_back(groups.at(layout_key(result.candidates[i].plan)));
    ph.groups = groups.size();
    run.checkpoint_bytes = checkpoint_bytes(model, result.candidates[ph.ev.front()].plan);
    if (groups.size() > 1 && space.phases > 1)
        run.reconfigure_one_s = reconfigure_seconds(cluster, run.checkpoint_bytes, space.restart_s);

    fill_phases(ph, cheapest_sequence(ph, run), run);
    // The best fixed plan: one plan for the whole run.
    run.best_fixed_s = std::numeric_limits<double>::infinity();
    for (size_t m = 0; m < ph.ev.size(); ++m) {
        const Candidate& c = ph.at(m);
        const double t = adaptive_phase_seconds(run.min_sequences, seq_len, c.plan.training.global_batch,
                                                c.tokens_per_s, b0, b1, 0, 1);
        if (t < run.best_fixed_s) run.best_fixed_s = t, run.best_fixed = c.index;
    }
    return run;
}

}  // namespace fathom::plans
