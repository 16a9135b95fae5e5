// ai.onnx.ml TreeEnsemble (opset 5): X [N, F] -> Y [N, n_targets]. The trees
// arrive as parallel attribute arrays (nodes_* for interior nodes, leaf_* for
// leaves); the kernel factory validates them once and flattens them into one
// node table whose child links encode leaves as negative numbers, so a
// prediction is a bounded walk per tree with no look-ups by name.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum Mode : uint8_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
enum Aggregate { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };
enum PostTransform { kNone = 0, kSoftmax = 1, kLogistic = 2, kSoftmaxZero = 3, kProbit = 4 };

// A child link: >= 0 is an interior node index, < 0 is leaf ~link.
struct TreeNode {
  uint8_t mode = kLeq;
  bool missing_true = false;
  int64_t feature = 0;
  double split = 0;
  int64_t member_begin = 0, member_end = 0;  // range in members_ (kMember)
  int64_t true_link = 0, false_link = 0;
};

// Values of a float/double tensor attribute (or a plain floats attribute) as double.
Expected<std::vector<double>> AttrDoubles(const Node& n, const char* name, bool required) {
  const Attribute* a = n.FindAttr(name);
  std::vector<double> out;
  if (!a) {
    if (required) return InvalidArgument(n.Describe(), ": required attribute '", name, "' is missing");
    return out;
  }
  if (a->kind == Attribute::Kind::kFloats) {
    out.assign(a->floats.begin(), a->floats.end());
  } else if (a->kind == Attribute::Kind::kTensor && a->tensor_dtype == DataType::kFloat32) {
    const size_t k = a->tensor.size() / sizeof(float);
    for (size_t i = 0; i < k; ++i) out.push_back(a->tensor.as<float>()[i]);
  } else if (a->kind == Attribute::Kind::kTensor && a->tensor_dtype == DataType::kFloat64) {
    const size_t k = a->tensor.size() / sizeof(double);
    for (size_t i = 0; i < k; ++i) out.push_back(a->tensor.as<double>()[i]);
  } else {
    return InvalidArgument(n.Describe(), ": attribute '", name, "' must be a float or double tensor");
  }
  return out;
}

Expected<std::vector<int64_t>> NodeModes(const Node& n) {
  const Attribute* a = n.FindAttr("nodes_modes");
  if (!a) return InvalidArgument(n.Describe(), ": required attribute 'nodes_modes' is missing");
  std::vector<int64_t> out;
  if (a->kind == Attribute::Kind::kInts) return a->ints;
  if (a->kind != Attribute::Kind::kTensor || DataTypeSize(a->tensor_dtype) == 0)
    return InvalidArgument(n.Describe(), ": nodes_modes must be a uint8 tensor");
  const size_t es = DataTypeSize(a->tensor_dtype);
  for (size_t i = 0; i < a->tensor.size() / es; ++i) {
    int64_t v = 0;
    if (es == 1) v = a->tensor.data()[i];
    else if (es == 4) v = a->tensor.as<int32_t>()[i];
    else if (es == 8) v = a->tensor.as<int64_t>()[i];
    else return InvalidArgument(n.Describe(), ": nodes_modes has an unsupported element type");
    out.push_back(v);
  }
  return out;
}

struct Forest {
  std::vector<TreeNode> nodes;
  std::vector<double> members;
  std::vector<int64_t> roots;  // links, like child links
  std::vector<double> leaf_weights;
  std::vector<int64_t> leaf_targets;
  int64_t n_targets = 0;
  int aggregate = kSum;
  int post = kNone;
};

// Inverse of erf on (-1, 1): a closed-form start refined by Newton steps on std::erf.
double ErfInv(double y) {
  if (y <= -1.0) return -std::numeric_limits<double>::infinity();
  if (y >= 1.0) return std::numeric_limits<double>::infinity();
  const double a = 0.147, ln = std::log(1.0 - y * y), t = 2.0 / (std::numbers::pi * a) + ln / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), y);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}

Expected<Forest> BuildForest(const Node& n, int64_t num_features) {
  Forest f;
  const auto feat = n.GetInts("nodes_featureids");
  const auto tids = n.GetInts("nodes_truenodeids"), fids = n.GetInts("nodes_falsenodeids");
  const auto tleaf = n.GetInts("nodes_trueleafs"), fleaf = n.GetInts("nodes_falseleafs");
  const auto missing = n.GetInts("nodes_missing_value_tracks_true");
  OC_ASSIGN_OR_RETURN(auto modes, NodeModes(n));
  OC_ASSIGN_OR_RETURN(auto splits, AttrDoubles(n, "nodes_splits", true));
  OC_ASSIGN_OR_RETURN(f.leaf_weights, AttrDoubles(n, "leaf_weights", true));
  OC_ASSIGN_OR_RETURN(auto members, AttrDoubles(n, "membership_values", false));
  f.leaf_targets = n.GetInts("leaf_targetids");
  f.roots = n.GetInts("tree_roots");
  f.n_targets = n.GetInt("n_targets", 1);
  f.aggregate = static_cast<int>(n.GetInt("aggregate_function", kSum));
  f.post = static_cast<int>(n.GetInt("post_transform", kNone));
  const size_t count = feat.size();
  if (tids.size() != count || fids.size() != count || tleaf.size() != count || fleaf.size() != count ||
      modes.size() != count || splits.size() != count || (!missing.empty() && missing.size() != count))
    return InvalidArgument(n.Describe(), ": every nodes_* attribute must have ", count, " entries (nodes_featureids)");
  if (f.leaf_targets.size() != f.leaf_weights.size())
    return InvalidArgument(n.Describe(), ": leaf_targetids has ", f.leaf_targets.size(), " entries, leaf_weights ",
                           f.leaf_weights.size());
  if (f.n_targets <= 0) return InvalidArgument(n.Describe(), ": n_targets must be > 0");
  if (f.aggregate < kAverage || f.aggregate > kMax)
    return InvalidArgument(n.Describe(), ": aggregate_function ", f.aggregate, " is not one of 0..3");
  if (f.post < kNone || f.post > kProbit) return InvalidArgument(n.Describe(), ": post_transform ", f.post, " is not one of 0..4");
  for (int64_t t : f.leaf_targets)
    if (t < 0 || t >= f.n_targets)
      return InvalidArgument(n.Describe(), ": leaf target id ", t, " is outside [0, n_targets = ", f.n_targets, ")");
  const int64_t nodes = static_cast<int64_t>(count), leaves = static_cast<int64_t>(f.leaf_weights.size());
  auto link = [&](int64_t id, bool leaf, const char* what, size_t i) -> Expected<int64_t> {
    if (leaf ? (id < 0 || id >= leaves) : (id < 0 || id >= nodes))
      return InvalidArgument(n.Describe(), ": ", what, "[", i, "] = ", id, " is outside the ", leaf ? "leaves" : "nodes");
    return leaf ? ~id : id;
  };
  size_t member_pos = 0;
  for (size_t i = 0; i < count; ++i) {
    TreeNode t;
    if (modes[i] < kLeq || modes[i] > kMember)
      return InvalidArgument(n.Describe(), ": nodes_modes[", i, "] = ", modes[i], " is not one of 0..6");
    t.mode = static_cast<uint8_t>(modes[i]);
    t.feature = feat[i];
    if (t.feature < 0 || t.feature >= num_features)
      return InvalidArgument(n.Describe(), ": nodes_featureids[", i, "] = ", t.feature, " is outside the ",
                             num_features, " input features");
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    OC_ASSIGN_OR_RETURN(t.true_link, link(tids[i], tleaf[i] != 0, "nodes_truenodeids", i));
    OC_ASSIGN_OR_RETURN(t.false_link, link(fids[i], fleaf[i] != 0, "nodes_falsenodeids", i));
    if (t.mode == kMember) {
      // This node's set: the next NaN-terminated run of membership_values.
      t.member_begin = static_cast<int64_t>(f.members.size());
      while (member_pos < members.size() && !std::isnan(members[member_pos])) f.members.push_back(members[member_pos++]);
      if (member_pos >= members.size())
        return InvalidArgument(n.Describe(), ": membership_values has no NaN-terminated set for node ", i);
      ++member_pos;
      t.member_end = static_cast<int64_t>(f.members.size());
    }
    f.nodes.push_back(t);
  }
  for (int64_t& r : f.roots) {
    if (r < 0 || r >= nodes) return InvalidArgument(n.Describe(), ": tree root ", r, " is outside the nodes");
    const TreeNode& t = f.nodes[r];
    // A one-leaf tree: both branches name the same leaf.
    if (t.true_link < 0 && t.true_link == t.false_link) r = t.true_link;
  }
  return f;
}

template <typename T>
class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(std::string who, Forest f, int64_t rows, int64_t features)
      : who_(std::move(who)), f_(std::move(f)), rows_(rows), features_(features) {}
  size_t ScratchBytes() const override { return static_cast<size_t>(f_.n_targets) * sizeof(double); }
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    double* acc = static_cast<double*>(io.scratch);
    const int64_t nt = f_.n_targets;
    const double init = f_.aggregate == kMin   ? static_cast<double>(std::numeric_limits<T>::max())
                        : f_.aggregate == kMax ? static_cast<double>(std::numeric_limits<T>::lowest())
                                               : 0.0;
    const double trees = static_cast<double>(f_.roots.size());
    for (int64_t r = 0; r < rows_; ++r) {
      const T* row = x + r * features_;
      std::fill(acc, acc + nt, init);
      for (int64_t root : f_.roots) {
        int64_t at = root;
        for (size_t steps = 0; at >= 0; ++steps) {
          if (steps > f_.nodes.size()) return InvalidArgument(who_, ": the trees contain a cycle");
          const TreeNode& t = f_.nodes[at];
          at = Decide(t, static_cast<double>(row[t.feature])) ? t.true_link : t.false_link;
        }
        const int64_t leaf = ~at;
        const double w = f_.leaf_weights[leaf];
        double& a = acc[f_.leaf_targets[leaf]];
        switch (f_.aggregate) {
          case kSum: a += w; break;
          case kAverage: a += w / trees; break;
          case kMin: a = std::min(a, w); break;
          case kMax: a = std::max(a, w); break;
        }
      }
      PostTransform(acc, nt);
      for (int64_t k = 0; k < nt; ++k) y[r * nt + k] = static_cast<T>(acc[k]);
    }
    return Status::Ok();
  }

 private:
  bool Decide(const TreeNode& t, double v) const {
    if (std::isnan(v) && t.missing_true) return true;
    switch (t.mode) {
      case kLeq: return v <= t.split;
      case kLt: return v < t.split;
      case kGte: return v >= t.split;
      case kGt: return v > t.split;
      case kEq: return v == t.split;
      case kNeq: return v != t.split;
      default:
        for (int64_t i = t.member_begin; i < t.member_end; ++i)
          if (f_.members[i] == v) return true;
        return false;
    }
  }
  void PostTransform(double* v, int64_t n) const {
    if (f_.post == kProbit) {
      for (int64_t i = 0; i < n; ++i) v[i] = std::numbers::sqrt2 * ErfInv(2.0 * v[i] - 1.0);
    } else if (f_.post == kLogistic) {
      for (int64_t i = 0; i < n; ++i) v[i] = 1.0 / (1.0 + std::exp(-v[i]));
    } else if (f_.post == kSoftmax || f_.post == kSoftmaxZero) {
      // SOFTMAX_ZERO leaves exact zeros at zero and normalises the rest.
      const bool zero = f_.post == kSoftmaxZero;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i)
        if (!zero || v[i] != 0.0) mx = std::max(mx, v[i]);
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        v[i] = zero && v[i] == 0.0 ? 0.0 : std::exp(v[i] - mx);
        sum += v[i];
      }
      if (sum > 0.0)
        for (int64_t i = 0; i < n; ++i) v[i] /= sum;
    }
  }

  std::string who_;
  Forest f_;
  int64_t rows_, features_;
};

Status InferTreeEnsemble(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (x.shape.size() != 2) return InvalidArgument(node.Describe(), ": X must be [N, F], got ", x.ShapeString());
  const int64_t nt = node.GetInt("n_targets", 1);
  SetOutput(node, 0, x.dtype, {x.shape[0], nt});
  return Status::Ok();
}

Expected<KernelPtr> MakeTreeEnsemble(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  if (x.shape.size() != 2) return InvalidArgument(n.Describe(), ": X must be [N, F], got ", x.ShapeString());
  OC_ASSIGN_OR_RETURN(Forest f, BuildForest(n, x.shape[1]));
  switch (x.dtype) {
    case DataType::kFloat32:
      return KernelPtr(new TreeEnsembleKernel<float>(n.Describe(), std::move(f), x.shape[0], x.shape[1]));
    case DataType::kFloat64:
      return KernelPtr(new TreeEnsembleKernel<double>(n.Describe(), std::move(f), x.shape[0], x.shape[1]));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(x.dtype), " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterTreeEnsembleOps(OpRegistry& r) {
  r.Register({.domain = "ai.onnx.ml", .op_type = "TreeEnsemble", .min_opset = 5, .infer = InferTreeEnsemble,
              .kernels = CpuKernel(MakeTreeEnsemble)});
}

}  // namespace oc
