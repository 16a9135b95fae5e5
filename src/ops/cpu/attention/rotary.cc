// RotaryEmbedding (opset 23). X is [batch, heads, seq, head] or [batch, seq,
// heads * head] (num_heads given). The first rotary_embedding_dim values of
// each head (all when 0) are rotated as complex pairs: (x[i], x[i + half]) or,
// interleaved, (x[2i], x[2i + 1]), by the angle whose cos / sin are row `pos`
// of cos_cache / sin_cache: pos = position_ids[b, s] when given (caches
// [max_pos, half]), else the caches are [batch, seq, half]. The rest is copied.
#include <cstring>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct RotaryShape {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, rot = 0, max_pos = 0;
  bool is3d = false, interleaved = false, has_pos = false;
  std::string node;
};

template <typename T>
class RotaryKernel final : public Kernel {
 public:
  explicit RotaryKernel(RotaryShape s) : s_(std::move(s)) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* cosc = io.in<T>(1);
    const T* sinc = io.in<T>(2);
    const int64_t* pos = s_.has_pos && io.num_inputs > 3 ? io.in<int64_t>(3) : nullptr;
    T* y = io.out<T>(0);
    if (pos) {
      for (int64_t i = 0; i < s_.batch * s_.seq; ++i)
        if (pos[i] < 0 || pos[i] >= s_.max_pos)
          return OutOfRange(s_.node, ": position_ids value ", pos[i], " at ", i, " is outside the caches' [0, ",
                            s_.max_pos, ")");
    }
    const int64_t half = s_.rot / 2, rows = s_.batch * s_.heads * s_.seq;
    const int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(s_.head, 1));
    io.pool->ParallelFor(rows, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        // r enumerates (b, h, s) for 4-D and (b, s, h) for 3-D: both are the memory order.
        int64_t b, s;
        if (s_.is3d) {
          b = r / (s_.seq * s_.heads);
          s = r / s_.heads % s_.seq;
        } else {
          b = r / (s_.heads * s_.seq);
          s = r % s_.seq;
        }
        const int64_t crow = pos ? pos[b * s_.seq + s] : b * s_.seq + s;
        const T* c = cosc + crow * half;
        const T* sn = sinc + crow * half;
        const T* xr = x + r * s_.head;
        T* yr = y + r * s_.head;
        if (s_.interleaved) {
          for (int64_t i = 0; i < half; ++i) {
            const T a = xr[2 * i], bb = xr[2 * i + 1];
            yr[2 * i] = c[i] * a - sn[i] * bb;
            yr[2 * i + 1] = sn[i] * a + c[i] * bb;
          }
        } else {
          for (int64_t i = 0; i < half; ++i) {
            const T a = xr[i], bb = xr[i + half];
            yr[i] = c[i] * a - sn[i] * bb;
            yr[i + half] = sn[i] * a + c[i] * bb;
          }
        }
        if (s_.rot < s_.head && yr != xr) std::memcpy(yr + s_.rot, xr + s_.rot, sizeof(T) * (s_.head - s_.rot));
      }
    });
    return Status::Ok();
  }

 private:
  RotaryShape s_;
};

Status InferRotary(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const size_t rank = node.input(0)->shape.size();
  if (rank != 3 && rank != 4)
    return InvalidArgument(node.Describe(), ": input must be 3-D or 4-D, got ", node.input(0)->ShapeString());
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

Expected<KernelPtr> MakeRotary(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& xs = n.input(0)->shape;
  const auto& cs = n.input(1)->shape;
  RotaryShape s;
  s.node = n.Describe();
  s.is3d = xs.size() == 3;
  s.interleaved = n.GetInt("interleaved", 0) != 0;
  s.batch = xs[0];
  if (s.is3d) {
    s.heads = n.GetInt("num_heads", 0);
    if (s.heads <= 0 || xs[2] % s.heads != 0)
      return InvalidArgument(n.Describe(), ": 3-D input ", n.input(0)->ShapeString(),
                             " needs a num_heads attribute dividing its last dim");
    s.seq = xs[1];
    s.head = xs[2] / s.heads;
  } else {
    s.heads = xs[1];
    s.seq = xs[2];
    s.head = xs[3];
  }
  s.rot = n.GetInt("rotary_embedding_dim", 0);
  if (s.rot == 0) s.rot = s.head;
  if (s.rot < 0 || s.rot > s.head || s.rot % 2 != 0)
    return InvalidArgument(n.Describe(), ": rotary_embedding_dim ", s.rot, " must be even and at most the head size ",
                           s.head);
  if (n.input(2)->shape != cs)
    return InvalidArgument(n.Describe(), ": cos_cache ", n.input(1)->ShapeString(), " and sin_cache ",
                           n.input(2)->ShapeString(), " differ");
  s.has_pos = n.input(3) != nullptr;
  if (s.has_pos) {
    if (cs.size() != 2 || cs[1] != s.rot / 2)
      return InvalidArgument(n.Describe(), ": with position_ids the caches must be [max_position, ", s.rot / 2,
                             "], got ", n.input(1)->ShapeString());
    if (n.input(3)->shape != std::vector<int64_t>{s.batch, s.seq})
      return InvalidArgument(n.Describe(), ": position_ids must be [", s.batch, ",", s.seq, "], got ",
                             n.input(3)->ShapeString());
    s.max_pos = cs[0];
  } else if (cs != std::vector<int64_t>{s.batch, s.seq, s.rot / 2}) {
    return InvalidArgument(n.Describe(), ": without position_ids the caches must be [", s.batch, ",", s.seq, ",",
                           s.rot / 2, "], got ", n.input(1)->ShapeString());
  }
  const DataType t = n.input(0)->dtype;
  if (n.input(1)->dtype != t || n.input(2)->dtype != t)
    return InvalidArgument(n.Describe(), ": input, cos_cache and sin_cache must have the same type");
  switch (t) {
    case DataType::kFloat32: return KernelPtr(new RotaryKernel<float>(std::move(s)));
    case DataType::kFloat64: return KernelPtr(new RotaryKernel<double>(std::move(s)));
    default: return ew::UnsupportedDtype(n, t);
  }
}

}  // namespace

void RegisterRotaryOps(OpRegistry& r) {
  r.Register({.op_type = "RotaryEmbedding", .min_opset = 23, .infer = InferRotary, .kernels = CpuKernel(MakeRotary)});
}

}  // namespace oc
