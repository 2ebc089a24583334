#include "sim/simulator.h"

#include "sim/error.h"

namespace fathom::sim {

EventId Simulator::claim(Time t, int priority) {
    FATHOM_CHECK(t >= now_, "event scheduled in the past");
    FATHOM_CHECK(priority >= -32768 && priority <= 32767, "event priority out of range");
    FATHOM_CHECK(next_seq_ < (uint64_t{1} << kSeqBits), "too many events for one simulation");
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        slot = static_cast<uint32_t>(slots_.size());
        slots_.emplace_back();
    }
    const uint64_t seq = next_seq_++;
    slots_[slot].seq = seq;
    const auto biased = static_cast<uint64_t>(static_cast<int64_t>(priority) + 32768);
    push_heap(Entry{t.ps(), (biased << kSeqBits) | seq, slot});
    ++live_;
    return EventId{seq, slot};
}

EventId Simulator::schedule_at(Time t, Handler h, int priority) {
    const EventId id = claim(t, priority);
    slots_[id.slot].handler = std::move(h);
    return id;
}

EventId Simulator::schedule_call(Time t, Call fn, void* context, uint64_t arg, int priority) {
    const EventId id = claim(t, priority);
    Slot& s = slots_[id.slot];
    s.call = fn;
    s.context = context;
    s.arg = arg;
    return id;
}

bool Simulator::cancel(EventId id) {
    if (id.seq == 0 || id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return false;
    slots_[id.slot].seq = 0;
    slots_[id.slot].handler = nullptr;
    slots_[id.slot].call = nullptr;
    free_slots_.push_back(id.slot);
    --live_;
    return true;
}

// A binary min-heap by hand, each entry written once as a hole moves: the profile of a training
// step showed std::push_heap's copies of the entry through the stack stalling the scheduler. A pop
// moves the hole to a leaf along the smaller children, then the last entry up from there (Floyd's
// order: one comparison a level on the way down).
void Simulator::push_heap(const Entry& e) {
    size_t hole = heap_.size();
    heap_.push_back(e);
    Entry* h = heap_.data();
    while (hole > 0) {
        const size_t parent = (hole - 1) / 2;
        if (!(h[parent] > e)) break;
        h[hole] = h[parent];
        hole = parent;
    }
    h[hole] = e;
}

Simulator::Entry Simulator::pop_heap() {
    Entry* h = heap_.data();
    const Entry top = h[0];
    const size_t n = heap_.size() - 1;  // entries left, the last one to be placed
    size_t hole = 0;
    for (size_t child = 1; child < n; child = 2 * hole + 1) {
        if (child + 1 < n && h[child] > h[child + 1]) ++child;
        h[hole] = h[child];
        hole = child;
    }
    const Entry last = h[n];
    while (hole > 0) {
        const size_t parent = (hole - 1) / 2;
        if (!(h[parent] > last)) break;
        h[hole] = h[parent];
        hole = parent;
    }
    h[hole] = last;
    heap_.pop_back();
    return top;
}

bool Simulator::pop_and_run(Time limit) {
    while (!heap_.empty()) {
        if (heap_.front().time > limit.ps()) return false;
        const Entry e = pop_heap();
        Slot& s = slots_[e.slot];
        if (s.seq != seq_of(e)) continue;  // cancelled (slot possibly reused by a later event)
        s.seq = 0;
        free_slots_.push_back(e.slot);
        --live_;
        now_ = Time::from_ps(e.time);
        ++processed_;
        if (s.call) {
            const Call fn = s.call;
            void* const context = s.context;
            const uint64_t arg = s.arg;
            s.call = nullptr;
            fn(context, arg);  // may schedule, reallocating slots_: `s` is not used after this
        } else {
            Handler h = std::move(s.handler);
            s.handler = nullptr;
            h();
        }
        return true;
    }
    return false;
}

Time Simulator::next_event_time() {
    while (!heap_.empty()) {
        const Entry& e = heap_.front();
        if (slots_[e.slot].seq == seq_of(e)) return Time::from_ps(e.time);
        pop_heap();  // cancelled
    }
    return Time::max();
}

void Simulator::run() {
    stopped_ = false;
    while (!stopped_ && pop_and_run(Time::max())) {}
}

void Simulator::run_until(Time t) {
    stopped_ = false;
    while (!stopped_ && pop_and_run(t)) {}
    if (!stopped_ && now_ < t) now_ = t;
}

}  // namespace fathom::sim
