// Recurrent layers: RNN, GRU and LSTM (opsets 7-22 semantics; layout 0/1),
// float32 / float64.
//
// Every (direction, batch item) pair is an independent recurrence, so the pairs
// are spread over the thread pool and each one walks its sequence with
// matrix-vector products. W and R are packed transposed ([K][gates*hidden]) in
// the factory when constant, so each product is a run of contiguous axpys.
// Working memory comes from a small pool owned by the kernel: one buffer per
// concurrent run, created in the factory for the first, so steady-state runs
// do not allocate.
//
// float32 does less per step: the input projections of all steps, X W^T plus
// the biases that are added unconditionally, are one sgemm per direction
// before the recurrence (in io.scratch's GEMM buffers); the recurrent product
// h R^T runs on the ISA's mat-vec (rnn_matvec.h); and with the default
// activations (no clip, no peepholes, no coupled input-forget gate) the gate
// non-linearities are applied to whole gate vectors with the vectorised
// sigmoid / tanh of the element-wise ops, as onnxruntime's kernels do, instead
// of one libm call per value.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "base/cpu_features.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/cpu/rnn/rnn_matvec.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class Cell { kRnn, kGru, kLstm };

Cell CellOf(const Node& n) {
  if (n.op_type == "LSTM") return Cell::kLstm;
  if (n.op_type == "GRU") return Cell::kGru;
  return Cell::kRnn;
}
int NumGates(Cell c) { return c == Cell::kLstm ? 4 : c == Cell::kGru ? 3 : 1; }
int NumActivations(Cell c) { return c == Cell::kLstm ? 3 : c == Cell::kGru ? 2 : 1; }

int64_t NumDirections(const Node& n) {
  return n.GetString("direction", "forward") == "bidirectional" ? 2 : 1;
}

// ---- activations -------------------------------------------------------------

enum class ActKind { kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
                     kElu, kSoftsign, kSoftplus };

struct Act {
  ActKind kind = ActKind::kSigmoid;
  double alpha = 0, beta = 0;

  template <typename T>
  T operator()(T x) const {
    switch (kind) {
      case ActKind::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case ActKind::kTanh: return std::tanh(x);
      case ActKind::kRelu: return x > T(0) ? x : T(0);
      case ActKind::kAffine: return static_cast<T>(alpha) * x + static_cast<T>(beta);
      case ActKind::kLeakyRelu: return x >= T(0) ? x : static_cast<T>(alpha) * x;
      case ActKind::kThresholdedRelu: return x > static_cast<T>(alpha) ? x : T(0);
      case ActKind::kScaledTanh: return static_cast<T>(alpha) * std::tanh(static_cast<T>(beta) * x);
      case ActKind::kHardSigmoid:
        return std::clamp(static_cast<T>(alpha) * x + static_cast<T>(beta), T(0), T(1));
      case ActKind::kElu: return x >= T(0) ? x : static_cast<T>(alpha) * (std::exp(x) - T(1));
      case ActKind::kSoftsign: return x / (T(1) + std::fabs(x));
      case ActKind::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses the activations of all directions; alphas/betas are consumed in list
// order by the functions that take them, with the ONNX defaults when the
// lists run out.
Expected<std::vector<Act>> ParseActivations(const Node& n, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (const Attribute* a = n.FindAttr("activations")) names = a->strings;
  size_t per = static_cast<size_t>(NumActivations(cell));
  if (names.empty()) {
    if (cell == Cell::kRnn) names = {"Tanh"};
    else if (cell == Cell::kGru) names = {"Sigmoid", "Tanh"};
    else names = {"Sigmoid", "Tanh", "Tanh"};
  }
  if (names.size() == per && dirs == 2) {
    auto copy = names;
    names.insert(names.end(), copy.begin(), copy.end());
  }
  if (names.size() != per * static_cast<size_t>(dirs))
    return InvalidArgument(n.Describe(), ": activations has ", names.size(), " names, expected ", per * dirs,
                           " (", per, " per direction)");
  std::vector<float> alphas = n.GetFloats("activation_alpha"), betas = n.GetFloats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Act> out;
  for (const std::string& raw : names) {
    std::string s;
    for (char ch : raw) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Act a;
    auto take_alpha = [&](double def) { a.alpha = ai < alphas.size() ? alphas[ai++] : def; };
    auto take_beta = [&](double def) { a.beta = bi < betas.size() ? betas[bi++] : def; };
    if (s == "sigmoid") a.kind = ActKind::kSigmoid;
    else if (s == "tanh") a.kind = ActKind::kTanh;
    else if (s == "relu") a.kind = ActKind::kRelu;
    else if (s == "affine") { a.kind = ActKind::kAffine; take_alpha(1.0); take_beta(0.0); }
    else if (s == "leakyrelu") { a.kind = ActKind::kLeakyRelu; take_alpha(0.01); }
    else if (s == "thresholdedrelu") { a.kind = ActKind::kThresholdedRelu; take_alpha(1.0); }
    else if (s == "scaledtanh") { a.kind = ActKind::kScaledTanh; take_alpha(1.0); take_beta(1.0); }
    else if (s == "hardsigmoid") { a.kind = ActKind::kHardSigmoid; take_alpha(0.2); take_beta(0.5); }
    else if (s == "elu") { a.kind = ActKind::kElu; take_alpha(1.0); }
    else if (s == "softsign") a.kind = ActKind::kSoftsign;
    else if (s == "softplus") a.kind = ActKind::kSoftplus;
    else return NotSupported(n.Describe(), ": activation '", raw, "' is not supported");
    out.push_back(a);
  }
  return out;
}

// ---- shape inference -----------------------------------------------------------

Expected<int64_t> HiddenSize(const Node& n) {
  if (n.HasAttr("hidden_size")) return n.GetInt("hidden_size", 0);
  const Value* r = n.input(2);
  if (r && r->has_shape && r->shape.size() == 3) return r->shape[2];
  return InvalidArgument(n.Describe(), ": hidden_size is missing and R's shape does not give it");
}

Status InferRnn(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& x = *node.input(0);
  if (x.shape.size() != 3)
    return InvalidArgument(node.Describe(), ": input X must be 3-D, got ", x.ShapeString());
  OC_ASSIGN_OR_RETURN(int64_t hidden, HiddenSize(node));
  int64_t dirs = NumDirections(node);
  bool batch_first = node.GetInt("layout", 0) == 1;
  int64_t seq = batch_first ? x.shape[1] : x.shape[0];
  int64_t batch = batch_first ? x.shape[0] : x.shape[1];
  if (batch_first) {
    SetOutput(node, 0, x.dtype, {batch, seq, dirs, hidden});
    SetOutput(node, 1, x.dtype, {batch, dirs, hidden});
    SetOutput(node, 2, x.dtype, {batch, dirs, hidden});
  } else {
    SetOutput(node, 0, x.dtype, {seq, dirs, batch, hidden});
    SetOutput(node, 1, x.dtype, {dirs, batch, hidden});
    SetOutput(node, 2, x.dtype, {dirs, batch, hidden});
  }
  if (CellOf(node) != Cell::kLstm && node.output(2))
    return InvalidArgument(node.Describe(), ": has 3 outputs, ", node.op_type, " has only Y and Y_h");
  return Status::Ok();
}

// ---- kernel ----------------------------------------------------------------------

// out[n] += sum_k x[k] * w[k * ld + n] for n in [0, cols).
template <typename T>
inline void MatVecAcc(const T* x, int64_t k_count, const T* w, int64_t ld, int64_t cols, T* out) {
  for (int64_t k = 0; k < k_count; ++k) {
    T xv = x[k];
    const T* wr = w + k * ld;
    for (int64_t c = 0; c < cols; ++c) out[c] += xv * wr[c];
  }
}

template <typename T>
using MatVecFn = void (*)(const T*, int64_t, const T*, int64_t, int64_t, T*);

template <typename T>
MatVecFn<T> PickMatVec() {
  if constexpr (std::is_same_v<T, float>) {
#if defined(__x86_64__) || defined(_M_X64)
    if (SelectedIsa() == Isa::kAvx512) return rnn::MatVecAccAvx512;
    if (SelectedIsa() == Isa::kAvx2) return rnn::MatVecAccAvx2;
#endif
  }
  return MatVecAcc<T>;
}

// True for the ONNX default activations of `cell` in every direction.
bool DefaultActivations(Cell cell, const std::vector<Act>& acts) {
  const int per = NumActivations(cell);
  for (size_t i = 0; i < acts.size(); ++i) {
    const bool first = i % static_cast<size_t>(per) == 0;
    const ActKind want = cell == Cell::kRnn ? ActKind::kTanh : first ? ActKind::kSigmoid : ActKind::kTanh;
    if (acts[i].kind != want) return false;
  }
  return true;
}

// [rows][cols] -> [cols][rows], per direction.
template <typename T>
void PackTransposed(const T* src, int64_t dirs, int64_t rows, int64_t cols, T* dst) {
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[(d * cols + c) * rows + r] = src[(d * rows + r) * cols + c];
}

struct RnnPlan {
  Cell cell = Cell::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool batch_first = false, reverse_only = false, linear_before_reset = false, input_forget = false;
  double clip = 0;  // 0 = none
  std::vector<Act> acts;  // NumActivations per direction
  std::string describe;   // for run-time errors
};

template <typename T>
class RnnKernel final : public Kernel {
 public:
  RnnKernel(RnnPlan plan, std::vector<T> w_packed, std::vector<T> r_packed, int max_threads)
      : p_(std::move(plan)), w_packed_(std::move(w_packed)), r_packed_(std::move(r_packed)) {
    const int64_t gh = p_.gates * p_.hidden;
    task_floats_ = gh + 4 * p_.hidden;
    scratch_floats_ = p_.dirs * p_.batch * task_floats_;
    if constexpr (std::is_same_v<T, float>) gemm_input_ = p_.seq * p_.batch > 0 && p_.input > 0;
    // The projection sgemm reads a run-time W as it is (transposed B).
    if (w_packed_.empty() && !gemm_input_) scratch_floats_ += p_.dirs * p_.input * gh;
    if (r_packed_.empty()) scratch_floats_ += p_.dirs * p_.hidden * gh;
    matvec_ = PickMatVec<T>();
    if constexpr (std::is_same_v<T, float>) {
      if (gemm_input_) {
        xw_offset_ = scratch_floats_;
        scratch_floats_ += p_.dirs * (p_.seq * p_.batch + 1) * gh;  // + the per-direction bias row
        plan_ = gemm::SgemmPlan(gemm::DefaultUkernel(), p_.seq * p_.batch, gh, p_.input, std::max(1, max_threads));
      }
      bulk_acts_ = p_.clip == 0 && !p_.input_forget && DefaultActivations(p_.cell, p_.acts);
    }
    free_.push_back(std::make_unique<std::vector<T>>(scratch_floats_));
  }

  size_t ScratchBytes() const override {
    if constexpr (std::is_same_v<T, float>) return gemm_input_ ? plan_.ScratchBytes() : 0;
    return 0;
  }

  Status Run(const KernelIO& io) override {
    std::unique_ptr<std::vector<T>> buf = Acquire();
    T* scratch = buf->data();
    T* tasks = scratch;
    T* extra = scratch + p_.dirs * p_.batch * task_floats_;
    const int64_t gh = p_.gates * p_.hidden;
    const T* wt = w_packed_.data();
    const T* rt = r_packed_.data();
    if (w_packed_.empty() && !gemm_input_) {
      PackTransposed(io.in<T>(1), p_.dirs, gh, p_.input, extra);
      wt = extra;
      extra += p_.dirs * p_.input * gh;
    }
    if (r_packed_.empty()) {
      PackTransposed(io.in<T>(2), p_.dirs, gh, p_.hidden, extra);
      rt = extra;
    }
    Inputs in{io.in<T>(0), wt, rt, io.num_inputs > 3 ? io.in<T>(3) : nullptr,
              io.num_inputs > 4 ? io.in<int32_t>(4) : nullptr, io.num_inputs > 5 ? io.in<T>(5) : nullptr,
              io.num_inputs > 6 ? io.in<T>(6) : nullptr, io.num_inputs > 7 ? io.in<T>(7) : nullptr, nullptr,
              io.in<T>(1)};
    if constexpr (std::is_same_v<T, float>) {
      if (gemm_input_) {
        float* xw = scratch + xw_offset_;
        ProjectInputs(in, xw, io);
        in.xw = xw;
      }
    }
    Outputs out{io.num_outputs > 0 ? io.out<T>(0) : nullptr, io.num_outputs > 1 ? io.out<T>(1) : nullptr,
                io.num_outputs > 2 ? io.out<T>(2) : nullptr};
    Status status;
    std::mutex status_mu;
    io.pool->ParallelFor(p_.dirs * p_.batch, 1, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        Status st = RunTask(task / p_.batch, task % p_.batch, in, out, tasks + task * task_floats_);
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(status_mu);
          if (status.ok()) status = st;
        }
      }
    });
    Release(std::move(buf));
    return status;
  }

 private:
  struct Inputs {
    const T *x, *wt, *rt, *bias;
    const int32_t* seq_lens;
    const T *h0, *c0, *peep;
    const T* xw;     // float32: X W^T + biases for every step, [dir][row][gates*hidden]
    const T* w_raw;  // W as given, [dir][gates*hidden][input]
  };

  // xw[d] = X W_d^T + the bias each gate always gets: Wb + Rb, except for the
  // GRU candidate gate, whose Rb goes inside the reset product (RunTask).
  void ProjectInputs(const Inputs& in, float* xw, const KernelIO& io) const {
    const int64_t gh = p_.gates * p_.hidden, rows = p_.seq * p_.batch;
    float* bias = xw + p_.dirs * rows * gh;  // one row per direction
    for (int64_t d = 0; d < p_.dirs; ++d) {
      float* bd = bias + d * gh;
      if (in.bias) {
        const float* wb = in.bias + d * 2 * gh;
        const int64_t both = p_.cell == Cell::kGru ? 2 * p_.hidden : gh;
        for (int64_t i = 0; i < gh; ++i) bd[i] = i < both ? wb[i] + wb[gh + i] : wb[i];
      }
      gemm::SgemmArgs g;
      g.m = rows, g.n = gh, g.k = p_.input;
      g.a = in.x, g.lda = p_.input;
      if (!w_packed_.empty()) {
        g.b = in.wt + d * p_.input * gh, g.ldb = gh;
      } else {
        g.b = in.w_raw + d * gh * p_.input, g.ldb = p_.input, g.trans_b = true;
      }
      g.c = xw + d * rows * gh, g.ldc = gh;
      if (in.bias) {
        g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerCol;
        g.epilogue.bias = bd;
      }
      plan_.Run(g, io.pool, io.scratch);
    }
  }
  struct Outputs { T *y, *y_h, *y_c; };

  std::unique_ptr<std::vector<T>> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto b = std::move(free_.back());
        free_.pop_back();
        return b;
      }
    }
    // Only reached when more runs overlap than ever before.
    return std::make_unique<std::vector<T>>(scratch_floats_);
  }
  void Release(std::unique_ptr<std::vector<T>> b) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(b));
  }

  T Clip(T v) const {
    if (p_.clip > 0) return std::clamp(v, static_cast<T>(-p_.clip), static_cast<T>(p_.clip));
    return v;
  }

  int64_t StateIndex(int64_t d, int64_t b) const {
    return (p_.batch_first ? b * p_.dirs + d : d * p_.batch + b) * p_.hidden;
  }

  Status RunTask(int64_t d, int64_t b, const Inputs& in, const Outputs& out, T* work) const {
    const int64_t H = p_.hidden, I = p_.input, gh = p_.gates * H;
    T* gates = work;
    T* h = gates + gh;
    T* c = h + H;
    T* tmp = c + H;   // GRU: r (.) h, or h . Rh^T
    T* tmp2 = tmp + H;
    const T* wt = in.wt ? in.wt + d * I * gh : nullptr;  // null when the projections are precomputed
    const T* rt = in.rt + d * H * gh;
    const T* wb = in.bias ? in.bias + d * 2 * gh : nullptr;
    const T* rb = in.bias ? wb + gh : nullptr;
    const Act* acts = p_.acts.data() + d * NumActivations(p_.cell);
    int64_t len = p_.seq;
    if (in.seq_lens) {
      len = in.seq_lens[b];
      if (len < 0 || len > p_.seq)
        return OutOfRange(p_.describe, ": sequence_lens[", b, "] = ", len, " is outside [0, ", p_.seq, "]");
    }
    int64_t sidx = StateIndex(d, b);
    if (in.h0) std::memcpy(h, in.h0 + sidx, H * sizeof(T));
    else std::fill(h, h + H, T(0));
    if (p_.cell == Cell::kLstm) {
      if (in.c0) std::memcpy(c, in.c0 + sidx, H * sizeof(T));
      else std::fill(c, c + H, T(0));
    }
    bool reverse = p_.reverse_only || d == 1;
    for (int64_t step = 0; step < p_.seq; ++step) {
      int64_t t = reverse ? len - 1 - step : step;
      if (step >= len) t = step;  // padding steps: zero output
      T* y = out.y ? out.y + (p_.batch_first ? (b * p_.seq + t) * p_.dirs + d : (t * p_.dirs + d) * p_.batch + b) * H
                   : nullptr;
      if (step >= len) {
        if (y) std::fill(y, y + H, T(0));
        continue;
      }
      const int64_t xrow = p_.batch_first ? b * p_.seq + t : t * p_.batch + b;
      // gates = Wb (+ Rb) + x . W^T, precomputed for float32
      if (in.xw) {
        std::memcpy(gates, in.xw + (d * p_.seq * p_.batch + xrow) * gh, gh * sizeof(T));
      } else {
        if (wb) std::memcpy(gates, wb, gh * sizeof(T));
        else std::fill(gates, gates + gh, T(0));
        MatVecAcc(in.x + xrow * I, I, wt, gh, gh, gates);
      }
      const bool bulk = bulk_acts_ && !in.peep;
      if (p_.cell == Cell::kGru) {
        // z and r see h . R^T + Rb; the candidate gate needs r first.
        if (rb && !in.xw) for (int64_t i = 0; i < 2 * H; ++i) gates[i] += rb[i];
        matvec_(h, H, rt, gh, 2 * H, gates);
        if (bulk) ApplyBulk(ActivationKind::kSigmoid, gates, 2 * H);
        else for (int64_t i = 0; i < 2 * H; ++i) gates[i] = acts[0](Clip(gates[i]));
        const T* z = gates;
        const T* r = gates + H;
        T* hc = gates + 2 * H;
        std::fill(tmp2, tmp2 + H, T(0));
        if (p_.linear_before_reset) {
          matvec_(h, H, rt + 2 * H, gh, H, tmp2);
          for (int64_t i = 0; i < H; ++i) hc[i] += r[i] * (tmp2[i] + (rb ? rb[2 * H + i] : T(0)));
        } else {
          for (int64_t i = 0; i < H; ++i) tmp[i] = r[i] * h[i];
          matvec_(tmp, H, rt + 2 * H, gh, H, tmp2);
          for (int64_t i = 0; i < H; ++i) hc[i] += tmp2[i] + (rb ? rb[2 * H + i] : T(0));
        }
        if (bulk) {
          ApplyBulk(ActivationKind::kTanh, hc, H);
          for (int64_t i = 0; i < H; ++i) h[i] = (T(1) - z[i]) * hc[i] + z[i] * h[i];
        } else {
          for (int64_t i = 0; i < H; ++i) {
            T cand = acts[1](Clip(hc[i]));
            h[i] = (T(1) - z[i]) * cand + z[i] * h[i];
          }
        }
      } else {
        if (rb && !in.xw) for (int64_t i = 0; i < gh; ++i) gates[i] += rb[i];
        matvec_(h, H, rt, gh, gh, gates);
        if (p_.cell == Cell::kRnn) {
          if (bulk) {
            ApplyBulk(ActivationKind::kTanh, gates, H);
            std::memcpy(h, gates, H * sizeof(T));
          } else {
            for (int64_t i = 0; i < H; ++i) h[i] = acts[0](Clip(gates[i]));
          }
        } else if (bulk) {
          // Gate order i, o, f, c: sigmoid on the first three, tanh on c.
          ApplyBulk(ActivationKind::kSigmoid, gates, 3 * H);
          ApplyBulk(ActivationKind::kTanh, gates + 3 * H, H);
          const T *gi = gates, *go = gates + H, *gf = gates + 2 * H, *gc = gates + 3 * H;
          for (int64_t k = 0; k < H; ++k) tmp[k] = c[k] = gf[k] * c[k] + gi[k] * gc[k];
          ApplyBulk(ActivationKind::kTanh, tmp, H);
          for (int64_t k = 0; k < H; ++k) h[k] = go[k] * tmp[k];
        } else {
          // Gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
          T* gi = gates;
          T* go = gates + H;
          T* gf = gates + 2 * H;
          T* gc = gates + 3 * H;
          const T* peep = in.peep ? in.peep + d * 3 * H : nullptr;
          for (int64_t k = 0; k < H; ++k) {
            T iv = gi[k] + (peep ? peep[k] * c[k] : T(0));
            T fv = gf[k] + (peep ? peep[2 * H + k] * c[k] : T(0));
            iv = acts[0](Clip(iv));
            fv = p_.input_forget ? T(1) - iv : acts[0](Clip(fv));
            T cand = acts[1](Clip(gc[k]));
            c[k] = fv * c[k] + iv * cand;
            T ov = acts[0](Clip(go[k] + (peep ? peep[H + k] * c[k] : T(0))));
            h[k] = ov * acts[2](c[k]);
          }
        }
      }
      if (y) std::memcpy(y, h, H * sizeof(T));
    }
    if (out.y_h) std::memcpy(out.y_h + sidx, h, H * sizeof(T));
    if (out.y_c && p_.cell == Cell::kLstm) std::memcpy(out.y_c + sidx, c, H * sizeof(T));
    return Status::Ok();
  }

  // Vectorised float32 activation over n values in place (only reached for T = float).
  static void ApplyBulk(ActivationKind kind, T* v, int64_t n) {
    if constexpr (std::is_same_v<T, float>) ApplyActivation(Activation{kind}, v, n);
  }

  RnnPlan p_;
  std::vector<T> w_packed_, r_packed_;
  int64_t task_floats_ = 0, scratch_floats_ = 0;
  MatVecFn<T> matvec_ = nullptr;
  bool gemm_input_ = false, bulk_acts_ = false;
  int64_t xw_offset_ = 0;
  gemm::SgemmPlan plan_;
  std::mutex mu_;
  std::vector<std::unique_ptr<std::vector<T>>> free_;
};

Status CheckShape(const Node& n, size_t i, const char* name, const std::vector<int64_t>& want) {
  const Value* v = n.input(i);
  if (!v) return Status::Ok();
  if (v->shape != want) {
    std::string w = "[";
    for (size_t k = 0; k < want.size(); ++k) w += (k ? "," : "") + std::to_string(want[k]);
    return InvalidArgument(n.Describe(), ": input ", i, " (", name, ") has shape ", v->ShapeString(), ", expected ",
                           w, "]");
  }
  return Status::Ok();
}

template <typename T>
std::vector<T> PackIfConstant(const Value* v, int64_t dirs, int64_t rows, int64_t cols) {
  if (!v || !v->constant) return {};
  std::vector<T> out(static_cast<size_t>(dirs * rows * cols));
  PackTransposed(v->constant->as<T>(), dirs, rows, cols, out.data());
  return out;
}

Expected<KernelPtr> MakeRnn(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype),
                        " is not supported (float32 and float64 only)");
  RnnPlan p;
  p.cell = CellOf(n);
  p.describe = n.Describe();
  p.gates = NumGates(p.cell);
  p.batch_first = n.GetInt("layout", 0) == 1;
  p.seq = p.batch_first ? x.shape[1] : x.shape[0];
  p.batch = p.batch_first ? x.shape[0] : x.shape[1];
  p.input = x.shape[2];
  OC_ASSIGN_OR_RETURN(p.hidden, HiddenSize(n));
  if (p.hidden < 1) return InvalidArgument(n.Describe(), ": hidden_size must be >= 1, got ", p.hidden);
  std::string dir = n.GetString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return InvalidArgument(n.Describe(), ": direction must be forward, reverse or bidirectional, got '", dir, "'");
  p.dirs = NumDirections(n);
  p.reverse_only = dir == "reverse";
  p.linear_before_reset = n.GetInt("linear_before_reset", 0) != 0;
  p.input_forget = n.GetInt("input_forget", 0) != 0;
  p.clip = n.HasAttr("clip") ? n.GetFloat("clip", 0.f) : 0.0;
  if (n.HasAttr("clip") && !(p.clip > 0))
    return InvalidArgument(n.Describe(), ": clip must be positive, got ", p.clip);
  OC_ASSIGN_OR_RETURN(p.acts, ParseActivations(n, p.cell, p.dirs));
  const int64_t gh = p.gates * p.hidden;
  OC_RETURN_IF_ERROR(CheckShape(n, 1, "W", {p.dirs, gh, p.input}));
  OC_RETURN_IF_ERROR(CheckShape(n, 2, "R", {p.dirs, gh, p.hidden}));
  OC_RETURN_IF_ERROR(CheckShape(n, 3, "B", {p.dirs, 2 * gh}));
  OC_RETURN_IF_ERROR(CheckShape(n, 4, "sequence_lens", {p.batch}));
  std::vector<int64_t> state = p.batch_first ? std::vector<int64_t>{p.batch, p.dirs, p.hidden}
                                             : std::vector<int64_t>{p.dirs, p.batch, p.hidden};
  OC_RETURN_IF_ERROR(CheckShape(n, 5, "initial_h", state));
  if (p.cell == Cell::kLstm) {
    OC_RETURN_IF_ERROR(CheckShape(n, 6, "initial_c", state));
    OC_RETURN_IF_ERROR(CheckShape(n, 7, "P", {p.dirs, 3 * p.hidden}));
  }
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    const Value* v = n.input(i);
    if (!v) continue;
    DataType want = i == 4 ? DataType::kInt32 : x.dtype;
    if (v->dtype != want)
      return InvalidArgument(n.Describe(), ": input ", i, " has dtype ", DataTypeName(v->dtype), ", expected ",
                             DataTypeName(want));
  }
  if (x.dtype == DataType::kFloat64) {
    auto w = PackIfConstant<double>(n.input(1), p.dirs, gh, p.input);
    auto r = PackIfConstant<double>(n.input(2), p.dirs, gh, p.hidden);
    return KernelPtr(new RnnKernel<double>(std::move(p), std::move(w), std::move(r), init.max_threads));
  }
  auto w = PackIfConstant<float>(n.input(1), p.dirs, gh, p.input);
  auto r = PackIfConstant<float>(n.input(2), p.dirs, gh, p.hidden);
  return KernelPtr(new RnnKernel<float>(std::move(p), std::move(w), std::move(r), init.max_threads));
}

}  // namespace

void RegisterRnnOps(OpRegistry& r) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    r.Register({.op_type = op, .infer = InferRnn, .kernels = CpuKernel(MakeRnn)});
}

}  // namespace oc
