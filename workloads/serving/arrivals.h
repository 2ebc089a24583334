#pragma once
// How requests reach the serving system, read from a RequestSource one at a time (a trace of any
// length streams through):
//   open loop    each request at its arrival time; requests arriving at one instant arrive together
//                (offline traffic: all at 0), so a replica forms its batch from all of them
//   closed loop  `concurrency` clients, each sending its next request think_time after the reply to
//                its previous one (the request's arrival_s is set when it is sent); a source with
//                sessions gives each client its own conversation (RequestSource::next_for). The
//                loop stops when the source has nothing for a client.
// A driver schedules arrivals on the engine and hands each request to `admit` at its time.
#include "sim/simulator.h"
#include "workloads/serving/serving_events.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/serving/traffic/traffic.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace fathom::workloads::serving {

class ArrivalDriver {
public:
    using Admit = std::function<void(const Request&)>;
    virtual ~ArrivalDriver() = default;
    virtual void start() = 0;  // schedules the first arrivals
};

class OpenLoopArrivals final : public ArrivalDriver {
public:
    OpenLoopArrivals(sim::Simulator& sim, RequestSource& source, Admit admit);
    void start() override { next(); }

private:
    void next();  // schedules the next group of simultaneous arrivals

    sim::Simulator& sim_;
    RequestSource& source_;
    Admit admit_;
    std::optional<Request> lookahead_;  // the first request after the group being delivered
    bool done_ = false;
};

class ClosedLoopArrivals final : public ArrivalDriver {
public:
    // Subscribes to `signals.finished`: each finished request sends its client's next one.
    ClosedLoopArrivals(sim::Simulator& sim, RequestSource& source, ServingSignals& signals, Admit admit,
                       int64_t clients, double think_time_s);
    void start() override;

private:
    void send_at(int64_t client, double t);  // a client's next request, sent at `t` seconds

    sim::Simulator& sim_;
    RequestSource& source_;
    Admit admit_;
    int64_t clients_;
    double think_time_s_;
    std::vector<int64_t> client_of_;  // by request id: the client that sent it
    bool done_ = false;
};

// The driver of the plan's arrival mode.
std::unique_ptr<ArrivalDriver> make_arrivals(const TrafficPlan& traffic, sim::Simulator& sim, RequestSource& source,
                                             ServingSignals& signals, ArrivalDriver::Admit admit);

}  // namespace fathom::workloads::serving
