#pragma once
// Cheap checks that a training plan can run at all on a model and a cluster (divisibility, GPU
// count, batch arithmetic, schedule shape). Each violation names the plan key it concerns, so the
// scenario loader can point at the file and line. Fitting in memory is NOT checked here: an
// out-of-memory plan is a simulation result.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "sim/error.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/training/training_plan.h"

#include <string>
#include <vector>

namespace fathom::plans {

struct Violation {
    std::string key;  // dotted key path (plans/keys.h), e.g. "parallel.tp", "training.global_batch_size"
    std::string message;
};

// "impossible plan: <first violation>; also <key>: <message> ..." (for front ends that report the
// violations as an error).
std::string describe(const std::vector<Violation>& violations);
// The input error of an impossible plan of `file`: describe()'s text, naming the first violation's key.
sim::InputError plan_error(const std::vector<Violation>& violations, const std::string& file);

// Serving: layout against the model and the cluster's GPUs, traffic parameters, fp8 support. Whether
// the weights fit the devices is checked by evaluate (it needs the memory model): a violation too.
std::vector<Violation> check_serving_plan(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                          const workloads::serving::ServingPlan& plan);

// An upper estimate of the tasks a training step's replay creates: 12 per micro-batch and layer of
// one pipeline (the examples run 2.6-10.2: compute, its collectives and their dependencies).
double replay_task_estimate(const models::ModelSpec& model, const workloads::TrainingPlan& plan);
// The violation of a plan whose replay would exceed `max_tasks` (none when it fits).
std::vector<Violation> check_replay_size(const models::ModelSpec& model, const workloads::TrainingPlan& plan,
                                         int64_t max_tasks);

// The violation of generated serving traffic of more than `max_requests` requests (a trace is
// checked as it is read: open_trace's limit).
std::vector<Violation> check_serving_size(const workloads::serving::ServingPlan& plan, int64_t max_requests);

std::vector<Violation> check_training_plan(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                           const workloads::TrainingPlan& plan);

}  // namespace fathom::plans
