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
// current event, in sequence order). Scheduling in the past is a programmer error, and so is a
// priority outside [-32768, 32767] (priority and sequence share one 64-bit heap key).
//
// Two kinds of handler: a Handler (any callable; std::function, which may allocate when its
// captures are large) and a Call, a plain function with a context pointer and an integer (never
// allocates, no type erasure): the engine's hottest events, a task's end, are Calls.
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
    using Call = void (*)(void* context, uint64_t arg);

    Time now() const { return now_; }
    EventId schedule_at(Time t, Handler h, int priority = 0);
    EventId schedule_after(Time delay, Handler h, int priority = 0) {
        return schedule_at(now_ + delay, std::move(h), priority);
    }
    // fn(context, arg) at t.
    EventId schedule_call(Time t, Call fn, void* context, uint64_t arg, int priority = 0);
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
    // (time, order): order = priority (biased to unsigned) in the top 16 bits, sequence below.
    struct Entry {
        int64_t time;
        uint64_t order;
        uint32_t slot;
        bool operator>(const Entry& o) const { return time != o.time ? time > o.time : order > o.order; }
    };
    struct Slot {
        Handler handler;      // empty for a Call
        Call call = nullptr;  // set for a Call
        void* context = nullptr;
        uint64_t arg = 0;
        uint64_t seq = 0;  // seq of the event occupying the slot, 0 when free
    };
    // A free slot for the event about to be scheduled at t, and its heap entry pushed.
    EventId claim(Time t, int priority);
    bool pop_and_run(Time limit);
    void push_heap(const Entry& e);
    Entry pop_heap();
    static constexpr int kSeqBits = 48;
    static uint64_t seq_of(const Entry& e) { return e.order & ((uint64_t{1} << kSeqBits) - 1); }

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
