#pragma once
// Internal to the measured-format front end: the blocks every kind of case shares, translated into
// scenario keys by one reader each (scenarios/measured_blocks.cpp).
#include "scenarios/measured_case.h"

#include <string>
#include <vector>

namespace fathom::scenarios::measured {

// `hardware.accelerator` as `cluster.accelerator` ("h100-unspecified" taken as the SXM 80GB part,
// stated in `assumptions`); Unsupported when the catalog has no such accelerator. Returns its id.
std::string translate_accelerator(const Case& c, const plans::Catalog& catalog, ScenarioDoc& doc,
                                  std::vector<std::string>& assumptions);

// The cluster block as `cluster.*` keys, the one cluster reader of every kind: the node shape, the
// scale-up fabric (the accelerator's own where it is a variant of the fabric the case names:
// hardware/catalog/fabrics `family`) and the NIC (by the fabric's link layer and generation: the
// fabric id's, the case's per-GPU bandwidth, or the accelerator's reference system's,
// hardware/catalog/accelerators `scale_out_nic`). The NIC fill-in is said in `notes`; fill-ins of
// the node shape in `unlisted`. Returns the number of nodes.
int64_t translate_cluster(const Case& c, const plans::Catalog& catalog, const std::string& accelerator,
                          ScenarioDoc& doc, std::vector<std::string>& notes, std::vector<std::string>& unlisted);

// The model block as `model.*` keys (dense or mixture-of-experts, MLA). A case without a vocabulary
// gets its family's standard one (by the model's name), stated in `assumptions`; Unsupported for an
// architecture or a shape fathom does not simulate. Returns the model as far as the translators need
// it before the scenario is parsed (layers and experts).
models::ModelSpec translate_model(const Case& c, ScenarioDoc& doc, std::vector<std::string>& assumptions,
                                  std::vector<std::string>& unlisted);

}  // namespace fathom::scenarios::measured
