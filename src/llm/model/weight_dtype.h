// The precision the projection weights of a model are held in, chosen at load
// (Model::Load's ModelOptions, oc-llm-generate / oc-llm-batch --dtype).
// Embeddings, norms and biases stay float32 in every case; the lm_head (tied
// or not) follows the chosen dtype like every other projection.
//
//   kFloat32   float32 panels of the project's sgemm (the default).
//   kBfloat16  weights rounded to bfloat16 (round to nearest even), run
//              through the bf16 GEMM (ops/cpu/gemm/gemm_bf16.h: AMX or
//              AVX512_BF16, activations rounded to bf16 per call, sums in
//              float32). On a CPU with neither, the same bf16-rounded weights
//              and activations run through sgemm from float32 panels (same
//              numbers, no memory saved; a note says so on stderr).
//   kInt8      weight-only int8, symmetric scales per output channel and
//              group of `group_size` inputs (default: one group per output
//              channel, i.e. per-channel); quant.h.
//   kInt4      weight-only int4, the same with groups of 128 inputs by default.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace oc::llm {

enum class WeightDtype { kFloat32, kBfloat16, kInt8, kInt4 };

// "float32", "bfloat16", "int8", "int4".
const char* WeightDtypeName(WeightDtype d);
// The --dtype values: float32 (or auto, float), bfloat16, int8, int4. Errors
// name the accepted values.
Expected<WeightDtype> ParseWeightDtype(const std::string& s);

// Inputs per quantization scale for `d` given the requested `group_size`
// (0: the dtype's default: int8 one group per output channel, returned as 0;
// int4 128). Refused: a negative size or one that is not a multiple of 32,
// and any size for float32 / bfloat16 other than 0.
Expected<int64_t> ResolveGroupSize(WeightDtype d, int64_t group_size);

}  // namespace oc::llm
