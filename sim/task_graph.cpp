#include "sim/task_graph.h"

#include "sim/error.h"

#include <cmath>

namespace fathom::sim {
namespace {

// `d` scaled by `factor`, to the nearest picosecond.
Time stretched(Time d, double factor) {
    if (factor == 1.0) return d;
    return Time::from_ps(static_cast<int64_t>(std::llround(static_cast<double>(d.ps()) * factor)));
}

}  // namespace

StreamId TaskGraph::add_stream(std::string name, std::string group) {
    streams_.push_back(Stream{});
    stream_info_.push_back(StreamInfo{std::move(name), std::move(group)});
    return static_cast<StreamId>(streams_.size() - 1);
}

uint32_t TaskGraph::intern(const std::string& name) {
    for (size_t i = names_.size(); i-- > 0;) {
        if (names_[i] == name) return static_cast<uint32_t>(i);
    }
    names_.push_back(name);
    return static_cast<uint32_t>(names_.size() - 1);
}

TaskId TaskGraph::add_task(StreamId stream, Time duration, uint32_t name, uint16_t tag, int32_t label_a,
                           int32_t label_b) {
    FATHOM_CHECK(stream < streams_.size(), "unknown stream");
    FATHOM_CHECK(duration >= Time::zero(), "negative task duration");
    Task t;
    t.duration = duration;
    t.stream = stream;
    t.name = name;
    t.tag = tag;
    t.label_a = label_a;
    t.label_b = label_b;
    tasks_.push_back(std::move(t));
    const auto id = static_cast<TaskId>(tasks_.size() - 1);
    streams_[stream].queue.push_back(id);
    if (started_) {
        // Defer to an event so that dependencies added right after this call are honoured.
        sim_.schedule_after(
            Time::zero(), [this, stream] { try_start(stream); }, 1);
    }
    return id;
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
    FATHOM_CHECK(before < tasks_.size() && after < tasks_.size(), "unknown task");
    FATHOM_CHECK(tasks_[after].state == State::Waiting, "dependency added to a task that already started");
    Task& b = tasks_[before];
    if (b.state == State::Done) return;
    FATHOM_CHECK(edges_.size() < kNoEdge, "too many dependencies");
    const auto e = static_cast<uint32_t>(edges_.size());
    edges_.push_back(Edge{after, kNoEdge});
    if (b.last_edge == kNoEdge) b.first_edge = e;
    else edges_[b.last_edge].next = e;
    b.last_edge = e;
    ++tasks_[after].pending_deps;
}

void TaskGraph::start() {
    started_ = true;
    for (StreamId s = 0; s < streams_.size(); ++s) try_start(s);
}

size_t TaskGraph::memory_bytes() const {
    size_t b = tasks_.capacity() * sizeof(Task) + edges_.capacity() * sizeof(Edge) +
               streams_.capacity() * sizeof(Stream) + stream_info_.capacity() * sizeof(StreamInfo);
    for (const Stream& s : streams_) b += s.queue.capacity() * sizeof(TaskId);
    for (const StreamInfo& i : stream_info_) b += i.name.capacity() + i.group.capacity();
    for (const std::string& n : names_) b += sizeof(std::string) + n.capacity();
    return b;
}

TaskRecord TaskGraph::record(TaskId id) const {
    const Task& t = tasks_[id];
    return TaskRecord{id, t.stream, t.name, t.tag, t.label_a, t.label_b, t.start, t.end};
}

void TaskGraph::try_start(StreamId s) {
    Stream& st = streams_[s];
    if (st.busy || st.head >= st.queue.size()) return;
    const TaskId id = st.queue[st.head];
    Task& t = tasks_[id];
    if (t.pending_deps > 0 || t.state != State::Waiting) return;
    st.busy = true;
    t.state = State::Running;
    t.start = sim_.now();
    t.end = t.start + (st.contended ? stretched(t.duration, t.contended_stretch) : t.duration);
    if (timer_ && timer_->take(*this, record(id), tasks_[id].duration))
        tasks_[id].end = Time::max();  // until complete()
    else streams_[s].end_event = sim_.schedule_call(tasks_[id].end, &TaskGraph::finish_call, this, id);
    // Observers may add tasks (reallocating tasks_): nothing below may use `t`.
    if (!on_start.empty()) on_start.emit(record(id));
}

void TaskGraph::set_contended_stretch(TaskId id, double stretch) {
    FATHOM_CHECK(id < tasks_.size() && tasks_[id].state == State::Waiting, "stretch of a task that started");
    FATHOM_CHECK(stretch > 0 && std::isfinite(stretch), "task stretch must be positive and finite");
    tasks_[id].contended_stretch = static_cast<float>(stretch);
}

void TaskGraph::set_contended(StreamId s, bool contended) {
    FATHOM_CHECK(s < streams_.size(), "unknown stream");
    Stream& st = streams_[s];
    if (contended == st.contended) return;
    st.contended = contended;
    if (!st.busy) return;
    const TaskId id = st.queue[st.head];
    Task& t = tasks_[id];
    if (t.contended_stretch == 1.0f || t.end == Time::max() || t.end <= sim_.now()) return;  // a timer's, or ending now
    const double f = t.contended_stretch;
    sim_.cancel(st.end_event);
    t.end = sim_.now() + stretched(t.end - sim_.now(), contended ? f : 1.0 / f);
    st.end_event = sim_.schedule_call(t.end, &TaskGraph::finish_call, this, id);
}

void TaskGraph::complete(TaskId id) {
    FATHOM_CHECK(id < tasks_.size() && tasks_[id].state == State::Running && tasks_[id].end == Time::max(),
                 "complete() of a task that no timer holds");
    tasks_[id].end = sim_.now();
    finish(id);
}

void TaskGraph::finish_call(void* graph, uint64_t task) {
    static_cast<TaskGraph*>(graph)->finish(static_cast<TaskId>(task));
}

void TaskGraph::finish(TaskId id) {
    Task& t = tasks_[id];
    t.state = State::Done;
    ++done_count_;
    Stream& st = streams_[t.stream];
    st.busy = false;
    ++st.head;
    // Observers may add tasks or streams: `t` and `st` are not used after this point.
    if (!on_finish.empty()) on_finish.emit(record(id));
    // Successors first (in the order their dependencies were added), then this stream's next task.
    // Indexing (not references) because observers fired from try_start may grow tasks_.
    const StreamId own_stream = tasks_[id].stream;
    // A finished task gains no successor, so its list is fixed; edges_ may still grow.
    for (uint32_t e = tasks_[id].first_edge; e != kNoEdge; e = edges_[e].next) {
        const TaskId succ = edges_[e].to;
        if (--tasks_[succ].pending_deps == 0) try_start(tasks_[succ].stream);
    }
    try_start(own_stream);
}

}  // namespace fathom::sim
