// Helpers shared by shape-inference functions and kernel factories.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

// Sets output i's dtype and (fully or partly known) shape; dim_params reset to "".
void SetOutput(Node& node, size_t i, DataType dtype, std::vector<int64_t> shape);
// Like SetOutput but copies dtype, shape and dim_params from `like`.
void SetOutputLike(Node& node, size_t i, const Value& like);

// Numpy-style multidirectional broadcast of two shapes. Unknown dims (-1) stay
// unknown unless the other side fixes them. Error names the node and both shapes.
Expected<std::vector<int64_t>> BroadcastShapes(const Node& node, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b);

// Requires input i to exist with a known rank; error names node and input index.
Status RequireInput(const Node& node, size_t i);
// Requires every present input to have a static shape (used by kernel factories).
Status RequireStaticShapes(const Node& node);

// The values of a constant integer tensor (int32 or int64) as int64, or nullopt
// when `v` is null or not constant.
std::optional<std::vector<int64_t>> ConstInts(const Value* v);
// Same for a constant float tensor (float32/float64), as float.
std::optional<std::vector<float>> ConstFloats(const Value* v);

// Normalises a possibly negative axis into [0, rank); error names the node.
Expected<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank);

// Product of dims [begin, end).
int64_t ShapeProduct(const std::vector<int64_t>& shape, size_t begin, size_t end);
inline int64_t ShapeProduct(const std::vector<int64_t>& shape) { return ShapeProduct(shape, 0, shape.size()); }

// Row-major strides for `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);

}  // namespace oc
