#include "sim/simulator.h"

#include "sim/error.h"

#include <algorithm>

namespace fathom::sim {

EventId Simulator::schedule_at(Time t, Handler h, int priority) {
    FATHOM_CHECK(t >= now_, "event scheduled in the past");
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        slot = static_cast<uint32_t>(slots_.size());
        slots_.emplace_back();
    }
    const uint64_t seq = next_seq_++;
    slots_[slot].handler = std::move(h);
    slots_[slot].seq = seq;
    push_heap(Entry{t.ps(), priority, slot, seq});
    ++live_;
    return EventId{seq, slot};
}

bool Simulator::cancel(EventId id) {
    if (id.seq == 0 || id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) return false;
    slots_[id.slot].seq = 0;
    slots_[id.slot].handler = nullptr;
    free_slots_.push_back(id.slot);
    --live_;
    return true;
}

void Simulator::push_heap(Entry e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
}

Simulator::Entry Simulator::pop_heap() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    Entry e = heap_.back();
    heap_.pop_back();
    return e;
}

bool Simulator::pop_and_run(Time limit) {
    while (!heap_.empty()) {
        if (heap_.front().time > limit.ps()) return false;
        const Entry e = pop_heap();
        Slot& s = slots_[e.slot];
        if (s.seq != e.seq) continue;  // cancelled (slot possibly reused by a later event)
        Handler h = std::move(s.handler);
        s.handler = nullptr;
        s.seq = 0;
        free_slots_.push_back(e.slot);
        --live_;
        now_ = Time::from_ps(e.time);
        ++processed_;
        h();
        return true;
    }
    return false;
}

Time Simulator::next_event_time() {
    while (!heap_.empty()) {
        const Entry& e = heap_.front();
        if (slots_[e.slot].seq == e.seq) return Time::from_ps(e.time);
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
