#include "executor/interpreter.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <new>

#include "executor/interpreter_ops.h"
#include "ops/cpu/common/cast_util.h"
#include "ops/op_registry.h"

namespace oc {

int64_t HostTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t HostTensor::ByteSize() const { return static_cast<size_t>(NumElements()) * DataTypeSize(dtype); }

HostTensor HostTensor::Allocate(DataType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = TensorData::Allocate(t.ByteSize());
  return t;
}

RtValue RtValue::FromTensor(HostTensor t) {
  RtValue v;
  v.kind = ValueKind::kTensor;
  v.elem_dtype = t.dtype;
  v.tensor = std::move(t);
  return v;
}

RtValue RtValue::FromSequence(DataType elem, std::vector<HostTensor> items) {
  RtValue v;
  v.kind = ValueKind::kSequence;
  v.elem_dtype = elem;
  v.sequence = std::move(items);
  return v;
}

RtValue RtValue::EmptyOptional(ValueKind kind, DataType elem) {
  RtValue v;
  v.kind = kind;
  v.elem_dtype = elem;
  v.present = false;
  return v;
}

static std::string DimsString(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += StrCat(i ? "," : "", d[i]);
  return s + "]";
}

std::string RtValue::Describe() const {
  switch (kind) {
    case ValueKind::kTensor: return StrCat("tensor ", DataTypeName(tensor.dtype), DimsString(tensor.shape));
    case ValueKind::kSequence:
      return StrCat("sequence<", DataTypeName(elem_dtype), "> of ", sequence.size());
    case ValueKind::kOptionalTensor:
      return present ? StrCat("optional(tensor ", DataTypeName(tensor.dtype), DimsString(tensor.shape), ")")
                     : "optional(tensor) empty";
    case ValueKind::kOptionalSequence:
      return present ? StrCat("optional(sequence of ", sequence.size(), ")") : "optional(sequence) empty";
  }
  return "?";
}

RtValue ConstantValue(const Value& v) {
  HostTensor t;
  t.dtype = v.dtype;
  t.shape = v.shape;
  t.data = *v.constant;
  return RtValue::FromTensor(std::move(t));
}

namespace {

// Inputs up to this many elements are shown to infer functions and kernel
// factories as constants (shape vectors, axes, scalars such as TopK's k).
constexpr int64_t kSmallInputElements = 64;

struct AlignedDelete {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t(64)); }
};

}  // namespace

// A kernel made for one input signature.
struct CachedKernel {
  std::string key;
  std::unique_ptr<Node> node;                 // the specialised node the kernel was made from
  std::vector<std::unique_ptr<Value>> values; // its inputs and outputs
  KernelPtr kernel;                           // null when every output is a constant
};

struct InterpreterNodeCache {
  std::mutex mu;
  std::deque<std::shared_ptr<CachedKernel>> entries;  // newest at the back
  std::map<const Graph*, std::unique_ptr<Interpreter>> bodies;
  std::map<const Graph*, std::shared_ptr<FastBody>> fast_bodies;
  NativeOpFn native = nullptr;
  bool needs_small_data = false;  // shapes alone did not specialise this node
  const OpDef* def = nullptr;
  size_t created = 0;
};

Interpreter::~Interpreter() = default;

Expected<std::unique_ptr<Interpreter>> Interpreter::Create(std::shared_ptr<const Graph> graph) {
  if (!graph) return InvalidArgument("Interpreter::Create: graph is null");
  std::unique_ptr<Interpreter> in(new Interpreter());
  in->graph_ = std::move(graph);
  const OpRegistry& reg = OpRegistry::Global();
  for (const auto& n : in->graph_->nodes()) {
    auto cache = std::make_unique<InterpreterNodeCache>();
    cache->native = FindNativeOp(n->domain, n->op_type);
    if (!cache->native) {
      cache->def = reg.Find(n->domain, n->op_type, n->opset);
      if (!cache->def)
        return NotSupported(n->Describe(), ": op ", n->op_type, " (opset ", n->opset, ") is not supported");
      if (!cache->def->infer || !CpuKernelOf(*cache->def))
        return NotSupported(n->Describe(), ": op ", n->op_type, " has no CPU kernel");
    }
    in->caches_.push_back(std::move(cache));
  }
  return in;
}

size_t Interpreter::kernels_created() const {
  size_t n = 0;
  for (const auto& c : caches_) {
    std::lock_guard<std::mutex> lk(c->mu);
    n += c->created;
    for (const auto& [g, body] : c->bodies) n += body->kernels_created();
  }
  return n;
}

namespace {

Status CheckBinding(const Value& want, const RtValue& got, const std::string& what) {
  if (want.kind != got.kind)
    return InvalidArgument(what, " '", want.name, "' expects a ", ValueKindName(want.kind), ", got ",
                           got.Describe());
  DataType dt = got.kind == ValueKind::kTensor ? got.tensor.dtype : got.elem_dtype;
  if (want.dtype != DataType::kUndefined && dt != DataType::kUndefined && want.dtype != dt)
    return InvalidArgument(what, " '", want.name, "' expects element type ", DataTypeName(want.dtype), ", got ",
                           DataTypeName(dt));
  if (got.kind == ValueKind::kTensor) {
    if (got.tensor.data.size() < got.tensor.ByteSize())
      return InvalidArgument(what, " '", want.name, "' has ", got.tensor.data.size(), " bytes, shape ",
                             DimsString(got.tensor.shape), " needs ", got.tensor.ByteSize());
    if (want.has_shape) {
      bool ok = want.shape.size() == got.tensor.shape.size();
      for (size_t i = 0; ok && i < want.shape.size(); ++i)
        ok = want.shape[i] < 0 || want.shape[i] == got.tensor.shape[i];
      if (!ok)
        return InvalidArgument(what, " '", want.name, "' expects shape ", want.ShapeString(), ", got ",
                               DimsString(got.tensor.shape));
    }
  }
  return Status::Ok();
}

// Which inputs a specialised node shows as constant: graph constants always;
// first nothing else (so kernels are reused while values change, as loop-carried
// state does), and for a node whose infer function or factory needed more,
// also the small inputs; as a last resort, everything (not cached).
enum class Shown { kConstants, kSmallData, kAllData };

bool ShowAsConstant(const Value* graph_value, const HostTensor& t, Shown shown) {
  if (graph_value && graph_value->constant) return true;
  return shown == Shown::kAllData || (shown == Shown::kSmallData && t.NumElements() <= kSmallInputElements);
}

// Binary: per input a tag byte, the dtype, the rank and the dims, then the
// bytes shown as constant. Built on every node run, so no formatting.
std::string SignatureKey(const Node& node, std::span<const HostTensor* const> ins, Shown shown) {
  std::string key;
  key.reserve(ins.size() * 48);
  auto put = [&](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (size_t i = 0; i < ins.size(); ++i) {
    const HostTensor* t = ins[i];
    if (!t) { key += '-'; continue; }
    const Value* gv = node.inputs[i];
    const bool with_data = !(gv && gv->constant) && shown == Shown::kSmallData &&
                           t->NumElements() <= kSmallInputElements;
    key += gv && gv->constant ? 'c' : with_data ? '=' : 't';
    put(static_cast<int64_t>(t->dtype));
    put(static_cast<int64_t>(t->shape.size()));
    for (int64_t d : t->shape) put(d);
    if (with_data) key.append(reinterpret_cast<const char*>(t->data.data()), t->ByteSize());
  }
  return key;
}

// Builds the specialised node (inputs with concrete shapes, small or constant
// ones with data), infers its outputs and creates its kernel.
Expected<std::shared_ptr<CachedKernel>> Specialise(const Node& node, const OpDef& def,
                                                  std::span<const HostTensor* const> ins, Shown shown,
                                                  int max_threads) {
  auto entry = std::make_shared<CachedKernel>();
  entry->node = std::make_unique<Node>(node);
  Node& spec = *entry->node;
  spec.inputs.clear();
  spec.outputs.clear();
  for (size_t i = 0; i < ins.size(); ++i) {
    const Value* gv = node.inputs[i];
    if (!ins[i]) { spec.inputs.push_back(nullptr); continue; }
    auto v = std::make_unique<Value>();
    v->name = gv ? gv->name : StrCat("input", i);
    v->dtype = ins[i]->dtype;
    v->has_shape = true;
    v->shape = ins[i]->shape;
    v->dim_params.assign(v->shape.size(), "");
    if (ShowAsConstant(gv, *ins[i], shown)) v->constant = ins[i]->data;
    spec.inputs.push_back(v.get());
    entry->values.push_back(std::move(v));
  }
  for (const Value* o : node.outputs) {
    if (!o) { spec.outputs.push_back(nullptr); continue; }
    auto v = std::make_unique<Value>();
    v->name = o->name;
    v->producer = &spec;
    spec.outputs.push_back(v.get());
    entry->values.push_back(std::move(v));
  }
  OC_RETURN_IF_ERROR(def.infer(spec));
  OC_RETURN_IF_ERROR(CheckOutputSizes(spec));
  bool need_kernel = false;
  for (const Value* o : spec.outputs) {
    if (!o) continue;
    if (!o->IsStatic() || o->dtype == DataType::kUndefined)
      return NotSupported(node.Describe(), ": output '", o->name, "' has shape ", o->ShapeString(),
                          " even with every input known (data-dependent output shape)");
    if (!o->constant) need_kernel = true;
  }
  if (need_kernel) {
    OC_ASSIGN_OR_RETURN(entry->kernel, CpuKernelOf(def)(KernelInit{spec, {}, max_threads}));
  }
  return entry;
}

Status RunKernelTensors(const Node& node, InterpreterNodeCache& cache, std::vector<const HostTensor*>& tensors,
                        std::vector<RtValue>& outs, ThreadPool& pool);

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

HostTensor ConvertHalf(const HostTensor& t, DataType to) {
  HostTensor out = HostTensor::Allocate(to, t.shape);
  const int64_t n = t.NumElements();
  if (to == DataType::kFloat32) {
    const uint16_t* src = t.data.as<uint16_t>();
    float* dst = reinterpret_cast<float*>(out.data.mutable_data());
    for (int64_t i = 0; i < n; ++i)
      dst[i] = t.dtype == DataType::kFloat16 ? ew::HalfToFloat(src[i]) : ew::BFloat16ToFloat(src[i]);
  } else {
    const float* src = t.data.as<float>();
    uint16_t* dst = reinterpret_cast<uint16_t*>(out.data.mutable_data());
    for (int64_t i = 0; i < n; ++i)
      dst[i] = to == DataType::kFloat16 ? ew::FloatToHalf(src[i]) : ew::FloatToBFloat16(src[i]);
  }
  return out;
}

// The output types the op gives for its original (half) inputs, from its infer
// function: which float32 results go back to a half type (LayerNormalization's
// Mean/InvStdDev stay float32, for one). Empty when inference needs more than
// types and shapes; then every float32 result goes back.
std::vector<DataType> HalfOutputTypes(const Node& node, const OpDef& def, std::span<const RtValue* const> ins) {
  Node spec(node);
  std::vector<std::unique_ptr<Value>> vals;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i]) { spec.inputs[i] = nullptr; continue; }
    auto v = std::make_unique<Value>();
    v->dtype = ins[i]->tensor.dtype;
    v->has_shape = true;
    v->shape = ins[i]->tensor.shape;
    v->dim_params.assign(v->shape.size(), "");
    if (node.inputs[i] && node.inputs[i]->constant) v->constant = ins[i]->tensor.data;
    spec.inputs[i] = v.get();
    vals.push_back(std::move(v));
  }
  for (auto& o : spec.outputs) {
    if (!o) continue;
    vals.push_back(std::make_unique<Value>());
    o = vals.back().get();
  }
  std::vector<DataType> types;
  if (!def.infer(spec).ok()) return types;
  for (const Value* o : spec.outputs) types.push_back(o ? o->dtype : DataType::kUndefined);
  return types;
}

Status RunKernelNode(const Node& node, InterpreterNodeCache& cache, std::span<const RtValue* const> ins,
                     std::vector<RtValue>& outs, ThreadPool& pool) {
  std::vector<const HostTensor*> tensors(ins.size(), nullptr);
  // float16/bfloat16 inputs the kernel does not take run in float32, and the
  // float32 results go back to that type: what legalize-types does at compile
  // time (rounding to nearest even, as the reference does after computing in
  // float32).
  std::vector<HostTensor> widened;
  widened.reserve(ins.size());
  DataType half = DataType::kUndefined;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i]) continue;
    if (!ins[i]->is_tensor())
      return InvalidArgument(node.Describe(), ": input ", i, " must be a tensor, got ", ins[i]->Describe());
    tensors[i] = &ins[i]->tensor;
    if (IsHalf(tensors[i]->dtype) && !KernelTakesType(*cache.def, tensors[i]->dtype)) {
      half = tensors[i]->dtype;
      widened.push_back(ConvertHalf(*tensors[i], DataType::kFloat32));
      tensors[i] = &widened.back();
    }
  }
  if (half != DataType::kUndefined) {
    std::vector<DataType> want = HalfOutputTypes(node, *cache.def, ins);
    OC_RETURN_IF_ERROR(RunKernelTensors(node, cache, tensors, outs, pool));
    for (size_t k = 0; k < outs.size(); ++k) {
      RtValue& o = outs[k];
      DataType to = k < want.size() ? want[k] : half;
      if (o.is_tensor() && o.tensor.dtype == DataType::kFloat32 && IsHalf(to)) {
        o.tensor = ConvertHalf(o.tensor, to);
        o.elem_dtype = to;
      }
    }
    return Status::Ok();
  }
  return RunKernelTensors(node, cache, tensors, outs, pool);
}

Status RunKernelTensors(const Node& node, InterpreterNodeCache& cache, std::vector<const HostTensor*>& tensors,
                        std::vector<RtValue>& outs, ThreadPool& pool) {
  std::shared_ptr<CachedKernel> entry;
  Status first_error;
  {
    // Look-up and creation under the node's lock: concurrent runs that miss
    // together make the kernel once (runs of other nodes are not held up).
    std::lock_guard<std::mutex> lk(cache.mu);
    for (Shown shown : {Shown::kConstants, Shown::kSmallData}) {
      if (shown == Shown::kConstants && cache.needs_small_data) continue;
      const std::string key = SignatureKey(node, tensors, shown);
      for (auto& e : cache.entries)
        if (e->key == key) { entry = e; break; }
      if (entry) break;
      auto made = Specialise(node, *cache.def, tensors, shown, pool.num_threads());
      if (made.ok()) {
        entry = std::move(made).value();
        entry->key = key;
        ++cache.created;
        cache.entries.push_back(entry);
        if (cache.entries.size() > Interpreter::kCacheEntriesPerNode) cache.entries.pop_front();
        break;
      }
      if (first_error.ok()) first_error = made.status();
      cache.needs_small_data = true;
    }
  }
  if (!entry) {
    // An infer function or factory that needs the data of a larger input.
    auto retry = Specialise(node, *cache.def, tensors, Shown::kAllData, pool.num_threads());
    if (!retry.ok()) return first_error.ok() ? retry.status() : first_error;
    entry = std::move(retry).value();  // data-specific: used once, not cached
  }
  const Node& spec = *entry->node;
  std::vector<const void*> in_ptrs(tensors.size(), nullptr);
  for (size_t i = 0; i < tensors.size(); ++i) in_ptrs[i] = tensors[i] ? tensors[i]->data.data() : nullptr;
  std::vector<void*> out_ptrs(spec.outputs.size(), nullptr);
  outs.assign(spec.outputs.size(), RtValue());
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const Value* o = spec.outputs[i];
    if (!o) continue;
    HostTensor t;
    if (o->constant) {
      t.dtype = o->dtype;
      t.shape = o->shape;
      t.data = *o->constant;
    } else {
      t = HostTensor::Allocate(o->dtype, o->shape);
      out_ptrs[i] = t.data.mutable_data();
    }
    outs[i] = RtValue::FromTensor(std::move(t));
  }
  if (!entry->kernel) return Status::Ok();
  std::unique_ptr<void, AlignedDelete> scratch;
  if (size_t bytes = entry->kernel->ScratchBytes()) {
    scratch.reset(::operator new((bytes + 63) / 64 * 64, std::align_val_t(64), std::nothrow));
    if (!scratch) return ResourceExhausted(node.Describe(), ": cannot allocate ", bytes, " bytes of scratch");
  }
  KernelIO io{in_ptrs.data(), in_ptrs.size(), out_ptrs.data(), out_ptrs.size(), &pool, scratch.get()};
  return entry->kernel->Run(io);
}

}  // namespace

Expected<const Interpreter*> NativeCall::Body(const std::string& attr) {
  const Attribute* a = node.FindAttr(attr);
  if (!a || a->kind != Attribute::Kind::kGraph || !a->graph)
    return InvalidArgument(node.Describe(), ": graph attribute '", attr, "' is missing");
  std::lock_guard<std::mutex> lk(*body_mu);
  auto it = bodies->find(a->graph.get());
  if (it != bodies->end()) return it->second.get();
  OC_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> body, Interpreter::Create(a->graph));
  const Interpreter* raw = body.get();
  (*bodies)[a->graph.get()] = std::move(body);
  return raw;
}

std::vector<RtValue> NativeCall::CapturesOf(const std::string& attr) const {
  const Attribute* a = node.FindAttr(attr);
  const Graph* g = !a ? nullptr
                   : a->kind == Attribute::Kind::kGraph ? a->graph.get()
                   : a->kind == Attribute::Kind::kGraphs && !a->graphs.empty() ? a->graphs.front().get()
                                                                              : nullptr;
  if (!g) return {};
  const size_t offset = node.CaptureOffset(attr);
  std::vector<RtValue> out;
  for (size_t k = 0; k < g->captures.size(); ++k) {
    const RtValue* v = offset + k < inputs.size() ? inputs[offset + k] : nullptr;
    out.push_back(v ? *v : RtValue());
  }
  return out;
}

Expected<const HostTensor*> NativeCall::TensorIn(size_t i) const {
  const RtValue* v = in(i);
  if (!v) return InvalidArgument(node.Describe(), ": input ", i, " is required");
  if (!v->is_tensor()) return InvalidArgument(node.Describe(), ": input ", i, " must be a tensor, got ", v->Describe());
  return &v->tensor;
}

Expected<std::vector<RtValue>> Interpreter::Run(std::span<const RtValue> inputs, ThreadPool& pool,
                                                std::span<const RtValue> captures) const {
  const Graph& g = *graph_;
  if (inputs.size() != g.inputs.size())
    return InvalidArgument("graph '", g.name, "' expects ", g.inputs.size(), " inputs, got ", inputs.size());
  if (captures.size() != g.captures.size())
    return InvalidArgument("graph '", g.name, "' captures ", g.captures.size(), " outer values, got ",
                           captures.size());
  const size_t nv = g.values().size();
  std::vector<RtValue> vals(nv);
  std::vector<bool> set(nv, false);
  // Last reader of each value, so intermediates are freed as soon as possible.
  std::vector<int> last_use(nv, -1);
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs) if (in) last_use[in->id] = static_cast<int>(i);
  for (const Value* o : g.outputs) last_use[o->id] = INT32_MAX;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& want = *g.inputs[i];
    RtValue v = inputs[i];
    // A tensor or sequence passed where an optional of it is declared (a Loop
    // body's optional carried value fed by a plain one) is a present optional.
    if ((want.kind == ValueKind::kOptionalTensor && v.kind == ValueKind::kTensor) ||
        (want.kind == ValueKind::kOptionalSequence && v.kind == ValueKind::kSequence)) {
      v.kind = want.kind;
      v.present = true;
    }
    OC_RETURN_IF_ERROR(CheckBinding(want, v, "input"));
    vals[want.id] = std::move(v);
    set[want.id] = true;
  }
  for (size_t i = 0; i < captures.size(); ++i) {
    vals[g.captures[i]->id] = captures[i];
    set[g.captures[i]->id] = true;
  }
  for (const auto& v : g.values())
    if (v->constant && !set[v->id]) { vals[v->id] = ConstantValue(*v); set[v->id] = true; }

  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const Node& node = *nodes[ni];
    InterpreterNodeCache& cache = *caches_[ni];
    std::vector<const RtValue*> ins(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const Value* v = node.inputs[k];
      if (!v) continue;
      if (!set[v->id])
        return Internal(node.Describe(), ": input '", v->name, "' has no value (graph not in order)");
      ins[k] = &vals[v->id];
    }
    std::vector<RtValue> outs;
    Status st;
    if (cache.native) {
      NativeCall call{node, ins, std::vector<RtValue>(node.outputs.size()), pool, &cache.mu, &cache.bodies,
                      &cache.fast_bodies};
      st = cache.native(call);
      outs = std::move(call.outputs);
    } else {
      st = RunKernelNode(node, cache, ins, outs, pool);
    }
    if (!st.ok()) return st.WithContext(StrCat("while running ", node.Describe()));
    if (outs.size() != node.outputs.size())
      return Internal(node.Describe(), " produced ", outs.size(), " values for ", node.outputs.size(), " outputs");
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const Value* o = node.outputs[k];
      if (!o) continue;
      vals[o->id] = std::move(outs[k]);
      set[o->id] = true;
    }
    for (const Value* v : node.inputs)
      if (v && last_use[v->id] == static_cast<int>(ni) && !v->constant) vals[v->id] = RtValue();
  }
  std::vector<RtValue> result;
  result.reserve(g.outputs.size());
  for (const Value* o : g.outputs) {
    if (!set[o->id]) return Internal("graph output '", o->name, "' was not computed");
    result.push_back(vals[o->id]);
  }
  return result;
}

}  // namespace oc
