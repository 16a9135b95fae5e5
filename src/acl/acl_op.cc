// Single-operator execution (acl_op.h): an operator call becomes a one-node
// graph (or a few nodes, for CANN op types that ONNX spells differently),
// compiled with the model pipeline into an Executable, cached by its
// description, and run on a stream like a model.
#include <algorithm>
#include <cstdlib>
#include <list>
#include <variant>

#include "acl/acl_model_internal.h"
#include "acl/acl_op.h"
#include "executor/executable.h"
#include "ops/cpu/tensor_util.h"
#include "ops/op_registry.h"
#include "passes/pipeline.h"

using namespace oc::acl;
using oc::StrCat;

struct aclopAttr {
  std::map<std::string, oc::Attribute> attrs;
};

namespace oc::acl {

struct CompiledOp {
  std::string op_type;
  std::shared_ptr<const oc::Executable> exe;
  size_t num_inputs = 0, num_outputs = 0;
  std::vector<size_t> slots;      // per executable input: the caller's input index
  std::vector<size_t> in_bytes;   // per caller input (0 for absent or constant ones)
  std::vector<bool> in_const;     // per caller input
  std::vector<size_t> out_bytes;  // per caller output
  std::vector<std::vector<int64_t>> out_dims;
};

}  // namespace oc::acl

struct aclopHandle {
  std::shared_ptr<const CompiledOp> op;
};

namespace {

using oc::DataType;
using oc::Expected;
using oc::Graph;
using oc::Node;
using oc::Status;
using oc::Value;

constexpr int kMaxOpset = 28;  // the newest ONNX opset the parser accepts

HandleSet& Attrs() {
  static HandleSet* s = new HandleSet;
  return *s;
}
HandleSet& Handles() {
  static HandleSet* s = new HandleSet;
  return *s;
}

DataType FromAclType(int t) {
  switch (t) {
    case ACL_FLOAT: return DataType::kFloat32;
    case ACL_FLOAT16: return DataType::kFloat16;
    case ACL_BF16: return DataType::kBFloat16;
    case ACL_DOUBLE: return DataType::kFloat64;
    case ACL_INT8: return DataType::kInt8;
    case ACL_UINT8: return DataType::kUInt8;
    case ACL_INT16: return DataType::kInt16;
    case ACL_UINT16: return DataType::kUInt16;
    case ACL_INT32: return DataType::kInt32;
    case ACL_UINT32: return DataType::kUInt32;
    case ACL_INT64: return DataType::kInt64;
    case ACL_UINT64: return DataType::kUInt64;
    case ACL_BOOL: return DataType::kBool;
    default: return DataType::kUndefined;
  }
}

// ---- Errors carrying the aclError to report ------------------------------------------------

struct OpError {
  aclError code;
  std::string msg;
};

// ---- Building the graph ---------------------------------------------------------------------

// The newest opset at which the default domain implements `op`, or 0.
int LatestOpset(const std::string& op) {
  const oc::OpRegistry& reg = oc::OpRegistry::Global();
  for (int v = kMaxOpset; v >= 1; --v)
    if (reg.Find("", op, v)) return v;
  return 0;
}

class OpBuilder {
 public:
  OpBuilder(Graph& g, const std::map<std::string, oc::Attribute>& attrs) : g_(g), attrs_(attrs) {}

  const oc::Attribute* Attr(const std::string& n) const {
    auto it = attrs_.find(n);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  int64_t Int(const std::string& n, int64_t def) const {
    const oc::Attribute* a = Attr(n);
    return a && a->kind == oc::Attribute::Kind::kInt ? a->i : def;
  }
  std::vector<int64_t> Ints(const std::string& n) const {
    const oc::Attribute* a = Attr(n);
    if (!a) return {};
    if (a->kind == oc::Attribute::Kind::kInts) return a->ints;
    if (a->kind == oc::Attribute::Kind::kInt) return {a->i};
    return {};
  }
  std::string Str(const std::string& n, const std::string& def) const {
    const oc::Attribute* a = Attr(n);
    return a && a->kind == oc::Attribute::Kind::kString ? a->s : def;
  }

  // Adds a node of the default domain at `opset` (0: the newest the op has).
  Expected<Node*> Add(const std::string& op, std::vector<Value*> ins, size_t num_outs, int opset = 0) {
    if (!opset) opset = LatestOpset(op);
    const oc::OpDef* def = opset ? oc::OpRegistry::Global().Find("", op, opset) : nullptr;
    if (!def) return oc::NotFound("op type '", op, "' is not implemented");
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
    auto data = oc::TensorData::Copy(v.data(), v.size() * sizeof(int64_t));
    return g_.AddConstant(g_.UniqueName("const"), DataType::kInt64, {static_cast<int64_t>(v.size())}, std::move(data));
  }
  Value* Scalar(DataType t, double v) {
    oc::TensorData data = oc::TensorData::Allocate(oc::DataTypeSize(t));
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
  const std::map<std::string, oc::Attribute>& attrs_;
  std::vector<std::pair<Node*, const oc::OpDef*>> defs_;
};

// The caller's attributes on `n`, all of them (the op's infer function names
// the ones it does not know).
void CopyAttrs(Node* n, const std::map<std::string, oc::Attribute>& attrs,
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
                                        const std::map<std::string, oc::Attribute>& attrs, size_t num_outs,
                                        bool* handled) {
  *handled = true;
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
    if (!In(ins, 0)) return oc::InvalidArgument("Relu6 needs an input");
    Value* lo = b.Scalar(In(ins, 0)->dtype, 0.0);
    Value* hi = b.Scalar(In(ins, 0)->dtype, 6.0);
    if (!lo) return oc::NotSupported("Relu6 of ", oc::DataTypeName(In(ins, 0)->dtype), " (float and double only)");
    return one("Clip", {In(ins, 0), lo, hi});
  }
  if (op == "LeakyRelu" && b.Attr("negative_slope")) {
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("LeakyRelu", ins, num_outs));
    CopyAttrs(n, attrs, {"negative_slope"});
    const oc::Attribute* a = b.Attr("negative_slope");
    n->SetFloat("alpha", a->kind == oc::Attribute::Kind::kFloat ? a->f : static_cast<float>(a->i));
    return n->outputs;
  }
  if (op == "MatMul" || op == "MatMulV2") {
    const bool ta = b.Int("transpose_x1", 0) != 0, tb = b.Int("transpose_x2", 0) != 0;
    if (!ta && !tb && !In(ins, 2)) return one("MatMul", {In(ins, 0), In(ins, 1)}, {"transpose_x1", "transpose_x2"});
    std::vector<Value*> args = {In(ins, 0), In(ins, 1)};
    if (In(ins, 2)) args.push_back(In(ins, 2));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Gemm", args, num_outs));
    CopyAttrs(n, attrs, {"transpose_x1", "transpose_x2", "offset_x"});
    n->SetInt("transA", ta);
    n->SetInt("transB", tb);
    return n->outputs;
  }
  if (op == "BatchMatMul" || op == "BatchMatMulV2") {
    std::vector<Value*> xs = {In(ins, 0), In(ins, 1)};
    const char* adj[2] = {"adj_x1", "adj_x2"};
    for (int k = 0; k < 2; ++k) {
      if (!xs[k]) return oc::InvalidArgument(op, " needs two inputs");
      if (!b.Int(adj[k], 0)) continue;
      const int64_t rank = static_cast<int64_t>(xs[k]->shape.size());
      if (rank < 2) return oc::InvalidArgument(op, ": ", adj[k], " needs an input of rank >= 2");
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
    const DataType to = FromAclType(static_cast<int>(b.Int("dst_type", -1)));
    if (to == DataType::kUndefined)
      return oc::InvalidArgument("Cast: dst_type ", b.Int("dst_type", -1), " is not a supported aclDataType");
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Cast", ins, num_outs));
    CopyAttrs(n, attrs, {"dst_type", "truncate"});
    n->SetInt("to", static_cast<int64_t>(to));
    return n->outputs;
  }
  if (op == "SoftmaxV2") {
    std::vector<int64_t> axes = b.Ints("axes");
    if (axes.size() > 1) return oc::NotSupported("SoftmaxV2 over ", axes.size(), " axes (one axis only)");
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Softmax", ins, num_outs));
    CopyAttrs(n, attrs, {"axes"});
    n->SetInt("axis", axes.empty() ? -1 : axes[0]);
    return n->outputs;
  }
  if (op == "TransposeD") return one("Transpose", ins);
  if (op == "ConcatD" || op == "ConcatV2D") {
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Concat", ins, num_outs));
    CopyAttrs(n, attrs, {"concat_dim", "N"});
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
    CopyAttrs(n, attrs, {"axes", "keep_dims"});
    n->SetInt("keepdims", b.Int("keep_dims", 0));
    return n->outputs;
  }
  if (op == "Conv2D") {
    const std::string fmt = b.Str("data_format", "NCHW");
    if (fmt != "NCHW") return oc::NotSupported("Conv2D with data_format ", fmt, " (NCHW only)");
    std::vector<int64_t> s = b.Ints("strides"), p = b.Ints("pads"), d = b.Ints("dilations");
    if (!s.empty() && s.size() != 4) return oc::InvalidArgument("Conv2D: strides needs 4 values (N, C, H, W)");
    if (!p.empty() && p.size() != 4) return oc::InvalidArgument("Conv2D: pads needs 4 values (top, bottom, left, right)");
    if (!d.empty() && d.size() != 4) return oc::InvalidArgument("Conv2D: dilations needs 4 values (N, C, H, W)");
    std::vector<Value*> args = {In(ins, 0), In(ins, 1)};
    if (In(ins, 2)) args.push_back(In(ins, 2));
    OC_ASSIGN_OR_RETURN(Node * n, b.Add("Conv", args, num_outs));
    CopyAttrs(n, attrs, {"strides", "pads", "dilations", "groups", "data_format", "offset_x", "padding"});
    if (!s.empty()) n->SetInts("strides", {s[2], s[3]});
    if (!p.empty()) n->SetInts("pads", {p[0], p[2], p[1], p[3]});
    if (!d.empty()) n->SetInts("dilations", {d[2], d[3]});
    n->SetInt("group", b.Int("groups", 1));
    return n->outputs;
  }
  *handled = false;
  return std::vector<Value*>{};
}

// The caller's descriptions and attributes as a cache key.
void AppendDesc(std::string& key, const aclTensorDesc* d) {
  key += StrCat(EnumBits(d->dtype), ":");
  for (int64_t v : d->dims) key += StrCat(v, ",");
  if (d->const_value) {
    key += "=";
    key.append(reinterpret_cast<const char*>(d->const_value->data()), d->const_value->size());
  }
  key += ";";
}

std::string Key(const std::string& op, int ni, const aclTensorDesc* const* in, int no, const aclTensorDesc* const* out,
                const aclopAttr* attr) {
  std::string key = op + "|";
  for (int i = 0; i < ni; ++i) AppendDesc(key, in[i]);
  key += "|";
  for (int i = 0; i < no; ++i) AppendDesc(key, out[i]);
  key += "|";
  if (attr) {
    for (const auto& [name, a] : attr->attrs) {
      key += StrCat(name, "=", static_cast<int>(a.kind), ":", a.i, ":", a.f, ":", a.s, ":");
      for (int64_t v : a.ints) key += StrCat(v, ",");
      for (float v : a.floats) key += StrCat(v, ",");
      for (const auto& v : a.strings) key += v + "\x1f";
      key += ";";
    }
  }
  return key;
}

aclError DescArray(const char* what, int n, const aclTensorDesc* const* descs) {
  if (n < 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("num", what, " is ", n));
  if (n > 0 && !descs) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the ", what, " desc array is NULL"));
  for (int i = 0; i < n; ++i)
    if (!descs[i] || !TensorDescs().Contains(descs[i]))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": the desc is NULL or not a live aclTensorDesc"));
  return ACL_SUCCESS;
}

// Compiles the operator. Errors come back as OpError (code + message).
std::variant<std::shared_ptr<const CompiledOp>, OpError> Compile(const std::string& op, int ni,
                                                                 const aclTensorDesc* const* in, int no,
                                                                 const aclTensorDesc* const* out,
                                                                 const aclopAttr* attr) {
  static const std::map<std::string, oc::Attribute> kNoAttrs;
  const auto& attrs = attr ? attr->attrs : kNoAttrs;
  auto g = std::make_shared<Graph>();
  g->name = "single_op_" + op;
  auto op_ = std::make_shared<CompiledOp>();
  op_->op_type = op;
  op_->num_inputs = ni;
  op_->num_outputs = no;
  std::vector<Value*> ins;
  for (int i = 0; i < ni; ++i) {
    const aclTensorDesc& d = *in[i];
    op_->in_bytes.push_back(0);
    op_->in_const.push_back(d.const_value != nullptr);
    if (EnumBits(d.dtype) == ACL_DT_UNDEFINED) {  // an absent optional input
      ins.push_back(nullptr);
      continue;
    }
    const DataType t = FromAclType(EnumBits(d.dtype));
    if (t == DataType::kUndefined)
      return OpError{ACL_ERROR_UNSUPPORTED_DATA_TYPE, StrCat("input ", i, ": data type ", EnumBits(d.dtype),
                                                             " is not supported by the CPU operators")};
    for (int64_t v : d.dims)
      if (v < 0)
        return OpError{ACL_ERROR_FEATURE_UNSUPPORTED,
                       StrCat("input ", i, ": unknown dims (", v, ") are not supported; give concrete shapes")};
    const std::string name = StrCat("x", i);
    Value* v;
    if (d.const_value) {
      v = g->AddConstant(name, t, d.dims, oc::TensorData::Copy(d.const_value->data(), d.const_value->size()));
    } else {
      v = g->AddValue(name);
      v->dtype = t;
      v->has_shape = true;
      v->shape = d.dims;
      v->dim_params.assign(d.dims.size(), "");
      g->inputs.push_back(v);
      op_->slots.push_back(i);
      op_->in_bytes.back() = static_cast<size_t>(v->ByteSize());
    }
    ins.push_back(v);
  }
  OpBuilder b(*g, attrs);
  bool cann = false;
  auto built = BuildCann(op, b, ins, attrs, no, &cann);
  if (built.ok() && !cann) {
    auto n = b.Add(op, ins, no);
    if (!n.ok()) {
      return OpError{ACL_ERROR_OP_NOT_FOUND,
                     StrCat("op type '", op, "' is neither an ONNX operator of the CPU library (docs/operators.md) nor "
                                         "one of the CANN op types docs/single_op.md lists")};
    }
    CopyAttrs(*n, attrs);
    built = (*n)->outputs;
  }
  if (!built.ok()) {
    const Status& st = built.status();
    return OpError{st.code() == oc::StatusCode::kNotFound ? ACL_ERROR_OP_NOT_FOUND
                   : st.code() == oc::StatusCode::kNotSupported ? ACL_ERROR_FEATURE_UNSUPPORTED
                                                                : ACL_ERROR_OP_ATTR_NOT_MATCH,
                   StrCat(op, ": ", st.message())};
  }
  if (static_cast<int>(built->size()) != no)
    return OpError{ACL_ERROR_OP_OUTPUT_NOT_MATCH, StrCat(op, " has ", built->size(), " outputs, ", no, " were given")};
  g->outputs = *built;
  if (Status st = b.Canonicalize(); !st.ok())
    return OpError{ACL_ERROR_OP_ATTR_NOT_MATCH, StrCat(op, ": ", st.message())};
  oc::CompileOptions copts;
  if (Status st = oc::RunPipeline(*g, copts); !st.ok()) {
    // Shape inference left a shape unknown: it follows a non-constant input's values.
    if (st.message().find("dynamic shapes are not supported") != std::string::npos)
      return OpError{ACL_ERROR_FEATURE_UNSUPPORTED,
                     StrCat(op, ": an output shape depends on input values; make those inputs constant with "
                                "aclSetTensorConst (", st.message(), ")")};
    const bool attr_problem = st.message().find("attribute") != std::string::npos;
    return OpError{st.code() == oc::StatusCode::kNotSupported ? ACL_ERROR_FEATURE_UNSUPPORTED
                   : attr_problem                               ? ACL_ERROR_OP_ATTR_NOT_MATCH
                                                                : ACL_ERROR_OP_INPUT_NOT_MATCH,
                   StrCat(op, ": ", st.message())};
  }
  if (oc::IsDynamicGraph(*g))
    return OpError{ACL_ERROR_FEATURE_UNSUPPORTED,
                   StrCat(op, ": an output shape depends on input values; make those inputs constant with "
                              "aclSetTensorConst")};
  for (int k = 0; k < no; ++k) {
    const Value& v = *g->outputs[k];
    const aclTensorDesc& d = *out[k];
    const int want = EnumBits(d.dtype);
    if (want != ACL_DT_UNDEFINED && want != ToAclType(v.dtype))
      return OpError{ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                     StrCat(op, ": output ", k, " is ", oc::DataTypeName(v.dtype), ", its desc says aclDataType ", want)};
    bool unknown = false;
    for (int64_t x : d.dims) unknown |= x < 0;
    if (!unknown && d.dims != v.shape)
      return OpError{ACL_ERROR_OP_OUTPUT_NOT_MATCH, StrCat(op, ": output ", k, " has shape ", v.ShapeString(),
                                                           ", its desc says ", oc::DimsString(d.dims))};
    op_->out_bytes.push_back(static_cast<size_t>(v.ByteSize()));
    op_->out_dims.push_back(v.shape);
  }
  auto exe = oc::Executable::Create(g);
  if (!exe.ok())
    return OpError{exe.status().code() == oc::StatusCode::kNotSupported ? ACL_ERROR_FEATURE_UNSUPPORTED
                                                                        : ACL_ERROR_OP_LOAD_FAILED,
                   StrCat(op, ": ", exe.status().message())};
  op_->exe = std::shared_ptr<const oc::Executable>(std::move(exe).value());
  return std::shared_ptr<const CompiledOp>(std::move(op_));
}

// ---- The cache ------------------------------------------------------------------------------

class OpCache {
 public:
  OpCache() {
    const char* env = std::getenv("OPENCANN_OP_CACHE_SIZE");
    char* end = nullptr;
    long v = env && *env ? std::strtol(env, &end, 10) : 0;
    capacity_ = env && *env && *end == '\0' && v >= 1 && v <= 65536 ? static_cast<size_t>(v) : 64;
  }
  std::shared_ptr<const CompiledOp> Find(const std::string& key) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    return nullptr;
  }
  void Put(const std::string& key, std::shared_ptr<const CompiledOp> op) {
    std::lock_guard<std::mutex> lk(mu_);
    entries_.emplace_front(key, std::move(op));
    while (entries_.size() > capacity_) entries_.pop_back();
  }

 private:
  std::mutex mu_;
  size_t capacity_ = 64;
  std::list<std::pair<std::string, std::shared_ptr<const CompiledOp>>> entries_;
};

OpCache& Cache() {
  static OpCache* c = new OpCache;
  return *c;
}

aclError Resolve(const char* opType, int ni, const aclTensorDesc* const* in, int no, const aclTensorDesc* const* out,
                 const aclopAttr* attr, std::shared_ptr<const CompiledOp>* result) {
  if (!opType || !*opType) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'opType' is NULL or empty");
  if (aclError e = DescArray("input", ni, in)) return e;
  if (aclError e = DescArray("output", no, out)) return e;
  if (attr && !Attrs().Contains(attr))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attr ", PtrString(attr), " is not a live aclopAttr"));
  const std::string key = Key(opType, ni, in, no, out, attr);
  if ((*result = Cache().Find(key))) return ACL_SUCCESS;
  auto compiled = Compile(opType, ni, in, no, out, attr);
  if (auto* err = std::get_if<OpError>(&compiled)) return Fail(err->code, err->msg);
  *result = std::get<std::shared_ptr<const CompiledOp>>(compiled);
  Cache().Put(key, *result);
  return ACL_SUCCESS;
}

// Checks the buffers and queues the run on the stream.
aclError Enqueue(const std::shared_ptr<const CompiledOp>& op, int ni, const aclDataBuffer* const* inputs, int no,
                 aclDataBuffer* const* outputs, aclrtStream stream) {
  if (ni != static_cast<int>(op->num_inputs) || no != static_cast<int>(op->num_outputs))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(op->op_type, " was compiled for ", op->num_inputs, " inputs and ",
                                                op->num_outputs, " outputs; ", ni, " and ", no, " were given"));
  if ((ni > 0 && !inputs) || (no > 0 && !outputs))
    return Fail(ACL_ERROR_INVALID_PARAM, "the inputs or outputs buffer array is NULL");
  auto& mem = RuntimeState().memory;
  auto check = [&](const char* what, size_t i, const aclDataBuffer* b, size_t need) -> aclError {
    if (!b || !DataBuffers().Contains(b))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": the buffer is NULL or not a live aclDataBuffer"));
    if (b->size < need)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat(what, " ", i, ": buffer size is ", b->size, " bytes but the tensor needs ", need));
    if (need > 0 && (!b->data || !mem.Find(b->data, need)))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": buffer ", PtrString(b->data), " (", need,
                                                  " bytes) is not inside memory from aclrtMalloc or aclrtMallocHost"));
    return ACL_SUCCESS;
  };
  std::vector<const void*> ins;
  for (size_t slot : op->slots) {
    if (aclError e = check("input", slot, inputs[slot], op->in_bytes[slot])) return e;
    ins.push_back(inputs[slot]->data);
  }
  std::vector<void*> outs;
  for (int k = 0; k < no; ++k) {
    if (aclError e = check("output", k, outputs[k], op->out_bytes[k])) return e;
    outs.push_back(outputs[k]->data);
  }
  std::shared_ptr<StreamObj> s;
  if (aclError e = ResolveStream(stream, &s)) return e;
  s->queue.Enqueue(
      [op, ins = std::move(ins), outs = std::move(outs)]() -> oc::Status {
        ThreadPoolUse use;
        auto ctx = op->exe->AcquireContext();
        if (!ctx.ok()) return ctx.status();
        oc::Status st = op->exe->Run(**ctx, ins, outs, use.pool());
        op->exe->ReleaseContext(std::move(*ctx));
        return st;
      },
      StrCat("operator ", op->op_type));
  return ACL_SUCCESS;
}

aclError Execute(const char* opType, int ni, const aclTensorDesc* const* inDesc, const aclDataBuffer* const* inputs,
                 int no, const aclTensorDesc* const* outDesc, aclDataBuffer* const* outputs, const aclopAttr* attr,
                 aclrtStream stream, aclTensorDesc* const* update) {
  if (aclError e = RequireInit()) return e;
  std::shared_ptr<const CompiledOp> op;
  if (aclError e = Resolve(opType, ni, inDesc, no, outDesc, attr, &op)) return e;
  if (update)
    for (int k = 0; k < no; ++k) update[k]->dims = op->out_dims[k];
  return Enqueue(op, ni, inputs, no, outputs, stream);
}

aclError SetAttr(aclopAttr* attr, const char* name, oc::Attribute a) {
  if (!attr) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attr' is NULL");
  if (!Attrs().Contains(attr)) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attr ", PtrString(attr), " is not a live aclopAttr"));
  if (!name || !*name) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attrName' is NULL or empty");
  attr->attrs[name] = std::move(a);
  return ACL_SUCCESS;
}

template <typename T>
aclError CheckList(int n, const T* values) {
  if (n < 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("numValues is ", n));
  if (n > 0 && !values) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'values' is NULL");
  return ACL_SUCCESS;
}

oc::Attribute IntAttr(int64_t v) {
  oc::Attribute a;
  a.kind = oc::Attribute::Kind::kInt;
  a.i = v;
  return a;
}

oc::Attribute IntsAttr(std::vector<int64_t> v) {
  oc::Attribute a;
  a.kind = oc::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

}  // namespace

// ---- The C API ----------------------------------------------------------------------------------

aclopAttr* aclopCreateAttr() {
  return GuardValue<aclopAttr*>(__func__, nullptr, [&]() -> aclopAttr* {
    auto* a = new aclopAttr;
    Attrs().Add(a);
    return a;
  });
}

void aclopDestroyAttr(const aclopAttr* attr) {
  GuardValue<int>(__func__, 0, [&] {
    if (attr && Attrs().Remove(attr)) delete attr;
    return 0;
  });
}

aclError aclopSetAttrBool(aclopAttr* attr, const char* attrName, uint8_t attrValue) {
  return Guard(__func__, [&] { return SetAttr(attr, attrName, IntAttr(attrValue ? 1 : 0)); });
}

aclError aclopSetAttrInt(aclopAttr* attr, const char* attrName, int64_t attrValue) {
  return Guard(__func__, [&] { return SetAttr(attr, attrName, IntAttr(attrValue)); });
}

aclError aclopSetAttrFloat(aclopAttr* attr, const char* attrName, float attrValue) {
  return Guard(__func__, [&] {
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kFloat;
    a.f = attrValue;
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrString(aclopAttr* attr, const char* attrName, const char* attrValue) {
  return Guard(__func__, [&]() -> aclError {
    if (!attrValue) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attrValue' is NULL");
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kString;
    a.s = attrValue;
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrDataType(aclopAttr* attr, const char* attrName, aclDataType attrValue) {
  return Guard(__func__, [&] { return SetAttr(attr, attrName, IntAttr(EnumBits(attrValue))); });
}

aclError aclopSetAttrListBool(aclopAttr* attr, const char* attrName, int numValues, const uint8_t* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    std::vector<int64_t> v;
    for (int i = 0; i < numValues; ++i) v.push_back(values[i] ? 1 : 0);
    return SetAttr(attr, attrName, IntsAttr(std::move(v)));
  });
}

aclError aclopSetAttrListInt(aclopAttr* attr, const char* attrName, int numValues, const int64_t* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    return SetAttr(attr, attrName, IntsAttr(std::vector<int64_t>(values, values + numValues)));
  });
}

aclError aclopSetAttrListFloat(aclopAttr* attr, const char* attrName, int numValues, const float* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kFloats;
    a.floats.assign(values, values + numValues);
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrListString(aclopAttr* attr, const char* attrName, int numValues, const char** values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kStrings;
    for (int i = 0; i < numValues; ++i) {
      if (!values[i]) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("values[", i, "] is NULL"));
      a.strings.emplace_back(values[i]);
    }
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrListDataType(aclopAttr* attr, const char* attrName, int numValues, const aclDataType values[]) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    std::vector<int64_t> v;
    for (int i = 0; i < numValues; ++i) v.push_back(EnumBits(values[i]));
    return SetAttr(attr, attrName, IntsAttr(std::move(v)));
  });
}

aclError aclopSetAttrListListInt(aclopAttr* attr, const char* attrName, int numLists, const int* numValues,
                                 const int64_t* const values[]) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numLists, numValues)) return e;
    if (numLists > 0 && !values) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'values' is NULL");
    std::vector<int64_t> flat;
    for (int i = 0; i < numLists; ++i) {
      if (numValues[i] < 0 || (numValues[i] > 0 && !values[i]))
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("list ", i, " is NULL or has a negative length"));
      flat.insert(flat.end(), values[i], values[i] + numValues[i]);
    }
    return SetAttr(attr, attrName, IntsAttr(std::move(flat)));
  });
}

aclError aclopExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[], aclDataBuffer* inputs[],
                        int numOutputs, aclTensorDesc* outputDesc[], aclDataBuffer* outputs[], aclopAttr* attr,
                        aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, outputDesc);
  });
}

aclError aclopExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                      const aclDataBuffer* const inputs[], int numOutputs, const aclTensorDesc* const outputDesc[],
                      aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, nullptr);
  });
}

aclError aclopCompile(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                      const aclTensorDesc* const outputDesc[], const aclopAttr* attr, aclopEngineType,
                      aclopCompileType, const char*) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    std::shared_ptr<const CompiledOp> op;
    return Resolve(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &op);
  });
}

aclError aclopCompileAndExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                                const aclDataBuffer* const inputs[], int numOutputs,
                                const aclTensorDesc* const outputDesc[], aclDataBuffer* const outputs[],
                                const aclopAttr* attr, aclopEngineType, aclopCompileType, const char*,
                                aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, nullptr);
  });
}

aclError aclopCompileAndExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[],
                                  aclDataBuffer* inputs[], int numOutputs, aclTensorDesc* outputDesc[],
                                  aclDataBuffer* outputs[], aclopAttr* attr, aclopEngineType, aclopCompileType,
                                  const char*, aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, outputDesc);
  });
}

aclError aclopSetCompileFlag(aclOpCompileFlag flag) {
  return Guard(__func__, [&]() -> aclError {
    const int f = EnumBits(flag);
    if (f != ACL_OP_COMPILE_DEFAULT && f != ACL_OP_COMPILE_FUZZ)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("flag ", f, " is not an aclOpCompileFlag"));
    return ACL_SUCCESS;
  });
}

aclError aclopCreateHandle(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                           const aclTensorDesc* const outputDesc[], const aclopAttr* opAttr, aclopHandle** handle) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!handle) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'handle' is NULL");
    std::shared_ptr<const CompiledOp> op;
    if (aclError e = Resolve(opType, numInputs, inputDesc, numOutputs, outputDesc, opAttr, &op)) return e;
    auto* h = new aclopHandle{std::move(op)};
    Handles().Add(h);
    *handle = h;
    return ACL_SUCCESS;
  });
}

void aclopDestroyHandle(aclopHandle* handle) {
  GuardValue<int>(__func__, 0, [&] {
    if (handle && Handles().Remove(handle)) delete handle;
    return 0;
  });
}

aclError aclopExecWithHandle(aclopHandle* handle, int numInputs, const aclDataBuffer* const inputs[], int numOutputs,
                             aclDataBuffer* const outputs[], aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!handle || !Handles().Contains(handle))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("handle ", PtrString(handle), " is not a live aclopHandle"));
    return Enqueue(handle->op, numInputs, inputs, numOutputs, outputs, stream);
  });
}

aclError aclopSetModelDir(const char* modelDir) {
  return Guard(__func__, [&] {
    return Fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                StrCat("single-op models (atc --singleop) are not supported (directory '", modelDir ? modelDir : "",
                       "'): operators compile on first use, see docs/single_op.md"));
  });
}

aclError aclopLoad(const void*, size_t) {
  return Guard(__func__, [&] {
    return Fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                "single-op models (atc --singleop) are not supported: operators compile on first use, see "
                "docs/single_op.md");
  });
}
