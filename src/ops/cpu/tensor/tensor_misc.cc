// Data-movement ops outside the main tensor group: ReverseSequence,
// CenterCropPad and the ai.onnx.ml ArrayFeatureExtractor. Movement is by
// element size, so every storable dtype (bfloat16 included) is handled.
// (CumProd lives with CumSum in tensor_ops.cc.)
#include <algorithm>
#include <cstring>
#include <string>

#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferLikeInput0(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

// ---- ReverseSequence ------------------------------------------------------------------------

// The input is [B, T, inner] (batch_axis 0) or [T, B, inner] (batch_axis 1).
// Within each batch entry the first seq_len steps are reversed, the rest copied.
class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(std::string who, int64_t batch, int64_t time, int64_t inner, size_t esize, bool batch_first,
                        bool lens64)
      : who_(std::move(who)), batch_(batch), time_(time), inner_bytes_(inner * static_cast<int64_t>(esize)),
        batch_first_(batch_first), lens64_(lens64) {}
  Status Run(const KernelIO& io) override {
    const uint8_t* x = static_cast<const uint8_t*>(io.inputs[0]);
    uint8_t* y = static_cast<uint8_t*>(io.outputs[0]);
    for (int64_t b = 0; b < batch_; ++b) {
      const int64_t len = LoadIndex(io.inputs[1], lens64_, b);
      if (len < 0 || len > time_)
        return OutOfRange(who_, ": sequence_lens[", b, "] = ", len, " is outside [0, ", time_, "]");
      for (int64_t t = 0; t < time_; ++t) {
        const int64_t src_t = t < len ? len - 1 - t : t;
        std::memcpy(y + Offset(b, t), x + Offset(b, src_t), static_cast<size_t>(inner_bytes_));
      }
    }
    return Status::Ok();
  }

 private:
  int64_t Offset(int64_t b, int64_t t) const {
    return (batch_first_ ? b * time_ + t : t * batch_ + b) * inner_bytes_;
  }
  std::string who_;
  int64_t batch_, time_, inner_bytes_;
  bool batch_first_, lens64_;
};

Status InferReverseSequence(Node& node) {
  OC_RETURN_IF_ERROR(InferLikeInput0(node));
  const int64_t ba = node.GetInt("batch_axis", 1), ta = node.GetInt("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return InvalidArgument(node.Describe(), ": batch_axis and time_axis must be 0 and 1 in some order, got ", ba,
                           " and ", ta);
  if (node.input(0)->has_shape && node.input(0)->shape.size() < 2)
    return InvalidArgument(node.Describe(), ": input must have rank >= 2, got ", node.input(0)->ShapeString());
  return Status::Ok();
}

Expected<KernelPtr> MakeReverseSequence(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "sequence_lens"));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  if (x.shape.size() < 2) return InvalidArgument(n.Describe(), ": input must have rank >= 2, got ", x.ShapeString());
  const bool batch_first = n.GetInt("batch_axis", 1) == 0;
  const int64_t batch = x.shape[batch_first ? 0 : 1], time = x.shape[batch_first ? 1 : 0];
  if (n.input(1)->NumElements() != batch)
    return InvalidArgument(n.Describe(), ": sequence_lens must have ", batch, " elements (the batch size), got shape ",
                           n.input(1)->ShapeString());
  return KernelPtr(new ReverseSequenceKernel(n.Describe(), batch, time, ShapeProduct(x.shape, 2, x.shape.size()),
                                             DataTypeSize(x.dtype), batch_first,
                                             n.input(1)->dtype == DataType::kInt64));
}

// ---- CenterCropPad --------------------------------------------------------------------------

// Per axis: the output size (from the constant `shape` input) and, for the
// centred box both tensors share, its start in the input and in the output.
struct CropPlan {
  std::vector<int64_t> out_shape, box, in_start, out_start;
};

Expected<CropPlan> PlanCenterCropPad(const Node& n, const std::vector<int64_t>& in_shape,
                                     const std::vector<int64_t>& target) {
  const int64_t r = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> axes = n.GetInts("axes", {});
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (target.size() != axes.size())
    return InvalidArgument(n.Describe(), ": shape has ", target.size(), " values but ", axes.size(),
                           " axes are cropped/padded");
  CropPlan p{in_shape, in_shape, std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    OC_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(n, axes[i], r));
    if (target[i] < 0) return InvalidArgument(n.Describe(), ": shape[", i, "] = ", target[i], " is negative");
    p.out_shape[a] = target[i];
    if (in_shape[a] < 0) continue;
    // An odd difference puts the extra element at the end (the reference's choice).
    if (target[i] <= in_shape[a]) {
      p.box[a] = target[i];
      p.in_start[a] = (in_shape[a] - target[i]) / 2;
    } else {
      p.box[a] = in_shape[a];
      p.out_start[a] = (target[i] - in_shape[a]) / 2;
    }
  }
  return p;
}

Status InferCenterCropPad(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  auto target = ConstInts(node.input(1));
  if (!target) {
    std::vector<int64_t> shape(x.shape.size(), -1);
    SetOutput(node, 0, x.dtype, shape);
    return Status::Ok();
  }
  OC_ASSIGN_OR_RETURN(CropPlan p, PlanCenterCropPad(node, x.shape, *target));
  SetOutput(node, 0, x.dtype, p.out_shape);
  return Status::Ok();
}

class CenterCropPadKernel final : public Kernel {
 public:
  CenterCropPadKernel(CropPlan p, const std::vector<int64_t>& in_shape, size_t esize)
      : p_(std::move(p)), esize_(esize), in_strides_(Strides(in_shape)), out_strides_(Strides(p_.out_shape)),
        out_bytes_(static_cast<size_t>(ShapeProduct(p_.out_shape)) * esize) {}
  Status Run(const KernelIO& io) override {
    const uint8_t* x = static_cast<const uint8_t*>(io.inputs[0]);
    uint8_t* y = static_cast<uint8_t*>(io.outputs[0]);
    std::memset(y, 0, out_bytes_);
    const int r = static_cast<int>(p_.box.size());
    if (r == 0) {
      std::memcpy(y, x, esize_);
      return Status::Ok();
    }
    if (ShapeProduct(p_.box) == 0) return Status::Ok();
    // Copy the box row by row: its last dim is contiguous in both tensors.
    const int64_t rows = ShapeProduct(p_.box, 0, r - 1);
    const size_t run = static_cast<size_t>(p_.box[r - 1]) * esize_;
    const int64_t es = static_cast<int64_t>(esize_);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t rem = row, src = p_.in_start[r - 1], dst = p_.out_start[r - 1];
      for (int d = r - 2; d >= 0; --d) {
        const int64_t i = rem % p_.box[d];
        rem /= p_.box[d];
        src += (i + p_.in_start[d]) * in_strides_[d];
        dst += (i + p_.out_start[d]) * out_strides_[d];
      }
      std::memcpy(y + dst * es, x + src * es, run);
    }
    return Status::Ok();
  }

 private:
  CropPlan p_;
  size_t esize_;
  std::vector<int64_t> in_strides_, out_strides_;
  size_t out_bytes_;
};

Expected<KernelPtr> MakeCenterCropPad(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  auto target = ConstInts(n.input(1));
  if (!target) return NotSupported(n.Describe(), ": shape (input 1) must be a constant");
  OC_ASSIGN_OR_RETURN(CropPlan p, PlanCenterCropPad(n, x.shape, *target));
  if (p.out_shape != n.output(0)->shape)
    return InvalidArgument(n.Describe(), ": output shape ", n.output(0)->ShapeString(), " does not match ",
                           DimsString(p.out_shape));
  return KernelPtr(new CenterCropPadKernel(std::move(p), x.shape, DataTypeSize(x.dtype)));
}

// ---- ArrayFeatureExtractor (ai.onnx.ml) -----------------------------------------------------

// Output [..., k] picks k entries of the last axis; a 1-D input gives [1, k].
Expected<std::vector<int64_t>> FeatureShape(const Node& n, const Value& x, const Value& idx) {
  if (x.shape.empty()) return InvalidArgument(n.Describe(), ": X must have rank >= 1");
  const int64_t k = idx.IsStatic() ? idx.NumElements() : -1;
  std::vector<int64_t> out;
  if (x.shape.size() == 1) out = {1, k};
  else {
    out.assign(x.shape.begin(), x.shape.end() - 1);
    out.push_back(k);
  }
  return out;
}

Status InferArrayFeatureExtractor(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  if (node.input(1)->dtype != DataType::kInt64)
    return InvalidArgument(node.Describe(), ": Y (indices) must be int64, got ", DataTypeName(node.input(1)->dtype));
  OC_ASSIGN_OR_RETURN(auto shape, FeatureShape(node, *node.input(0), *node.input(1)));
  SetOutput(node, 0, node.input(0)->dtype, shape);
  return Status::Ok();
}

class ArrayFeatureKernel final : public Kernel {
 public:
  ArrayFeatureKernel(std::string who, int64_t rows, int64_t width, int64_t k, size_t esize)
      : who_(std::move(who)), rows_(rows), width_(width), k_(k), esize_(esize) {}
  Status Run(const KernelIO& io) override {
    const uint8_t* x = static_cast<const uint8_t*>(io.inputs[0]);
    const int64_t* idx = io.in<int64_t>(1);
    uint8_t* y = static_cast<uint8_t*>(io.outputs[0]);
    for (int64_t j = 0; j < k_; ++j)
      if (idx[j] < 0 || idx[j] >= width_)
        return OutOfRange(who_, ": index Y[", j, "] = ", idx[j], " is outside [0, ", width_, ")");
    for (int64_t r = 0; r < rows_; ++r)
      for (int64_t j = 0; j < k_; ++j)
        std::memcpy(y + (r * k_ + j) * static_cast<int64_t>(esize_), x + (r * width_ + idx[j]) * static_cast<int64_t>(esize_),
                    esize_);
    return Status::Ok();
  }

 private:
  std::string who_;
  int64_t rows_, width_, k_;
  size_t esize_;
};

Expected<KernelPtr> MakeArrayFeatureExtractor(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  if (x.shape.empty()) return InvalidArgument(n.Describe(), ": X must have rank >= 1");
  const int64_t width = x.shape.back();
  return KernelPtr(new ArrayFeatureKernel(n.Describe(), x.NumElements() / std::max<int64_t>(1, width), width,
                                          n.input(1)->NumElements(), DataTypeSize(x.dtype)));
}

}  // namespace

void RegisterTensorMiscOps(OpRegistry& r) {
  // The movement ops copy bytes, so half types need no Casts around them.
  r.Register({.op_type = "ReverseSequence", .min_opset = 10, .infer = InferReverseSequence, .kernels = CpuKernel(MakeReverseSequence),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "CenterCropPad", .min_opset = 18, .infer = InferCenterCropPad, .kernels = CpuKernel(MakeCenterCropPad),
              .native_types = kAllDataTypes});
  r.Register({.domain = "ai.onnx.ml", .op_type = "ArrayFeatureExtractor", .infer = InferArrayFeatureExtractor,
              .kernels = CpuKernel(MakeArrayFeatureExtractor), .native_types = kAllDataTypes});
}

}  // namespace oc
