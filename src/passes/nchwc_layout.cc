// nchwc-layout (see nchwc_layout.h). One walk in topological order decides
// each node: a 2-D float Conv/FusedConv with constant weights, group 1 or
// depthwise, always joins (its input is reordered when it comes from outside a
// region, or read as NCHW when it has at most kMaxNchwInputChannels channels:
// the stem conv); the layout-agnostic ops join when one of their inputs is
// already blocked; an inference BatchNormalization of a blocked value becomes
// a depthwise 1x1 NchwcConv (with the Relu after it, if that alone reads it). A joined node writes a new 5-D value; the original NCHW
// value is then produced by a ReorderFromNchwc only if something outside the
// region (or the graph's outputs) still reads it.
//
// Padding lanes of the last channel block stay finite: convs write bias 0 plus
// the activation of 0 there, and only ops that map finite to finite join
// (no Div, Log, Sqrt...), so the zero weights of the next conv never meet an
// Inf or NaN.
#include "passes/nchwc_layout.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/cpu_features.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/nchwc/nchwc.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

constexpr int64_t kMaxNchwInputChannels = 4;
// A graph with fewer eligible convs stays NCHW: the reorders around a lone
// conv cost about what the blocked kernel saves.
constexpr int kMinConvs = 3;
// Whether the pipeline runs the pass when OPENCANN_NCHWC is unset (decided by
// measurement: docs/nchwc.md).
constexpr bool kNchwcByDefault = true;

bool IsStaticF32(const Value* v, size_t rank) {
  return v && v->dtype == DataType::kFloat32 && v->kind == ValueKind::kTensor && v->IsStatic() &&
         v->shape.size() == rank;
}

class Rewriter {
 public:
  Rewriter(Graph& g, int block) : g_(g), block_(block) {}

  Status Run(int min_convs) {
    std::vector<Node*> order;
    int convs = 0;
    for (auto& n : g_.nodes()) {
      order.push_back(n.get());
      convs += ConvEligible(*n);
    }
    if (convs < min_convs) return Status::Ok();
    for (Node* n : order)
      if (!fused_.count(n)) OC_RETURN_IF_ERROR(Visit(*n));
    for (const Node* n : fused_) g_.RemoveNode(const_cast<Node*>(n));
    if (blocked_.empty()) return Status::Ok();
    // Region borders: NCHW readers of a blocked value get it back through a reorder.
    std::unordered_set<const Value*> read_outside;
    for (auto& n : g_.nodes())
      for (const Value* in : n->inputs)
        if (in) read_outside.insert(in);
    for (auto& [orig, bv] : blocked_) {
      if (!read_outside.count(orig) && !g_.IsGraphOutput(orig)) continue;
      Node* r = g_.AddNode("ReorderFromNchwc", g_.UniqueName(orig->name + "_from_nchwc"), {bv},
                           {const_cast<Value*>(orig)}, kOpenCannDomain);
      r->opset = 1;
      r->SetInt("block", block_);
      r->SetInt("channels", orig->shape[1]);
      const_cast<Value*>(orig)->producer = r;
    }
    g_.opset_imports[kOpenCannDomain] = std::max(g_.opset_imports[kOpenCannDomain], 1);
    return g_.TopologicalSort();
  }

 private:
  bool IsBlocked(const Value* v) const { return v && blocked_.count(v); }

  // The blocked form of v: from the region, or a (shared) reorder of v.
  Value* BlockedInput(Value* v) {
    if (auto it = blocked_.find(v); it != blocked_.end()) return it->second;
    if (auto it = reordered_.find(v); it != reordered_.end()) return it->second;
    Value* b = NewBlockedValue(v->name + "_to_nchwc", *v, v->shape[1], v->shape[2], v->shape[3]);
    Node* r = g_.AddNode("ReorderToNchwc", g_.UniqueName(v->name + "_to_nchwc"), {v}, {b}, kOpenCannDomain);
    r->opset = 1;
    r->SetInt("block", block_);
    b->producer = r;
    reordered_[v] = b;
    return b;
  }

  Value* NewBlockedValue(const std::string& base, const Value& like, int64_t c, int64_t h, int64_t w) {
    Value* b = g_.AddValue(g_.UniqueName(base));
    b->dtype = like.dtype;
    b->has_shape = true;
    b->shape = {like.shape[0], (c + block_ - 1) / block_, h, w, block_};
    b->dim_params.assign(5, "");
    return b;
  }

  // `n` now writes the blocked form of its NCHW output 0.
  void TakeOutput(Node& n) {
    Value* orig = n.outputs[0];
    Value* b = NewBlockedValue(orig->name + "_nchwc", *orig, orig->shape[1], orig->shape[2], orig->shape[3]);
    n.outputs[0] = b;
    b->producer = &n;
    orig->producer = nullptr;
    blocked_[orig] = b;
  }

  void MakeOurs(Node& n, const char* op) {
    n.op_type = op;
    n.domain = kOpenCannDomain;
    n.opset = 1;
    n.SetInt("block", block_);
  }

  bool SingleOutput(const Node& n) const {
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i]) return false;
    return IsStaticF32(n.output(0), 4);
  }

  Status Visit(Node& n) {
    if (n.domain.empty() && n.op_type == "Conv") return VisitConv(n);
    if (n.domain == kOpenCannDomain && n.op_type == "FusedConv") return VisitConv(n);
    if (!n.domain.empty() || !SingleOutput(n)) return Status::Ok();
    const std::string& t = n.op_type;
    if (t == "Add" || t == "Sub" || t == "Mul") return VisitBinary(n);
    if (t == "Relu" || t == "Clip" || t == "Sigmoid" || t == "HardSwish" || t == "HardSigmoid" ||
        t == "LeakyRelu" || t == "Tanh") {
      if (!IsBlocked(n.input(0)) || n.input(0)->shape != n.output(0)->shape) return Status::Ok();
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (n.inputs[i] && !n.inputs[i]->constant) return Status::Ok();  // Clip bounds
      n.inputs[0] = BlockedInput(n.inputs[0]);
      TakeOutput(n);
      return Status::Ok();
    }
    if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool") {
      if (!IsBlocked(n.input(0))) return Status::Ok();
      if (t == "MaxPool" && n.GetInt("storage_order", 0) != 0) return Status::Ok();
      if (t != "GlobalAveragePool" && n.GetInts("kernel_shape").size() != 2) return Status::Ok();
      n.inputs[0] = BlockedInput(n.inputs[0]);
      n.outputs.resize(1);
      MakeOurs(n, t == "MaxPool" ? "NchwcMaxPool" : t == "AveragePool" ? "NchwcAveragePool"
                                                                       : "NchwcGlobalAveragePool");
      TakeOutput(n);
      return Status::Ok();
    }
    if (t == "Concat") return VisitConcat(n);
    if (t == "BatchNormalization") return VisitBatchNorm(n);
    return Status::Ok();
  }

  // Inference BatchNormalization of a blocked value (one that no conv before it
  // absorbed: DenseNet's and pre-activation ResNets' BN -> Relu -> Conv) is a
  // per-channel affine map y = s x + t, s = scale / sqrt(var + eps),
  // t = B - mean s: a depthwise 1x1 NchwcConv with weights s and bias t,
  // which also takes a Relu that alone reads its output. Left NCHW, it cut
  // DenseNet-121's region at each of its 58 dense layers: a reorder out before
  // every BatchNormalization and one back in before every conv (6.9 of 53 ms).
  Status VisitBatchNorm(Node& n) {
    Value* x = n.input(0);
    if (!IsBlocked(x) || !IsStaticF32(x, 4) || n.output(0)->shape != x->shape || n.inputs.size() != 5) {
      return Status::Ok();
    }
    if (n.GetInt("training_mode", 0) != 0) return Status::Ok();
    const int64_t c = x->shape[1];
    const float* scale = ConstantFloats(n.input(1), c);
    const float* beta = ConstantFloats(n.input(2), c);
    const float* mean = ConstantFloats(n.input(3), c);
    const float* var = ConstantFloats(n.input(4), c);
    if (c <= 0 || !scale || !beta || !mean || !var) return Status::Ok();
    const double eps = n.GetFloat("epsilon", 1e-5f);
    TensorData w = TensorData::Allocate(static_cast<size_t>(c) * sizeof(float));
    TensorData b = TensorData::Allocate(static_cast<size_t>(c) * sizeof(float));
    float* wd = reinterpret_cast<float*>(w.mutable_data());
    float* bd = reinterpret_cast<float*>(b.mutable_data());
    for (int64_t i = 0; i < c; ++i) {
      // Double: var + eps may be tiny and scale large (as fold-conv-batchnorm).
      const double si = static_cast<double>(scale[i]) / std::sqrt(static_cast<double>(var[i]) + eps);
      wd[i] = static_cast<float>(si);
      bd[i] = static_cast<float>(beta[i] - mean[i] * si);
    }
    Value* wv = g_.AddConstant(g_.UniqueName(n.name + "_scale_dw"), DataType::kFloat32, {c, 1, 1, 1}, std::move(w));
    Value* bv = g_.AddConstant(g_.UniqueName(n.name + "_shift_dw"), DataType::kFloat32, {c}, std::move(b));
    // A Relu that is the only reader of the output (not a graph output) fuses.
    Node* relu = nullptr;
    if (!g_.IsGraphOutput(n.output(0)) && CountUses(g_, n.output(0)) == 1)
      for (auto& m : g_.nodes())
        if (m->domain.empty() && m->op_type == "Relu" && m->inputs.size() == 1 && m->input(0) == n.output(0) &&
            m->outputs.size() == 1 && IsStaticF32(m->output(0), 4))
          relu = m.get();
    n.inputs = {BlockedInput(x), wv, bv};
    n.attrs.clear();
    MakeOurs(n, "NchwcConv");
    n.SetInt("group", c);
    n.SetInts("kernel_shape", {1, 1});
    if (relu) {
      n.SetString("activation", "Relu");
      Value* dead = n.outputs[0];
      n.outputs[0] = relu->outputs[0];
      relu->outputs[0]->producer = &n;
      dead->producer = nullptr;
      relu->outputs[0] = nullptr;
      relu->inputs.clear();
      fused_.insert(relu);  // removed after the walk
    }
    TakeOutput(n);
    return Status::Ok();
  }

  static bool ConvEligible(const Node& n) {
    const bool conv = (n.domain.empty() && n.op_type == "Conv") ||
                      (n.domain == kOpenCannDomain && n.op_type == "FusedConv");
    if (!conv) return false;
    const Value* x = n.input(0);
    const Value* w = n.input(1);
    const Value* b = n.input(2);
    const Value* z = n.input(3);
    if (!IsStaticF32(x, 4) || !IsStaticF32(n.output(0), 4) || !w || !w->constant || !IsStaticF32(w, 4))
      return false;
    if (b && (!b->constant || b->dtype != DataType::kFloat32)) return false;
    if (z && (!IsStaticF32(z, 4) || z->shape != n.output(0)->shape)) return false;
    if (n.inputs.size() > 4 || n.outputs.size() != 1 || n.HasAttr("opencann_precision")) return false;
    if (n.domain == kOpenCannDomain && !ActivationFromNode(n).ok()) return false;
    const int64_t group = n.GetInt("group", 1), c_in = x->shape[1], c_out = w->shape[0];
    const bool depthwise = group > 1 && group == c_in && group == c_out && w->shape[1] == 1;
    // (3x3 stride-1 convs that Winograd suits run it inside NchwcConv, on the
    // blocked layout.)
    return group == 1 || depthwise;
  }

  Status VisitConv(Node& n) {
    if (!ConvEligible(n)) return Status::Ok();
    Value* x = n.input(0);
    Value* z = n.input(3);
    const bool depthwise = n.GetInt("group", 1) > 1;
    const int64_t c_in = x->shape[1];
    const bool nchw_input = !depthwise && !IsBlocked(x) && c_in <= kMaxNchwInputChannels;
    if (!nchw_input) n.inputs[0] = BlockedInput(x);
    if (z) n.inputs[3] = BlockedInput(z);
    MakeOurs(n, "NchwcConv");
    if (nchw_input) n.SetInt("nchw_input", 1);
    TakeOutput(n);
    return Status::Ok();
  }

  // Element-wise on equal shapes only (no broadcast), one operand already blocked.
  // Also per-channel operands [N or 1, C, 1, 1] (squeeze-and-excitation
  // gates): blocked as [N or 1, C/c, 1, 1, c], they broadcast the same way.
  static bool SameOrPerChannel(const Value& in, const Value& out) {
    if (in.shape == out.shape) return true;
    return (in.shape[0] == out.shape[0] || in.shape[0] == 1) && in.shape[1] == out.shape[1] && in.shape[2] == 1 &&
           in.shape[3] == 1;
  }

  Status VisitBinary(Node& n) {
    if (n.inputs.size() != 2 || !IsStaticF32(n.input(0), 4) || !IsStaticF32(n.input(1), 4)) return Status::Ok();
    const Value& out = *n.output(0);
    if (!SameOrPerChannel(*n.input(0), out) || !SameOrPerChannel(*n.input(1), out)) return Status::Ok();
    if (!IsBlocked(n.input(0)) && !IsBlocked(n.input(1))) return Status::Ok();
    for (auto& in : n.inputs) in = BlockedInput(in);
    TakeOutput(n);
    return Status::Ok();
  }

  // Channel concat of blocked inputs whose channel counts fill whole blocks.
  Status VisitConcat(Node& n) {
    const int64_t axis = n.GetInt("axis", 0);
    if (axis != 1 && axis != -3) return Status::Ok();
    for (const Value* in : n.inputs)
      if (!IsBlocked(in) || in->shape[1] % block_ != 0) return Status::Ok();
    for (auto& in : n.inputs) in = BlockedInput(in);
    n.SetInt("axis", 1);
    TakeOutput(n);
    return Status::Ok();
  }

  Graph& g_;
  int block_;
  std::unordered_map<const Value*, Value*> blocked_;    // NCHW value -> its blocked form
  std::unordered_map<const Value*, Value*> reordered_;  // outside value -> its reorder
  std::unordered_set<const Node*> fused_;               // fused away: not visited, removed after the walk
};

}  // namespace

bool NchwcLayoutEnabled() {
  const char* env = std::getenv("OPENCANN_NCHWC");
  if (env && *env) return std::string(env) != "0";
  return kNchwcByDefault;
}

Status RewriteToNchwc(Graph& graph, int block, int min_convs) {
  if (block != 8 && block != 16) return Status::Ok();
  Rewriter r(graph, block);
  return r.Run(min_convs);
}

Status RunNchwcLayout(Graph& graph, const CompileOptions& options) {
  if (!NchwcLayoutEnabled() || IsDynamicGraph(graph)) return Status::Ok();
  // bf16 modes keep Conv for the bf16 GEMM kernels, unless this CPU has none:
  // then the marked convs run float32 anyway, and the graph should be the one
  // force_fp32 gives.
  if (gemm::IsBf16PrecisionMode(options.precision_mode) && gemm::DefaultBf16Ukernel() != nullptr)
    return Status::Ok();
  // OPENCANN_NCHWC=all also blocks lone convs (for testing the kernels on
  // every conv a model has, the conformance suite's included).
  const char* env = std::getenv("OPENCANN_NCHWC");
  const bool all = env && std::string(env) == "all";
  return RewriteToNchwc(graph, nchwc::BlockForIsa(SelectedIsa()), all ? 1 : kMinConvs);
}

}  // namespace oc
