// Einsum (opset 12+): explicit and implicit outputs, "..." broadcast dims,
// repeated labels within an operand (diagonals), any number of operands.
// The general kernel walks the output elements in parallel and, for each, the
// space of summed labels, with per-operand strides precomputed at creation (a
// label an operand lacks, or a broadcast size-1 dim, has stride 0). That is
// exact and general, and about 1 GFLOP/s.
//
// Two float32 operands whose labels are all batch (both operands and the
// output), M (first operand and output), N (second and output) or K (both
// operands, summed) are a batch of GEMMs over strided views of the operands:
// EinsumGemmKernel runs them through the sgemm without copying anything
// (MaxViT's attention, 'BGHID,BGHJD->BGHIJ', went from 28 ms to well under
// 1 ms per node). The M, N and K labels must each merge into one strided axis
// in the tensors that carry them, and each view needs a unit stride along one
// of its axes; M or N labels that do not merge become batch labels.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/cpu/common/wrap_arith.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int kLetters = 52;  // a-z, A-Z; "..." dims get labels kLetters + k
constexpr int64_t kUnseen = -2;  // label_size of a label no operand uses (-1: unknown dim)

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

struct Plan {
  std::vector<std::vector<int>> operand_labels;  // per operand, one label per dim
  std::vector<int> output_labels;
  std::vector<int64_t> label_size;               // -1 unknown
};

// Splits one operand's subscripts into labels; "..." expands to `rank - letters`
// ellipsis labels aligned to the right of `ell_rank`.
Status ParseTerm(const Node& node, const std::string& term, int64_t rank, std::vector<int>* labels,
                 int64_t* ell_rank_out, int64_t ell_rank, bool count_only) {
  int64_t letters = 0;
  bool has_ell = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (has_ell) return InvalidArgument(node.Describe(), ": equation term '", term, "' has two '...'");
      has_ell = true;
      i += 2;
    } else if (LetterLabel(term[i]) >= 0) {
      ++letters;
    } else {
      return InvalidArgument(node.Describe(), ": equation term '", term, "' has an invalid character '",
                             std::string(1, term[i]), "' (expected letters and '...')");
    }
  }
  if (rank >= 0) {
    if ((!has_ell && letters != rank) || (has_ell && letters > rank))
      return InvalidArgument(node.Describe(), ": equation term '", term, "' has ", letters,
                             " labels for an operand of rank ", rank);
  }
  *ell_rank_out = has_ell ? (rank >= 0 ? rank - letters : 0) : 0;
  if (count_only) return Status::Ok();
  labels->clear();
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      for (int64_t k = ell_rank - *ell_rank_out; k < ell_rank; ++k) labels->push_back(kLetters + static_cast<int>(k));
      i += 2;
    } else {
      labels->push_back(LetterLabel(term[i]));
    }
  }
  return Status::Ok();
}

Expected<Plan> MakePlan(const Node& node) {
  std::string eq;
  for (char c : node.GetString("equation", "")) {
    if (c != ' ') eq.push_back(c);
  }
  if (eq.empty()) return InvalidArgument(node.Describe(), ": attribute 'equation' is missing or empty");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t b = 0;;) {
    size_t e = lhs.find(',', b);
    terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != node.inputs.size())
    return InvalidArgument(node.Describe(), ": equation '", eq, "' names ", terms.size(), " operands but the node has ",
                           node.inputs.size(), " inputs");
  int64_t ell_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    OC_RETURN_IF_ERROR(RequireInput(node, i));
    int64_t r = 0;
    OC_RETURN_IF_ERROR(ParseTerm(node, terms[i], static_cast<int64_t>(node.input(i)->shape.size()), nullptr, &r, 0,
                                 true));
    ell_rank = std::max(ell_rank, r);
  }
  Plan plan;
  plan.label_size.assign(kLetters + ell_rank, kUnseen);
  std::array<int, kLetters> count{};
  plan.operand_labels.resize(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    const Value& v = *node.input(i);
    int64_t r = 0;
    OC_RETURN_IF_ERROR(ParseTerm(node, terms[i], static_cast<int64_t>(v.shape.size()), &plan.operand_labels[i], &r,
                                 ell_rank, false));
    for (size_t d = 0; d < v.shape.size(); ++d) {
      int l = plan.operand_labels[i][d];
      if (l < kLetters) ++count[l];
      int64_t dim = v.shape[d], &size = plan.label_size[l];
      // Size-1 dims broadcast (numpy allows it for "..." dims; ORT for letters too).
      if (size == kUnseen || size == 1) {
        size = dim;
      } else if (dim == 1) {
        continue;
      } else if (size == -1) {
        size = dim;
      } else if (dim >= 0 && dim != size) {
        return InvalidArgument(node.Describe(), ": operand ", i, " ('", terms[i], "') dim ", d, " is ", dim,
                               " but its label has size ", size, " elsewhere in '", eq, "'");
      }
    }
  }
  if (arrow == std::string::npos) {
    // Implicit output: the "..." dims, then the labels used once, alphabetically.
    for (int64_t k = 0; k < ell_rank; ++k) plan.output_labels.push_back(kLetters + static_cast<int>(k));
    for (char c = 'A'; c <= 'Z'; ++c)
      if (count[LetterLabel(c)] == 1) plan.output_labels.push_back(LetterLabel(c));
    for (char c = 'a'; c <= 'z'; ++c)
      if (count[LetterLabel(c)] == 1) plan.output_labels.push_back(LetterLabel(c));
  } else {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs.compare(i, 3, "...") == 0) {
        for (int64_t k = 0; k < ell_rank; ++k) plan.output_labels.push_back(kLetters + static_cast<int>(k));
        i += 2;
      } else if (LetterLabel(rhs[i]) >= 0) {
        plan.output_labels.push_back(LetterLabel(rhs[i]));
      } else {
        return InvalidArgument(node.Describe(), ": output of '", eq, "' has an invalid character '",
                               std::string(1, rhs[i]), "'");
      }
    }
    std::vector<bool> seen(plan.label_size.size(), false);
    for (int l : plan.output_labels) {
      if (l < kLetters && count[l] == 0)
        return InvalidArgument(node.Describe(), ": output label in '", eq, "' does not appear in any operand");
      if (seen[l]) return InvalidArgument(node.Describe(), ": output of '", eq, "' repeats a label");
      seen[l] = true;
    }
  }
  return plan;
}

Status InferEinsum(Node& node) {
  if (node.inputs.empty()) return InvalidArgument(node.Describe(), ": expects at least 1 input");
  OC_ASSIGN_OR_RETURN(Plan plan, MakePlan(node));
  DataType dt = node.input(0)->dtype;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.input(i)->dtype != dt)
      return InvalidArgument(node.Describe(), ": input ", i, " has another element type than input 0");
  }
  std::vector<int64_t> shape;
  for (int l : plan.output_labels) shape.push_back(plan.label_size[l]);
  SetOutput(node, 0, dt, std::move(shape));
  return Status::Ok();
}

// Integer products and sums wrap (computed in WrapU, so no signed overflow).
template <typename T, bool = std::is_integral_v<T>>
struct EinsumAcc { using type = T; };
template <typename T>
struct EinsumAcc<T, true> { using type = WrapU<T>; };

template <typename T>
class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(std::vector<int64_t> out_dims, std::vector<std::vector<int64_t>> out_strides,
               std::vector<int64_t> sum_dims, std::vector<std::vector<int64_t>> sum_strides)
      : out_dims_(std::move(out_dims)), out_strides_(std::move(out_strides)), sum_dims_(std::move(sum_dims)),
        sum_strides_(std::move(sum_strides)) {
    out_count_ = 1;
    for (int64_t d : out_dims_) out_count_ *= d;
    sum_count_ = 1;
    for (int64_t d : sum_dims_) sum_count_ *= d;
  }

  Status Run(const KernelIO& io) override {
    const size_t n_in = out_strides_.size();
    T* y = io.out<T>(0);
    if (out_count_ == 0) return Status::Ok();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(sum_count_, 1));
    io.pool->ParallelFor(out_count_, grain, [&](int64_t b, int64_t e) {
      constexpr size_t kMaxIn = 8;  // checked in the factory
      const T* base[kMaxIn];
      int64_t off[kMaxIn];
      int64_t idx[kMaxLabels];
      for (int64_t o = b; o < e; ++o) {
        // Operand offsets of output element o.
        int64_t rem = o;
        for (size_t k = 0; k < n_in; ++k) off[k] = 0;
        for (size_t d = out_dims_.size(); d-- > 0;) {
          int64_t c = rem % out_dims_[d];
          rem /= out_dims_[d];
          for (size_t k = 0; k < n_in; ++k) off[k] += c * out_strides_[k][d];
        }
        for (size_t k = 0; k < n_in; ++k) base[k] = io.in<T>(k) + off[k];
        using A = typename EinsumAcc<T>::type;
        A acc = 0;
        for (size_t d = 0; d < sum_dims_.size(); ++d) idx[d] = 0;
        int64_t cur[kMaxIn];
        for (size_t k = 0; k < n_in; ++k) cur[k] = 0;
        for (int64_t s = 0; s < sum_count_; ++s) {
          A p = static_cast<A>(base[0][cur[0]]);
          for (size_t k = 1; k < n_in; ++k) p = static_cast<A>(p * static_cast<A>(base[k][cur[k]]));
          acc = static_cast<A>(acc + p);
          // Odometer step over the summed labels, last label fastest.
          for (size_t d = sum_dims_.size(); d-- > 0;) {
            for (size_t k = 0; k < n_in; ++k) cur[k] += sum_strides_[k][d];
            if (++idx[d] < sum_dims_[d]) break;
            for (size_t k = 0; k < n_in; ++k) cur[k] -= sum_strides_[k][d] * sum_dims_[d];
            idx[d] = 0;
          }
        }
        y[o] = static_cast<T>(acc);
      }
    });
    return Status::Ok();
  }

  static constexpr size_t kMaxLabels = 64;

 private:
  std::vector<int64_t> out_dims_;
  std::vector<std::vector<int64_t>> out_strides_;  // [operand][output dim]
  std::vector<int64_t> sum_dims_;
  std::vector<std::vector<int64_t>> sum_strides_;  // [operand][summed label]
  int64_t out_count_ = 0, sum_count_ = 0;
};

// ---- Batched GEMM lowering (float32, two operands) ---------------------------------------------

// One matrix view: rows x cols elements, element (r, c) at r * row_stride +
// c * col_stride.
struct MatView {
  int64_t rows = 1, cols = 1, row_stride = 0, col_stride = 0;
};

// The sgemm form of a view: leading dimension and whether it is stored
// transposed; false when neither axis has unit stride.
bool GemmLayout(const MatView& v, int64_t* ld, bool* trans) {
  if (v.cols == 1 || v.col_stride == 1) {
    *trans = false;
    *ld = v.rows == 1 ? std::max<int64_t>(v.cols, 1) : v.row_stride;
    return *ld >= std::max<int64_t>(v.cols, 1);
  }
  if (v.rows == 1 || v.row_stride == 1) {
    *trans = true;
    *ld = v.col_stride;
    return *ld >= v.rows;
  }
  return false;
}

// Multiply-adds per product below which the general kernel is used.
constexpr int64_t kMinGemmWork = 4096;

struct GemmLowering {
  int64_t m = 1, n = 1, k = 1;
  bool swap = false;  // compute C^T = B^T A^T (the output is stored column-major)
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool trans_a = false, trans_b = false;
  std::vector<std::array<int64_t, 3>> offsets;  // per batch: A, B, C element offsets
};

// Merges `labels` (sorted by stride in tensor 0, outermost first) into one
// axis of every tensor in `strides`: each label's stride must be the next
// one's times its size. Returns the merged size and per-tensor stride of the
// innermost label, or false.
bool MergeAxis(const std::vector<int>& labels, const std::vector<int64_t>& size,
               const std::vector<const std::vector<int64_t>*>& strides, int64_t* merged,
               std::vector<int64_t>* inner_stride) {
  *merged = 1;
  inner_stride->assign(strides.size(), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    *merged *= size[labels[i]];
    for (size_t t = 0; t < strides.size(); ++t) {
      const int64_t st = (*strides[t])[labels[i]];
      if (i + 1 < labels.size() && st != (*strides[t])[labels[i + 1]] * size[labels[i + 1]]) return false;
      (*inner_stride)[t] = st;
    }
  }
  return true;
}

// label_stride[t][l]: element stride of label l in tensor t (0: A, 1: B,
// 2: the output; 0 where it lacks the label). Labels of size 1 play no part.
std::optional<GemmLowering> LowerToGemm(const Plan& plan, const std::vector<std::vector<int64_t>>& label_stride) {
  const std::vector<int64_t>& size = plan.label_size;
  std::vector<bool> in_out(size.size(), false);
  for (int l : plan.output_labels) in_out[l] = true;
  std::vector<int> batch, m_labels, n_labels, k_labels;
  for (size_t li = 0; li < size.size(); ++li) {
    const int l = static_cast<int>(li);
    if (size[li] == kUnseen || size[li] == 1) continue;
    if (size[li] <= 0) return std::nullopt;  // empty: the general kernel writes it
    const bool a = label_stride[0][li] != 0, b = label_stride[1][li] != 0;
    if (in_out[li]) {
      if (a && b) batch.push_back(l);
      else if (a) m_labels.push_back(l);
      else if (b) n_labels.push_back(l);
      else return std::nullopt;
    } else if (a && b) {
      k_labels.push_back(l);
    } else {
      return std::nullopt;  // summed within one operand
    }
  }
  auto by_stride = [&](int t) {
    return [&, t](int x, int y) { return label_stride[t][x] > label_stride[t][y]; };
  };
  // M and N: the longest run of innermost labels that merges; the rest are
  // batch labels (the other operand's stride is 0 there: a broadcast).
  auto split = [&](std::vector<int>& labels, int t, int64_t* merged, std::vector<int64_t>* inner) {
    std::sort(labels.begin(), labels.end(), by_stride(t));
    const std::vector<const std::vector<int64_t>*> views{&label_stride[t], &label_stride[2]};
    for (size_t first = 0; first <= labels.size(); ++first) {
      std::vector<int> run(labels.begin() + static_cast<std::ptrdiff_t>(first), labels.end());
      if (MergeAxis(run, size, views, merged, inner)) {
        batch.insert(batch.end(), labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(first));
        return;
      }
    }
  };
  GemmLowering g;
  std::vector<int64_t> m_stride, n_stride, k_stride;
  split(m_labels, 0, &g.m, &m_stride);  // strides in A and C
  split(n_labels, 1, &g.n, &n_stride);  // strides in B and C
  std::sort(k_labels.begin(), k_labels.end(), by_stride(0));
  if (!MergeAxis(k_labels, size, {&label_stride[0], &label_stride[1]}, &g.k, &k_stride)) return std::nullopt;
  MatView a{g.m, g.k, m_stride[0], k_stride[0]};
  MatView b{g.k, g.n, k_stride[1], n_stride[0]};
  MatView c{g.m, g.n, m_stride[1], n_stride[1]};
  if (!(c.cols == 1 || c.col_stride == 1)) {
    // C stored transposed: C^T (n x m) = B^T A^T.
    g.swap = true;
    std::swap(g.m, g.n);
    MatView at{a.cols, a.rows, a.col_stride, a.row_stride}, bt{b.cols, b.rows, b.col_stride, b.row_stride};
    a = bt, b = at;
    c = MatView{c.cols, c.rows, c.col_stride, c.row_stride};
  }
  bool trans_c = false;
  if (!GemmLayout(a, &g.lda, &g.trans_a) || !GemmLayout(b, &g.ldb, &g.trans_b) || !GemmLayout(c, &g.ldc, &trans_c) ||
      trans_c)
    return std::nullopt;
  // Tiny products (dot products, 2x2 blocks) cost more as GEMM calls than in
  // the general loop.
  if (g.m * g.n * g.k < kMinGemmWork) return std::nullopt;
  // Per batch index, the three base offsets.
  int64_t batches = 1;
  for (int l : batch) batches *= size[l];
  if (batches > (int64_t{1} << 20)) return std::nullopt;
  std::vector<int64_t> idx(batch.size(), 0);
  g.offsets.reserve(static_cast<size_t>(batches));
  for (int64_t i = 0; i < batches; ++i) {
    std::array<int64_t, 3> off{0, 0, 0};
    for (size_t d = 0; d < batch.size(); ++d)
      for (int t = 0; t < 3; ++t) off[t] += idx[d] * label_stride[t][batch[d]];
    if (g.swap) std::swap(off[0], off[1]);
    g.offsets.push_back(off);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < size[batch[d]]) break;
      idx[d] = 0;
    }
  }
  return g;
}

class EinsumGemmKernel final : public Kernel {
 public:
  EinsumGemmKernel(GemmLowering g, int max_threads)
      : g_(std::move(g)),
        max_threads_(std::max(1, max_threads)),
        one_(gemm::DefaultUkernel(), g_.m, g_.n, g_.k, 1),
        all_(gemm::DefaultUkernel(), g_.m, g_.n, g_.k, max_threads_) {}

  size_t ScratchBytes() const override {
    return std::max(all_.ScratchBytes(), one_.ScratchBytes() * static_cast<size_t>(max_threads_));
  }

  Status Run(const KernelIO& io) override {
    const float* a = io.in<float>(g_.swap ? 1 : 0);
    const float* b = io.in<float>(g_.swap ? 0 : 1);
    float* c = io.out<float>(0);
    gemm::SgemmArgs args;
    args.m = g_.m, args.n = g_.n, args.k = g_.k;
    args.lda = g_.lda, args.ldb = g_.ldb, args.ldc = g_.ldc;
    args.trans_a = g_.trans_a, args.trans_b = g_.trans_b;
    auto at = [&](gemm::SgemmArgs& x, size_t i) {
      x.a = a + g_.offsets[i][0];
      x.b = b + g_.offsets[i][1];
      x.c = c + g_.offsets[i][2];
    };
    const int64_t batches = static_cast<int64_t>(g_.offsets.size());
    const int64_t threads = std::min<int64_t>(io.pool->num_threads(), max_threads_);
    if (threads > 1 && batches >= threads) {
      // Whole products per thread, each single-threaded on scratch slot t.
      io.pool->ParallelFor(threads, 1, [&](int64_t t0, int64_t t1) {
        gemm::SgemmArgs x = args;
        for (int64_t t = t0; t < t1; ++t) {
          void* scratch = static_cast<uint8_t*>(io.scratch) + static_cast<size_t>(t) * one_.ScratchBytes();
          for (int64_t i = batches * t / threads; i < batches * (t + 1) / threads; ++i) {
            at(x, static_cast<size_t>(i));
            one_.Run(x, nullptr, scratch);
          }
        }
      });
      return Status::Ok();
    }
    for (size_t i = 0; i < g_.offsets.size(); ++i) {
      at(args, i);
      all_.Run(args, io.pool, io.scratch);
    }
    return Status::Ok();
  }

 private:
  GemmLowering g_;
  int max_threads_;
  gemm::SgemmPlan one_, all_;
};

template <typename T>
Expected<KernelPtr> Build(const Node& n, const Plan& plan, int max_threads) {
  const size_t n_in = n.inputs.size();
  // Per operand, the element stride of each label (summed over repeats: a
  // diagonal), 0 where the operand lacks the label or broadcasts it.
  std::vector<std::vector<int64_t>> label_stride(n_in, std::vector<int64_t>(plan.label_size.size(), 0));
  for (size_t k = 0; k < n_in; ++k) {
    const auto& shape = n.input(k)->shape;
    std::vector<int64_t> strides = Strides(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      int l = plan.operand_labels[k][d];
      if (shape[d] == 1 && plan.label_size[l] != 1) continue;
      label_stride[k][l] += strides[d];
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (n_in == 2) {
      std::vector<std::vector<int64_t>> strides3 = label_stride;
      strides3.emplace_back(plan.label_size.size(), 0);
      const std::vector<int64_t> out_strides = Strides(n.output(0)->shape);
      for (size_t d = 0; d < plan.output_labels.size(); ++d) strides3[2][plan.output_labels[d]] = out_strides[d];
      if (auto g = LowerToGemm(plan, strides3)) return KernelPtr(new EinsumGemmKernel(std::move(*g), max_threads));
    }
  }
  std::vector<bool> in_out(plan.label_size.size(), false);
  std::vector<int64_t> out_dims;
  std::vector<std::vector<int64_t>> out_strides(n_in);
  for (int l : plan.output_labels) {
    in_out[l] = true;
    out_dims.push_back(plan.label_size[l]);
    for (size_t k = 0; k < n_in; ++k) out_strides[k].push_back(label_stride[k][l]);
  }
  std::vector<int64_t> sum_dims;
  std::vector<std::vector<int64_t>> sum_strides(n_in);
  for (size_t l = 0; l < plan.label_size.size(); ++l) {
    if (in_out[l] || plan.label_size[l] == kUnseen) continue;
    sum_dims.push_back(plan.label_size[l]);
    for (size_t k = 0; k < n_in; ++k) sum_strides[k].push_back(label_stride[k][l]);
  }
  return KernelPtr(new EinsumKernel<T>(std::move(out_dims), std::move(out_strides), std::move(sum_dims),
                                       std::move(sum_strides)));
}

Expected<KernelPtr> MakeEinsum(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.inputs.size() > 8) return NotSupported(n.Describe(), ": more than 8 operands");
  OC_ASSIGN_OR_RETURN(Plan plan, MakePlan(n));
  if (plan.label_size.size() > EinsumKernel<float>::kMaxLabels)
    return NotSupported(n.Describe(), ": more than ", EinsumKernel<float>::kMaxLabels, " labels");
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return Build<float>(n, plan, init.max_threads);
    case DataType::kFloat64: return Build<double>(n, plan, init.max_threads);
    case DataType::kInt32: return Build<int32_t>(n, plan, init.max_threads);
    case DataType::kInt64: return Build<int64_t>(n, plan, init.max_threads);
    case DataType::kInt8: return Build<int8_t>(n, plan, init.max_threads);
    case DataType::kInt16: return Build<int16_t>(n, plan, init.max_threads);
    case DataType::kUInt8: return Build<uint8_t>(n, plan, init.max_threads);
    case DataType::kUInt16: return Build<uint16_t>(n, plan, init.max_threads);
    case DataType::kUInt32: return Build<uint32_t>(n, plan, init.max_threads);
    case DataType::kUInt64: return Build<uint64_t>(n, plan, init.max_threads);
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float, double and the 8 integer types; float16/bfloat16 run in float32)");
  }
}

}  // namespace

void RegisterEinsumOps(OpRegistry& r) {
  r.Register({.op_type = "Einsum", .min_opset = 12, .infer = InferEinsum, .kernels = CpuKernel(MakeEinsum)});
}

}  // namespace oc
