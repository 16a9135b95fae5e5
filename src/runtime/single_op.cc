#include "runtime/single_op.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "ops/cpu/common/tensor_util.h"
#include "ops/op_registry.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

constexpr int kMaxOpset = 28;  // the newest ONNX opset the parser accepts

// The newest opset at which the default domain implements `op`, or 0.
int LatestOpset(const std::string& op) {
  const OpRegistry& reg = OpRegistry::Global();
  for (int v = kMaxOpset; v >= 1; --v)
    if (reg.Find("", op, v)) return v;
  return 0;
}

class OpBuilder {
 public:
  OpBuilder(Graph& g, const std::map<std::string, Attribute>& attrs) : g_(g), attrs_(attrs) {}

  const Attribute* Attr(const std::string& n) const {
    auto it = attrs_.find(n);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  int64_t Int(const std::string& n, int64_t def) const {
    const Attribute* a = Attr(n);
    return a && a->kind == Attribute::Kind::kInt ? a->i : def;
  }
  std::vector<int64_t> Ints(const std::string& n) const {
    const Attribute* a = Attr(n);
    if (!a) return {};
    if (a->kind == Attribute::Kind::kInts) return a->ints;
    if (a->kind == Attribute::Kind::kInt) return {a->i};
    return {};
  }
  std::string Str(const std::string& n, const std::string& def) const {
    const Attribute* a = Attr(n);
    return a && a->kind == Attribute::Kind::kString ? a->s : def;
  }

  // Adds a node of the default domain at `opset` (0: the newest the op has).
  Expected<Node*> Add(const std::string& op, std::vector<Value*> ins, size_t num_outs, int opset = 0) {
    if (!opset) opset = LatestOpset(op);
    const OpDef* def = opset ? OpRegistry::Global().Find("", op, opset) : nullptr;
    if (!def) return NotFound("op type '", op, "' is not implemented");
    std::vector<Value*> outs;
    for (size_t i = 0; i < num_outs; ++i) outs.push_back(g_.AddValue(g_.UniqueName(op + "_out")));
    Node* n = g_.AddNode(op, g_.UniqueName(op), std::move(ins), std::move(outs));
    n->opset = opset;
    int& imported = g_.opset_imports[""];
    imported = std::max(imported, opset);
    defs_.emplace_back(n, def);
    return n;
  }
  Value* Int64s(const std::vector<int64_t>& v) {
    auto data = TensorData::Copy(v.data(), v.size() * sizeof(int64_t));
    return g_.AddConstant(g_.UniqueName("const"), DataType::kInt64, {static_cast<int64_t>(v.size())}, std::move(data));
  }
  Value* Scalar(DataType t, double v) {
    TensorData data = TensorData::Allocate(DataTypeSize(t));
    if (t == DataType::kFloat32) {
      float f = static_cast<float>(v);
      std::memcpy(data.mutable_data(), &f, sizeof f);
    } else if (t == DataType::kFloat64) {
      std::memcpy(data.mutable_data(), &v, sizeof v);
    } else {
      return nullptr;
    }
    return g_.AddConstant(g_.UniqueName("const"), t, {}, std::move(data));
  }
  // Older-opset forms rewritten as the parser does.
  Status Canonicalize() {
    for (auto& [n, def] : defs_)
      if (def->canonicalize) OC_RETURN_IF_ERROR(def->canonicalize(*n, g_));
    return Status::Ok();
  }

 private:
  Graph& g_;
  const std::map<std::string, Attribute>& attrs_;
  std::vector<std::pair<Node*, const OpDef*>> defs_;
};

// The caller's attributes on `n`, all of them (the op's infer function names
// the ones it does not know).
void CopyAttrs(Node* n, const std::map<std::string, Attribute>& attrs,
               std::initializer_list<const char*> skip = {}) {
  for (const auto& [name, a] : attrs) {
    if (std::find_if(skip.begin(), skip.end(), [&](const char* s) { return name == s; }) != skip.end()) continue;
    n->attrs[name] = a;
  }
}

Value* In(const std::vector<Value*>& ins, size_t i) { return i < ins.size() ? ins[i] : nullptr; }

// CANN op types whose name or attributes differ from ONNX's. Each builds the
// equivalent nodes and returns the outputs; `handled` false: not a CANN alias.
Expected<std::vector<Value*>> BuildCann(const std::string& op, OpBuilder& b, const std::vector<Value*>& ins,
                                        const std::map<std::string, Attribute>& attrs, size_t num_outs, int format0,
                                        bool* handled) {
  *handled = true;
  // The attributes each CANN form takes: another name is an error, not a default.
  static const std::map<std::string, std::set<std::string>> kKnown = {
      {"RealDiv", {}}, {"Maximum", {}}, {"Minimum", {}}, {"LogicalAnd", {}}, {"LogicalOr", {}},
      {"LogicalNot", {}}, {"Square", {}}, {"Relu6", {}},
      {"MatMul", {"transpose_x1", "transpose_x2", "offset_x"}},
      {"MatMulV2", {"transpose_x1", "transpose_x2", "offset_x"}},
      {"BatchMatMul", {"adj_x1", "adj_x2", "offset_x"}}, {"BatchMatMulV2", {"adj_x1", "adj_x2", "offset_x"}},
      {"SoftmaxV2", {"axes", "half_to_float"}}, {"TransposeD", {"perm"}},
      {"ConcatD", {"concat_dim", "N"}}, {"ConcatV2D", {"concat_dim", "N"}},
      {"ReduceSumD", {"axes", "keep_dims"}}, {"ReduceMeanD", {"axes", "keep_dims"}},
      {"ReduceMaxD", {"axes", "keep_dims"}}, {"ReduceMinD", {"axes", "keep_dims"}},
      {"ReduceProdD", {"axes", "keep_dims"}},
      {"Conv2D", {"strides", "pads", "dilations", "groups", "data_format", "offset_x", "padding"}}};
  // MatMul without CANN attributes is ONNX's MatMul (N-D); Cast and LeakyRelu
  // are CANN forms only with dst_type / negative_slope.
  const bool onnx_matmul = op == "MatMul" && !b.Attr("transpose_x1") && !b.Attr("transpose_x2") && !b.Attr("offset_x");
  if (auto it = kKnown.find(op); it != kKnown.end() && !(onnx_matmul && attrs.empty())) {
    for (const auto& [name, a] : attrs)
      if (!it->second.count(name)) {
        std::string known;
        for (const std::string& k : it->second) known += (known.empty() ? "" : ", ") + k;
        return InvalidArgument("attribute '", name, "' is not one of CANN ", op, "'s (",
                               known.empty() ? std::string("it has none") : known, ")");
      }
    if (b.Int("offset_x", 0) != 0) return NotSupported("offset_x (quantized input) is not supported");
  }
  auto one = [&](const std::string& onnx_op, std::vector<Value*> args,
                 std::initializer_list<const char*> skip = {}) -> Expected<std::vector<Value*>> {
    OC_ASSIGN_OR_RETURN(Node * n, b.Add(onnx_op, std::move(args), num_outs));
    CopyAttrs(n, attrs, skip);
    return n->outputs;
  };
  static const std::map<std::string, std::string> kRenamed = {
      {"RealDiv", "Div"}, {"Maximum", "Max"}, {"Minimum", "Min"},
      {"LogicalAnd", "And"}, {"LogicalOr", "Or"}, {"LogicalNot", "Not"}};
  if (auto it = kRenamed.find(op); it != kRenamed.end()) return one(it->second, ins);
  if (op == "Square") return one("Mul", {In(ins, 0), In(ins, 0)});
  if (op == "Relu6") {
    if (!In(ins, 0)) return InvalidArgument("Relu6 needs an input");
    Value* lo = b.Scalar(In(ins, 0)->dtype, 0.0);
    Value* hi = b.Scalar(In(ins, 0)->dtype, 6.0);
    if (!lo) return NotSupported("Relu6 of ", DataTypeName(In(ins, 0)->dtype), " (float and double only)");
    return one("Clip", {In(ins, 0), lo, hi});
  }
  auto only = [&](std::initializer_list<const char*> names) -> Status {
    for (const auto& [name, a] : attrs)
      if (std::none_of(names.begin(), names.end(), [&](const char* n) { return name == n; }))
        return InvalidArgument("attribute '", name, "' is not one of CANN ", op, "'s");
    return Status::Ok();
  };
  if (op == "LeakyRelu" && b.Attr("negative_slope")) {
    OC_RETURN_IF_ERROR(only({"negative_slope"}));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("LeakyRelu", ins, num_outs));
    const Attribute* a = b.Attr("negative_slope");
    n->SetFloat("alpha", a->kind == Attribute::Kind::kFloat ? a->f : static_cast<float>(a->i));
    return n->outputs;
  }
  if (op == "MatMul" || op == "MatMulV2") {
    const bool ta = b.Int("transpose_x1", 0) != 0, tb = b.Int("transpose_x2", 0) != 0;
    if (!ta && !tb && !In(ins, 2)) {
      OC_ASSIGN_OR_RETURN(Node * n, b.Add("MatMul", {In(ins, 0), In(ins, 1)}, num_outs));
      return n->outputs;
    }
    std::vector<Value*> args = {In(ins, 0), In(ins, 1)};
    if (In(ins, 2)) args.push_back(In(ins, 2));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Gemm", args, num_outs));
    n->SetInt("transA", ta);
    n->SetInt("transB", tb);
    return n->outputs;
  }
  if (op == "BatchMatMul" || op == "BatchMatMulV2") {
    std::vector<Value*> xs = {In(ins, 0), In(ins, 1)};
    const char* adj[2] = {"adj_x1", "adj_x2"};
    for (int k = 0; k < 2; ++k) {
      if (!xs[k]) return InvalidArgument(op, " needs two inputs");
      if (!b.Int(adj[k], 0)) continue;
      const int64_t rank = static_cast<int64_t>(xs[k]->shape.size());
      if (rank < 2) return InvalidArgument(op, ": ", adj[k], " needs an input of rank >= 2");
      std::vector<int64_t> perm(rank);
      for (int64_t d = 0; d < rank; ++d) perm[d] = d;
      std::swap(perm[rank - 1], perm[rank - 2]);
      OC_ASSIGN_OR_RETURN(Node * t, b.Add("Transpose", {xs[k]}, 1));
      t->SetInts("perm", perm);
      xs[k] = t->outputs[0];
    }
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("MatMul", xs, 1));
    if (!In(ins, 2)) return n->outputs;
    OC_ASSIGN_OR_RETURN(Node * add, b.Add("Add", {n->outputs[0], In(ins, 2)}, num_outs));
    return add->outputs;
  }
  if (op == "Cast" && b.Attr("dst_type")) {
    OC_RETURN_IF_ERROR(only({"dst_type", "truncate"}));
    const DataType to = DataTypeFromAcl(static_cast<int>(b.Int("dst_type", -1)));
    if (to == DataType::kUndefined)
      return InvalidArgument("Cast: dst_type ", b.Int("dst_type", -1), " is not a supported aclDataType");
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Cast", ins, num_outs));
    n->SetInt("to", static_cast<int64_t>(to));
    return n->outputs;
  }
  if (op == "SoftmaxV2") {
    std::vector<int64_t> axes = b.Ints("axes");
    if (axes.size() > 1) return NotSupported("SoftmaxV2 over ", axes.size(), " axes (one axis only)");
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Softmax", ins, num_outs));
    n->SetInt("axis", axes.empty() ? -1 : axes[0]);
    return n->outputs;
  }
  if (op == "TransposeD") return one("Transpose", ins);
  if (op == "ConcatD" || op == "ConcatV2D") {
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Concat", ins, num_outs));
    n->SetInt("axis", b.Int("concat_dim", 0));
    return n->outputs;
  }
  static const std::map<std::string, std::string> kReduceD = {
      {"ReduceSumD", "ReduceSum"}, {"ReduceMeanD", "ReduceMean"}, {"ReduceMaxD", "ReduceMax"},
      {"ReduceMinD", "ReduceMin"}, {"ReduceProdD", "ReduceProd"}};
  if (auto it = kReduceD.find(op); it != kReduceD.end()) {
    // Opset 18: axes as an input (every Reduce op takes it so there).
    std::vector<Value*> args = {In(ins, 0)};
    std::vector<int64_t> axes = b.Ints("axes");
    if (!axes.empty()) args.push_back(b.Int64s(axes));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add(it->second, args, num_outs, 18));
    n->SetInt("keepdims", b.Int("keep_dims", 0));
    return n->outputs;
  }
  if (op == "Conv2D") {
    // CANN's default layout is NHWC; without the attribute the input desc's format decides.
    const std::string fmt = b.Attr("data_format") ? b.Str("data_format", "") : format0 == 0 ? "NCHW" : "NHWC";
    if (fmt != "NCHW")
      return NotSupported("Conv2D with data_format ", fmt, " (NCHW only: set data_format=NCHW, or give the input "
                          "desc ACL_FORMAT_NCHW)");
    if (!b.Str("padding", "").empty())
      return NotSupported("Conv2D padding '", b.Str("padding", ""), "' (give explicit pads)");
    std::vector<int64_t> s = b.Ints("strides"), p = b.Ints("pads"), d = b.Ints("dilations");
    if (!s.empty() && s.size() != 4) return InvalidArgument("Conv2D: strides needs 4 values (N, C, H, W)");
    if (!p.empty() && p.size() != 4) return InvalidArgument("Conv2D: pads needs 4 values (top, bottom, left, right)");
    if (!d.empty() && d.size() != 4) return InvalidArgument("Conv2D: dilations needs 4 values (N, C, H, W)");
    std::vector<Value*> args = {In(ins, 0), In(ins, 1)};
    if (In(ins, 2)) args.push_back(In(ins, 2));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Conv", args, num_outs));
    if (!s.empty()) n->SetInts("strides", {s[2], s[3]});
    if (!p.empty()) n->SetInts("pads", {p[0], p[2], p[1], p[3]});
    if (!d.empty()) n->SetInts("dilations", {d[2], d[3]});
    n->SetInt("group", b.Int("groups", 1));
    return n->outputs;
  }
  *handled = false;
  return std::vector<Value*>{};
}


// 64-bit FNV-1a from two seeds: a 128-bit fingerprint of constant values.
std::string Fingerprint(const std::vector<uint8_t>& bytes) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (uint8_t b : bytes) {
    h1 = (h1 ^ b) * 0x100000001b3ull;
    h2 = (h2 ^ static_cast<uint8_t>(b + 0x5b)) * 0x100000001b3ull;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

void AppendTensor(std::string& key, const SingleOpTensor& t) {
  key += StrCat(static_cast<int>(t.dtype), "/", t.format, ":");
  for (int64_t v : t.dims) key += StrCat(v, ",");
  if (t.const_value) key += StrCat("=", t.const_value->size(), "#", Fingerprint(*t.const_value));
  key += ";";
}

// Length-prefixed: no string can imitate the key's separators.
void AppendString(std::string& key, const std::string& s) { key += StrCat(s.size(), "'", s); }

// Floats by their bits: 0.1 and 0.1000001 must not share a key.
std::string FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  char buf[12];
  std::snprintf(buf, sizeof buf, "%08x", u);
  return buf;
}

SingleOpResult Error(SingleOpErrorKind kind, const std::string& op, const std::string& what) {
  SingleOpResult r;
  r.error = kind;
  r.message = StrCat(op, ": ", what);
  return r;
}

}  // namespace

std::string SingleOpKey(const SingleOpSpec& spec) {
  std::string key;
  AppendString(key, spec.op_type);
  key += "|";
  for (const SingleOpTensor& t : spec.inputs) AppendTensor(key, t);
  key += "|";
  for (const SingleOpTensor& t : spec.outputs) AppendTensor(key, t);
  key += "|";
  for (const auto& [name, a] : spec.attrs) {
    AppendString(key, name);
    key += StrCat(spec.acl_type_attrs.count(name) ? "T" : "", "=", static_cast<int>(a.kind), ":", a.i, ":",
                  FloatBits(a.f), ":");
    AppendString(key, a.s);
    key += StrCat(":", a.ints.size(), ":");
    for (int64_t v : a.ints) key += StrCat(v, ",");
    key += StrCat(":", a.floats.size(), ":");
    for (float v : a.floats) key += FloatBits(v) + ",";
    key += StrCat(":", a.strings.size(), ":");
    for (const auto& v : a.strings) AppendString(key, v);
    key += ";";
  }
  return key;
}

namespace {

// The graph of `spec` before compilation: inputs, the op's node(s), outputs.
// Returns an error result, or nothing.
std::optional<SingleOpResult> BuildGraph(const SingleOpSpec& spec, Graph& g, CompiledSingleOp& out) {
  const std::string& op = spec.op_type;
  std::map<std::string, Attribute> attrs = spec.attrs;
  std::vector<Value*> ins;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const SingleOpTensor& t = spec.inputs[i];
    out.in_bytes.push_back(0);
    if (t.dtype == DataType::kUndefined) {  // an absent optional input
      ins.push_back(nullptr);
      continue;
    }
    for (int64_t v : t.dims)
      if (v < 0)
        return Error(SingleOpErrorKind::kUnsupported, op,
                     StrCat("input ", i, ": unknown dims (", v, ") are not supported; give concrete shapes"));
    const std::string name = StrCat("x", i);
    Value* v;
    if (t.const_value) {
      v = g.AddConstant(name, t.dtype, t.dims, TensorData::Copy(t.const_value->data(), t.const_value->size()));
      if (v->ByteSize() != static_cast<int64_t>(t.const_value->size()))
        return Error(SingleOpErrorKind::kInputMismatch, op,
                     StrCat("input ", i, ": the constant holds ", t.const_value->size(), " bytes, its shape ",
                            DimsString(t.dims), " needs ", v->ByteSize()));
    } else {
      v = g.AddValue(name);
      v->dtype = t.dtype;
      v->has_shape = true;
      v->shape = t.dims;
      v->dim_params.assign(t.dims.size(), "");
      if (v->ByteSize() < 0)
        return Error(SingleOpErrorKind::kInputMismatch, op,
                     StrCat("input ", i, ": shape ", DimsString(t.dims), " is too large"));
      g.inputs.push_back(v);
      out.slots.push_back(i);
      out.in_bytes.back() = static_cast<size_t>(v->ByteSize());
    }
    ins.push_back(v);
  }
  const size_t no = spec.outputs.size();
  if (no == 0) return Error(SingleOpErrorKind::kOutputMismatch, op, "no output descriptions were given");
  OpBuilder b(g, attrs);
  bool cann = false;
  const int format0 = spec.inputs.empty() ? -1 : spec.inputs[0].format;
  auto built = BuildCann(op, b, ins, attrs, no, format0, &cann);
  if (built.ok() && !cann) {
    // Attributes set as aclDataType (aclopSetAttrDataType) are ONNX type codes on an ONNX op.
    for (const std::string& name : spec.acl_type_attrs) {
      auto it = attrs.find(name);
      if (it == attrs.end()) continue;
      auto translate = [&](int64_t& v) -> bool {
        const DataType t = DataTypeFromAcl(static_cast<int>(v));
        v = static_cast<int64_t>(t);
        return t != DataType::kUndefined;
      };
      bool ok = true;
      if (it->second.kind == Attribute::Kind::kInt) ok = translate(it->second.i);
      for (int64_t& v : it->second.ints) ok &= translate(v);
      if (!ok)
        return Error(SingleOpErrorKind::kAttrMismatch, op,
                     StrCat("attribute '", name, "' holds an aclDataType the CPU operators lack"));
    }
    auto n = b.Add(op, ins, no);
    if (!n.ok())
      return Error(SingleOpErrorKind::kOpNotFound, op,
                   "the op type is neither an ONNX operator of the CPU library (docs/operators.md) nor one of the "
                   "CANN op types docs/single_op.md lists, nor a custom operator of a package in "
                   "ASCEND_CUSTOM_OPP_PATH");
    CopyAttrs(*n, attrs);
    built = (*n)->outputs;
  }
  if (!built.ok()) {
    const Status& st = built.status();
    return Error(st.code() == StatusCode::kNotFound       ? SingleOpErrorKind::kOpNotFound
                 : st.code() == StatusCode::kNotSupported ? SingleOpErrorKind::kUnsupported
                                                          : SingleOpErrorKind::kAttrMismatch,
                 op, st.message());
  }
  if (built->size() != no)
    return Error(SingleOpErrorKind::kOutputMismatch, op,
                 StrCat("the op has ", built->size(), " outputs, ", no, " were given"));
  g.outputs = *built;
  if (Status st = b.Canonicalize(); !st.ok()) return Error(SingleOpErrorKind::kAttrMismatch, op, st.message());
  return std::nullopt;
}

}  // namespace

SingleOpResult CompileSingleOp(const SingleOpSpec& spec) {
  const std::string& op = spec.op_type;
  const size_t no = spec.outputs.size();
  SingleOpResult result;
  CompiledSingleOp& out = result.op;
  auto g = std::make_shared<Graph>();
  g->name = "single_op_" + op;
  if (auto err = BuildGraph(spec, *g, out)) return *err;
  if (Status st = RunPipeline(*g, CompileOptions{}); !st.ok()) {
    if (st.message().find("dynamic shapes are not supported") != std::string::npos) {
      // A shape inference left unknown: an output the op does not produce, or a
      // shape that follows a non-constant input's values. Built again and
      // compiled in dynamic mode to tell which.
      Graph probe;
      CompiledSingleOp unused;
      if (!BuildGraph(spec, probe, unused)) {
        CompileOptions dyn;
        dyn.allow_dynamic = true;
        (void)RunPipeline(probe, dyn);
        for (size_t k = 0; k < probe.outputs.size(); ++k)
          if (probe.outputs[k]->dtype == DataType::kUndefined)
            return Error(SingleOpErrorKind::kOutputMismatch, op,
                         StrCat("the op does not produce output ", k, " (", no, " output descriptions were given)"));
      }
      return Error(SingleOpErrorKind::kUnsupported, op,
                   StrCat("an output shape depends on input values; make those inputs constant with "
                          "aclSetTensorConst (", st.message(), ")"));
    }
    const std::string& m = st.message();
    const bool attr_problem = m.find("attribute") != std::string::npos || m.find("axis") != std::string::npos ||
                              m.find("axes") != std::string::npos || m.find("perm") != std::string::npos;
    return Error(st.code() == StatusCode::kNotSupported ? SingleOpErrorKind::kUnsupported
                 : attr_problem                         ? SingleOpErrorKind::kAttrMismatch
                                                        : SingleOpErrorKind::kInputMismatch,
                 op, m);
  }
  for (size_t k = 0; k < no; ++k) {
    const Value& v = *g->outputs[k];
    const SingleOpTensor& t = spec.outputs[k];
    if (t.dtype != DataType::kUndefined && t.dtype != v.dtype)
      return Error(SingleOpErrorKind::kOutputMismatch, op,
                   StrCat("output ", k, " is ", DataTypeName(v.dtype), ", its desc says ", DataTypeName(t.dtype)));
    bool unknown = false;
    for (int64_t x : t.dims) unknown |= x < 0;
    if (!unknown && t.dims != v.shape)
      return Error(SingleOpErrorKind::kOutputMismatch, op,
                   StrCat("output ", k, " has shape ", v.ShapeString(), ", its desc says ", DimsString(t.dims)));
    out.out_bytes.push_back(static_cast<size_t>(v.ByteSize()));
    out.out_dims.push_back(v.shape);
    out.out_types.push_back(v.dtype);
  }
  g->metadata[kSingleOpTypeKey] = op;
  g->metadata[kSingleOpKeyKey] = SingleOpKey(spec);
  out.graph = std::move(g);
  return result;
}

}  // namespace oc
