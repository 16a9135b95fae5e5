#include "runtime/shape_specializer.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "graph/graph_clone.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/op_registry.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

// Unlike ops' DimsString, negative dims print as numbers: signatures are checked here.
std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// An infer function that fails although every input of its node has a static
// shape either rejects the node for good (an attribute, an element type) or
// wants the value of an input that is only known at run time (a Reshape target
// computed from an input). To tell them apart, the non-constant inputs are
// given placeholder data (zeros) and the node is inferred again: an error that
// stays word for word the same does not depend on the data. Large inputs get
// none: the inputs that decide a shape (targets, pads, scales, axes, counts)
// are small, and the ops whose shape follows large data (NonZero, Compress,
// NonMaxSuppression, Unique) infer an unknown dim instead of failing.
bool FailsWhateverTheData(Node& n, const OpDef& def, const Status& first) {
  constexpr int64_t kMaxPlaceholderElements = 4096;
  std::vector<Value*> given;
  for (Value* in : n.inputs) {
    if (!in || in->constant || in->kind != ValueKind::kTensor || !in->IsStatic()) continue;
    const int64_t bytes = in->ByteSize();
    if (bytes < 0 || in->NumElements() > kMaxPlaceholderElements) continue;
    in->constant = TensorData::Allocate(static_cast<size_t>(bytes));
    given.push_back(in);
  }
  if (given.empty()) return true;
  // What the placeholder data infers must not stay: downstream nodes would
  // see shapes made of zeros.
  std::vector<Value> outputs;
  for (const Value* out : n.outputs) outputs.push_back(out ? *out : Value{});
  const Status again = def.infer(n);
  for (Value* in : given) in->constant.reset();
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i]) *n.outputs[i] = std::move(outputs[i]);
  return !again.ok() && again.code() == first.code() && again.message() == first.message();
}

// After specialisation every value should be static; one that is not comes
// from an op whose output shape depends on data. Re-running the node's infer
// function tells a real error (returned as is, *data_dependent false) from an
// op that computed "unknown" on purpose or needs input data to know its shape
// (a NotSupported naming the node, *data_dependent true: what a caller
// without the interpreter reports).
Status ExplainNonStatic(Graph& g, bool* data_dependent) {
  Status first_dependent;
  *data_dependent = false;
  for (auto& up : g.nodes()) {
    Node& n = *up;
    const Value* unknown = nullptr;
    for (const Value* out : n.outputs)
      if (out && !out->IsStatic() && !unknown) unknown = out;
    if (!unknown) continue;
    bool inputs_static = true;
    for (const Value* in : n.inputs) inputs_static &= !in || in->IsStatic();
    // Every node is checked: a shape error must not hide behind a data-dependent op before it.
    if (inputs_static) {
      const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
      if (def && def->infer) {
        Status st = def->infer(n);
        if (!st.ok() && (st.code() != StatusCode::kNotSupported || FailsWhateverTheData(n, *def, st))) return st;
      }
    }
    if (first_dependent.ok())
      first_dependent = NotSupported("data-dependent output shape of ", n.Describe(), " (value '", unknown->name,
                                     "' has shape ", unknown->ShapeString(), ") is not supported yet");
  }
  *data_dependent = !first_dependent.ok();
  return first_dependent;
}

}  // namespace

std::string SignatureString(const Graph& graph, const ShapeSignature& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) s += ", ";
    if (i < graph.inputs.size()) s += graph.inputs[i]->name;
    s += DimsString(shapes[i]);
  }
  return s;
}

size_t ShapeSpecializer::DefaultCapacity() {
  const char* env = std::getenv("OPENCANN_SHAPE_CACHE_SIZE");
  if (!env || !*env) return kDefaultCapacity;
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 1 || v > 4096) return kDefaultCapacity;
  return static_cast<size_t>(v);
}

ShapeSpecializer::ShapeSpecializer(std::shared_ptr<const Graph> graph,
                                   std::vector<std::span<const uint8_t>> prepacked, size_t capacity)
    : graph_(std::move(graph)), capacity_(capacity ? capacity : 1) {
  ranges_.resize(graph_->inputs.size());
  if (auto it = graph_->metadata.find(kInputShapeRangeKey); it != graph_->metadata.end()) {
    // "x:1~8,-,224,224;y:..." (malformed parts are skipped: the file's checksum vouches for it).
    std::stringstream entries(it->second);
    for (std::string entry; std::getline(entries, entry, ';');) {
      const size_t colon = entry.rfind(':');
      if (colon == std::string::npos) continue;
      const std::string name = entry.substr(0, colon);
      for (size_t i = 0; i < graph_->inputs.size(); ++i) {
        if (graph_->inputs[i]->name != name) continue;
        std::stringstream dims(entry.substr(colon + 1));
        for (std::string d; std::getline(dims, d, ',');) {
          const size_t t = d.find('~');
          if (t == std::string::npos) {
            ranges_[i].emplace_back(0, -1);
          } else {
            ranges_[i].emplace_back(std::strtoll(d.substr(0, t).c_str(), nullptr, 10),
                                    std::strtoll(d.substr(t + 1).c_str(), nullptr, 10));
          }
        }
      }
    }
  }
  for (size_t i = 0; i < prepacked.size() && i < graph_->nodes().size(); ++i)
    if (!prepacked[i].empty()) packed_[graph_->nodes()[i]->name] = prepacked[i];
}

std::pair<int64_t, int64_t> ShapeSpecializer::DimRange(size_t i, size_t d) const {
  if (i < ranges_.size() && d < ranges_[i].size()) return ranges_[i][d];
  return {0, -1};
}

Status ShapeSpecializer::CheckSignature(const ShapeSignature& shapes) const {
  const Graph& g = *graph_;
  if (shapes.size() != g.inputs.size())
    return InvalidArgument("model '", g.name, "' has ", g.inputs.size(), " inputs, ", shapes.size(),
                           " shapes were given");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Value& in = *g.inputs[i];
    const std::vector<int64_t>& s = shapes[i];
    if (in.has_shape && s.size() != in.shape.size())
      return InvalidArgument("input ", i, " ('", in.name, "') has rank ", in.shape.size(), " ",
                             in.ShapeString(), ", the shape given is ", DimsString(s));
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] < 0)
        return InvalidArgument("input ", i, " ('", in.name, "'): dim ", d, " is ", s[d],
                               " in ", DimsString(s), " (a concrete shape has every dim >= 0)");
      if (const auto [lo, hi] = DimRange(i, d); s[d] < lo || (hi >= 0 && s[d] > hi))
        return InvalidArgument("input ", i, " ('", in.name, "'): dim ", d, " is ", s[d], " in ", DimsString(s),
                               ", outside the range ", lo, "~", hi, " the model was compiled for");
      if (in.has_shape && in.shape[d] >= 0 && in.shape[d] != s[d])
        return InvalidArgument("input ", i, " ('", in.name, "'): dim ", d, " is ", s[d], " in ",
                               DimsString(s), " but the model fixes it to ", in.shape[d], " ",
                               in.ShapeString());
    }
  }
  return Status::Ok();
}

Expected<std::shared_ptr<const Executable>> ShapeSpecializer::Specialize(const ShapeSignature& shapes) {
  std::shared_ptr<Graph> g = CloneGraph(*graph_);
  for (size_t i = 0; i < shapes.size(); ++i) {
    Value* in = g->inputs[i];
    in->has_shape = true;
    in->shape = shapes[i];
    in->dim_params.resize(in->shape.size());
  }
  CompileOptions opts;
  // allow_dynamic keeps a data-dependent shape from failing inside the pipeline
  // so that ExplainNonStatic can name it; with static inputs nothing else changes.
  opts.allow_dynamic = true;
  // A bf16 mode chosen at atc time also holds for nodes the pipeline fuses now.
  if (auto it = graph_->metadata.find("precision_mode");
      it != graph_->metadata.end() && gemm::IsBf16PrecisionMode(it->second))
    opts.precision_mode = it->second;
  Status st = RunPipeline(*g, opts);
  if (st.ok() && IsDynamicGraph(*g)) {
    bool data_dependent = false;
    st = ExplainNonStatic(*g, &data_dependent);
    // Data-dependent shapes: the interpreter runs these inputs.
    if (data_dependent) return std::shared_ptr<const Executable>();
  }
  if (!st.ok()) {
    return st.WithContext(
        StrCat("while specialising model '", graph_->name, "' for input shapes ", SignatureString(*graph_, shapes)));
  }
  std::vector<std::span<const uint8_t>> prepacked(g->nodes().size());
  for (size_t i = 0; i < g->nodes().size(); ++i) {
    auto it = packed_.find(g->nodes()[i]->name);
    if (it != packed_.end()) prepacked[i] = it->second;
  }
  auto exe = Executable::Create(g, prepacked);
  // An op with no static kernel (control flow, sequences): the interpreter runs it.
  if (!exe.ok() && exe.status().code() == StatusCode::kNotSupported) return std::shared_ptr<const Executable>();
  if (!exe.ok()) return exe.status();
  // Learn the packing of nodes the .om had none for, once per node name: later
  // shapes then skip repacking the same weights. (An export copies the packed
  // bytes, so it is asked only when a node is new, and only of that node.)
  for (size_t i = 0; i < g->nodes().size(); ++i) {
    const std::string& name = g->nodes()[i]->name;
    if (!prepacked[i].empty() || !asked_.insert(name).second) continue;
    std::vector<uint8_t> exported = (*exe)->ExportPrepacked(i);
    if (!exported.empty()) {
      learnt_.push_back(std::move(exported));
      packed_[name] = learnt_.back();
    }
  }
  ++specializations_;
  return std::shared_ptr<const Executable>(std::move(exe).value());
}

Expected<std::shared_ptr<const Executable>> ShapeSpecializer::GetLocked(const ShapeSignature& shapes, bool pin) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->shapes != shapes) continue;
    it->pinned |= pin;
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().exe;
  }
  OC_RETURN_IF_ERROR(CheckSignature(shapes));
  OC_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> exe, Specialize(shapes));
  entries_.push_front(Entry{shapes, exe, pin});
  size_t unpinned = 0;
  for (const Entry& e : entries_) unpinned += !e.pinned;
  // Evict the least recently used unpinned entries beyond the capacity.
  for (auto it = entries_.end(); unpinned > capacity_ && it != entries_.begin();) {
    --it;
    if (it->pinned) continue;
    it = entries_.erase(it);
    --unpinned;
  }
  return exe;
}

Expected<std::shared_ptr<const Executable>> ShapeSpecializer::Get(const ShapeSignature& shapes) {
  std::lock_guard<std::mutex> lk(mu_);
  return GetLocked(shapes, false);
}

Expected<std::shared_ptr<const Interpreter>> ShapeSpecializer::GetInterpreter() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!interpreter_) {
    auto made = Interpreter::Create(graph_);
    if (!made.ok()) return made.status().WithContext(StrCat("model '", graph_->name, "' needs the interpreter"));
    interpreter_ = std::shared_ptr<const Interpreter>(std::move(made).value());
  }
  return interpreter_;
}

Status ShapeSpecializer::Pin(const ShapeSignature& shapes) {
  std::lock_guard<std::mutex> lk(mu_);
  auto exe = GetLocked(shapes, true);
  return exe.ok() ? Status::Ok() : exe.status();
}

size_t ShapeSpecializer::cached() const {
  std::lock_guard<std::mutex> lk(mu_);
  return entries_.size();
}

std::map<std::string, std::span<const uint8_t>> ShapeSpecializer::PackedByName() const {
  std::lock_guard<std::mutex> lk(mu_);
  return packed_;
}

size_t ShapeSpecializer::learnt() const {
  std::lock_guard<std::mutex> lk(mu_);
  return learnt_.size();
}

uint64_t ShapeSpecializer::specializations() const {
  std::lock_guard<std::mutex> lk(mu_);
  return specializations_;
}

}  // namespace oc
