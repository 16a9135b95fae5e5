// TensorProto -> (dtype, shape, bytes), with every size checked against the
// dims before a byte is copied, and external data read from files next to the
// model (never outside its folder).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "onnx.pb.h"

namespace oc::onnx_parser {

struct DecodedTensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  TensorData data;
};

// `what` names the tensor in messages ("initializer 'w'", "Constant node 'c'").
// `base_dir` is the folder external-data locations are relative to.
Expected<DecodedTensor> DecodeTensor(const onnx::TensorProto& t, const std::string& base_dir,
                                     const std::string& what);

// Maps an ONNX elem_type to ours; NotSupported (naming `what`) for types this
// build cannot store (string, float8, int4, complex, ...).
Expected<DataType> ConvertElemType(int32_t elem_type, const std::string& what);

// Element count for `dims` with overflow and negative-dim checks.
Expected<int64_t> CheckedElementCount(const std::vector<int64_t>& dims, const std::string& what);

}  // namespace oc::onnx_parser
