// ModelProto -> Graph. The proto is untrusted: every name, index, type and size
// is checked before use, and every failure names the node/value/tensor at fault.
#include "parser/onnx/onnx_parser.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <set>

#include "onnx.pb.h"
#include "ops/op_registry.h"
#include "parser/onnx/onnx_graph_fixup.h"
#include "parser/onnx/onnx_tensor.h"

namespace oc {
namespace {

using onnx_parser::ConvertElemType;
using onnx_parser::DecodeTensor;

// Newest IR version and default-domain opset that the onnx 1.23 package this
// build is made against knows (onnx.IR_VERSION and onnx.defs.onnx_opset_version()
// at build time). A newer model may use semantics we have never seen, so it is
// rejected rather than guessed at.
constexpr int64_t kMaxIrVersion = 14;
constexpr int64_t kMaxOnnxOpset = 28;
constexpr const char* kOnnxPackage = "onnx 1.23";

const char* TypeCaseName(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: return "tensor";
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse_tensor";
    default: return "unknown";
  }
}

class GraphBuilder {
 public:
  // Takes the model mutable so that weight bytes can be released as soon as
  // they are copied, which keeps peak memory near one copy of the weights.
  GraphBuilder(onnx::ModelProto& model, std::string base_dir)
      : model_(model), base_dir_(std::move(base_dir)), g_(std::make_unique<Graph>()) {}
  // A builder for a subgraph (graph attribute) of a node built by `parent`.
  GraphBuilder(GraphBuilder& parent, std::string what)
      : model_(parent.model_), base_dir_(parent.base_dir_), g_(std::make_unique<Graph>()), parent_(&parent),
        what_(std::move(what)) {
    g_->opset_imports = parent.g_->opset_imports;
    g_->ir_version = parent.g_->ir_version;
  }

  Expected<std::unique_ptr<Graph>> Build() {
    OC_RETURN_IF_ERROR(ReadHeader());
    const onnx::GraphProto& graph = model_.graph();
    g_->name = graph.name();
    if (graph.sparse_initializer_size() > 0)
      return NotSupported("sparse initializers are not supported ('",
                          graph.sparse_initializer(0).values().name(), "')");
    OC_RETURN_IF_ERROR(ReadInitializers(*model_.mutable_graph()));
    OC_RETURN_IF_ERROR(ReadInputs(graph));
    OC_RETURN_IF_ERROR(ReadNodes(graph));
    for (const auto& vi : graph.value_info()) {
      Value* v = g_->FindValue(vi.name());
      if (v && !v->constant && v->producer)
        OC_RETURN_IF_ERROR(ApplyValueInfo(vi, v, StrCat("value_info '", vi.name(), "'"), false));
    }
    OC_RETURN_IF_ERROR(ReadOutputs(graph));
    return std::move(g_);
  }

 private:
  // A graph attribute: a subgraph that may read this graph's values (and, through
  // this graph, its ancestors'), which become its captures (see graph.h).
  Expected<std::shared_ptr<Graph>> BuildSubgraph(const onnx::GraphProto& proto, const std::string& what) {
    if (Depth() >= kMaxSubgraphDepth)
      return InvalidFile(what, ": subgraphs nested deeper than ", kMaxSubgraphDepth, " levels");
    GraphBuilder sub(*this, what);
    Graph& g = *sub.g_;
    g.name = proto.name();
    if (proto.sparse_initializer_size() > 0) return NotSupported(what, ": sparse initializers are not supported");
    OC_RETURN_IF_ERROR(sub.ReadInitializers(const_cast<onnx::GraphProto&>(proto)));
    for (int i = 0; i < proto.input_size(); ++i) {
      const auto& vi = proto.input(i);
      if (vi.name().empty()) return InvalidFile(what, ": input #", i, " has no name");
      if (g.FindValue(vi.name())) return InvalidFile(what, ": input '", vi.name(), "' is defined twice");
      Value* v = g.AddValue(vi.name());
      OC_RETURN_IF_ERROR(sub.ApplyValueInfo(vi, v, StrCat(what, " input '", vi.name(), "'"), false));
      g.inputs.push_back(v);
    }
    OC_RETURN_IF_ERROR(sub.ReadNodes(proto));
    for (const auto& vi : proto.value_info()) {
      Value* v = g.FindValue(vi.name());
      if (v && !v->constant && v->producer)
        OC_RETURN_IF_ERROR(sub.ApplyValueInfo(vi, v, StrCat(what, " value_info '", vi.name(), "'"), false));
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      const auto& vi = proto.output(i);
      Value* v = sub.Resolve(vi.name());
      if (!v) return InvalidFile(what, ": output '", vi.name(), "' is not produced in the subgraph or its scope");
      if (!v->constant && v->producer)
        OC_RETURN_IF_ERROR(sub.ApplyValueInfo(vi, v, StrCat(what, " output '", vi.name(), "'"), false));
      g.outputs.push_back(v);
    }
    return std::shared_ptr<Graph>(std::move(sub.g_));
  }

  int Depth() const { return parent_ ? parent_->Depth() + 1 : 0; }

  // `name` in this graph, or in an enclosing graph: an outer constant is copied
  // in (sharing its bytes) so that body kernels see it as constant; any other
  // outer value becomes a capture of this graph.
  Value* Resolve(const std::string& name) {
    if (Value* v = g_->FindValue(name)) return v;
    if (!parent_) return nullptr;
    Value* outer = parent_->Resolve(name);
    if (!outer) return nullptr;
    if (outer->constant) return g_->AddConstant(name, outer->dtype, outer->shape, *outer->constant);
    Value* cap = g_->AddValue(name);
    cap->kind = outer->kind;
    cap->dtype = outer->dtype;
    cap->has_shape = outer->has_shape;
    cap->shape = outer->shape;
    cap->dim_params = outer->dim_params;
    g_->captures.push_back(cap);
    return cap;
  }

  Status ReadHeader() {
    if (model_.ir_version() <= 0)
      return InvalidFile("not an ONNX model: ir_version is missing or ", model_.ir_version());
    if (model_.ir_version() > kMaxIrVersion)
      return NotSupported("model IR version ", model_.ir_version(), " is newer than IR version ",
                          kMaxIrVersion, ", the newest this build knows (", kOnnxPackage, ")");
    if (!model_.has_graph()) return InvalidFile("not an ONNX model: it has no graph");
    g_->ir_version = model_.ir_version();
    g_->producer_name = model_.producer_name();
    for (const auto& op : model_.opset_import()) {
      std::string domain = CanonicalDomain(op.domain());
      if (op.version() <= 0 || op.version() > INT_MAX)
        return InvalidFile("opset_import for domain '", op.domain(), "' has invalid version ", op.version());
      if (g_->opset_imports.count(domain))
        return InvalidFile("opset_import lists domain '", op.domain(), "' twice");
      if (domain.empty() && op.version() > kMaxOnnxOpset)
        return NotSupported("model uses ONNX opset ", op.version(), ", but this build supports opsets up to ",
                            kMaxOnnxOpset, " (", kOnnxPackage, "); re-export the model with opset <= ",
                            kMaxOnnxOpset);
      g_->opset_imports[domain] = static_cast<int>(op.version());
    }
    // IR < 3 predates opset_import: such models are opset 1.
    if (model_.opset_import_size() == 0 && model_.ir_version() < 3) g_->opset_imports[""] = 1;
    return Status::Ok();
  }

  Status ReadInitializers(onnx::GraphProto& graph) {
    for (int i = 0; i < graph.initializer_size(); ++i) {
      onnx::TensorProto& t = *graph.mutable_initializer(i);
      if (t.name().empty()) return InvalidFile("initializer #", i, " has no name");
      if (g_->FindValue(t.name())) return InvalidFile("initializer '", t.name(), "' is defined twice");
      OC_ASSIGN_OR_RETURN(auto dt, DecodeTensor(t, base_dir_, StrCat("initializer '", t.name(), "'")));
      g_->AddConstant(t.name(), dt.dtype, std::move(dt.shape), std::move(dt.data));
      if (t.has_raw_data()) std::string().swap(*t.mutable_raw_data());
    }
    return Status::Ok();
  }

  Status ReadInputs(const onnx::GraphProto& graph) {
    std::set<std::string> seen;
    for (int i = 0; i < graph.input_size(); ++i) {
      const auto& vi = graph.input(i);
      if (vi.name().empty()) return InvalidFile("graph input #", i, " has no name");
      if (!seen.insert(vi.name()).second) return InvalidFile("graph input '", vi.name(), "' is listed twice");
      Value* existing = g_->FindValue(vi.name());
      // An initializer listed as an input (IR < 4 style, or an overridable
      // default) is compiled as a constant.
      if (existing && existing->constant) continue;
      Value* v = g_->AddValue(vi.name());
      OC_RETURN_IF_ERROR(ApplyValueInfo(vi, v, StrCat("graph input '", vi.name(), "'"), true));
      g_->inputs.push_back(v);
    }
    return Status::Ok();
  }

  Status ApplyValueInfo(const onnx::ValueInfoProto& vi, Value* v, const std::string& what, bool required) {
    // An empty TypeProto (no case set) means "unknown" as well: exporters write
    // it for If-branch outputs, and ONNX leaves subgraph output types optional.
    if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
      if (required) return InvalidFile(what, " has no type");
      return Status::Ok();
    }
    const onnx::TypeProto* type = &vi.type();
    ValueKind kind = ValueKind::kTensor;
    if (type->has_optional_type()) {
      type = &type->optional_type().elem_type();
      kind = ValueKind::kOptionalTensor;
    }
    if (type->has_sequence_type()) {
      type = &type->sequence_type().elem_type();
      kind = kind == ValueKind::kTensor ? ValueKind::kSequence : ValueKind::kOptionalSequence;
    }
    if (!type->has_tensor_type())
      return NotSupported(what, " has type ", TypeCaseName(vi.type()),
                          "; only tensors and sequences/optionals of tensors are supported");
    v->kind = kind;
    const auto& tt = type->tensor_type();
    if (tt.elem_type() != 0 || required) {
      OC_ASSIGN_OR_RETURN(v->dtype, ConvertElemType(tt.elem_type(), what));
    }
    if (!tt.has_shape()) return Status::Ok();
    v->has_shape = true;
    v->shape.clear();
    v->dim_params.clear();
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
      const auto& dim = tt.shape().dim(d);
      // Some exporters (Paddle2ONNX) write an unknown dim as dim_value -1, which
      // onnxruntime reads as unknown too; other negative values are errors.
      if (dim.has_dim_value() && dim.dim_value() != -1) {
        if (dim.dim_value() < 0)
          return InvalidFile(what, ": dim ", d, " is negative (", dim.dim_value(), ")");
        v->shape.push_back(dim.dim_value());
        v->dim_params.emplace_back();
      } else {
        v->shape.push_back(-1);
        v->dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : std::string());
      }
    }
    if (v->SizeOverflows())
      return InvalidFile(what, ": shape ", v->ShapeString(), " has more elements or bytes than 64 bits can count");
    return Status::Ok();
  }

  // Unnamed nodes get "<OpType>_<index>"; a repeated name gets a suffix, so that
  // --out_nodes and error messages always point at exactly one node.
  std::vector<std::string> NodeNames(const onnx::GraphProto& graph) {
    std::set<std::string> taken;
    for (const auto& n : graph.node()) if (!n.name().empty()) taken.insert(n.name());
    std::set<std::string> used;
    std::vector<std::string> names;
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& n = graph.node(i);
      std::string name = n.name();
      if (name.empty() || used.count(name)) {
        std::string base = name.empty() ? StrCat(n.op_type().empty() ? "node" : n.op_type(), "_", i) : name;
        name = base;
        for (int k = 1; taken.count(name) || used.count(name); ++k) name = StrCat(base, "_", k);
      }
      used.insert(name);
      names.push_back(name);
    }
    return names;
  }

  Status ReadNodes(const onnx::GraphProto& graph) {
    std::vector<const onnx::AttributeProto*> graph_attrs;
    std::vector<std::string> names = NodeNames(graph);
    std::vector<Node*> nodes(graph.node_size(), nullptr);
    // Outputs first, so that inputs can be resolved even when the file lists
    // nodes out of topological order (TopologicalSort fixes the order later).
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& np = graph.node(i);
      const std::string& name = names[i];
      if (np.op_type().empty()) return InvalidFile("node #", i, " ('", name, "') has no op_type");
      std::string domain = CanonicalDomain(np.domain());
      if (domain.empty() && np.op_type() == "Constant") {
        OC_RETURN_IF_ERROR(ReadConstantNode(np, name));
        continue;
      }
      std::vector<Value*> outputs;
      for (int o = 0; o < np.output_size(); ++o) {
        const std::string& out = np.output(o);
        if (out.empty()) { outputs.push_back(nullptr); continue; }
        if (g_->FindValue(out))
          return InvalidFile("node '", name, "' output ", o, " '", out,
                             "' is already defined (by a graph input, initializer or another node)");
        outputs.push_back(g_->AddValue(out));
      }
      for (const auto& fn : model_.functions())
        if (fn.name() == np.op_type() && CanonicalDomain(fn.domain()) == domain)
          return NotSupported("node '", name, "' calls the model-local function '", np.op_type(),
                              "', and local functions are not supported yet; inline them first "
                              "(onnx.inliner.inline_local_functions)");
      Node* node = g_->AddNode(np.op_type(), name, {}, std::move(outputs), domain);
      auto it = g_->opset_imports.find(domain);
      if (it == g_->opset_imports.end())
        return InvalidFile(node->Describe(), ": its domain '", domain.empty() ? "ai.onnx" : domain,
                           "' is not listed in the model's opset_import");
      node->opset = it->second;
      for (const auto& a : np.attribute()) OC_RETURN_IF_ERROR(ReadAttribute(a, *node));
      nodes[i] = node;
    }
    // Inputs and subgraphs second: both may name values produced by nodes
    // listed later in the file.
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!nodes[i]) continue;
      const onnx::NodeProto& np = graph.node(i);
      for (int k = 0; k < np.input_size(); ++k) {
        const std::string& in = np.input(k);
        Value* v = nullptr;
        if (!in.empty()) {
          v = Resolve(in);
          if (!v)
            return InvalidFile(nodes[i]->Describe(), " input ", k, " '", in,
                               "' is not a graph input, initializer or node output",
                               parent_ ? " (in this subgraph or an enclosing graph)" : "");
        }
        nodes[i]->inputs.push_back(v);
      }
      for (const auto& a : np.attribute()) {
        if (a.type() != onnx::AttributeProto::GRAPH && a.type() != onnx::AttributeProto::GRAPHS &&
            !(a.type() == onnx::AttributeProto::UNDEFINED && (a.has_g() || a.graphs_size())))
          continue;
        OC_RETURN_IF_ERROR(ReadGraphAttribute(a, *nodes[i]));
      }
      // Implicit inputs bind the subgraphs' captures, in Node::Subgraphs() order.
      for (const Graph* sub : nodes[i]->Subgraphs())
        for (const Value* cap : sub->captures) nodes[i]->inputs.push_back(Resolve(cap->name));
    }
    return Status::Ok();
  }

  Status ReadGraphAttribute(const onnx::AttributeProto& a, Node& node) {
    const std::string what = StrCat(node.Describe(), " attribute '", a.name(), "'");
    if (node.attrs.count(a.name())) return InvalidFile(what, " is given twice");
    Attribute out;
    if (a.type() == onnx::AttributeProto::GRAPH || a.has_g()) {
      out.kind = Attribute::Kind::kGraph;
      OC_ASSIGN_OR_RETURN(out.graph, BuildSubgraph(a.g(), what));
    } else {
      out.kind = Attribute::Kind::kGraphs;
      for (int k = 0; k < a.graphs_size(); ++k) {
        OC_ASSIGN_OR_RETURN(auto g, BuildSubgraph(a.graphs(k), StrCat(what, " graph #", k)));
        out.graphs.push_back(std::move(g));
      }
    }
    node.attrs[a.name()] = std::move(out);
    return Status::Ok();
  }

  Status ReadAttribute(const onnx::AttributeProto& a, Node& node) {
    using AT = onnx::AttributeProto;
    const std::string what = StrCat(node.Describe(), " attribute '", a.name(), "'");
    if (a.name().empty()) return InvalidFile(node.Describe(), " has an attribute without a name");
    if (node.attrs.count(a.name())) return InvalidFile(what, " is given twice");
    if (a.has_ref_attr_name())
      return NotSupported(what, " refers to a function attribute; model-local functions are not supported");
    AT::AttributeType type = a.type();
    if (type == AT::UNDEFINED) {  // IR < 3 files leave `type` unset
      if (a.has_f()) type = AT::FLOAT;
      else if (a.has_i()) type = AT::INT;
      else if (a.has_s()) type = AT::STRING;
      else if (a.has_t()) type = AT::TENSOR;
      else if (a.has_g()) type = AT::GRAPH;
      else if (a.floats_size()) type = AT::FLOATS;
      else if (a.ints_size()) type = AT::INTS;
      else if (a.strings_size()) type = AT::STRINGS;
      else if (a.graphs_size()) type = AT::GRAPHS;
      else if (a.tensors_size()) type = AT::TENSORS;
      else return InvalidFile(what, " has no type and no value");
    }
    Attribute out;
    switch (type) {
      case AT::FLOAT: out.kind = Attribute::Kind::kFloat; out.f = a.f(); break;
      case AT::INT: out.kind = Attribute::Kind::kInt; out.i = a.i(); break;
      case AT::STRING: out.kind = Attribute::Kind::kString; out.s = a.s(); break;
      case AT::FLOATS:
        out.kind = Attribute::Kind::kFloats;
        out.floats.assign(a.floats().begin(), a.floats().end());
        break;
      case AT::INTS:
        out.kind = Attribute::Kind::kInts;
        out.ints.assign(a.ints().begin(), a.ints().end());
        break;
      case AT::STRINGS:
        out.kind = Attribute::Kind::kStrings;
        out.strings.assign(a.strings().begin(), a.strings().end());
        break;
      case AT::TENSOR: {
        OC_ASSIGN_OR_RETURN(auto t, DecodeTensor(a.t(), base_dir_, what));
        out.kind = Attribute::Kind::kTensor;
        out.tensor_dtype = t.dtype;
        out.tensor_shape = std::move(t.shape);
        out.tensor = std::move(t.data);
        break;
      }
      case AT::GRAPH:
      case AT::GRAPHS:
        return Status::Ok();  // read by ReadGraphAttribute once every value exists
      case AT::TYPE_PROTO: {
        // Stored as ints {ValueKind, element dtype} (Optional's `type`).
        const onnx::TypeProto* t = &a.tp();
        ValueKind kind = ValueKind::kTensor;
        if (t->has_optional_type()) t = &t->optional_type().elem_type();
        if (t->has_sequence_type()) {
          t = &t->sequence_type().elem_type();
          kind = ValueKind::kSequence;
        }
        if (!t->has_tensor_type()) return NotSupported(what, " is a ", TypeCaseName(a.tp()), " type, not supported");
        OC_ASSIGN_OR_RETURN(DataType dt, ConvertElemType(t->tensor_type().elem_type(), what));
        out.kind = Attribute::Kind::kInts;
        out.ints = {static_cast<int64_t>(kind), static_cast<int64_t>(dt)};
        break;
      }
      default:
        return NotSupported(what, " has type ", AT::AttributeType_Name(type), ", which is not supported");
    }
    node.attrs[a.name()] = std::move(out);
    return Status::Ok();
  }

  // A Constant node becomes a constant Value named like its output; no node remains.
  Status ReadConstantNode(const onnx::NodeProto& np, const std::string& name) {
    const std::string what = StrCat("Constant node '", name, "'");
    if (np.output_size() != 1 || np.output(0).empty())
      return InvalidFile(what, " must have exactly one named output (has ", np.output_size(), ")");
    if (np.attribute_size() != 1)
      return InvalidFile(what, " must have exactly one value attribute (has ", np.attribute_size(), ")");
    const std::string& out = np.output(0);
    if (g_->FindValue(out))
      return InvalidFile(what, " output '", out, "' is already defined");
    const onnx::AttributeProto& a = np.attribute(0);
    const std::string& key = a.name();
    if (key == "value") {
      OC_ASSIGN_OR_RETURN(auto t, DecodeTensor(a.t(), base_dir_, what));
      g_->AddConstant(out, t.dtype, std::move(t.shape), std::move(t.data));
    } else if (key == "value_float") {
      float f = a.f();
      g_->AddConstant(out, DataType::kFloat32, {}, TensorData::Copy(&f, sizeof f));
    } else if (key == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      g_->AddConstant(out, DataType::kFloat32, {static_cast<int64_t>(v.size())},
                      TensorData::Copy(v.data(), v.size() * sizeof(float)));
    } else if (key == "value_int") {
      int64_t i = a.i();
      g_->AddConstant(out, DataType::kInt64, {}, TensorData::Copy(&i, sizeof i));
    } else if (key == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      g_->AddConstant(out, DataType::kInt64, {static_cast<int64_t>(v.size())},
                      TensorData::Copy(v.data(), v.size() * sizeof(int64_t)));
    } else if (key == "sparse_value") {
      return NotSupported(what, ": sparse_value constants are not supported");
    } else if (key == "value_string" || key == "value_strings") {
      return NotSupported(what, ": string constants are not supported");
    } else {
      return InvalidFile(what, " has unknown attribute '", key, "'");
    }
    return Status::Ok();
  }

  Status ReadOutputs(const onnx::GraphProto& graph) {
    if (graph.output_size() == 0) return InvalidFile("graph has no outputs");
    for (int i = 0; i < graph.output_size(); ++i) {
      const auto& vi = graph.output(i);
      Value* v = g_->FindValue(vi.name());
      if (!v)
        return InvalidFile("graph output '", vi.name(), "' is not produced by any node, input or initializer");
      if (!v->constant && v->producer)
        OC_RETURN_IF_ERROR(ApplyValueInfo(vi, v, StrCat("graph output '", vi.name(), "'"), false));
      g_->outputs.push_back(v);
    }
    return Status::Ok();
  }

  static constexpr int kMaxSubgraphDepth = 32;

  onnx::ModelProto& model_;
  std::string base_dir_;
  std::unique_ptr<Graph> g_;
  GraphBuilder* parent_ = nullptr;
  std::string what_;  // "If node 'x' attribute 'then_branch'" for subgraphs
};

}  // namespace

Expected<std::unique_ptr<Graph>> ParseOnnxBytes(const void* data, size_t size, const std::string& base_dir,
                                                const OnnxParseOptions& options) {
  if (size == 0) return InvalidFile("the model is empty (0 bytes)");
  if (size > static_cast<size_t>(INT_MAX))
    return InvalidFile("the model is ", size, " bytes; protobuf cannot read files over 2 GiB, so "
                       "save the weights as ONNX external data");
  if (!data) return InvalidArgument("model data is null");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return InvalidFile("not a valid ONNX model: the protobuf data is corrupt or truncated (", size, " bytes)");
  GraphBuilder builder(model, base_dir);
  OC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, builder.Build());
  OC_RETURN_IF_ERROR(onnx_parser::FinishGraph(*graph, options));
  return graph;
}

Expected<std::unique_ptr<Graph>> ParseOnnxFile(const std::string& path, const OnnxParseOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("model file '", path, "' does not exist");
  if (!fs::is_regular_file(path, ec)) return InvalidArgument("model path '", path, "' is not a file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open model file '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return IoError("cannot stat model file '", path, "'");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return InvalidFile("model file '", path, "' is empty (0 bytes)");
  }
  // Mapped rather than read: the protobuf parser copies what it keeps anyway,
  // so a private buffer of the whole file would only add a copy.
  void* map = size <= static_cast<size_t>(INT_MAX) ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0)
                                                   : MAP_FAILED;
  ::close(fd);
  if (size > static_cast<size_t>(INT_MAX))
    return InvalidFile("model file '", path, "' is ", size, " bytes; protobuf cannot read files over 2 GiB, "
                       "so save the weights as ONNX external data");
  if (map == MAP_FAILED) return IoError("cannot map model file '", path, "': ", std::strerror(errno));
  std::string base_dir = fs::path(path).parent_path().string();
  auto graph = ParseOnnxBytes(map, size, base_dir, options);
  ::munmap(map, size);
  if (!graph.ok()) return graph.status().WithContext(StrCat("model '", path, "'"));
  return graph;
}

}  // namespace oc
