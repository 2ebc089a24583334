#include "workloads/serving/arrivals.h"

#include "sim/error.h"

#include <utility>
#include <vector>

namespace fathom::workloads::serving {

OpenLoopArrivals::OpenLoopArrivals(sim::Simulator& sim, RequestSource& source, Admit admit)
    : sim_(sim), source_(source), admit_(std::move(admit)) {}

void OpenLoopArrivals::next() {
    if (done_) return;
    std::optional<Request> r = lookahead_ ? std::move(lookahead_) : source_.next();
    lookahead_.reset();
    if (!r) {
        done_ = true;
        return;
    }
    std::vector<Request> group{*r};
    while ((lookahead_ = source_.next()) && lookahead_->arrival_s == r->arrival_s) group.push_back(*lookahead_);
    sim_.schedule_at(engine_time(sim_, r->arrival_s), [this, group = std::move(group)] {
        for (const Request& req : group) admit_(req);
        next();
    });
}

ClosedLoopArrivals::ClosedLoopArrivals(sim::Simulator& sim, RequestSource& source, ServingSignals& signals, Admit admit,
                                       int64_t clients, double think_time_s)
    : sim_(sim), source_(source), admit_(std::move(admit)), clients_(clients), think_time_s_(think_time_s) {
    signals.finished.connect([this](const Sequence& seq, sim::Time now) {
        const auto id = static_cast<size_t>(seq.req.id);
        FATHOM_CHECK(id < client_of_.size(), "a closed loop's request finished that no client sent");
        send_at(client_of_[id], now.seconds() + think_time_s_);
    });
}

// Clients beyond the requests send nothing: the loop stops with the source, so its cost follows
// the requests, not the concurrency (2^31 clients with 10 requests took seconds).
void ClosedLoopArrivals::start() {
    for (int64_t c = 0; c < clients_ && !done_; ++c) send_at(c, 0.0);
}

void ClosedLoopArrivals::send_at(int64_t client, double t) {
    if (done_) return;
    std::optional<Request> r = source_.next_for(client);
    if (!r) {
        done_ = true;
        return;
    }
    const auto id = static_cast<size_t>(r->id);
    if (id >= client_of_.size()) client_of_.resize(id + 1, 0);
    client_of_[id] = client;
    sim_.schedule_at(engine_time(sim_, t), [this, req = *r]() mutable {
        req.arrival_s = sim_.now().seconds();
        admit_(req);
    });
}

std::unique_ptr<ArrivalDriver> make_arrivals(const TrafficPlan& traffic, sim::Simulator& sim, RequestSource& source,
                                             ServingSignals& signals, ArrivalDriver::Admit admit) {
    if (traffic.mode == ArrivalMode::Closed)
        return std::make_unique<ClosedLoopArrivals>(sim, source, signals, std::move(admit), traffic.concurrency,
                                                    traffic.think_time_s);
    return std::make_unique<OpenLoopArrivals>(sim, source, std::move(admit));
}

}  // namespace fathom::workloads::serving
