// Det: determinants of a batch of square matrices [..., M, M] -> [...], by LU
// decomposition with partial pivoting in double precision (one M*M scratch
// matrix per thread).
#include <algorithm>
#include <cmath>
#include <utility>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferDet(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const size_t r = x.shape.size();
  if (r < 2) return InvalidArgument(node.Describe(), ": input must be [..., M, M], got ", x.ShapeString());
  if (x.shape[r - 1] >= 0 && x.shape[r - 2] >= 0 && x.shape[r - 1] != x.shape[r - 2])
    return InvalidArgument(node.Describe(), ": the last two dims must be equal (square matrices), got ",
                           x.ShapeString());
  SetOutput(node, 0, x.dtype, std::vector<int64_t>(x.shape.begin(), x.shape.end() - 2));
  return Status::Ok();
}

double Determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
    if (a[piv * m + c] == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[piv * m + k]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      if (f == 0.0) continue;
      for (int64_t k = c + 1; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

template <typename T>
class DetKernel final : public Kernel {
 public:
  DetKernel(int64_t batch, int64_t m, int max_threads) : batch_(batch), m_(m), threads_(std::max(1, max_threads)) {}
  size_t ScratchBytes() const override { return static_cast<size_t>(threads_ * m_ * m_) * sizeof(double); }
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const int64_t mm = m_ * m_;
    double* scratch = static_cast<double*>(io.scratch);
    // Work is split into at most threads_ slices, each with its own scratch matrix.
    const int64_t slices = std::max<int64_t>(1, std::min<int64_t>(threads_, batch_));
    const int64_t per = (batch_ + slices - 1) / slices;
    io.pool->ParallelFor(slices, 1, [&](int64_t s0, int64_t s1) {
      for (int64_t sl = s0; sl < s1; ++sl) {
        double* a = scratch + sl * mm;
        for (int64_t b = sl * per; b < std::min(batch_, (sl + 1) * per); ++b) {
          for (int64_t i = 0; i < mm; ++i) a[i] = static_cast<double>(x[b * mm + i]);
          y[b] = static_cast<T>(Determinant(a, m_));
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t batch_, m_;
  int threads_;
};

Expected<KernelPtr> MakeDet(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& s = n.input(0)->shape;
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    return InvalidArgument(n.Describe(), ": input must be [..., M, M], got ", n.input(0)->ShapeString());
  const int64_t m = s.back(), batch = ShapeProduct(s, 0, s.size() - 2);
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new DetKernel<float>(batch, m, init.max_threads));
    case DataType::kFloat64: return KernelPtr(new DetKernel<double>(batch, m, init.max_threads));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  r.Register({.op_type = "Det", .min_opset = 11, .infer = InferDet, .kernels = CpuKernel(MakeDet)});
}

}  // namespace oc
