// DepthToSpace (DCR / CRD) and SpaceToDepth: fixed 6-D permutations between
// [N, C*bs*bs, H, W] and [N, C, H*bs, W*bs], for any fixed-size dtype.
#include <cstring>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

bool IsDepthToSpace(const Node& n) { return n.op_type == "DepthToSpace"; }

Status InferSpaceDepth(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (x.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": input must be 4-D [N, C, H, W], got ", x.ShapeString());
  int64_t bs = node.GetInt("blocksize", 0);
  if (bs < 1) return InvalidArgument(node.Describe(), ": attribute blocksize must be >= 1, got ", bs);
  std::vector<int64_t> s = x.shape;
  auto mul = [](int64_t d, int64_t k) { return d < 0 ? d : d * k; };
  if (IsDepthToSpace(node)) {
    if (s[1] >= 0 && s[1] % (bs * bs) != 0)
      return InvalidArgument(node.Describe(), ": channels (", s[1], ") must be divisible by blocksize^2 (",
                             bs * bs, ")");
    s = {s[0], s[1] < 0 ? -1 : s[1] / (bs * bs), mul(s[2], bs), mul(s[3], bs)};
  } else {
    for (int i = 2; i < 4; ++i)
      if (s[i] >= 0 && s[i] % bs != 0)
        return InvalidArgument(node.Describe(), ": spatial dim ", i, " (", s[i], ") must be divisible by blocksize (",
                               bs, ")");
    s = {s[0], mul(s[1], bs * bs), s[2] < 0 ? -1 : s[2] / bs, s[3] < 0 ? -1 : s[3] / bs};
  }
  SetOutput(node, 0, x.dtype, s);
  return Status::Ok();
}

// Shapes in terms of the "space" side: [n, c, h*bs, w*bs] <-> depth [n, c*bs*bs, h, w].
struct SpaceDepthPlan {
  int64_t n, c, h, w, bs;
  bool crd;             // depth channel = c*bs*bs + i*bs + j (else (i*bs + j)*C + c)
  bool to_space;        // DepthToSpace: write the space side
};

template <typename E>
class SpaceDepthKernel final : public Kernel {
 public:
  explicit SpaceDepthKernel(SpaceDepthPlan p) : p_(p) {}

  Status Run(const KernelIO& io) override {
    const E* src = io.in<E>(0);
    E* dst = io.out<E>(0);
    const int64_t bs = p_.bs, c_total = p_.c, h = p_.h, w = p_.w;
    io.pool->ParallelFor(p_.n * c_total, 4, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        int64_t n = nc / c_total, c = nc % c_total;
        for (int64_t y = 0; y < h; ++y)
          for (int64_t i = 0; i < bs; ++i)
            for (int64_t x = 0; x < w; ++x)
              for (int64_t j = 0; j < bs; ++j) {
                int64_t ch = p_.crd ? (c * bs + i) * bs + j : (i * bs + j) * c_total + c;
                int64_t space = ((nc * h + y) * bs + i) * w * bs + x * bs + j;
                int64_t depth = ((n * c_total * bs * bs + ch) * h + y) * w + x;
                if (p_.to_space) dst[space] = src[depth];
                else dst[depth] = src[space];
              }
      }
    });
    return Status::Ok();
  }

 private:
  SpaceDepthPlan p_;
};

Expected<KernelPtr> MakeSpaceDepth(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  size_t esize = DataTypeSize(x.dtype);
  SpaceDepthPlan p;
  p.bs = n.GetInt("blocksize", 0);
  p.to_space = IsDepthToSpace(n);
  std::string mode = n.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return InvalidArgument(n.Describe(), ": mode must be DCR or CRD, got '", mode, "'");
  p.crd = mode == "CRD";  // SpaceToDepth has the attribute from opset 28
  const std::vector<int64_t>& space = p.to_space ? n.output(0)->shape : x.shape;
  p.n = space[0];
  p.c = space[1];
  p.h = space[2] / p.bs;
  p.w = space[3] / p.bs;
  switch (esize) {
    case 1: return KernelPtr(new SpaceDepthKernel<uint8_t>(p));
    case 2: return KernelPtr(new SpaceDepthKernel<uint16_t>(p));
    case 4: return KernelPtr(new SpaceDepthKernel<uint32_t>(p));
    case 8: return KernelPtr(new SpaceDepthKernel<uint64_t>(p));
    default: return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported");
  }
}

}  // namespace

void RegisterSpaceDepthOps(OpRegistry& r) {
  r.Register({.op_type = "DepthToSpace", .infer = InferSpaceDepth, .kernels = CpuKernel(MakeSpaceDepth),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "SpaceToDepth", .infer = InferSpaceDepth, .kernels = CpuKernel(MakeSpaceDepth),
              .native_types = kAllDataTypes});
}

}  // namespace oc
