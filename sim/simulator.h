#pragma once
// The discrete-event engine: a clock and a future-event list. Construct one per simulation; there
// is no global state, so independent simulations may run on different threads of one process.
//
// Ordering. Events run in increasing (time, priority, sequence): at equal time a lower priority
// value runs first; at equal time and priority the event scheduled first runs first (sequence is a
// per-Simulator counter). This is a total order, so a run is a deterministic function of what was
// scheduled. The queue is a binary heap: O(log n) schedule and pop; cancel is O(1) (the entry is
// marked dead and skipped when popped).
//
// Handlers may schedule and cancel events, including at the current time (they run after the
// current event, in sequence order). Scheduling in the past is a programmer error.
#include "sim/time.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace fathom::sim {

struct EventId {
    uint64_t seq = 0;  // 0 = invalid
    uint32_t slot = 0;
};

class Simulator {
public:
    using Handler = std::function<void()>;

    Time now() const { return now_; }
    EventId schedule_at(Time t, Handler h, int priority = 0);
    EventId schedule_after(Time delay, Handler h, int priority = 0) {
        return schedule_at(now_ + delay, std::move(h), priority);
    }
    // Returns false if the event already ran or was cancelled.
    bool cancel(EventId id);
    // Runs until the queue is empty or stop() is called.
    void run();
    // Runs events with time <= t, then sets the clock to t (if the queue was not stopped earlier).
    void run_until(Time t);
    // The time of the next pending event, Time::max() when none is left (drops cancelled entries
    // from the front of the queue). A driver that advances another clock between events (the flow
    // network's timer, hardware/network/flow_timer.cpp) peeks here, then calls run_until(that time).
    Time next_event_time();
    void stop() { stopped_ = true; }
    uint64_t events_processed() const { return processed_; }
    size_t pending() const { return live_; }

private:
    struct Entry {
        int64_t time;
        int32_t priority;
        uint32_t slot;
        uint64_t seq;
        bool operator>(const Entry& o) const {
            if (time != o.time) return time > o.time;
            if (priority != o.priority) return priority > o.priority;
            return seq > o.seq;
        }
    };
    struct Slot {
        Handler handler;
        uint64_t seq = 0;  // seq of the event occupying the slot, 0 when free
    };
    bool pop_and_run(Time limit);
    void push_heap(Entry e);
    Entry pop_heap();

    Time now_;
    std::vector<Entry> heap_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_slots_;
    uint64_t next_seq_ = 1;
    uint64_t processed_ = 0;
    size_t live_ = 0;
    bool stopped_ = false;
};

}  // namespace fathom::sim
