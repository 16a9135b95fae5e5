/* OpenCANN: the graph engine's status codes (namespace ge). */
#ifndef OPENCANN_GRAPH_GE_ERROR_CODES_H_
#define OPENCANN_GRAPH_GE_ERROR_CODES_H_

#include <cstdint>

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649;
}  // namespace ge

#endif  // OPENCANN_GRAPH_GE_ERROR_CODES_H_
