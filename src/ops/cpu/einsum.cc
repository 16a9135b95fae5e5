// Einsum (opset 12+): explicit and implicit outputs, "..." broadcast dims,
// repeated labels within an operand (diagonals), any number of operands.
// The kernel walks the output elements in parallel and, for each, the space of
// summed labels, with per-operand strides precomputed at creation (a label an
// operand lacks, or a broadcast size-1 dim, has stride 0). That is exact and
// general; attention-style contractions are small enough in the models that
// use them (MaxViT, einsum-written attention) that no GEMM lowering is needed.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/cpu/wrap_arith.h"
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

template <typename T>
Expected<KernelPtr> Build(const Node& n, const Plan& plan) {
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
    case DataType::kFloat32: return Build<float>(n, plan);
    case DataType::kFloat64: return Build<double>(n, plan);
    case DataType::kInt32: return Build<int32_t>(n, plan);
    case DataType::kInt64: return Build<int64_t>(n, plan);
    case DataType::kInt8: return Build<int8_t>(n, plan);
    case DataType::kInt16: return Build<int16_t>(n, plan);
    case DataType::kUInt8: return Build<uint8_t>(n, plan);
    case DataType::kUInt16: return Build<uint16_t>(n, plan);
    case DataType::kUInt32: return Build<uint32_t>(n, plan);
    case DataType::kUInt64: return Build<uint64_t>(n, plan);
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float, double and the 8 integer types; float16/bfloat16 run in float32)");
  }
}

}  // namespace

void RegisterEinsumOps(OpRegistry& r) {
  r.Register({.op_type = "Einsum", .min_opset = 12, .infer = InferEinsum, .cpu = MakeEinsum});
}

}  // namespace oc
