#pragma once
// The steps a whole run meets beside its own (plans/run.h, RunSteps), each priced by the step
// model: the layouts of elastic recovery with failed nodes' replicas out (plans/run_elastic.h),
// priced once each when a run first reaches them, and the step while an asynchronous checkpoint
// drains over the NICs (the cluster with the NIC bandwidth the drain leaves to training).
#include "plans/context.h"
#include "plans/run.h"
#include "plans/scenario.h"

namespace fathom::plans {

// `elastic`: the degraded steps (a function holding copies of the scenario's parts and the
// context, so it outlives them: a later replay of the run calls it again; threads may share it)
// and the state a GPU holds (the memory estimate's worst stage). `drain`: the step behind an
// asynchronous drain of the scenario's checkpoint tier (none when the drain takes no NIC share).
RunSteps run_steps(const Scenario& s, const EvaluationContext& context, bool elastic, bool drain);

// The step of the scenario's plan on its cluster with each NIC's bandwidth times `nic_factor`.
double step_with_nics(const Scenario& s, const EvaluationContext& context, double nic_factor);

}  // namespace fathom::plans
