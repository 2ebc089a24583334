#pragma once
// A dense model spec from its dimensions, for tests that derive numbers by hand.
#include "models/llm/model_spec.h"

#include <cstdint>

namespace fathom::testing {

inline models::ModelSpec dense_model(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                                     int64_t vocab, models::Activation activation = models::Activation::Swiglu) {
    models::ModelSpec m;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.ffn = ffn;
    m.vocab = vocab;
    m.activation = activation;
    return m;
}

}  // namespace fathom::testing
