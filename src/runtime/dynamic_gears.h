// ATC-style shape gears ("profiles"): a model compiled with -1 dims in
// --input_shape plus one of --dynamic_batch_size, --dynamic_image_size or
// --dynamic_dims runs only at the listed gears. The gears travel in the graph
// metadata (so in the .om) and are checked again when a model is loaded.
//
//   dynamic_batch_size "1,4,8": every -1 of --input_shape is a batch dim (the
//     first dim of its input); gear k sets all of them to the k-th value.
//   dynamic_image_size "224,224;448,448": every input with -1 dims has exactly
//     two (height, width); gear k sets them to its "h,w".
//   dynamic_dims "1,224;4,448": gear k lists one value per -1 placeholder of
//     --input_shape, in the order the placeholders are written there.
// 2 to 100 gears, every value >= 1, no gear listed twice.
//
// Metadata keys: "dynamic_mode" (the flag name), "dynamic_gears" (the values,
// gears split by ';', values by ','), "dynamic_gear_shapes" (per gear the full
// shape of every graph input in graph-input order: gears split by ';', inputs
// by '|', dims by ',').
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

enum class GearMode { kNone, kBatch, kImageSize, kDims };

// "dynamic_batch_size", "dynamic_image_size", "dynamic_dims" ("" for kNone).
const char* GearModeName(GearMode mode);

inline constexpr int kMinGears = 2;
inline constexpr int kMaxGears = 100;

struct GearSet {
  GearMode mode = GearMode::kNone;
  std::vector<std::vector<int64_t>> values;               // per gear, as the flag lists it
  std::vector<std::vector<std::vector<int64_t>>> shapes;  // per gear, per graph input
};

// --input_shape entries in the order written ("name", dims with -1 placeholders).
using OrderedInputShapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// Resolves the gears of `mode` against the graph's inputs (which already carry
// the -1 dims of --input_shape). Errors name the flag, the gear and the input.
Expected<GearSet> MakeGears(const Graph& graph, GearMode mode, const OrderedInputShapes& input_shape,
                            const std::vector<std::vector<int64_t>>& values);

// Writes / reads the metadata keys. LoadGears returns mode kNone when the
// graph has none and verifies everything else (untrusted .om): gear count,
// ranks, fixed dims, values >= 1, a consistent mode.
void StoreGears(Graph& graph, const GearSet& gears);
Expected<GearSet> LoadGears(const Graph& graph);

}  // namespace oc
