#include "graph/graph.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <sstream>
#include <unordered_map>

namespace oc {

namespace {
struct AlignedFree {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t(64)); }
};
}  // namespace

TensorData TensorData::Allocate(size_t size) {
  void* p = ::operator new(size ? size : 1, std::align_val_t(64));
  std::memset(p, 0, size ? size : 1);
  TensorData t;
  t.owner_ = std::shared_ptr<void>(p, AlignedFree());
  t.data_ = static_cast<const uint8_t*>(p);
  t.size_ = size;
  return t;
}

TensorData TensorData::Copy(const void* data, size_t size) {
  TensorData t = Allocate(size);
  if (size) std::memcpy(t.mutable_data(), data, size);
  return t;
}

TensorData TensorData::View(std::shared_ptr<const void> owner, const void* data, size_t size) {
  TensorData t;
  t.owner_ = std::move(owner);
  t.data_ = static_cast<const uint8_t*>(data);
  t.size_ = size;
  return t;
}

const char* ValueKindName(ValueKind k) {
  switch (k) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kOptionalTensor: return "optional(tensor)";
    case ValueKind::kOptionalSequence: return "optional(sequence)";
  }
  return "unknown";
}

bool Value::IsStatic() const {
  if (!has_shape) return false;
  for (int64_t d : shape) if (d < 0) return false;
  return true;
}

int64_t Value::NumElements() const {
  if (!IsStatic()) return -1;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

int64_t Value::ByteSize() const { return DataTypeByteSize(dtype, NumElements()); }

bool Value::SizeOverflows() const {
  return IsStatic() && (NumElements() < 0 || (DataTypeBits(dtype) > 0 && ByteSize() < 0));
}

Status CheckOutputSizes(const Node& node) {
  for (const Value* o : node.outputs)
    if (o && o->SizeOverflows())
      return InvalidArgument(node.Describe(), ": output '", o->name, "' would have shape ", o->ShapeString(),
                             ", more elements or bytes than 64 bits can count");
  return Status::Ok();
}

std::string Value::ShapeString() const {
  if (!has_shape) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    if (shape[i] >= 0) s += std::to_string(shape[i]);
    else if (i < dim_params.size() && !dim_params[i].empty()) s += dim_params[i];
    else s += "?";
  }
  return s + "]";
}

const Attribute* Node::FindAttr(const std::string& n) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? nullptr : &it->second;
}
int64_t Node::GetInt(const std::string& n, int64_t def) const {
  const Attribute* a = FindAttr(n);
  return a && a->kind == Attribute::Kind::kInt ? a->i : def;
}
float Node::GetFloat(const std::string& n, float def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->kind == Attribute::Kind::kFloat) return a->f;
  if (a->kind == Attribute::Kind::kInt) return static_cast<float>(a->i);
  return def;
}
std::string Node::GetString(const std::string& n, const std::string& def) const {
  const Attribute* a = FindAttr(n);
  return a && a->kind == Attribute::Kind::kString ? a->s : def;
}
std::vector<int64_t> Node::GetInts(const std::string& n, std::vector<int64_t> def) const {
  const Attribute* a = FindAttr(n);
  return a && a->kind == Attribute::Kind::kInts ? a->ints : def;
}
std::vector<float> Node::GetFloats(const std::string& n, std::vector<float> def) const {
  const Attribute* a = FindAttr(n);
  return a && a->kind == Attribute::Kind::kFloats ? a->floats : def;
}
void Node::SetInt(const std::string& n, int64_t v) {
  Attribute a; a.kind = Attribute::Kind::kInt; a.i = v; attrs[n] = std::move(a);
}
void Node::SetFloat(const std::string& n, float v) {
  Attribute a; a.kind = Attribute::Kind::kFloat; a.f = v; attrs[n] = std::move(a);
}
void Node::SetString(const std::string& n, std::string v) {
  Attribute a; a.kind = Attribute::Kind::kString; a.s = std::move(v); attrs[n] = std::move(a);
}
void Node::SetInts(const std::string& n, std::vector<int64_t> v) {
  Attribute a; a.kind = Attribute::Kind::kInts; a.ints = std::move(v); attrs[n] = std::move(a);
}
void Node::SetFloats(const std::string& n, std::vector<float> v) {
  Attribute a; a.kind = Attribute::Kind::kFloats; a.floats = std::move(v); attrs[n] = std::move(a);
}

std::vector<const Graph*> Node::Subgraphs() const {
  std::vector<const Graph*> out;
  for (const auto& [name, a] : attrs) {
    if (a.kind == Attribute::Kind::kGraph && a.graph) out.push_back(a.graph.get());
    if (a.kind == Attribute::Kind::kGraphs)
      for (const auto& g : a.graphs) if (g) out.push_back(g.get());
  }
  return out;
}

size_t Node::NumImplicitInputs() const {
  size_t n = 0;
  for (const Graph* g : Subgraphs()) n += g->captures.size();
  return n;
}

size_t Node::CaptureOffset(std::string_view attr) const {
  size_t offset = NumExplicitInputs();
  for (const auto& [name, a] : attrs) {
    if (name == attr) break;
    if (a.kind == Attribute::Kind::kGraph && a.graph) offset += a.graph->captures.size();
    if (a.kind == Attribute::Kind::kGraphs)
      for (const auto& g : a.graphs) if (g) offset += g->captures.size();
  }
  return offset;
}

std::string Node::Describe() const {
  std::string t = domain.empty() ? op_type : domain + "::" + op_type;
  return StrCat(t, " node '", name, "'");
}

Value* Graph::AddValue(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->id = static_cast<int>(values_.size());
  v->name = name;
  Value* raw = v.get();
  values_.push_back(std::move(v));
  if (!name.empty()) by_name_[name] = raw;
  return raw;
}

Value* Graph::AddConstant(const std::string& name, DataType dtype, std::vector<int64_t> shape,
                          TensorData data) {
  Value* v = AddValue(name);
  v->dtype = dtype;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  v->constant = std::move(data);
  return v;
}

void Graph::RenameValue(Value* v, const std::string& name) {
  auto it = by_name_.find(v->name);
  if (it != by_name_.end() && it->second == v) by_name_.erase(it);
  v->name = name;
  if (!name.empty()) by_name_[name] = v;
}

Value* Graph::FindValue(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::AddNode(const std::string& op_type, const std::string& name,
                     std::vector<Value*> inputs, std::vector<Value*> outputs,
                     const std::string& domain) {
  auto n = std::make_unique<Node>();
  n->op_type = op_type;
  n->name = name;
  n->domain = domain;
  auto it = opset_imports.find(domain);
  n->opset = it == opset_imports.end() ? 0 : it->second;
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  for (Value* o : n->outputs) if (o) o->producer = n.get();
  Node* raw = n.get();
  nodes_.push_back(std::move(n));
  return raw;
}

void Graph::RemoveNode(Node* node) {
  for (Value* o : node->outputs)
    if (o && o->producer == node) o->producer = nullptr;
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& p) { return p.get() == node; }),
               nodes_.end());
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
  for (Value*& o : outputs)
    if (o == from) o = to;
}

std::vector<Node*> Graph::Consumers(const Value* v) const {
  std::vector<Node*> out;
  for (auto& n : nodes_)
    for (Value* in : n->inputs)
      if (in == v) { out.push_back(n.get()); break; }
  return out;
}

bool Graph::IsGraphInput(const Value* v) const {
  return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
}
bool Graph::IsGraphOutput(const Value* v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

bool Graph::HasSubgraphs() const {
  for (const auto& n : nodes_)
    if (!n->Subgraphs().empty()) return true;
  return false;
}

bool Graph::HasNonTensorValues() const {
  for (const auto& v : values_)
    if (v->kind != ValueKind::kTensor) return true;
  for (const auto& n : nodes_)
    for (const Graph* g : n->Subgraphs())
      if (g->HasNonTensorValues()) return true;
  return false;
}

void Graph::Compact() {
  std::set<const Value*> used(inputs.begin(), inputs.end());
  used.insert(captures.begin(), captures.end());
  used.insert(outputs.begin(), outputs.end());
  for (auto& n : nodes_) {
    for (Value* v : n->inputs) if (v) used.insert(v);
    for (Value* v : n->outputs) if (v) used.insert(v);
  }
  std::vector<std::unique_ptr<Value>> kept;
  by_name_.clear();
  for (auto& v : values_) {
    if (!used.count(v.get())) continue;
    v->id = static_cast<int>(kept.size());
    by_name_[v->name] = v.get();
    kept.push_back(std::move(v));
  }
  values_ = std::move(kept);
}

std::string Graph::UniqueName(const std::string& prefix) {
  for (;;) {
    std::string n = StrCat(prefix, "__", name_counter_++);
    if (!by_name_.count(n)) return n;
  }
}

Status Graph::TopologicalSort() {
  std::unordered_map<const Node*, int> pending;
  std::unordered_map<const Value*, std::vector<Node*>> users;
  for (auto& n : nodes_) {
    int deps = 0;
    for (Value* in : n->inputs) {
      if (in && in->producer) { ++deps; users[in].push_back(n.get()); }
    }
    pending[n.get()] = deps;
  }
  std::vector<Node*> ready, order;
  for (auto& n : nodes_) if (pending[n.get()] == 0) ready.push_back(n.get());
  // Keep the original relative order where possible: process in index order.
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  auto cmp = [&](Node* a, Node* b) { return index[a] > index[b]; };
  std::make_heap(ready.begin(), ready.end(), cmp);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    for (Value* o : n->outputs) {
      if (!o) continue;
      auto it = users.find(o);
      if (it == users.end()) continue;
      for (Node* u : it->second) {
        // A node may read the same value twice: it was counted once per use.
        if (--pending[u] == 0) { ready.push_back(u); std::push_heap(ready.begin(), ready.end(), cmp); }
      }
    }
  }
  if (order.size() != nodes_.size())
    return InvalidArgument("graph has a cycle (", nodes_.size() - order.size(),
                           " nodes could not be ordered)");
  std::unordered_map<const Node*, std::unique_ptr<Node>> owned;
  for (auto& n : nodes_) owned[n.get()] = std::move(n);
  nodes_.clear();
  for (Node* n : order) nodes_.push_back(std::move(owned[n]));
  return Status::Ok();
}

Status Graph::Verify() const {
  std::set<const Value*> known;
  std::set<std::string> names;
  for (auto& v : values_) {
    known.insert(v.get());
    if (!v->name.empty() && !names.insert(v->name).second)
      return Internal("IR verify: duplicate value name '", v->name, "'");
    if (v->has_shape && v->dim_params.size() != v->shape.size())
      return Internal("IR verify: value '", v->name, "' dim_params size mismatch");
    if (v->constant && v->IsStatic() && v->ByteSize() >= 0 &&
        static_cast<int64_t>(v->constant->size()) != v->ByteSize())
      return Internal("IR verify: constant '", v->name, "' has ", v->constant->size(),
                      " bytes, shape ", v->ShapeString(), " needs ", v->ByteSize());
  }
  std::set<const Value*> available;
  for (Value* v : inputs) {
    if (!known.count(v)) return Internal("IR verify: graph input not owned by graph");
    available.insert(v);
  }
  for (Value* v : captures) {
    if (!known.count(v)) return Internal("IR verify: captured value not owned by graph");
    if (v->producer) return Internal("IR verify: captured value '", v->name, "' has a producer");
    available.insert(v);
  }
  for (auto& v : values_) if (v->constant) available.insert(v.get());
  for (auto& n : nodes_) {
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      Value* in = n->inputs[i];
      if (!in) continue;
      if (!known.count(in))
        return Internal("IR verify: ", n->Describe(), " input ", i, " is not owned by the graph");
      if (!available.count(in))
        return Internal("IR verify: ", n->Describe(), " input ", i, " ('", in->name,
                        "') is used before it is produced");
    }
    for (const Graph* sub : n->Subgraphs()) {
      Status st = sub->Verify();
      if (!st.ok()) return st.WithContext(StrCat("in a subgraph of ", n->Describe()));
    }
    if (n->NumImplicitInputs() > n->inputs.size())
      return Internal("IR verify: ", n->Describe(), " has ", n->inputs.size(), " inputs, fewer than the ",
                      n->NumImplicitInputs(), " its subgraphs capture");
    for (Value* o : n->outputs) {
      if (!o) continue;
      if (!known.count(o)) return Internal("IR verify: ", n->Describe(), " output not owned");
      if (o->producer != n.get())
        return Internal("IR verify: value '", o->name, "' producer is not ", n->Describe());
      available.insert(o);
    }
  }
  for (Value* v : outputs)
    if (!available.count(v))
      return Internal("IR verify: graph output '", v ? v->name : "<null>", "' is never produced");
  return Status::Ok();
}

static std::string AttrToString(const Attribute& a) {
  std::ostringstream os;
  switch (a.kind) {
    case Attribute::Kind::kInt: os << a.i; break;
    case Attribute::Kind::kFloat: os << a.f; break;
    case Attribute::Kind::kString: os << '"' << a.s << '"'; break;
    case Attribute::Kind::kInts:
      os << '[';
      for (size_t i = 0; i < a.ints.size(); ++i) os << (i ? "," : "") << a.ints[i];
      os << ']';
      break;
    case Attribute::Kind::kFloats:
      os << '[';
      for (size_t i = 0; i < a.floats.size(); ++i) os << (i ? "," : "") << a.floats[i];
      os << ']';
      break;
    case Attribute::Kind::kStrings:
      os << '[';
      for (size_t i = 0; i < a.strings.size(); ++i) os << (i ? "," : "") << '"' << a.strings[i] << '"';
      os << ']';
      break;
    case Attribute::Kind::kTensor: os << "tensor<" << DataTypeName(a.tensor_dtype) << ">"; break;
    case Attribute::Kind::kGraph: os << "graph '" << (a.graph ? a.graph->name : "") << "'"; break;
    case Attribute::Kind::kGraphs: os << "graphs[" << a.graphs.size() << "]"; break;
  }
  return os.str();
}

static std::string ValueRef(const Value* v) {
  if (!v) return "<none>";
  std::string type = StrCat(DataTypeName(v->dtype), v->ShapeString());
  switch (v->kind) {
    case ValueKind::kTensor: break;
    case ValueKind::kSequence: type = StrCat("seq<", type, ">"); break;
    case ValueKind::kOptionalTensor: type = StrCat("opt<", type, ">"); break;
    case ValueKind::kOptionalSequence: type = StrCat("opt<seq<", type, ">>"); break;
  }
  return StrCat("%", v->name, ":", type, v->constant ? " const" : "");
}

// Subgraphs are printed after their node, indented, one block per graph attribute.
static void DumpGraph(const Graph& g, const std::string& indent, std::ostringstream& os) {
  os << "graph " << g.name << " {\n";
  for (Value* v : g.inputs) os << indent << "  input " << ValueRef(v) << "\n";
  for (Value* v : g.captures) os << indent << "  capture " << ValueRef(v) << "\n";
  for (auto& n : g.nodes()) {
    os << indent << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i) os << (i ? ", " : "") << ValueRef(n->outputs[i]);
    os << " = " << (n->domain.empty() ? "" : n->domain + "::") << n->op_type;
    if (!n->attrs.empty()) {
      os << "<";
      bool first = true;
      for (auto& [k, a] : n->attrs) { os << (first ? "" : ", ") << k << "=" << AttrToString(a); first = false; }
      os << ">";
    }
    os << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", " : "") << ValueRef(n->inputs[i]);
    os << ")  # " << n->name << "\n";
    for (auto& [k, a] : n->attrs) {
      std::vector<const Graph*> subs;
      if (a.kind == Attribute::Kind::kGraph && a.graph) subs.push_back(a.graph.get());
      if (a.kind == Attribute::Kind::kGraphs) for (auto& sg : a.graphs) if (sg) subs.push_back(sg.get());
      for (const Graph* sg : subs) {
        os << indent << "    " << k << ": ";
        DumpGraph(*sg, indent + "    ", os);
      }
    }
  }
  for (Value* v : g.outputs) os << indent << "  output " << ValueRef(v) << "\n";
  os << indent << "}\n";
}

std::string Graph::Dump() const {
  std::ostringstream os;
  DumpGraph(*this, "", os);
  return os.str();
}

}  // namespace oc
