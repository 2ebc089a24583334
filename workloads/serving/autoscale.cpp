#include "workloads/serving/autoscale.h"

#include "sim/error.h"
#include "sim/stats.h"
#include "workloads/serving/serving_plan.h"

#include <algorithm>
#include <cmath>

namespace fathom::workloads::serving {

const std::vector<std::string>& weight_sources() {
    static const std::vector<std::string> s{"ssd", "storage", "host", "peer"};
    return s;
}

const AutoscalePolicyRegistry& autoscale_policy_registry() {
    static const AutoscalePolicyRegistry r = [] {
        AutoscalePolicyRegistry reg("autoscaling policy");
        reg.add("queue",
                "requests queued or running a serving replica (Knative's concurrency, KServe's "
                "vllm:num_requests_running); target: requests a replica",
                make_queue_autoscaler);
        reg.add("kv", "KV-cache use of the serving replicas (vllm:kv_cache_usage_perc); target: the share used",
                make_kv_autoscaler);
        reg.add("slo",
                "TTFT and TPOT of the requests finished since the last evaluation, at the SLO's attainment "
                "quantile, over the SLO; target: the share of the SLO to run at",
                make_slo_autoscaler);
        return reg;
    }();
    return r;
}

std::vector<std::string> autoscale_policy_choices() {
    std::vector<std::string> c{"none"};
    for (const auto& e : autoscale_policy_registry().entries()) c.push_back(e.name);
    return c;
}

ColdStart cold_start(const AutoscaleSettings& a, const hardware::ClusterSpec& c, const PoolLayout& layout,
                     double weight_bytes) {
    ColdStart cs;
    cs.engine_s = std::max(a.engine_start_s, 0.0);
    cs.graphs_s = std::max(a.graph_capture_s, 0.0);
    // A replica's GPUs on one node load their shards at once, sharing the node's path.
    const double on_node = static_cast<double>(std::min<int64_t>(int64_t{layout.tp} * layout.pp, c.gpus_per_node));
    const double pcie = c.pcie.achievable_bandwidth();
    double bw = a.load_bandwidth;
    const bool measured = bw > 0;
    if (!measured) {
        if (a.weights_from == "ssd") {
            if (!c.ssd)
                throw sim::InputError("the cluster has no SSD (cluster.ssd)", "", 0, "serving.autoscale.weights_from");
            bw = std::min(pcie, c.ssd->read_bandwidth * c.ssds_per_node / on_node);
        } else if (a.weights_from == "storage") {
            if (!c.storage)
                throw sim::InputError("the cluster has no shared file system (cluster.storage)", "", 0,
                                      "serving.autoscale.weights_from");
            const double node = c.storage->client_bandwidth > 0
                                    ? std::min(c.storage->client_bandwidth, c.storage->read_bandwidth)
                                    : c.storage->read_bandwidth;
            bw = std::min(pcie, node / on_node);
        } else if (a.weights_from == "host") {
            bw = pcie;  // the weights in host memory (page cache, a DRAM checkpoint store)
        } else if (a.weights_from == "peer") {
            // Each GPU receives its shard from the same rank of a serving replica, NIC to NIC.
            bw = c.nic_bandwidth_per_gpu() * (c.nic.efficiency > 0 ? c.nic.efficiency : 1.0);
        } else {
            throw sim::InputError("missing: where a starting replica loads its weights from (ssd, storage, host, peer)",
                                  "", 0, "serving.autoscale.weights_from");
        }
    }
    cs.weights_s = bw > 0 ? weight_bytes / bw : 0;
    if (!measured && a.loader_bandwidth > 0) {
        const double read = a.loader_reads_all ? weight_bytes * layout.tp * layout.pp : weight_bytes;
        cs.weights_s = std::max(cs.weights_s, read / a.loader_bandwidth);
    }
    return cs;
}

Autoscaler::Autoscaler(sim::Simulator& sim, Fleet& fleet, const AutoscaleSettings& settings, const SloSettings& slo,
                       int64_t replicas, int64_t gpus_per_replica, const ColdStart& cold)
    : sim_(sim),
      fleet_(fleet),
      a_(settings),
      slo_(slo),
      policy_(autoscale_policy_registry().get(settings.policy).factory()),
      gpus_per_replica_(gpus_per_replica),
      cold_(cold),
      state_(static_cast<size_t>(replicas), State::Off),
      loads_(static_cast<size_t>(replicas)) {
    const int64_t initial = std::min(settings.initial(), replicas);
    for (int64_t i = 0; i < initial; ++i) state_[static_cast<size_t>(i)] = State::Serving;
    held_ = serving_ = initial;
    timeline_.emplace_back(0.0, initial);
}

void Autoscaler::start() {
    sim_.schedule_after(sim::Time::from_seconds(a_.interval_s), [this] { evaluate(); });
}

void Autoscaler::set(size_t r, State s) {
    const State was = state_[r];
    if ((was == State::Off) != (s == State::Off)) {
        held_ += s == State::Off ? -1 : 1;
        timeline_.emplace_back(sim_.now().seconds(), held_);
    }
    serving_ += (s == State::Serving) - (was == State::Serving);
    starting_ += (s == State::Starting) - (was == State::Starting);
    state_[r] = s;
}

void Autoscaler::start_replica() {
    // The lowest-numbered replica that is off (a draining one keeps its requests to their end).
    const auto it = std::find(state_.begin(), state_.end(), State::Off);
    if (it == state_.end()) return;
    const auto r = static_cast<size_t>(it - state_.begin());
    set(r, State::Starting);
    ++ups_;
    sim_.schedule_after(sim::Time::from_seconds(cold_.total()), [this, r] {
        set(r, State::Serving);
        fleet_.ready(static_cast<int>(r));
    });
}

void Autoscaler::drain_replica() {
    // The serving replica with the fewest outstanding requests, the newest (highest) on ties.
    int best = -1;
    int64_t least = 0;
    for (size_t i = state_.size(); i-- > 0;) {
        if (state_[i] != State::Serving) continue;
        const int64_t o = fleet_.load(static_cast<int>(i)).outstanding;
        if (best < 0 || o < least) best = static_cast<int>(i), least = o;
    }
    if (best < 0) return;
    ++downs_;
    set(static_cast<size_t>(best), least == 0 ? State::Off : State::Draining);
}

void Autoscaler::wake_from_zero() {
    if (starting_ == 0 && serving_ == 0) start_replica();
}

void Autoscaler::finished(int replica, double ttft_s, double tpot_s) {
    ttft_.push_back(ttft_s);
    if (tpot_s >= 0) tpot_.push_back(tpot_s);  // a one-token reply has none
    const auto r = static_cast<size_t>(replica);
    if (state_[r] == State::Draining && fleet_.load(replica).outstanding == 0) set(r, State::Off);
}

void Autoscaler::evaluate() {
    for (size_t i = 0; i < state_.size(); ++i) {
        loads_[i] = fleet_.load(static_cast<int>(i));
        loads_[i].available = state_[i] == State::Serving;
    }
    const double q = slo_.target_attainment;
    FleetView v{loads_,
                serving_,
                fleet_.waiting(),
                static_cast<int64_t>(ttft_.size()),
                sim::quantile(ttft_, q),
                sim::quantile(tpot_, q),
                slo_,
                a_.target};
    ttft_.clear();
    tpot_.clear();
    const double now = sim_.now().seconds();
    // The proposal: the policy's count rounded up, unless within the tolerance of the serving count.
    const double raw = policy_->desired(v);
    const auto cur = static_cast<double>(serving_);
    int64_t want = serving_ > 0 && std::abs(raw / cur - 1) <= a_.tolerance
                       ? serving_ + starting_
                       : static_cast<int64_t>(std::ceil(raw - 1e-9));
    want = std::clamp<int64_t>(want, a_.min_replicas, static_cast<int64_t>(state_.size()));
    if (v.waiting > 0) want = std::max<int64_t>(want, 1);
    // Scale-down stabilization: the highest proposal of the last scale_down_delay.
    proposals_.emplace_back(now, want);
    while (!proposals_.empty() && proposals_.front().first < now - a_.scale_down_delay_s - 1e-9) proposals_.pop_front();
    int64_t down_to = want;
    for (const auto& p : proposals_) down_to = std::max(down_to, p.second);
    const int64_t active = serving_ + starting_;
    if (want > active) scale_to(want);
    else if (down_to < active) scale_to(down_to);
    // The next evaluation, while anything is left to happen (a starting replica, an arrival, a batch
    // in flight are all events; else the run has ended).
    if (sim_.pending() > 0) start();
}

void Autoscaler::scale_to(int64_t want) {
    while (serving_ + starting_ < want && held_ < static_cast<int64_t>(state_.size())) start_replica();
    while (serving_ + starting_ > want && serving_ > 0) drain_replica();
}

AutoscaleReport Autoscaler::report(sim::Time end) const {
    AutoscaleReport r;
    const double t = end.seconds();
    // Changes after the end (an evaluation past the last request) do not count.
    double area = 0, last = 0;
    int64_t held = timeline_.front().second;
    for (const auto& [when, n] : timeline_) {
        if (when > t) break;
        area += static_cast<double>(held) * (when - last);
        last = when, held = n;
        r.timeline.emplace_back(when, n);
    }
    area += static_cast<double>(held) * std::max(0.0, t - last);
    r.gpu_hours = area * static_cast<double>(gpus_per_replica_) / 3600.0;
    r.replicas_mean = t > 0 ? area / t : static_cast<double>(held);
    for (const auto& p : r.timeline) r.replicas_peak = std::max(r.replicas_peak, p.second);
    r.scale_ups = ups_;
    r.scale_downs = downs_;
    r.cold_start_s = cold_.total();
    return r;
}

}  // namespace fathom::workloads::serving
