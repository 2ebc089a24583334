#pragma once
// A minimal typed signal for observers: models emit, metric collectors subscribe. Slots run
// synchronously, in connection order, inside the emitting event.
#include <functional>
#include <utility>
#include <vector>

namespace fathom::sim {

template <typename... Args>
class Signal {
public:
    using Slot = std::function<void(Args...)>;
    void connect(Slot s) { slots_.push_back(std::move(s)); }
    void emit(Args... args) const {
        for (const auto& s : slots_) s(args...);
    }
    bool empty() const { return slots_.empty(); }

private:
    std::vector<Slot> slots_;
};

}  // namespace fathom::sim
