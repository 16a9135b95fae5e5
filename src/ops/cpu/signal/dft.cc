// DFT (opset 17: axis attribute; opset 20: axis input) and STFT (opset 17),
// float32 / float64. Complex tensors are real tensors with a trailing dimension
// of 2 (real, imaginary); a trailing 1 means a real signal.
//
// Every transform is a set of independent 1-D lines of length n. The factory
// builds a twiddle table for n; lengths made of small primes (2^k, 400 =
// 4*4*5*5, ...) run a mixed-radix FFT, others the direct O(n * bins) sum. Lines
// are split over threads; each thread slot owns a slice of the per-run scratch
// for its work vectors, so Run() never allocates. Arithmetic is in double whatever the tensor type.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using cd = std::complex<double>;

// One length-n transform. Lengths whose prime factors are all at most
// kMaxRadix take a recursive mixed-radix Cooley-Tukey FFT (decimation in time,
// O(n * sum of factors)); other lengths use the direct sum over the bins asked
// for. Both read one table of the n-th roots of unity.
constexpr int64_t kMaxRadix = 31;

class DftPlan {
 public:
  explicit DftPlan(int64_t n) : n_(n) {
    tw_.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      double a = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      tw_[k] = cd(std::cos(a), std::sin(a));
    }
    // Radix 4 first (fewest passes), then the remaining primes.
    int64_t m = n;
    while (m % 4 == 0) { factors_.push_back(4); m /= 4; }
    for (int64_t f = 2; f <= kMaxRadix && m > 1; ++f)
      while (m % f == 0) { factors_.push_back(f); m /= f; }
    fast_ = m == 1 && n > 1;
  }

  int64_t n() const { return n_; }

  // out[k] = sum_j in[j] * exp(-+2 pi i j k / n) for k < bins (minus sign for
  // forward). `work` holds n values.
  void Transform(const cd* in, cd* out, int64_t bins, bool inverse, cd* work) const {
    if (fast_) {
      Fft(in, 1, work, n_, 0, inverse);
      std::copy(work, work + bins, out);
      return;
    }
    for (int64_t k = 0; k < bins; ++k) {
      cd acc = 0;
      int64_t idx = 0;
      for (int64_t j = 0; j < n_; ++j) {
        cd w = tw_[idx];
        acc += in[j] * (inverse ? std::conj(w) : w);
        idx += k;
        if (idx >= n_) idx %= n_;
      }
      out[k] = acc;
    }
  }

 private:
  cd Root(int64_t k, bool inverse) const { return inverse ? std::conj(tw_[k]) : tw_[k]; }

  // DFT of the n values in[0], in[stride], ... into out[0..n): the p
  // decimated sub-sequences are transformed into consecutive blocks of n/p,
  // then each output column k combines them with twiddles and a size-p DFT.
  // The combine reads and writes the same p slots, so it works in place.
  void Fft(const cd* in, int64_t stride, cd* out, int64_t n, size_t level, bool inverse) const {
    if (n == 1) { out[0] = in[0]; return; }
    const int64_t p = factors_[level], m = n / p;
    for (int64_t r = 0; r < p; ++r) Fft(in + r * stride, stride * p, out + r * m, m, level + 1, inverse);
    const int64_t step = n_ / n, pstep = n_ / p;
    cd t[kMaxRadix];
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t r = 0; r < p; ++r) t[r] = out[r * m + k] * Root(r * k * step, inverse);
      if (p == 2) {
        out[k] = t[0] + t[1];
        out[k + m] = t[0] - t[1];
      } else if (p == 4) {
        const cd a = t[0] + t[2], b = t[0] - t[2], c = t[1] + t[3];
        // -i (forward) or +i (inverse) times t1 - t3.
        const cd d = (t[1] - t[3]) * (inverse ? cd(0, 1) : cd(0, -1));
        out[k] = a + c;
        out[k + m] = b + d;
        out[k + 2 * m] = a - c;
        out[k + 3 * m] = b - d;
      } else {
        for (int64_t q = 0; q < p; ++q) {
          cd acc = t[0];
          for (int64_t r = 1; r < p; ++r) acc += t[r] * Root(((r * q) % p) * pstep, inverse);
          out[k + q * m] = acc;
        }
      }
    }
  }

  int64_t n_;
  std::vector<cd> tw_;
  std::vector<int64_t> factors_;
  bool fast_ = false;
};

// The line decomposition shared by DFT and STFT work lists: `lines` lines are
// handed out to `slots` thread slots, each with 3 * n complex values of scratch.
template <typename Fn>
void ForLines(const KernelIO& io, int64_t lines, int slots, int64_t n, int64_t cost_per_line, Fn&& fn) {
  cd* scratch = static_cast<cd*>(io.scratch);
  const int64_t per_slot = (lines + slots - 1) / slots;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, cost_per_line * per_slot));
  io.pool->ParallelFor(slots, grain, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      cd* buf = scratch + s * 3 * n;
      const int64_t l0 = s * per_slot, l1 = std::min(lines, l0 + per_slot);
      for (int64_t l = l0; l < l1; ++l) fn(l, buf, buf + n, buf + 2 * n);
    }
  });
}

int64_t LineCost(int64_t n, int64_t bins) { return std::min(n * bins, n * 16); }

// ---- DFT -----------------------------------------------------------------------

struct DftSpec {
  int64_t axis = 0;
  int64_t n = 0;          // transform length
  int64_t out_len = 0;    // output length along axis
  bool inverse = false, onesided = false;
};

Expected<DftSpec> ResolveDft(const Node& node, const std::vector<int64_t>& shape) {
  DftSpec s;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || (shape.back() >= 0 && shape.back() != 1 && shape.back() != 2))
    return InvalidArgument(node.Describe(), ": input must have rank >= 2 and a last dimension of 1 (real) or 2 "
                           "(complex), got shape of rank ", rank);
  int64_t axis = node.opset >= 20 ? -2 : 1;
  if (node.opset >= 20) {
    const Value* a = node.input(2);
    if (a) {
      auto v = ConstInts(a);
      if (!v || v->size() != 1) return NotSupported(node.Describe(), ": input 2 (axis) must be constant: the output "
                                                    "shape depends on it");
      axis = (*v)[0];
    }
  } else {
    axis = node.GetInt("axis", 1);
  }
  OC_ASSIGN_OR_RETURN(s.axis, NormalizeAxis(node, axis, rank));
  if (s.axis == rank - 1)
    return InvalidArgument(node.Describe(), ": axis ", axis, " is the complex dimension; expected one of the first ",
                           rank - 1);
  s.inverse = node.GetInt("inverse", 0) != 0;
  s.onesided = node.GetInt("onesided", 0) != 0;
  const int64_t len = shape[s.axis];
  if (const Value* lv = node.input(1)) {
    auto v = ConstInts(lv);
    if (!v || v->size() != 1)
      return NotSupported(node.Describe(), ": input 1 (dft_length) must be constant: the output shape depends on it");
    s.n = (*v)[0];
    if (s.n < 1) return InvalidArgument(node.Describe(), ": dft_length must be >= 1, got ", s.n);
  } else {
    if (len < 0) { s.n = -1; s.out_len = -1; return s; }
    s.n = s.inverse && s.onesided ? 2 * (len - 1) : len;
    if (s.n < 1) return InvalidArgument(node.Describe(), ": the transform length along axis ", s.axis, " is ", s.n);
  }
  s.out_len = s.onesided && !s.inverse ? s.n / 2 + 1 : s.n;
  return s;
}

Status InferDft(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(DftSpec s, ResolveDft(node, x.shape));
  std::vector<int64_t> out = x.shape;
  out[s.axis] = s.out_len;
  out.back() = s.inverse && s.onesided ? 1 : 2;
  SetOutput(node, 0, x.dtype, out);
  return Status::Ok();
}

template <typename T>
class DftKernel final : public Kernel {
 public:
  DftKernel(DftSpec s, int64_t outer, int64_t in_len, int64_t inner, bool complex_in, int slots)
      : s_(s), plan_(s.n), outer_(outer), in_len_(in_len), inner_(inner), complex_in_(complex_in), slots_(slots) {}

  size_t ScratchBytes() const override { return static_cast<size_t>(slots_) * 3 * s_.n * sizeof(cd); }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const int64_t n = s_.n;
    const int64_t cin = complex_in_ ? 2 : 1;
    const bool real_out = s_.inverse && s_.onesided;
    const int64_t cout = real_out ? 1 : 2;
    // irfft: the one-sided input (first n/2+1 bins) is expanded to the full
    // Hermitian spectrum; the imaginary parts of DC and Nyquist do not enter.
    const int64_t used = real_out ? std::min(in_len_, n / 2 + 1) : std::min(in_len_, n);
    const double scale = s_.inverse ? 1.0 / static_cast<double>(n) : 1.0;
    ForLines(io, outer_ * inner_, slots_, n, LineCost(n, s_.out_len), [&](int64_t line, cd* a, cd* b, cd* work) {
      const int64_t o = line / inner_, i = line % inner_;
      const T* xl = x + (o * in_len_ * inner_ + i) * cin;
      std::fill(a, a + n, cd(0));
      for (int64_t j = 0; j < used; ++j) {
        const T* p = xl + j * inner_ * cin;
        a[j] = cd(static_cast<double>(p[0]), complex_in_ ? static_cast<double>(p[1]) : 0.0);
      }
      if (real_out) {
        a[0] = cd(a[0].real(), 0);
        if (n % 2 == 0 && used > n / 2) a[n / 2] = cd(a[n / 2].real(), 0);
        for (int64_t k = 1; k < (n + 1) / 2; ++k) a[n - k] = k < used ? std::conj(a[k]) : cd(0);
      }
      plan_.Transform(a, b, s_.out_len, s_.inverse, work);
      T* yl = y + (o * s_.out_len * inner_ + i) * cout;
      for (int64_t k = 0; k < s_.out_len; ++k) {
        T* q = yl + k * inner_ * cout;
        q[0] = static_cast<T>(b[k].real() * scale);
        if (!real_out) q[1] = static_cast<T>(b[k].imag() * scale);
      }
    });
    return Status::Ok();
  }

 private:
  DftSpec s_;
  DftPlan plan_;
  int64_t outer_, in_len_, inner_;
  bool complex_in_;
  int slots_;
};

Expected<KernelPtr> MakeDft(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_ASSIGN_OR_RETURN(DftSpec s, ResolveDft(n, x.shape));
  const int64_t outer = ShapeProduct(x.shape, 0, s.axis);
  const int64_t inner = ShapeProduct(x.shape, s.axis + 1, x.shape.size() - 1);
  const bool complex_in = x.shape.back() == 2;
  const int slots = std::max(1, init.max_threads);
  if (x.dtype == DataType::kFloat32)
    return KernelPtr(new DftKernel<float>(s, outer, x.shape[s.axis], inner, complex_in, slots));
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new DftKernel<double>(s, outer, x.shape[s.axis], inner, complex_in, slots));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported (float32 and float64 only)");
}

// ---- STFT ----------------------------------------------------------------------

struct StftSpec {
  int64_t step = 0, frame_len = 0, window_len = 0, frames = 0, bins = 0;
  bool onesided = true;
};

Expected<StftSpec> ResolveStft(const Node& node, const std::vector<int64_t>& shape) {
  StftSpec s;
  if (shape.size() != 3 || (shape[2] >= 0 && shape[2] != 1 && shape[2] != 2))
    return InvalidArgument(node.Describe(), ": signal must have shape [batch, length, 1 or 2]");
  auto step = ConstInts(node.input(1));
  if (!step || step->size() != 1)
    return NotSupported(node.Describe(), ": input 1 (frame_step) must be constant: the output shape depends on it");
  s.step = (*step)[0];
  if (s.step < 1) return InvalidArgument(node.Describe(), ": frame_step must be >= 1, got ", s.step);
  const Value* window = node.input(2);
  if (window) {
    if (!window->has_shape || window->shape.size() != 1 || window->shape[0] < 0)
      return InvalidArgument(node.Describe(), ": window must be a 1-D tensor of known length");
    s.window_len = window->shape[0];
  }
  if (const Value* fl = node.input(3)) {
    auto v = ConstInts(fl);
    if (!v || v->size() != 1)
      return NotSupported(node.Describe(), ": input 3 (frame_length) must be constant: the output shape depends on it");
    s.frame_len = (*v)[0];
  } else if (window) {
    s.frame_len = s.window_len;
  } else {
    s.frame_len = shape[1];
  }
  if (!window) s.window_len = s.frame_len;
  if (s.frame_len < 1) return InvalidArgument(node.Describe(), ": frame_length must be >= 1, got ", s.frame_len);
  if (shape[1] >= 0) {
    if (shape[1] < s.window_len)
      return InvalidArgument(node.Describe(), ": signal length ", shape[1], " is shorter than a frame (",
                             s.window_len, ")");
    s.frames = 1 + (shape[1] - s.frame_len) / s.step;
  } else {
    s.frames = -1;
  }
  s.onesided = node.GetInt("onesided", 1) != 0;
  s.bins = s.onesided ? s.frame_len / 2 + 1 : s.frame_len;
  return s;
}

Status InferStft(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(StftSpec s, ResolveStft(node, x.shape));
  SetOutput(node, 0, x.dtype, {x.shape[0], s.frames, s.bins, 2});
  return Status::Ok();
}

template <typename T>
class StftKernel final : public Kernel {
 public:
  StftKernel(StftSpec s, int64_t batch, int64_t len, bool complex_in, bool has_window, int slots)
      : s_(s), plan_(s.frame_len), batch_(batch), len_(len), complex_in_(complex_in), has_window_(has_window),
        slots_(slots) {}

  size_t ScratchBytes() const override { return static_cast<size_t>(slots_) * 3 * s_.frame_len * sizeof(cd); }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* window = has_window_ ? io.in<T>(2) : nullptr;
    T* y = io.out<T>(0);
    const int64_t n = s_.frame_len, cin = complex_in_ ? 2 : 1;
    // A frame is window_len samples (zero-padded or cut to the DFT length).
    const int64_t take = std::min(s_.window_len, n);
    ForLines(io, batch_ * s_.frames, slots_, n, LineCost(n, s_.bins), [&](int64_t line, cd* a, cd* b, cd* work) {
      const int64_t bi = line / s_.frames, f = line % s_.frames;
      const int64_t start = f * s_.step;
      std::fill(a, a + n, cd(0));
      for (int64_t j = 0; j < take && start + j < len_; ++j) {
        const T* p = x + (bi * len_ + start + j) * cin;
        double w = window ? static_cast<double>(window[j]) : 1.0;
        a[j] = cd(static_cast<double>(p[0]) * w, complex_in_ ? static_cast<double>(p[1]) * w : 0.0);
      }
      plan_.Transform(a, b, s_.bins, false, work);
      T* q = y + line * s_.bins * 2;
      for (int64_t k = 0; k < s_.bins; ++k) {
        q[2 * k] = static_cast<T>(b[k].real());
        q[2 * k + 1] = static_cast<T>(b[k].imag());
      }
    });
    return Status::Ok();
  }

 private:
  StftSpec s_;
  DftPlan plan_;
  int64_t batch_, len_;
  bool complex_in_, has_window_;
  int slots_;
};

Expected<KernelPtr> MakeStft(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_ASSIGN_OR_RETURN(StftSpec s, ResolveStft(n, x.shape));
  if (n.input(2) && n.input(2)->dtype != x.dtype)
    return InvalidArgument(n.Describe(), ": window has dtype ", DataTypeName(n.input(2)->dtype), ", expected ",
                           DataTypeName(x.dtype), " like the signal");
  const bool complex_in = x.shape[2] == 2;
  const int slots = std::max(1, init.max_threads);
  const bool has_window = n.input(2) != nullptr;
  if (x.dtype == DataType::kFloat32)
    return KernelPtr(new StftKernel<float>(s, x.shape[0], x.shape[1], complex_in, has_window, slots));
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new StftKernel<double>(s, x.shape[0], x.shape[1], complex_in, has_window, slots));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported (float32 and float64 only)");
}

}  // namespace

void RegisterDftOps(OpRegistry& r) {
  r.Register({.op_type = "DFT", .min_opset = 17, .infer = InferDft, .kernels = CpuKernel(MakeDft)});
  r.Register({.op_type = "STFT", .min_opset = 17, .infer = InferStft, .kernels = CpuKernel(MakeStft)});
}

}  // namespace oc
