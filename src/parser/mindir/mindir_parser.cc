// ModelProto (MINDIR) -> Graph. The file is untrusted: every name, index,
// type and size is checked, and errors name the node or tensor at fault.
#include "parser/mindir/mindir_parser.h"

#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "mindir.pb.h"
#include "parser/mindir/mindir_lower.h"
#include "parser/mindir/mindir_value.h"
#include "parser/onnx/onnx_graph_fixup.h"

namespace oc {
namespace {

using mindir::MsValue;
constexpr const char* kRefPrefix = "REF::";

class MindirBuilder {
 public:
  explicit MindirBuilder(const mind_ir::ModelProto& model) : model_(model), g_(std::make_unique<Graph>()) {}

  Expected<std::unique_ptr<Graph>> Build() {
    if (!model_.has_graph() || model_.graph().node_size() == 0)
      return InvalidFile("not a MINDIR model: it has no graph with nodes (a MINDIR file is written by "
                         "mindspore.export(..., file_format='MINDIR'))");
    // Every MINDIR graph calls primitives, which the model lists; other protobuf
    // files (an ONNX model shares some field numbers) parse but list none.
    if (model_.primitives_size() == 0)
      return InvalidFile("not a MINDIR model: it lists no MindSpore primitives (an ONNX model? compile that with "
                         "--framework=5)");
    const mind_ir::GraphProto& graph = model_.graph();
    g_->name = graph.name();
    g_->producer_name = StrCat(model_.producer_name().empty() ? "MindSpore" : model_.producer_name(),
                               model_.model_version().empty() ? "" : " " + model_.model_version());
    g_->ir_version = 8;
    g_->opset_imports[""] = mindir::kEmitOpset;
    prefix_ = graph.name() + ":";
    OC_RETURN_IF_ERROR(ReadPrimitives());
    OC_RETURN_IF_ERROR(CheckSupported(graph));
    OC_RETURN_IF_ERROR(ReadParameters(graph));
    OC_RETURN_IF_ERROR(ReadInputs(graph));
    for (int i = 0; i < graph.node_size(); ++i) OC_RETURN_IF_ERROR(ReadNode(graph.node(i), i));
    OC_RETURN_IF_ERROR(ReadOutputs(graph));
    return std::move(g_);
  }

 private:
  // "<graph name>:x" -> "x": MindSpore qualifies every name by its graph.
  std::string ShortName(const std::string& name) const {
    if (name.size() > prefix_.size() && name.compare(0, prefix_.size(), prefix_) == 0)
      return mindir::Printable(name.substr(prefix_.size()));
    return mindir::Printable(name);
  }

  // A free IR value name near `want`.
  std::string FreeName(const std::string& want) {
    return g_->FindValue(want) ? g_->UniqueName(want) : want;
  }

  Status ReadPrimitives() {
    for (int i = 0; i < model_.primitives_size(); ++i) {
      const auto& p = model_.primitives(i);
      if (p.name().empty()) return InvalidFile("primitive #", i, " has no name");
      const std::string name = mindir::Printable(p.name());
      if (p.op_type().empty()) return InvalidFile("primitive '", name, "' has no op_type");
      if (!prims_.emplace(p.name(), &p).second) return InvalidFile("primitive '", name, "' is defined twice");
    }
    return Status::Ok();
  }

  // What op a node calls: a primitive's op type, "Constant", or a function graph.
  Expected<const mind_ir::PrimitiveProto*> PrimitiveOf(const mind_ir::NodeProto& n, int index) {
    const std::string& op = n.op_type();
    if (op.compare(0, 5, kRefPrefix) != 0) {
      if (op.empty()) return InvalidFile("node #", index, " ('", ShortName(n.name()), "') has no op_type");
      return nullptr;  // a Constant, or a call of a graph (reported by the caller)
    }
    auto it = prims_.find(op.substr(5));
    if (it == prims_.end())
      return InvalidFile("node '", ShortName(n.name()), "' calls primitive '", mindir::Printable(op.substr(5)),
                         "', which the model's primitive list does not define");
    return it->second;
  }

  static bool IsStructural(const std::string& op) {
    return op == "MakeTuple" || op == "TupleGetItem" || op == "MakeList" || op == "ListGetItem" || op == "Return";
  }

  // Every primitive without a lowering, and every call of a function graph,
  // reported together (like the ONNX parser's unsupported-op report).
  Status CheckSupported(const mind_ir::GraphProto& graph) {
    std::map<std::string, std::vector<std::string>> missing;
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& n = graph.node(i);
      OC_ASSIGN_OR_RETURN(const mind_ir::PrimitiveProto* prim, PrimitiveOf(n, i));
      std::string op;
      if (!prim) {
        if (n.op_type() == "Constant") continue;
        op = StrCat("call of graph '", ShortName(n.op_type()), "'");
      } else {
        if (IsStructural(prim->op_type()) || mindir::FindPrim(prim->op_type())) continue;
        op = mindir::Printable(prim->op_type());
      }
      missing[op].push_back(ShortName(n.name()));
    }
    if (missing.empty()) return Status::Ok();
    std::string msg = StrCat(missing.size(), " unsupported MindSpore primitive", missing.size() == 1 ? "" : "s", ": ");
    bool first = true;
    for (const auto& [op, nodes] : missing) {
      msg += StrCat(first ? "" : "; ", op, " nodes [");
      first = false;
      for (size_t k = 0; k < nodes.size() && k < 8; ++k) msg += (k ? ", " : "") + nodes[k];
      if (nodes.size() > 8) msg += StrCat(", ... ", nodes.size() - 8, " more");
      msg += "]";
    }
    if (model_.functions_size() > 0)
      msg += " (the model has function graphs: control flow or cells MindSpore did not inline are not supported)";
    return NotSupported(msg);
  }

  Status ReadParameters(const mind_ir::GraphProto& graph) {
    for (int i = 0; i < graph.parameter_size(); ++i) {
      const auto& p = graph.parameter(i);
      if (p.name().empty()) return InvalidFile("parameter #", i, " has no name");
      if (names_.count(p.name())) return InvalidFile("parameter '", ShortName(p.name()), "' is defined twice");
      const std::string what = StrCat("parameter '", ShortName(p.name()), "'");
      OC_ASSIGN_OR_RETURN(mindir::DecodedTensor t, mindir::DecodeTensor(p, what));
      const int rank = static_cast<int>(t.shape.size());
      std::string name = FreeName(p.has_ref_key() && !p.ref_key().empty() ? mindir::Printable(p.ref_key())
                                                                        : ShortName(p.name()));
      Value* v = g_->AddConstant(name, t.dtype, std::move(t.shape), std::move(t.data));
      names_[p.name()] = MsValue::Tensor(v, v->dtype, rank);
    }
    return Status::Ok();
  }

  Status ReadInputs(const mind_ir::GraphProto& graph) {
    for (int i = 0; i < graph.input_size(); ++i) {
      const auto& in = graph.input(i);
      if (in.name().empty()) return InvalidFile("graph input #", i, " has no name");
      if (names_.count(in.name())) return InvalidFile("graph input '", ShortName(in.name()), "' is defined twice");
      const std::string what = StrCat("graph input '", ShortName(in.name()), "'");
      if (in.tensor_size() != 1)
        return NotSupported(what, " is not one tensor (", in.tensor_size(),
                            " tensor descriptions); scalar, tuple and monad inputs are not supported");
      const auto& t = in.tensor(0);
      Value* v = g_->AddValue(FreeName(ShortName(in.name())));
      OC_ASSIGN_OR_RETURN(v->dtype, mindir::ConvertElemType(t.data_type(), what));
      v->has_shape = true;
      for (int d = 0; d < t.dims_size(); ++d) {
        const int64_t dim = t.dims(d);
        if (dim == -2 && t.dims_size() == 1) { v->has_shape = false; break; }  // rank unknown
        if (dim < -1) return InvalidFile(what, ": dim ", d, " is ", dim, "; dims are >= 0, or -1 when unknown");
        v->shape.push_back(dim);
        v->dim_params.emplace_back();
      }
      if (!v->has_shape) { v->shape.clear(); v->dim_params.clear(); }
      if (v->SizeOverflows()) return InvalidFile(what, ": shape ", v->ShapeString(), " has too many elements");
      g_->inputs.push_back(v);
      names_[in.name()] = MsValue::Tensor(v, v->dtype, v->has_shape ? static_cast<int>(v->shape.size()) : -1);
    }
    return Status::Ok();
  }

  Expected<MsValue> Lookup(const std::string& name, const mind_ir::NodeProto& n, int k) const {
    auto it = names_.find(name);
    if (it == names_.end())
      return InvalidFile("node '", ShortName(n.name()), "' input ", k, " '", ShortName(name),
                         "' is not a graph input, parameter or the output of an earlier node");
    return it->second;
  }

  Status Define(const mind_ir::NodeProto& n, MsValue v) {
    if (n.output_size() != 1 || n.output(0).empty())
      return InvalidFile("node '", ShortName(n.name()), "' has ", n.output_size(),
                         " outputs; MINDIR nodes have exactly one");
    if (names_.count(n.output(0)))
      return InvalidFile("node '", ShortName(n.name()), "' output '", ShortName(n.output(0)), "' is defined twice");
    names_[n.output(0)] = std::move(v);
    return Status::Ok();
  }

  Status ReadNode(const mind_ir::NodeProto& n, int index) {
    const std::string name = ShortName(n.name().empty() ? StrCat("node_", index) : n.name());
    if (n.op_type() == "Constant") {
      const mind_ir::AttributeProto* value = nullptr;
      for (const auto& a : n.attribute()) if (a.name() == "value") value = &a;
      if (!value) return InvalidFile("Constant node '", name, "' has no 'value' attribute");
      const std::string out = n.output_size() ? ShortName(n.output(0)) : name;
      OC_ASSIGN_OR_RETURN(MsValue v, mindir::DecodeAttribute(*value, *g_, out, StrCat("Constant node '", name, "'")));
      return Define(n, std::move(v));
    }
    OC_ASSIGN_OR_RETURN(const mind_ir::PrimitiveProto* prim, PrimitiveOf(n, index));
    if (!prim) return Internal("node '", name, "' was not checked");  // CheckSupported refused calls
    std::vector<MsValue> inputs;
    for (int k = 0; k < n.input_size(); ++k) {
      OC_ASSIGN_OR_RETURN(MsValue v, Lookup(n.input(k), n, k));
      inputs.push_back(std::move(v));
    }
    const std::string& op = prim->op_type();
    if (op == "MakeTuple" || op == "MakeList") {
      MsValue t;
      t.kind = MsValue::Kind::kTuple;
      t.items = std::move(inputs);
      return Define(n, std::move(t));
    }
    if (op == "TupleGetItem" || op == "ListGetItem") {
      if (inputs.size() != 2 || inputs[0].kind != MsValue::Kind::kTuple || inputs[1].kind != MsValue::Kind::kInt)
        return InvalidFile(op, " node '", name, "' needs a tuple and an int index, got ", inputs.size(), " inputs");
      int64_t k = inputs[1].i;
      const int64_t size = static_cast<int64_t>(inputs[0].items.size());
      if (k < 0) k += size;
      if (k < 0 || k >= size)
        return InvalidFile(op, " node '", name, "': index ", inputs[1].i, " is outside a tuple of ", size);
      MsValue item = inputs[0].items[static_cast<size_t>(k)];
      return Define(n, std::move(item));
    }
    if (op == "Return") {
      if (inputs.empty()) return InvalidFile("Return node '", name, "' has no input");
      return Define(n, inputs[0]);
    }
    const mindir::PrimDef* def = mindir::FindPrim(op);
    if (!def) return Internal("primitive '", op, "' was not checked");
    // Arguments: the node's inputs first, the rest from the primitive's attributes.
    if (inputs.size() > def->args.size())
      return InvalidFile(op, " node '", name, "' has ", inputs.size(), " inputs; ", op, " takes at most ",
                         def->args.size());
    std::vector<MsValue> args = std::move(inputs);
    for (size_t k = args.size(); k < def->args.size(); ++k) {
      const mindir::ArgDef& a = def->args[k];
      const mind_ir::AttributeProto* attr = FindPrimAttr(*prim, a.name, *def);
      if (attr) {
        OC_ASSIGN_OR_RETURN(MsValue v, mindir::DecodeAttribute(*attr, *g_, StrCat(name, "/", a.name),
                                                               StrCat(op, " node '", name, "' attribute '", a.name, "'")));
        args.push_back(std::move(v));
      } else if (a.required) {
        return InvalidFile(op, " node '", name, "' has no argument '", a.name, "' (input ", k, ")");
      } else {
        args.push_back(a.def);
      }
    }
    std::vector<mindir::TensorType> types;
    for (const auto& a : n.attribute())
      if (a.name() == "shape") types = mindir::DecodeResultTypes(a);
    const std::string out = n.output_size() ? ShortName(n.output(0)) : name;
    mindir::Lowering lowering(*g_, *def, name, out, std::move(args), std::move(types));
    OC_ASSIGN_OR_RETURN(MsValue result, def->lower(lowering));
    return Define(n, std::move(result));
  }

  static const mind_ir::AttributeProto* FindPrimAttr(const mind_ir::PrimitiveProto& p, const std::string& name,
                                                     const mindir::PrimDef& def) {
    auto alias = def.aliases.find(name);
    for (const auto& a : p.attribute())
      if (a.name() == name || (alias != def.aliases.end() && a.name() == alias->second)) return &a;
    return nullptr;
  }

  // Graph outputs: tensors, with tuples flattened in order.
  Status AddOutputs(const MsValue& v, const std::string& what, int depth) {
    if (depth > 32) return InvalidFile(what, ": tuples nested too deeply");
    if (v.kind == MsValue::Kind::kTuple) {
      for (size_t k = 0; k < v.items.size(); ++k)
        OC_RETURN_IF_ERROR(AddOutputs(v.items[k], StrCat(what, " item ", k), depth + 1));
      return Status::Ok();
    }
    if (v.kind != MsValue::Kind::kTensor)
      return NotSupported(what, " is ", v.Describe(), "; only tensor outputs (or tuples of them) are supported");
    g_->outputs.push_back(v.tensor);
    return Status::Ok();
  }

  Status ReadOutputs(const mind_ir::GraphProto& graph) {
    if (graph.output_size() == 0) return InvalidFile("the graph has no outputs");
    for (int i = 0; i < graph.output_size(); ++i) {
      const auto& o = graph.output(i);
      auto it = names_.find(o.name());
      if (it == names_.end())
        return InvalidFile("graph output '", ShortName(o.name()), "' is not produced by any node, input or parameter");
      OC_RETURN_IF_ERROR(AddOutputs(it->second, StrCat("graph output '", ShortName(o.name()), "'"), 0));
    }
    if (g_->outputs.empty()) return InvalidFile("the graph has no tensor outputs");
    // Outputs read as "output_0", ... (MindSpore's are internal node names);
    // an output that is also an input or a parameter keeps its name.
    std::set<const Value*> renamed;
    for (size_t k = 0; k < g_->outputs.size(); ++k) {
      Value* v = g_->outputs[k];
      if (!v->producer || renamed.count(v)) continue;
      const std::string want = StrCat("output_", k);
      if (!g_->FindValue(want)) g_->RenameValue(v, want);
      renamed.insert(v);
    }
    return Status::Ok();
  }

  const mind_ir::ModelProto& model_;
  std::unique_ptr<Graph> g_;
  std::string prefix_;
  std::map<std::string, const mind_ir::PrimitiveProto*> prims_;
  std::map<std::string, MsValue> names_;
};

}  // namespace

Expected<std::unique_ptr<Graph>> ParseMindirBytes(const void* data, size_t size, const MindirParseOptions& options) {
  if (size == 0) return InvalidFile("the model is empty (0 bytes)");
  if (!data) return InvalidArgument("model data is null");
  if (size > static_cast<size_t>(INT_MAX))
    return InvalidFile("the model is ", size, " bytes; protobuf cannot read files over 2 GiB");
  mind_ir::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return InvalidFile("not a valid MINDIR model: the protobuf data is corrupt or truncated (", size, " bytes)");
  MindirBuilder builder(model);
  OC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, builder.Build());
  OC_RETURN_IF_ERROR(onnx_parser::FinishGraph(*graph, options));
  return graph;
}

Expected<std::unique_ptr<Graph>> ParseMindirFile(const std::string& path, const MindirParseOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("model file '", path, "' does not exist");
  if (!fs::is_regular_file(path, ec)) return InvalidArgument("model path '", path, "' is not a file");
  const auto size = fs::file_size(path, ec);
  if (ec) return IoError("cannot read the size of model file '", path, "'");
  if (size > static_cast<uintmax_t>(INT_MAX))
    return InvalidFile("model file '", path, "' is ", size, " bytes; protobuf cannot read files over 2 GiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open model file '", path, "'");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    return IoError("cannot read model file '", path, "'");
  auto graph = ParseMindirBytes(bytes.data(), bytes.size(), options);
  if (!graph.ok()) return graph.status().WithContext(StrCat("model '", path, "'"));
  return graph;
}

}  // namespace oc
