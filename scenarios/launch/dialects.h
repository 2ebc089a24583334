#pragma once
// The dialects of scenarios/launch/launch.h, one file each; launch.cpp registers them.
#include "scenarios/launch/launch.h"

namespace fathom::scenarios::launch {

Dialect megatron_dialect();    // megatron.cpp
Dialect nemo_dialect();        // nemo.cpp
Dialect torchtitan_dialect();  // torchtitan.cpp
Dialect vllm_dialect();        // vllm.cpp
Dialect sglang_dialect();      // sglang.cpp
Dialect trtllm_dialect();      // trtllm.cpp

}  // namespace fathom::scenarios::launch
