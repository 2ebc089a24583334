#include "workloads/metrics/serving_requests.h"

#include "sim/error.h"

#include <algorithm>

namespace fathom::workloads {

using serving::Sequence;

namespace {

// An engine time in seconds as the reports state it: -1 for one that never came.
double seconds(sim::Time t) { return t == serving::kNever ? -1.0 : t.seconds(); }

}  // namespace

ServingRequestCollector::ServingRequestCollector(serving::ServingSignals& signals, const serving::SloSettings& slo,
                                                 const std::vector<std::string>& class_names, bool keep_records,
                                                 int64_t warmup_requests)
    : slo_(slo), class_names_(class_names), keep_records_(keep_records), warmup_(warmup_requests) {
    signals.arrived.connect([this](const Sequence& s) {
        if (measured(s) && first_arrival_ < 0) first_arrival_ = seconds(s.arrival);
    });
    signals.next_tokens.connect([this](const serving::TokensEvent& e) { next_tokens(e); });
    signals.kv_received.connect([this](const Sequence& s) {
        if (measured(s)) transfer_.push_back(seconds(s.kv_received) - seconds(s.kv_sent));
    });
    signals.finished.connect([this](const Sequence& s, sim::Time now) {
        if (measured(s)) finished(s, now);
        else warmup_finished(s, now);
    });
}

const serving::SloClass* ServingRequestCollector::listed(const std::string& name) const {
    for (const serving::SloClass& k : slo_.classes)
        if (k.name == name) return &k;
    return nullptr;
}

ServingRequestCollector::ClassStats& ServingRequestCollector::class_stats(int32_t index) {
    while (classes_.size() < class_names_.size()) {
        const serving::SloClass* k = listed(class_names_[classes_.size()]);
        ClassStats c;
        c.ttft_s = k ? k->ttft_s : slo_.ttft_s;
        c.tpot_s = k ? k->tpot_s : slo_.tpot_s;
        classes_.push_back(std::move(c));
    }
    FATHOM_CHECK(index >= 0 && static_cast<size_t>(index) < classes_.size(), "SLO class index");
    return classes_[static_cast<size_t>(index)];
}

void ServingRequestCollector::next_tokens(const serving::TokensEvent& e) {
    const double now = e.t.seconds();
    const int64_t warmup = warmup_;
    const bool records = keep_records_;
    const bool window = first_arrival_ >= 0 && now >= first_arrival_;
    // Equal gaps in a row (a decode iteration's sequences whose previous tokens came together) go
    // to the histogram as one run: the same values in the same order, one bin lookup.
    double run_gap = 0;
    int64_t run = 0;
    for (const serving::NextToken& k : e.tokens) {
        const int64_t id = k.seq->req.id;
        if (id < warmup) {
            warmup_output_ += window ? 1 : 0;
            continue;
        }
        const double gap = now - k.previous.seconds();
        if (run > 0 && gap == run_gap) {
            ++run;
        } else {
            itl_.add_repeated(run_gap, run);
            run_gap = gap;
            run = 1;
        }
        if (records) note_gap(id, gap);
    }
    itl_.add_repeated(run_gap, run);
}

void ServingRequestCollector::warmup_finished(const Sequence& s, sim::Time now) {
    // A warm-up request's work inside the measurement window (from the first measured arrival on)
    // is throughput the window delivered: its completion, its prompt if prefilled in the window,
    // its first token if sampled there (the later ones are counted as they come, in next_tokens).
    if (first_arrival_ < 0 || seconds(now) < first_arrival_) return;
    ++warmup_finished_;
    if (seconds(s.first_token) >= first_arrival_) {
        warmup_prompt_ += s.req.prompt_tokens;
        warmup_output_ += 1;
    }
}

void ServingRequestCollector::note_gap(int64_t id, double gap) {
    double& m = max_gap_[id];
    m = std::max(m, gap);
}

void ServingRequestCollector::finished(const Sequence& s, sim::Time now) {
    const double t = seconds(now), arrival = seconds(s.arrival), first = seconds(s.first_token);
    const double scheduled = seconds(s.scheduled);
    ++measured_;
    last_finish_ = std::max(last_finish_, t);
    prompt_tokens_ += s.req.prompt_tokens;
    output_tokens_ += s.req.output_tokens;
    hit_tokens_ += s.hit_tokens;
    offload_hit_tokens_ += s.offload_hit_tokens;
    ssd_hit_tokens_ += s.ssd_hit_tokens;
    store_hit_tokens_ += s.store_hit_tokens;
    preemptions_ += s.preemptions;
    const double ttft = first - arrival, e2e = t - arrival;
    const double tpot = serving::tpot_seconds(s.req.output_tokens, first, t);  // -1: one output token
    ttft_.push_back(ttft);
    // Where the prompt's prefix came from: the deepest tier it loaded from, GPU hits alone, or none.
    size_t tier = s.hit_tokens > 0 ? 1 : 0;
    if (s.offload_hit_tokens > 0) tier = s.store_hit_tokens > 0 ? 4 : s.ssd_hit_tokens > 0 ? 3 : 2;
    tier_ttft_[tier].push_back(ttft);
    ttft_service_.push_back(first - scheduled);
    queue_.push_back(scheduled - arrival);
    e2e_.push_back(e2e);
    if (tpot >= 0) tpot_.push_back(tpot);
    ClassStats& cls = class_stats(s.req.slo_class);
    const bool met = (cls.ttft_s <= 0 || ttft <= cls.ttft_s) && (cls.tpot_s <= 0 || tpot <= cls.tpot_s);
    met_ += met ? 1 : 0;
    ++cls.requests;
    cls.met += met ? 1 : 0;
    cls.ttft.push_back(ttft);
    if (tpot >= 0) cls.tpot.push_back(tpot);
    if (keep_records_) record(s, t, ttft, tpot, met);
}

void ServingRequestCollector::record(const Sequence& s, double t, double ttft, double tpot, bool met) {
    const double arrival = seconds(s.arrival), scheduled = seconds(s.scheduled);
    serving::RequestRecord r;
    r.id = s.req.id;
    r.replica = s.replica;
    r.decode_replica = s.decode_replica;
    r.slo_class = s.req.slo_class;
    r.arrival_s = arrival;
    r.queue_s = scheduled - arrival;
    r.ttft_s = ttft;
    r.ttft_service_s = seconds(s.first_token) - scheduled;
    r.tpot_s = std::max(0.0, tpot);
    r.e2e_s = t - arrival;
    const auto gap = max_gap_.find(s.req.id);
    if (gap != max_gap_.end()) {
        r.max_itl_s = gap->second;
        max_gap_.erase(gap);
    }
    r.kv_transfer_s = seconds(s.kv_received) - seconds(s.kv_sent);
    r.prompt_tokens = s.req.prompt_tokens;
    r.output_tokens = s.req.output_tokens;
    r.generated_tokens = s.generated;
    r.prefix_hit_tokens = s.hit_tokens;
    r.preemptions = s.preemptions;
    r.slo_met = met;
    records_.push_back(r);
}

void ServingRequestCollector::report(serving::ServingReport& rep) {
    rep.requests = measured_;
    rep.duration_s = measured_ > 0 ? last_finish_ - std::max(0.0, first_arrival_) : 0;
    const double d = rep.duration_s > 0 ? rep.duration_s : 1;
    // Rates over the window from the first measured arrival to the last measured finish: what the
    // engine delivered in it, the warm-up requests' part included. In a closed loop the warm-up
    // round is still queued or running when the measured requests arrive; counting only the
    // measured requests' tokens over that window would leave the warm-up's share of it out and
    // read the rate low by about concurrency / measured requests (10% at 250 clients over 10
    // rounds), where a closed loop's rate is concurrency x output / latency (Little's law).
    rep.requests_per_s = static_cast<double>(measured_ + warmup_finished_) / d;
    rep.input_tokens_per_s = static_cast<double>(prompt_tokens_ + warmup_prompt_) / d;
    rep.output_tokens_per_s = static_cast<double>(output_tokens_ + warmup_output_) / d;
    rep.total_tokens_per_s = rep.input_tokens_per_s + rep.output_tokens_per_s;
    rep.ttft_s = serving::percentiles(ttft_);
    static const char* const kSources[] = {"none", "gpu", "host", "nvme", "store"};
    for (size_t i = 0; i < tier_ttft_.size(); ++i)
        if (!tier_ttft_[i].empty())
            rep.ttft_by_tier.push_back(
                {kSources[i], static_cast<int64_t>(tier_ttft_[i].size()), serving::percentiles(tier_ttft_[i])});
    rep.ttft_service_s = serving::percentiles(ttft_service_);
    rep.queue_s = serving::percentiles(queue_);
    rep.tpot_s = serving::percentiles(tpot_);
    rep.e2e_s = serving::percentiles(e2e_);
    rep.kv_transfer_s = serving::percentiles(transfer_);
    rep.itl_s = itl_.summary();
    rep.slo_ttft_s = slo_.ttft_s;
    rep.slo_tpot_s = slo_.tpot_s;
    rep.slo_attainment = measured_ ? static_cast<double>(met_) / static_cast<double>(measured_) : 0;
    rep.goodput_requests_per_s = static_cast<double>(met_) / d;
    rep.preemptions = preemptions_;
    rep.prefix_hit_tokens = hit_tokens_;
    rep.prefix_hit_rate = prompt_tokens_ ? static_cast<double>(hit_tokens_) / static_cast<double>(prompt_tokens_) : 0;
    rep.offload_hit_tokens = offload_hit_tokens_;
    rep.offload_ssd_hit_rate =
        prompt_tokens_ ? static_cast<double>(ssd_hit_tokens_) / static_cast<double>(prompt_tokens_) : 0;
    rep.offload_hit_rate =
        prompt_tokens_ ? static_cast<double>(offload_hit_tokens_) / static_cast<double>(prompt_tokens_) : 0;
    rep.store_hit_rate =
        prompt_tokens_ ? static_cast<double>(store_hit_tokens_) / static_cast<double>(prompt_tokens_) : 0;
    rep.slo_class_names = class_names_;
    if (class_names_.size() > 1 || !slo_.classes.empty()) report_classes(rep, d);
    std::sort(records_.begin(), records_.end(),
              [](const serving::RequestRecord& a, const serving::RequestRecord& b) { return a.id < b.id; });
    rep.records = std::move(records_);
}

void ServingRequestCollector::report_classes(serving::ServingReport& rep, double d) {
    if (!class_names_.empty()) class_stats(0);  // every class named by the traffic gets its SLOs
    auto add = [&](const std::string& name, ClassStats& c) {
        serving::SloClassReport k;
        k.name = name;
        k.slo_ttft_s = c.ttft_s;
        k.slo_tpot_s = c.tpot_s;
        k.requests = c.requests;
        k.slo_attainment = c.requests ? static_cast<double>(c.met) / static_cast<double>(c.requests) : 0;
        k.goodput_requests_per_s = static_cast<double>(c.met) / d;
        k.ttft_s = serving::percentiles(c.ttft);
        k.tpot_s = serving::percentiles(c.tpot);
        rep.slo_classes.push_back(std::move(k));
    };
    for (size_t i = 0; i < class_names_.size(); ++i)
        if (classes_[i].requests > 0 || listed(class_names_[i])) add(class_names_[i], classes_[i]);
    // Classes the scenario gives SLOs for that no request had.
    for (const serving::SloClass& k : slo_.classes)
        if (std::find(class_names_.begin(), class_names_.end(), k.name) == class_names_.end()) {
            ClassStats none;
            none.ttft_s = k.ttft_s;
            none.tpot_s = k.tpot_s;
            add(k.name, none);
        }
}

}  // namespace fathom::workloads
