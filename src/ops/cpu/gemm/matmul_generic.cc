#include "ops/cpu/gemm/matmul_generic.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/cpu/common/wrap_arith.h"
#include "ops/infer_util.h"

namespace oc {
namespace {

// Products and sums of integers wrap (computed unsigned: no signed overflow).
template <typename T, bool = std::is_integral_v<T>>
struct Acc { using type = T; };
template <typename T>
struct Acc<T, true> { using type = WrapU<T>; };  // at least unsigned int: no promotion to int
template <typename T>
using AccT = typename Acc<T>::type;

template <typename Fn>
bool VisitGeneric(DataType t, Fn&& fn) {
  switch (t) {
    case DataType::kFloat64: fn(double{}); return true;
    case DataType::kInt32: fn(int32_t{}); return true;
    case DataType::kInt64: fn(int64_t{}); return true;
    case DataType::kUInt32: fn(uint32_t{}); return true;
    case DataType::kUInt64: fn(uint64_t{}); return true;
    default: return false;
  }
}

// out[j] = sum_p a[p * a_step] * b[p * ldb + j * b_step], accumulated in the
// output row itself (i-p-j order: unit-stride inner loop when b_step is 1).
template <typename T>
void RowTimesMatrix(const T* a, int64_t a_step, const T* b, int64_t ldb, int64_t b_step, int64_t k, int64_t n,
                    T* out) {
  using A = AccT<T>;
  for (int64_t j = 0; j < n; ++j) out[j] = T(0);
  for (int64_t p = 0; p < k; ++p) {
    const A av = static_cast<A>(a[p * a_step]);
    const T* brow = b + p * ldb;
    for (int64_t j = 0; j < n; ++j)
      out[j] = static_cast<T>(static_cast<A>(out[j]) + av * static_cast<A>(brow[j * b_step]));
  }
}

template <typename T>
class MatMulKernelT final : public Kernel {
 public:
  MatMulKernelT(int64_t m, int64_t k, int64_t n, std::vector<std::pair<int64_t, int64_t>> offsets)
      : m_(m), k_(k), n_(n), offsets_(std::move(offsets)) {}
  Status Run(const KernelIO& io) override {
    const T* a = io.in<T>(0);
    const T* b = io.in<T>(1);
    T* y = io.out<T>(0);
    const int64_t rows = static_cast<int64_t>(offsets_.size()) * m_;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, k_ * n_));
    io.pool->ParallelFor(rows, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const auto [ai, bi] = offsets_[static_cast<size_t>(r / m_)];
        RowTimesMatrix(a + (ai * m_ + r % m_) * k_, 1, b + bi * k_ * n_, n_, 1, k_, n_, y + r * n_);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t m_, k_, n_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;  // per output batch: A matrix, B matrix index
};

template <typename T>
class GemmKernelT final : public Kernel {
 public:
  struct Params {
    int64_t m, n, k;
    bool ta, tb;
    double alpha, beta;
    std::vector<int64_t> c_shape;  // empty when C is absent
  };
  explicit GemmKernelT(Params p) : p_(std::move(p)) {}
  Status Run(const KernelIO& io) override {
    const T* a = io.in<T>(0);
    const T* b = io.in<T>(1);
    const T* c = io.num_inputs > 2 ? io.in<T>(2) : nullptr;
    T* y = io.out<T>(0);
    const Params& p = p_;
    // C broadcasts to (M, N) from (), (N), (1, N), (M, 1), (M, N) ...
    int64_t c_rs = 0, c_cs = 0;
    if (c && !p.c_shape.empty()) {
      const int64_t cm = p.c_shape.size() == 2 ? p.c_shape[0] : 1, cn = p.c_shape.back();
      c_rs = cm == 1 ? 0 : cn;
      c_cs = cn == 1 ? 0 : 1;
    }
    using A = AccT<T>;
    // Integer Gemm scales by alpha/beta converted to T (wrap-around), as the
    // products are.
    const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
    io.pool->ParallelFor(p.m, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T* arow = p.ta ? a + i : a + i * p.k;
        const int64_t a_step = p.ta ? p.m : 1;
        T* yr = y + i * p.n;
        if (p.tb) RowTimesMatrix(arow, a_step, b, 1, p.k, p.k, p.n, yr);
        else RowTimesMatrix(arow, a_step, b, p.n, 1, p.k, p.n, yr);
        for (int64_t j = 0; j < p.n; ++j) {
          A v = static_cast<A>(alpha) * static_cast<A>(yr[j]);
          if (c) v += static_cast<A>(beta) * static_cast<A>(c[i * c_rs + j * c_cs]);
          yr[j] = static_cast<T>(v);
        }
      }
    });
    return Status::Ok();
  }

 private:
  Params p_;
};

}  // namespace

bool GenericMatMulType(DataType t) {
  return VisitGeneric(t, [](auto) {});
}

Expected<KernelPtr> MakeGenericMatMul(const Node& n) {
  std::vector<int64_t> a = n.input(0)->shape, b = n.input(1)->shape;
  if (a.empty() || b.empty()) return InvalidArgument(n.Describe(), ": MatMul operands must have rank >= 1");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n_ = b.back();
  if (b[b.size() - 2] != k)
    return InvalidArgument(n.Describe(), ": inner dims differ: A ", n.input(0)->ShapeString(), ", B ",
                           n.input(1)->ShapeString());
  std::vector<int64_t> ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShapes(n, ab, bb));
  ab.insert(ab.begin(), batch.size() - ab.size(), 1);
  bb.insert(bb.begin(), batch.size() - bb.size(), 1);
  // Per output batch index, the A and B matrix indices (broadcast dims repeat).
  std::vector<std::pair<int64_t, int64_t>> offsets;
  const int64_t count = ShapeProduct(batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t t = 0; t < count; ++t) {
    int64_t ai = 0, bi = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ai = ai * ab[d] + (ab[d] == 1 ? 0 : idx[d]);
      bi = bi * bb[d] + (bb[d] == 1 ? 0 : idx[d]);
    }
    offsets.push_back({ai, bi});
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  Expected<KernelPtr> k_ptr = NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                                           " (supported: float, double, int32, int64, uint32, uint64)");
  VisitGeneric(n.input(0)->dtype, [&](auto t) {
    k_ptr = KernelPtr(new MatMulKernelT<decltype(t)>(m, k, n_, std::move(offsets)));
  });
  return k_ptr;
}

Expected<KernelPtr> MakeGenericGemm(const Node& n) {
  const auto& as = n.input(0)->shape;
  const auto& bs = n.input(1)->shape;
  if (as.size() != 2 || bs.size() != 2)
    return InvalidArgument(n.Describe(), ": A and B must be 2-D, got ", n.input(0)->ShapeString(), " and ",
                           n.input(1)->ShapeString());
  const bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
  const int64_t m = ta ? as[1] : as[0], k = ta ? as[0] : as[1];
  const int64_t nn = tb ? bs[0] : bs[1];
  if ((tb ? bs[1] : bs[0]) != k)
    return InvalidArgument(n.Describe(), ": inner dims differ: A ", n.input(0)->ShapeString(), ", B ",
                           n.input(1)->ShapeString());
  std::vector<int64_t> c_shape;
  if (const Value* c = n.input(2)) {
    c_shape = c->shape;
    if (c_shape.empty()) c_shape = {1};
    if (c_shape.size() > 2 || (c_shape.back() != 1 && c_shape.back() != nn) ||
        (c_shape.size() == 2 && c_shape[0] != 1 && c_shape[0] != m))
      return InvalidArgument(n.Describe(), ": C shape ", c->ShapeString(), " does not broadcast to [", m, ",",
                             nn, "]");
  }
  typename GemmKernelT<double>::Params p{m, nn, k, ta, tb, n.GetFloat("alpha", 1.f), n.GetFloat("beta", 1.f),
                                         c_shape};
  Expected<KernelPtr> k_ptr = NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                                           " (supported: float, double, int32, int64, uint32, uint64)");
  VisitGeneric(n.input(0)->dtype, [&](auto t) {
    using T = decltype(t);
    k_ptr = KernelPtr(new GemmKernelT<T>({p.m, p.n, p.k, p.ta, p.tb, p.alpha, p.beta, p.c_shape}));
  });
  return k_ptr;
}

}  // namespace oc
