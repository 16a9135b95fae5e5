// Scatter-style spatial ops: MaxUnpool (MaxPool's values put back at their
// argmax indices) and Col2Im (sums sliding blocks back into an image, the
// inverse layout of im2col). Both are N-d; float32/float64 (MaxUnpool moves any
// element type).
#include <algorithm>
#include <cstring>
#include <string>

#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int kMaxSpatial = 8;

// ---- MaxUnpool ------------------------------------------------------------------------------

// Spatial size MaxPool(kernel, strides, pads) would have been computed from.
Expected<std::vector<int64_t>> UnpoolShape(const Node& n, const std::vector<int64_t>& x) {
  if (x.size() < 3) return InvalidArgument(n.Describe(), ": X must be [N, C, D1, ...], got rank ", x.size());
  const size_t s = x.size() - 2;
  const auto k = n.GetInts("kernel_shape");
  if (k.size() != s) return InvalidArgument(n.Describe(), ": kernel_shape must have ", s, " values, got ", k.size());
  const auto strides = n.GetInts("strides", std::vector<int64_t>(s, 1));
  const auto pads = n.GetInts("pads", std::vector<int64_t>(2 * s, 0));
  if (strides.size() != s || pads.size() != 2 * s)
    return InvalidArgument(n.Describe(), ": strides must have ", s, " values and pads ", 2 * s);
  std::vector<int64_t> out = {x[0], x[1]};
  for (size_t d = 0; d < s; ++d)
    out.push_back(x[d + 2] < 0 ? -1 : (x[d + 2] - 1) * strides[d] - (pads[d] + pads[s + d]) + k[d]);
  return out;
}

Status InferMaxUnpool(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(auto shape, UnpoolShape(node, node.input(0)->shape));
  if (node.input(2)) {
    auto given = ConstInts(node.input(2));
    if (given) shape = *given;
    else std::fill(shape.begin(), shape.end(), -1);
  }
  SetOutput(node, 0, node.input(0)->dtype, shape);
  return Status::Ok();
}

// Indices address the tensor of the inferred (unpadded) shape, as MaxPool's
// Indices output does; with a larger output_shape that tensor sits in the
// leading corner of the output (the ONNX reference and node tests).
class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(std::string who, std::vector<int64_t> inferred, std::vector<int64_t> out, int64_t count, size_t esize)
      : who_(std::move(who)), inferred_(std::move(inferred)), out_strides_(Strides(out)), count_(count),
        esize_(esize), out_bytes_(static_cast<size_t>(ShapeProduct(out)) * esize),
        total_(ShapeProduct(inferred_)), same_(inferred_ == out) {}
  Status Run(const KernelIO& io) override {
    const uint8_t* x = static_cast<const uint8_t*>(io.inputs[0]);
    const int64_t* idx = io.in<int64_t>(1);
    uint8_t* y = static_cast<uint8_t*>(io.outputs[0]);
    std::memset(y, 0, out_bytes_);
    const int r = static_cast<int>(inferred_.size());
    for (int64_t i = 0; i < count_; ++i) {
      int64_t f = idx[i];
      if (f < 0 || f >= total_) return OutOfRange(who_, ": index ", f, " at I[", i, "] is outside [0, ", total_, ")");
      int64_t o = f;
      if (!same_) {
        o = 0;
        for (int d = r - 1; d >= 0; --d) {
          o += (f % inferred_[d]) * out_strides_[d];
          f /= inferred_[d];
        }
      }
      std::memcpy(y + o * static_cast<int64_t>(esize_), x + i * static_cast<int64_t>(esize_), esize_);
    }
    return Status::Ok();
  }

 private:
  std::string who_;
  std::vector<int64_t> inferred_, out_strides_;
  int64_t count_;
  size_t esize_, out_bytes_;
  int64_t total_;
  bool same_;
};

Expected<KernelPtr> MakeMaxUnpool(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  if (!n.input(1) || n.input(1)->dtype != DataType::kInt64)
    return InvalidArgument(n.Describe(), ": I (input 1) must be int64");
  if (n.input(1)->shape != x.shape)
    return InvalidArgument(n.Describe(), ": I has shape ", n.input(1)->ShapeString(), ", expected X's ",
                           x.ShapeString());
  OC_ASSIGN_OR_RETURN(auto inferred, UnpoolShape(n, x.shape));
  const auto& out = n.output(0)->shape;
  if (out.size() != inferred.size())
    return InvalidArgument(n.Describe(), ": output_shape must have rank ", inferred.size(), ", got ", DimsString(out));
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] < inferred[d])
      return InvalidArgument(n.Describe(), ": output_shape ", DimsString(out), " is smaller than the unpooled shape ",
                             DimsString(inferred));
  return KernelPtr(new MaxUnpoolKernel(n.Describe(), std::move(inferred), out, x.NumElements(), DataTypeSize(x.dtype)));
}

// ---- Col2Im ---------------------------------------------------------------------------------

struct Col2ImGeom {
  int s = 0;  // spatial rank
  int64_t image[kMaxSpatial], block[kMaxSpatial], nblocks[kMaxSpatial];
  int64_t stride[kMaxSpatial], dilation[kMaxSpatial], pad[kMaxSpatial];
  int64_t batch = 0, channels = 0, kernel_size = 1, blocks = 1, image_size = 1;
};

Expected<Col2ImGeom> MakeGeom(const Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& image,
                              const std::vector<int64_t>& block) {
  const size_t s = image.size();
  if (s == 0 || s > kMaxSpatial || block.size() != s)
    return InvalidArgument(n.Describe(), ": image_shape and block_shape must have the same length in [1, ",
                           kMaxSpatial, "], got ", image.size(), " and ", block.size());
  if (x.size() != 3) return InvalidArgument(n.Describe(), ": input must be [N, C*prod(block_shape), L], got rank ", x.size());
  const auto strides = n.GetInts("strides", std::vector<int64_t>(s, 1));
  const auto dil = n.GetInts("dilations", std::vector<int64_t>(s, 1));
  const auto pads = n.GetInts("pads", std::vector<int64_t>(2 * s, 0));
  if (strides.size() != s || dil.size() != s || pads.size() != 2 * s)
    return InvalidArgument(n.Describe(), ": strides/dilations need ", s, " values and pads ", 2 * s);
  Col2ImGeom g;
  g.s = static_cast<int>(s);
  for (size_t d = 0; d < s; ++d) {
    if (block[d] <= 0 || strides[d] <= 0 || dil[d] <= 0 || image[d] < 0)
      return InvalidArgument(n.Describe(), ": block_shape, strides and dilations must be positive");
    g.image[d] = image[d];
    g.block[d] = block[d];
    g.stride[d] = strides[d];
    g.dilation[d] = dil[d];
    g.pad[d] = pads[d];
    g.nblocks[d] = (image[d] + pads[d] + pads[s + d] - dil[d] * (block[d] - 1) - 1) / strides[d] + 1;
    if (g.nblocks[d] < 1) return InvalidArgument(n.Describe(), ": no sliding block fits along spatial axis ", d);
    g.kernel_size *= block[d];
    g.blocks *= g.nblocks[d];
    g.image_size *= image[d];
  }
  if (x[1] % g.kernel_size != 0)
    return InvalidArgument(n.Describe(), ": input dim 1 (", x[1], ") is not a multiple of prod(block_shape) = ",
                           g.kernel_size);
  if (x[2] >= 0 && x[2] != g.blocks)
    return InvalidArgument(n.Describe(), ": input dim 2 (", x[2], ") must equal the number of sliding blocks ",
                           g.blocks);
  g.batch = x[0];
  g.channels = x[1] / g.kernel_size;
  return g;
}

Status InferCol2Im(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  auto image = ConstInts(node.input(1));
  auto block = ConstInts(node.input(2));
  if (!image || !block) {
    const int64_t s = node.input(1) && node.input(1)->IsStatic() ? node.input(1)->NumElements() : -1;
    if (s < 0) return NotSupported(node.Describe(), ": image_shape must have a known length");
    SetOutput(node, 0, x.dtype, std::vector<int64_t>(static_cast<size_t>(s) + 2, -1));
    return Status::Ok();
  }
  if (x.shape.size() != 3)
    return InvalidArgument(node.Describe(), ": input must be [N, C*prod(block_shape), L], got ", x.ShapeString());
  int64_t ks = 1;
  for (int64_t b : *block) ks *= b;
  std::vector<int64_t> out = {x.shape[0], x.shape[1] < 0 || ks <= 0 ? -1 : x.shape[1] / ks};
  out.insert(out.end(), image->begin(), image->end());
  if (x.IsStatic()) OC_RETURN_IF_ERROR(MakeGeom(node, x.shape, *image, *block).status());
  SetOutput(node, 0, x.dtype, out);
  return Status::Ok();
}

template <typename T>
class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(Col2ImGeom g) : g_(g) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const Col2ImGeom& g = g_;
    const int s = g.s;
    io.pool->ParallelFor(g.batch * g.channels, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t bc = b0; bc < b1; ++bc) {
        T* img = y + bc * g.image_size;
        std::fill(img, img + g.image_size, T(0));
        const T* col = x + bc * g.kernel_size * g.blocks;
        int64_t k[kMaxSpatial] = {};
        for (int64_t kk = 0; kk < g.kernel_size; ++kk) {
          int64_t l[kMaxSpatial] = {};
          for (int64_t bl = 0; bl < g.blocks; ++bl) {
            int64_t off = 0;
            bool inside = true;
            for (int d = 0; d < s; ++d) {
              const int64_t p = l[d] * g.stride[d] - g.pad[d] + k[d] * g.dilation[d];
              if (p < 0 || p >= g.image[d]) {
                inside = false;
                break;
              }
              off = off * g.image[d] + p;
            }
            if (inside) img[off] += col[kk * g.blocks + bl];
            for (int d = s - 1; d >= 0 && ++l[d] == g.nblocks[d]; --d) l[d] = 0;
          }
          for (int d = s - 1; d >= 0 && ++k[d] == g.block[d]; --d) k[d] = 0;
        }
      }
    });
    return Status::Ok();
  }

 private:
  Col2ImGeom g_;
};

Expected<KernelPtr> MakeCol2Im(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  auto image = ConstInts(n.input(1));
  auto block = ConstInts(n.input(2));
  if (!image || !block) return NotSupported(n.Describe(), ": image_shape and block_shape must be constants");
  OC_ASSIGN_OR_RETURN(Col2ImGeom g, MakeGeom(n, n.input(0)->shape, *image, *block));
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new Col2ImKernel<float>(g));
    case DataType::kFloat64: return KernelPtr(new Col2ImKernel<double>(g));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterImageMiscOps(OpRegistry& r) {
  r.Register({.op_type = "MaxUnpool", .min_opset = 9, .infer = InferMaxUnpool, .kernels = CpuKernel(MakeMaxUnpool),
              .native_types = kAllDataTypes});  // moves bytes
  r.Register({.op_type = "Col2Im", .min_opset = 18, .infer = InferCol2Im, .kernels = CpuKernel(MakeCol2Im)});
}

}  // namespace oc
