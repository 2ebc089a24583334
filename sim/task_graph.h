#pragma once
// Streams that execute timed tasks, and dependencies between tasks (a task DAG).
//
// A stream is an in-order queue, like a CUDA stream: its tasks run one at a time in the order they
// were added. A task starts when (1) every earlier task of its stream has finished and (2) every
// task it depends on (on any stream, any device) has finished. It then runs for its duration.
// Overlap of compute and communication therefore comes out of the replay: put them on different
// streams and let dependencies, not formulas, decide what waits.
//
// The graph may grow while the simulation runs (a serving scheduler adds each iteration's tasks
// when it decides the batch): add_task on an idle stream whose dependencies are met starts the
// task at the current time. A dependency may be added only while its successor has not started.
//
// Timers: a task's end may be decided outside the graph (a transfer whose speed depends on the
// other traffic on the network). A TaskTimer set on the graph is offered every task as it starts;
// a task it takes has no end until the timer calls complete(id), at the then current time; a task
// it declines ends after its duration. The network backends are the timers of communication tasks
// (hardware/network/transfer_timer.h).
//
// Observers: on_start fires when a task begins, on_finish when it ends (both AFTER the state
// change, inside the event). Tasks carry an opaque `tag` and two integer labels that the workload
// defines (e.g. operation class, micro-batch, layer); the engine never interprets them.
#include "sim/signal.h"
#include "sim/simulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::sim {

using StreamId = uint32_t;
using TaskId = uint32_t;

struct TaskRecord {
    TaskId id;
    StreamId stream;
    uint32_t name;    // interned name index (TaskGraph::name)
    uint16_t tag;     // workload-defined category
    int32_t label_a;  // workload-defined (e.g. micro-batch), -1 if unused
    int32_t label_b;  // workload-defined (e.g. layer), -1 if unused
    Time start;
    Time end;
};

struct StreamInfo {
    std::string name;   // e.g. "compute", "dp-comm"
    std::string group;  // the device it belongs to, e.g. "stage 3"; one timeline process per group
};

class TaskGraph;
class TaskTimer {
public:
    virtual ~TaskTimer() = default;
    // `task` of `graph` starts now with a planned `duration`; true: the timer will call
    // graph.complete() for it.
    virtual bool take(TaskGraph& graph, const TaskRecord& task, Time duration) = 0;
};

class TaskGraph {
public:
    explicit TaskGraph(Simulator& sim) : sim_(sim) {}
    TaskGraph(const TaskGraph&) = delete;
    TaskGraph& operator=(const TaskGraph&) = delete;

    StreamId add_stream(std::string name, std::string group);
    uint32_t intern(const std::string& name);
    // Appends a task to the end of `stream`. It may start immediately (at now()).
    TaskId add_task(StreamId stream, Time duration, uint32_t name, uint16_t tag = 0, int32_t label_a = -1,
                    int32_t label_b = -1);
    // `after` will not start before `before` has finished. No-op if `before` is already finished.
    void add_dependency(TaskId before, TaskId after);
    // Call once after building an initial graph, and again is harmless: starts every ready task.
    void start();
    // Offers every task to `timer` as it starts (nullptr: none). Set before start().
    void set_timer(TaskTimer* timer) { timer_ = timer; }
    // Ends a running task that the timer took, now.
    void complete(TaskId t);
    // Contention: a device's work may slow while something else holds part of it (compute beside a
    // collective's kernels). While its stream is contended, a task runs `stretch` (> 0) times as
    // long as its duration says (1 unless set; set before it starts); a change of contention
    // rescales what is left of the running task, and a task starting on a contended stream runs
    // stretched from its start. Tasks a timer took end when it says.
    void set_contended_stretch(TaskId task, double stretch);
    void set_contended(StreamId stream, bool contended);

    bool finished(TaskId t) const { return tasks_[t].state == State::Done; }
    Time start_time(TaskId t) const { return tasks_[t].start; }
    Time end_time(TaskId t) const { return tasks_[t].end; }
    TaskRecord record(TaskId t) const;
    size_t task_count() const { return tasks_.size(); }
    size_t stream_count() const { return streams_.size(); }
    const StreamInfo& stream_info(StreamId s) const { return stream_info_[s]; }
    const std::string& name(uint32_t n) const { return names_[n]; }
    size_t unfinished() const { return tasks_.size() - done_count_; }
    // Bytes the graph holds for its tasks, dependencies, streams' queues and names (capacities).
    size_t memory_bytes() const;

    Signal<const TaskRecord&> on_start;
    Signal<const TaskRecord&> on_finish;

private:
    enum class State : uint8_t { Waiting, Running, Done };
    struct Task {
        Time duration;
        Time start;
        Time end;
        StreamId stream;
        uint32_t name;
        int32_t label_a;
        int32_t label_b;
        uint32_t pending_deps = 0;
        uint16_t tag;
        State state = State::Waiting;
        float contended_stretch = 1;
        uint32_t first_edge = kNoEdge;  // successors: a list through edges_, in the order added
        uint32_t last_edge = kNoEdge;
    };
    // One dependency: `to` waits for the task whose list holds it. One pool for the whole graph
    // (a vector per task cost an allocation each, and as much again to free).
    struct Edge {
        TaskId to;
        uint32_t next;
    };
    static constexpr uint32_t kNoEdge = UINT32_MAX;
    // A stream's scheduling state (its names apart, in stream_info_: try_start reads this for
    // every task, and the names had pushed it over two cache lines).
    struct Stream {
        std::vector<TaskId> queue;  // all tasks ever added, in order
        size_t head = 0;            // index of the first unfinished task
        bool busy = false;
        bool contended = false;  // set_contended
        EventId end_event;       // the running task's end, unless a timer took it
    };
    void try_start(StreamId s);
    void finish(TaskId t);
    static void finish_call(void* graph, uint64_t task);

    Simulator& sim_;
    std::vector<Task> tasks_;
    std::vector<Edge> edges_;
    std::vector<Stream> streams_;
    std::vector<StreamInfo> stream_info_;
    std::vector<std::string> names_;
    size_t done_count_ = 0;
    bool started_ = false;
    TaskTimer* timer_ = nullptr;
};

}  // namespace fathom::sim
