// If, Loop, Scan: ops whose bodies are subgraphs. The bodies run through the
// Interpreter (executor/interpreter.h), which caches their kernels per input
// shape, so a Loop whose body sees one shape packs its weights once.
//
// Two ways to run them:
//  - natively in the Interpreter (IfOp/LoopOp/ScanOp below), for graphs with
//    data-dependent shapes or sequence values;
//  - as a Kernel in the static Executable, when the op's outputs have static
//    shapes after shape inference (an If whose branches agree, a Loop without
//    scan outputs whose carried values keep their shape): ControlFlowKernel
//    wraps the kernel's raw pointers as values, runs the same native code and
//    copies the results out after checking their shapes.
#include <cstdlib>
#include <cstring>
#include <string>

#include "executor/interpreter_ops.h"
#include "graph/graph_clone.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"
#include "passes/passes.h"
#include "runtime/shape_specializer.h"

namespace oc {

// Tensor buffers a loop writes again once no value uses them any more. The
// outputs of iteration t are the inputs of t+1 and then dropped, so a loop
// cycles through two buffers per carried value instead of allocating every
// iteration. Values made from a buffer are views that share its ownership; a
// buffer still shared (a scan slice kept for the end, a result) is not handed
// out again. Not thread-safe: one per evaluation.
class BufferCycle {
 public:
  // A buffer of `size` bytes no live value shares; zeroed only when new. Only
  // a buffer of exactly that size is reused: shapes are steady where this
  // pays, and a small value must not take a large state buffer.
  TensorData Get(size_t size) {
    ++clock_;
    for (Slot& s : slots_)
      if (s.buf.use_count() == 1 && s.buf->size() == size) {
        s.stamp = clock_;
        return TensorData::View(s.buf, s.buf->data(), size);
      }
    auto b = std::make_shared<TensorData>(TensorData::Allocate(size));
    if (slots_.size() < kSlots) {
      slots_.push_back({b, clock_});
    } else {
      // Give up a free buffer of another size, else the buffer handed out
      // longest ago (a scan slice kept for the end, which keeps it alive),
      // not the carried state of the last iteration.
      size_t victim = 0;
      for (size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].buf.use_count() == 1) {
          victim = i;
          break;
        }
        if (slots_[i].stamp < slots_[victim].stamp) victim = i;
      }
      slots_[victim] = {b, clock_};
    }
    return TensorData::View(b, b->data(), size);
  }
  // Makes `v` a tensor of `dtype` and `shape` in a buffer from Get(), reusing
  // v's shape storage. Its old bytes are let go first, so they can be reused.
  void Reset(RtValue& v, DataType dtype, std::span<const int64_t> shape) {
    v.tensor.data = TensorData();
    v.kind = ValueKind::kTensor;
    v.elem_dtype = v.tensor.dtype = dtype;
    v.present = true;
    v.sequence.clear();
    v.tensor.shape.assign(shape.begin(), shape.end());
    v.tensor.data = Get(v.tensor.ByteSize());
  }

 private:
  struct Slot {
    std::shared_ptr<TensorData> buf;
    uint64_t stamp = 0;  // clock_ when last handed out
  };
  static constexpr size_t kSlots = 16;
  std::vector<Slot> slots_;
  uint64_t clock_ = 0;
};

// An If branch or a Loop/Scan body compiled like a model: captures become trailing inputs, and
// a static Executable is specialised per input-shape signature (bounded LRU,
// ShapeSpecializer). Loop-carried values usually keep their shapes, so every
// iteration after the first runs a flat kernel loop instead of the node-by-node
// interpreter. Signatures that do not specialise (data-dependent shapes inside
// the body, errors) are remembered and left to the interpreter.
class FastBody {
 public:
  static std::shared_ptr<FastBody> Make(const Graph& body) {
    if (body.HasNonTensorValues()) return nullptr;
    std::shared_ptr<Graph> g = CloneGraph(body);
    g->inputs.insert(g->inputs.end(), g->captures.begin(), g->captures.end());
    g->captures.clear();
    for (const Value* in : g->inputs)
      if (in->kind != ValueKind::kTensor) return nullptr;
    if (g->name.empty()) g->name = "body";
    return std::make_shared<FastBody>(std::move(g));
  }
  explicit FastBody(std::shared_ptr<Graph> g) : graph_(std::move(g)) {}

  // What one If/Loop/Scan evaluation keeps between its body runs, so that an
  // iteration at the shapes of the one before needs no lock, no lookup and no
  // allocation: the last signature with its executable, an execution context
  // held until the evaluation ends, the pointer arrays and the output buffers.
  // A local of the evaluation: concurrent runs of one node never share one.
  class Session {
   public:
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() { Drop(); }
    BufferCycle& buffers() { return buffers_; }

   private:
    friend class FastBody;
    void Drop() {
      if (exe && ctx) exe->ReleaseContext(std::move(ctx));
      ctx.reset();
      exe.reset();
    }
    ShapeSignature sig;  // of `exe`
    std::shared_ptr<const Executable> exe;
    std::unique_ptr<ExecutionContext> ctx;
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    BufferCycle buffers_;
  };

  // True with `outs` filled when a static executable ran the body. Values
  // already in `outs` are overwritten in place (their buffers reused once free).
  bool Run(std::span<const RtValue> args, std::span<const RtValue> captures, ThreadPool& pool,
           std::vector<RtValue>& outs, Session& s) {
    // graph_->inputs is fixed by Make; its dtypes are written once under mu_
    // before any executable exists, so with s.exe set they are safe to read.
    const size_t n = graph_->inputs.size();
    if (args.size() + captures.size() != n) return false;
    bool same = s.exe != nullptr;
    size_t i = 0;
    for (std::span<const RtValue> part : {args, captures})
      for (const RtValue& v : part) {
        if (!v.is_tensor()) return false;
        if (same && (v.tensor.shape != s.sig[i] || v.tensor.dtype != graph_->inputs[i]->dtype)) same = false;
        ++i;
      }
    if (!same && !Specialize(args, captures, s)) return false;
    const Executable& e = *s.exe;
    s.in_ptrs.clear();
    for (std::span<const RtValue> part : {args, captures})
      for (const RtValue& v : part) s.in_ptrs.push_back(v.tensor.data.data());
    outs.resize(e.num_outputs());
    s.out_ptrs.clear();
    // Let go of every old output first: their buffers may serve the new ones.
    for (RtValue& v : outs) v.tensor.data = TensorData();
    for (size_t o = 0; o < e.num_outputs(); ++o) {
      s.buffers_.Reset(outs[o], e.output(o).dtype, e.output(o).shape);
      s.out_ptrs.push_back(outs[o].tensor.data.mutable_data());
    }
    // A run-time failure is reported by the interpreter, which names the body node.
    return e.Run(*s.ctx, s.in_ptrs, s.out_ptrs, pool).ok();
  }

 private:
  // Points `s` at the executable for the inputs' shapes (specialised on first
  // use); false when there is none and the interpreter must run the body.
  bool Specialize(std::span<const RtValue> args, std::span<const RtValue> captures, Session& s) {
    s.Drop();
    s.sig.resize(graph_->inputs.size());
    size_t i = 0;
    for (std::span<const RtValue> part : {args, captures})
      for (const RtValue& v : part) s.sig[i++] = v.tensor.shape;
    auto dtype = [&](size_t k) { return (k < args.size() ? args[k] : captures[k - args.size()]).tensor.dtype; };
    ShapeSpecializer* spec = nullptr;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (disabled_) return false;
      if (!spec_) {
        // Inputs the body leaves untyped (captures of values the parser saw
        // without a type) take the types of the first run; later runs must match.
        for (size_t k = 0; k < s.sig.size(); ++k) {
          Value* in = graph_->inputs[k];
          if (in->dtype == DataType::kUndefined) in->dtype = dtype(k);
          if (!in->has_shape) {
            in->has_shape = true;
            in->shape.assign(s.sig[k].size(), -1);
            in->dim_params.assign(s.sig[k].size(), "");
          }
        }
        spec_ = std::make_unique<ShapeSpecializer>(graph_, std::vector<std::span<const uint8_t>>{}, 4);
      }
      for (size_t k = 0; k < s.sig.size(); ++k)
        if (dtype(k) != graph_->inputs[k]->dtype || s.sig[k].size() != graph_->inputs[k]->shape.size()) return false;
      for (const ShapeSignature& f : failed_)
        if (f == s.sig) return false;
      spec = spec_.get();
    }
    auto exe = spec->Get(s.sig);
    if (!exe.ok() || !*exe) {
      std::lock_guard<std::mutex> lk(mu_);
      failed_.push_back(s.sig);
      // A body whose shapes keep changing and do not specialise: stop trying.
      if (failed_.size() > 8) disabled_ = true;
      return false;
    }
    if (spec->specializations() > kMaxBodySpecializations) {
      // Shapes that change every iteration (a growing KV cache, say) would
      // compile the body each time: node by node is cheaper from here on.
      std::lock_guard<std::mutex> lk(mu_);
      disabled_ = true;
    }
    auto ctx = (*exe)->AcquireContext();
    if (!ctx.ok()) return false;
    s.exe = std::move(exe).value();
    s.ctx = std::move(ctx).value();
    return true;
  }

 private:
  std::shared_ptr<Graph> graph_;  // typed at the first run, then read-only
  std::unique_ptr<ShapeSpecializer> spec_;
  std::mutex mu_;
  std::vector<ShapeSignature> failed_;
  bool disabled_ = false;
};

namespace {

// The static runner of graph attribute `attr`, made on first use; null when
// the body cannot have one.
// OPENCANN_INTERPRET_BODIES=1 runs every body node by node (debugging, tests).
FastBody* FastBodyOf(NativeCall& call, const std::string& attr) {
  if (!call.fast_bodies) return nullptr;
  const Attribute* a = call.node.FindAttr(attr);
  if (!a || a->kind != Attribute::Kind::kGraph || !a->graph) return nullptr;
  std::lock_guard<std::mutex> lk(*call.body_mu);
  auto it = call.fast_bodies->find(a->graph.get());
  if (it == call.fast_bodies->end()) {
    // Read once per body (when its entry is made), not on every execution.
    const char* env = std::getenv("OPENCANN_INTERPRET_BODIES");
    const bool interpret = env && env[0] == '1';
    it = call.fast_bodies->emplace(a->graph.get(), interpret ? nullptr : FastBody::Make(*a->graph)).first;
  }
  return it->second.get();
}

const Graph* GraphAttr(const Node& node, const char* name) {
  const Attribute* a = node.FindAttr(name);
  return a && a->kind == Attribute::Kind::kGraph ? a->graph.get() : nullptr;
}

// Copies kind, dtype and (if static-looking) shape from a body output.
void SetFromBody(Node& node, size_t i, const Value& body_out) {
  Value* v = node.output(i);
  if (!v) return;
  v->kind = body_out.kind;
  v->dtype = body_out.dtype;
  v->has_shape = body_out.has_shape;
  v->shape = body_out.shape;
  v->dim_params.assign(v->shape.size(), "");
}

// ---------------------------------------------------------------------------
// Static inference. A body is shape-inferred on a copy whose inputs and
// captures take the types (and, for constants, the data) the node feeds it,
// so that If/Loop/Scan outputs come out static when their bodies keep them
// so, even where the model declares nothing. What the body declares is the
// fallback when that inference fails.

// A type-only copy of `v` (kind, dtype, shape), without data or producer.
Value TypeOf(const Value& v) {
  Value t;
  t.name = v.name;
  t.kind = v.kind;
  t.dtype = v.dtype;
  t.has_shape = v.has_shape;
  t.shape = v.shape;
  t.dim_params = v.dim_params;
  t.dim_params.resize(t.shape.size());
  return t;
}

std::vector<Value> BodyOutputTypes(const Node& node, const std::string& attr, const Graph& body,
                                   const std::vector<const Value*>& inputs) {
  std::vector<Value> declared;
  for (const Value* o : body.outputs) declared.push_back(TypeOf(*o));
  if (inputs.size() != body.inputs.size()) return declared;
  std::shared_ptr<Graph> g = CloneGraph(body);
  auto bind = [](Value* dst, const Value* src) {
    if (!src) return;
    dst->kind = src->kind;
    if (src->dtype != DataType::kUndefined) dst->dtype = src->dtype;
    if (src->has_shape) {
      dst->has_shape = true;
      dst->shape = src->shape;
      dst->dim_params.assign(dst->shape.size(), "");
    }
    if (src->constant) dst->constant = src->constant;
  };
  for (size_t i = 0; i < inputs.size(); ++i) bind(g->inputs[i], inputs[i]);
  const size_t offset = node.CaptureOffset(attr);
  for (size_t k = 0; k < g->captures.size(); ++k) bind(g->captures[k], node.input(offset + k));
  CompileOptions opts;
  opts.allow_dynamic = true;
  if (!RunShapeInference(*g, opts).ok()) return declared;
  std::vector<Value> inferred;
  for (size_t k = 0; k < g->outputs.size(); ++k) {
    const Value& o = *g->outputs[k];
    // Keep the declaration where inference learnt less.
    bool better = o.dtype != DataType::kUndefined && (o.IsStatic() || !declared[k].has_shape);
    inferred.push_back(better ? TypeOf(o) : declared[k]);
  }
  return inferred;
}

// A scalar of `dt` (the iteration number and condition a Loop body receives).
Value ScalarType(DataType dt) {
  Value v;
  v.dtype = dt;
  v.has_shape = true;
  return v;
}

Status InferIf(Node& node) {
  const Graph* then_g = GraphAttr(node, "then_branch");
  const Graph* else_g = GraphAttr(node, "else_branch");
  if (!then_g || !else_g) return InvalidArgument(node.Describe(), ": then_branch and else_branch are required");
  if (then_g->outputs.size() != node.outputs.size() || else_g->outputs.size() != node.outputs.size())
    return InvalidArgument(node.Describe(), ": has ", node.outputs.size(), " outputs, but then_branch has ",
                           then_g->outputs.size(), " and else_branch ", else_g->outputs.size());
  const std::vector<Value> then_out = BodyOutputTypes(node, "then_branch", *then_g, {});
  const std::vector<Value> else_out = BodyOutputTypes(node, "else_branch", *else_g, {});
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value& a = then_out[i];
    const Value& b = else_out[i];
    SetFromBody(node, i, a.dtype != DataType::kUndefined ? a : b);
    Value* v = node.output(i);
    if (!v) continue;
    if (!(a.IsStatic() && b.IsStatic() && a.shape == b.shape)) {
      // Branches may differ in shape: keep the rank only if both agree.
      v->has_shape = a.has_shape && b.has_shape && a.shape.size() == b.shape.size();
      v->shape.assign(v->has_shape ? a.shape.size() : 0, -1);
      v->dim_params.assign(v->shape.size(), "");
    }
  }
  return Status::Ok();
}

Status InferLoop(Node& node) {
  const Graph* body = GraphAttr(node, "body");
  if (!body) return InvalidArgument(node.Describe(), ": attribute 'body' is required");
  const size_t explicit_in = node.NumExplicitInputs();
  if (explicit_in < 2) return InvalidArgument(node.Describe(), ": needs inputs M and cond (may be empty names)");
  const size_t n = explicit_in - 2;
  if (body->inputs.size() != n + 2)
    return InvalidArgument(node.Describe(), ": body has ", body->inputs.size(), " inputs, expected ", n + 2,
                           " (iteration number, condition and ", n, " loop-carried values)");
  if (body->outputs.size() < n + 1 || node.outputs.size() != body->outputs.size() - 1)
    return InvalidArgument(node.Describe(), ": body has ", body->outputs.size(), " outputs, node has ",
                           node.outputs.size(), "; expected body outputs = 1 + node outputs");
  const Value iter = ScalarType(DataType::kInt64), cond = ScalarType(DataType::kBool);
  std::vector<const Value*> body_in{&iter, &cond};
  for (size_t i = 0; i < n; ++i) body_in.push_back(node.input(2 + i));
  const std::vector<Value> body_out = BodyOutputTypes(node, "body", *body, body_in);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value& bo = body_out[i + 1];
    if (i < n) {
      const Value* init = node.input(2 + i);
      SetFromBody(node, i, bo);
      Value* v = node.output(i);
      if (v && init) {
        v->kind = init->kind;
        if (v->dtype == DataType::kUndefined) v->dtype = init->dtype;
        // The carried value keeps its shape only if the body says so.
        bool same = init->IsStatic() && bo.IsStatic() && init->shape == bo.shape;
        if (!same) {
          v->has_shape = init->has_shape && bo.has_shape && init->shape.size() == bo.shape.size();
          v->shape.assign(v->has_shape ? init->shape.size() : 0, -1);
          v->dim_params.assign(v->shape.size(), "");
        }
      }
    } else if (Value* v = node.output(i)) {
      // Scan outputs: one slice per iteration, stacked; the count is unknown.
      v->kind = ValueKind::kTensor;
      v->dtype = bo.dtype;
      v->has_shape = bo.has_shape;
      v->shape.assign(1, -1);
      if (bo.has_shape) v->shape.insert(v->shape.end(), bo.shape.begin(), bo.shape.end());
      v->dim_params.assign(v->shape.size(), "");
    }
  }
  return Status::Ok();
}

Status InferScan(Node& node) {
  const Graph* body = GraphAttr(node, "body");
  if (!body) return InvalidArgument(node.Describe(), ": attribute 'body' is required");
  const int64_t m = node.GetInt("num_scan_inputs", -1);
  const bool v8 = node.opset < 9;
  const size_t explicit_in = node.NumExplicitInputs() - (v8 ? 1 : 0);
  if (m < 1 || static_cast<size_t>(m) > explicit_in)
    return InvalidArgument(node.Describe(), ": num_scan_inputs must be in [1, ", explicit_in, "], got ", m);
  const size_t n = explicit_in - static_cast<size_t>(m);
  if (body->outputs.size() != node.outputs.size())
    return InvalidArgument(node.Describe(), ": body has ", body->outputs.size(), " outputs, node has ",
                           node.outputs.size());
  // The number of steps, when the first scan input's scanned dim is known.
  int64_t scan_len = -1;
  if (const Value* first = node.input((v8 ? 1 : 0) + n); first && first->IsStatic() && !v8) {
    std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", std::vector<int64_t>(m, 0));
    const int64_t rank = static_cast<int64_t>(first->shape.size());
    if (!in_axes.empty() && in_axes[0] >= -rank && in_axes[0] < rank)
      scan_len = first->shape[in_axes[0] < 0 ? in_axes[0] + rank : in_axes[0]];
  }
  // The body sees the states and one slice of each scan input (its scanned
  // axis removed); opset 8's batch axis is not modelled here.
  std::vector<Value> slices(static_cast<size_t>(m));
  std::vector<const Value*> body_in;
  if (!v8) {
    std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", std::vector<int64_t>(m, 0));
    for (size_t i = 0; i < n; ++i) body_in.push_back(node.input(i));
    for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
      const Value* in = node.input(n + j);
      if (!in || !in->has_shape || j >= in_axes.size()) { body_in.push_back(nullptr); continue; }
      const int64_t rank = static_cast<int64_t>(in->shape.size());
      if (in_axes[j] < -rank || in_axes[j] >= rank) { body_in.push_back(nullptr); continue; }
      slices[j] = TypeOf(*in);
      slices[j].shape.erase(slices[j].shape.begin() + (in_axes[j] < 0 ? in_axes[j] + rank : in_axes[j]));
      slices[j].dim_params.assign(slices[j].shape.size(), "");
      body_in.push_back(&slices[j]);
    }
  }
  const std::vector<Value> body_out =
      v8 ? BodyOutputTypes(node, "body", *body, {}) : BodyOutputTypes(node, "body", *body, body_in);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* v = node.output(i);
    if (!v) continue;
    const Value& bo = body_out[i];
    v->kind = ValueKind::kTensor;
    v->dtype = bo.dtype;
    const Value* init = i < n ? node.input((v8 ? 1 : 0) + i) : nullptr;
    v->has_shape = false;
    v->shape.clear();
    if (init && init->IsStatic() && bo.IsStatic() && bo.shape == init->shape) {
      v->has_shape = true;
      v->shape = init->shape;
    } else if (i >= n && !v8 && bo.IsStatic() && scan_len >= 0) {
      // A scan output stacks one declared-static slice per step along its axis.
      const size_t j = i - n;
      std::vector<int64_t> axes = node.GetInts("scan_output_axes", std::vector<int64_t>(node.outputs.size() - n, 0));
      const int64_t rank = static_cast<int64_t>(bo.shape.size()) + 1;
      if (j < axes.size() && axes[j] >= -rank && axes[j] < rank) {
        const int64_t axis = axes[j] < 0 ? axes[j] + rank : axes[j];
        v->has_shape = true;
        v->shape = bo.shape;
        v->shape.insert(v->shape.begin() + axis, scan_len);
      }
    }
    v->dim_params.assign(v->shape.size(), "");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Native evaluation.

Expected<bool> TruthOf(const HostTensor& t, const std::string& what) {
  if (t.NumElements() != 1) return InvalidArgument(what, " must have one element, has ", t.NumElements());
  if (t.dtype == DataType::kBool || t.dtype == DataType::kUInt8 || t.dtype == DataType::kInt8)
    return t.data.data()[0] != 0;
  return InvalidArgument(what, " must be bool, got ", DataTypeName(t.dtype));
}

Status IfOp(NativeCall& call) {
  OC_ASSIGN_OR_RETURN(const HostTensor* cond, call.TensorIn(0));
  OC_ASSIGN_OR_RETURN(bool take_then, TruthOf(*cond, "condition"));
  const char* branch = take_then ? "then_branch" : "else_branch";
  OC_ASSIGN_OR_RETURN(const Interpreter* body, call.Body(branch));
  std::vector<RtValue> captures = call.CapturesOf(branch);
  // A model that runs many times sees the same branch shapes each time: the
  // compiled branch pays off from the second run.
  std::vector<RtValue> outs;
  FastBody* fast = FastBodyOf(call, branch);
  FastBody::Session session;
  if (!fast || !fast->Run({}, captures, call.pool, outs, session)) {
    auto run = body->Run({}, call.pool, captures);
    if (!run.ok()) return run.status().WithContext(StrCat("in ", branch));
    outs = std::move(run).value();
  }
  if (outs.size() != call.outputs.size())
    return InvalidArgument(branch, " returned ", outs.size(), " values, the node has ", call.outputs.size(),
                           " outputs");
  call.outputs = std::move(outs);
  return Status::Ok();
}

// Makes `v` a scalar of `dt` holding `bytes`.
void SetScalar(RtValue& v, DataType dt, const void* bytes, BufferCycle& buffers) {
  buffers.Reset(v, dt, {});
  std::memcpy(v.tensor.data.mutable_data(), bytes, DataTypeSize(dt));
}

Status LoopOp(NativeCall& call) {
  // The counts are checked here too, not only by InferLoop: a graph from a
  // .om reaches the interpreter without shape inference.
  if (call.num_explicit_inputs() < 2)
    return InvalidArgument(call.node.Describe(), ": needs inputs M and cond (may be empty names)");
  const size_t n = call.num_explicit_inputs() - 2;
  std::optional<int64_t> max_trips;
  if (call.in(0)) {
    OC_ASSIGN_OR_RETURN(const HostTensor* m, call.TensorIn(0));
    OC_ASSIGN_OR_RETURN(max_trips, ScalarInt(*m, "trip count M"));
  }
  bool cond = true;
  if (call.in(1)) {
    OC_ASSIGN_OR_RETURN(const HostTensor* c, call.TensorIn(1));
    OC_ASSIGN_OR_RETURN(cond, TruthOf(*c, "input cond"));
  }
  OC_ASSIGN_OR_RETURN(const Interpreter* body, call.Body("body"));
  std::vector<RtValue> captures = call.CapturesOf("body");
  const Graph& bg = body->graph();
  if (bg.inputs.size() != n + 2 || bg.outputs.size() < n + 1 || call.outputs.size() != bg.outputs.size() - 1)
    return InvalidArgument(call.node.Describe(), ": body has ", bg.inputs.size(), " inputs and ", bg.outputs.size(),
                           " outputs; with ", n, " loop-carried values and ", call.outputs.size(),
                           " node outputs it needs ", n + 2, " and ", call.outputs.size() + 1);
  const size_t k = bg.outputs.size() - 1 - n;
  std::vector<RtValue> args(n + 2);
  for (size_t i = 0; i < n; ++i) {
    if (!call.in(2 + i)) return InvalidArgument(call.node.Describe(), ": loop-carried input ", i, " is missing");
    args[2 + i] = *call.in(2 + i);
  }
  std::vector<std::vector<HostTensor>> scans(k);
  FastBody* fast = FastBodyOf(call, "body");
  FastBody::Session session;
  std::vector<RtValue> o;
  int64_t it = 0;
  while (cond && (!max_trips || it < *max_trips)) {
    SetScalar(args[0], DataType::kInt64, &it, session.buffers());
    const uint8_t c = 1;
    SetScalar(args[1], DataType::kBool, &c, session.buffers());
    if (!fast || !fast->Run(args, captures, call.pool, o, session)) {
      auto outs = body->Run(args, call.pool, captures);
      if (!outs.ok()) return outs.status().WithContext(StrCat("in the body, iteration ", it));
      o = std::move(outs).value();
    }
    if (!o[0].is_tensor()) return InvalidArgument("the body's condition output is not a tensor");
    OC_ASSIGN_OR_RETURN(cond, TruthOf(o[0].tensor, "the body's condition output"));
    // Swapped, not moved: o keeps the old values' storage for the next run to reuse.
    for (size_t i = 0; i < n; ++i) std::swap(args[2 + i], o[1 + i]);
    for (size_t j = 0; j < k; ++j) {
      if (!o[1 + n + j].is_tensor())
        return NotSupported("scan output ", j, " of the body is a ", o[1 + n + j].Describe(),
                            "; only tensors can be scan outputs");
      scans[j].push_back(std::move(o[1 + n + j].tensor));
    }
    ++it;
  }
  for (size_t i = 0; i < n && i < call.outputs.size(); ++i) call.outputs[i] = std::move(args[2 + i]);
  for (size_t j = 0; j < k && n + j < call.outputs.size(); ++j) {
    DataType dt = bg.outputs[1 + n + j]->dtype;
    if (scans[j].empty()) {
      // No iteration: an empty stack; the slice shape is whatever the body declares.
      std::vector<int64_t> shape{0};
      const Value& bo = *bg.outputs[1 + n + j];
      if (bo.has_shape) for (int64_t d : bo.shape) shape.push_back(std::max<int64_t>(d, 0));
      call.outputs[n + j] = RtValue::FromTensor(HostTensor::Allocate(dt, shape));
      continue;
    }
    OC_ASSIGN_OR_RETURN(HostTensor stacked,
                        ConcatTensors(scans[j], 0, true, scans[j][0].dtype, StrCat("scan output ", j)));
    call.outputs[n + j] = RtValue::FromTensor(std::move(stacked));
  }
  return Status::Ok();
}

// Scan (opset 9+) over already-batch-free inputs: states[n], scan inputs[m].
Status ScanCore(NativeCall& call, const Interpreter& body, std::vector<RtValue> states,
                const std::vector<const HostTensor*>& scan_in, std::vector<RtValue>& out_states,
                std::vector<HostTensor>& out_scans, bool v8) {
  const Node& node = call.node;
  const size_t n = states.size(), m = scan_in.size();
  const size_t k = body.graph().outputs.size() - n;
  std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", std::vector<int64_t>(m, 0));
  std::vector<int64_t> in_dirs = node.GetInts(v8 ? "directions" : "scan_input_directions", std::vector<int64_t>(m, 0));
  std::vector<int64_t> out_axes = node.GetInts("scan_output_axes", std::vector<int64_t>(k, 0));
  std::vector<int64_t> out_dirs = node.GetInts("scan_output_directions", std::vector<int64_t>(k, 0));
  if (in_axes.size() != m || in_dirs.size() != m || out_axes.size() != k || out_dirs.size() != k)
    return InvalidArgument(node.Describe(), ": scan axes/directions attributes must list one entry per scan "
                           "input (", m, ") and output (", k, ")");
  int64_t len = -1;
  for (size_t j = 0; j < m; ++j) {
    const int64_t rank = static_cast<int64_t>(scan_in[j]->shape.size());
    OC_ASSIGN_OR_RETURN(in_axes[j], NormalizeAxis(node, in_axes[j], rank));
    int64_t l = scan_in[j]->shape[in_axes[j]];
    if (len >= 0 && l != len)
      return InvalidArgument(node.Describe(), ": scan inputs have different lengths (", len, " and ", l, ")");
    len = l;
  }
  std::vector<std::vector<HostTensor>> slices(k);
  FastBody* fast = FastBodyOf(call, "body");
  FastBody::Session session;
  const std::vector<RtValue> captures = call.CapturesOf("body");
  // args[0, n) carry the states from one step to the next; args[n + j] is
  // the step's slice of scan input j.
  std::vector<RtValue> args = std::move(states);
  args.resize(n + m);
  std::vector<RtValue> o;
  for (int64_t t = 0; t < len; ++t) {
    for (size_t j = 0; j < m; ++j) {
      int64_t pos = in_dirs[j] ? len - 1 - t : t;
      HostTensor s = SliceAxis(*scan_in[j], in_axes[j], pos, 1);
      s.shape.erase(s.shape.begin() + in_axes[j]);
      args[n + j] = RtValue::FromTensor(std::move(s));
    }
    if (!fast || !fast->Run(args, captures, call.pool, o, session)) {
      auto outs = body.Run(args, call.pool, captures);
      if (!outs.ok()) return outs.status().WithContext(StrCat("in the body, iteration ", t));
      o = std::move(outs).value();
    }
    for (size_t i = 0; i < n; ++i) std::swap(args[i], o[i]);
    for (size_t j = 0; j < k; ++j) {
      if (!o[n + j].is_tensor()) return InvalidArgument("scan output ", j, " is not a tensor");
      slices[j].push_back(std::move(o[n + j].tensor));
    }
  }
  args.resize(n);
  out_states = std::move(args);
  out_scans.clear();
  for (size_t j = 0; j < k; ++j) {
    const Value& bo = *body.graph().outputs[n + j];
    if (slices[j].empty()) {
      std::vector<int64_t> shape{0};
      if (bo.has_shape) for (int64_t d : bo.shape) shape.push_back(std::max<int64_t>(d, 0));
      out_scans.push_back(HostTensor::Allocate(bo.dtype, shape));
      continue;
    }
    if (out_dirs[j]) std::reverse(slices[j].begin(), slices[j].end());
    const int64_t rank = static_cast<int64_t>(slices[j][0].shape.size()) + 1;
    OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, out_axes[j], rank));
    OC_ASSIGN_OR_RETURN(HostTensor st, ConcatTensors(slices[j], axis, true, slices[j][0].dtype,
                                                     StrCat("scan output ", j)));
    out_scans.push_back(std::move(st));
  }
  return Status::Ok();
}

Status ScanOp(NativeCall& call) {
  const Node& node = call.node;
  const bool v8 = node.opset < 9;
  OC_ASSIGN_OR_RETURN(const Interpreter* body, call.Body("body"));
  const size_t first = v8 ? 1 : 0;
  const size_t m = static_cast<size_t>(node.GetInt("num_scan_inputs", 0));
  const size_t total = call.num_explicit_inputs() - first;
  if (m < 1 || m > total) return InvalidArgument(node.Describe(), ": bad num_scan_inputs ", m);
  const size_t n = total - m;
  const Graph& bg = body->graph();
  if (bg.inputs.size() != total || bg.outputs.size() != call.outputs.size() || bg.outputs.size() < n)
    return InvalidArgument(node.Describe(), ": body has ", bg.inputs.size(), " inputs and ", bg.outputs.size(),
                           " outputs; the node has ", total, " inputs and ", call.outputs.size(), " outputs, ", n,
                           " of them states");
  std::vector<const HostTensor*> ins;
  for (size_t i = 0; i < total; ++i) {
    OC_ASSIGN_OR_RETURN(const HostTensor* t, call.TensorIn(first + i));
    ins.push_back(t);
  }
  if (!v8) {
    std::vector<RtValue> states;
    for (size_t i = 0; i < n; ++i) states.push_back(RtValue::FromTensor(*ins[i]));
    std::vector<const HostTensor*> scan_in(ins.begin() + n, ins.end());
    std::vector<RtValue> out_states;
    std::vector<HostTensor> out_scans;
    OC_RETURN_IF_ERROR(ScanCore(call, *body, std::move(states), scan_in, out_states, out_scans, false));
    for (size_t i = 0; i < n; ++i) call.outputs[i] = std::move(out_states[i]);
    for (size_t j = 0; j < out_scans.size(); ++j) call.outputs[n + j] = RtValue::FromTensor(std::move(out_scans[j]));
    return Status::Ok();
  }
  // Opset 8: axis 0 of every input is a batch; each batch entry is scanned
  // along its (new) axis 0 for sequence_lens[b] steps.
  if (call.in(0)) return NotSupported(node.Describe(), ": opset-8 Scan with sequence_lens is not supported");
  int64_t batch = ins.empty() ? 0 : ins[0]->shape.empty() ? 0 : ins[0]->shape[0];
  std::vector<std::vector<HostTensor>> per_out(call.outputs.size());
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<RtValue> states;
    std::vector<HostTensor> scan_slices;
    for (size_t i = 0; i < total; ++i) {
      HostTensor s = SliceAxis(*ins[i], 0, b, 1);
      s.shape.erase(s.shape.begin());
      if (i < n) states.push_back(RtValue::FromTensor(std::move(s)));
      else scan_slices.push_back(std::move(s));
    }
    std::vector<const HostTensor*> scan_in;
    for (auto& s : scan_slices) scan_in.push_back(&s);
    std::vector<RtValue> out_states;
    std::vector<HostTensor> out_scans;
    OC_RETURN_IF_ERROR(ScanCore(call, *body, std::move(states), scan_in, out_states, out_scans, true));
    for (size_t i = 0; i < n; ++i) per_out[i].push_back(std::move(out_states[i].tensor));
    for (size_t j = 0; j < out_scans.size(); ++j) per_out[n + j].push_back(std::move(out_scans[j]));
  }
  for (size_t i = 0; i < per_out.size(); ++i) {
    if (per_out[i].empty()) return NotSupported(node.Describe(), ": opset-8 Scan with batch 0");
    OC_ASSIGN_OR_RETURN(HostTensor t, ConcatTensors(per_out[i], 0, true, per_out[i][0].dtype, "Scan output"));
    call.outputs[i] = RtValue::FromTensor(std::move(t));
  }
  return Status::Ok();
}

Status IdentityOp(NativeCall& call) {
  if (!call.in(0)) return InvalidArgument(call.node.Describe(), ": input 0 is required");
  call.outputs[0] = *call.in(0);
  if (call.node.op_type == "Dropout" && call.outputs.size() > 1 && call.node.output(1)) {
    // Only reached for non-tensor inputs, which Dropout does not accept.
    return InvalidArgument(call.node.Describe(), ": mask output on a non-tensor input");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Static-executor kernel: runs the native op over raw pointers.

class ControlFlowKernel final : public Kernel {
 public:
  ControlFlowKernel(const Node& node, NativeOpFn fn) : node_(node), fn_(fn) {
    for (const Value* v : node.inputs) {
      in_shapes_.push_back(v ? v->shape : std::vector<int64_t>{});
      in_types_.push_back(v ? v->dtype : DataType::kUndefined);
    }
    for (const Value* v : node.outputs) {
      out_shapes_.push_back(v ? v->shape : std::vector<int64_t>{});
      out_types_.push_back(v ? v->dtype : DataType::kUndefined);
    }
  }
  Status Run(const KernelIO& io) override {
    std::vector<RtValue> vals(io.num_inputs);
    std::vector<const RtValue*> ptrs(io.num_inputs, nullptr);
    for (size_t i = 0; i < io.num_inputs; ++i) {
      if (!io.inputs[i] && !node_.input(i)) continue;
      HostTensor t;
      t.dtype = in_types_[i];
      t.shape = in_shapes_[i];
      t.data = TensorData::View(nullptr, io.inputs[i], t.ByteSize());
      vals[i] = RtValue::FromTensor(std::move(t));
      ptrs[i] = &vals[i];
    }
    NativeCall call{node_, ptrs, std::vector<RtValue>(io.num_outputs), *io.pool, &mu_, &bodies_, &fast_bodies_};
    OC_RETURN_IF_ERROR(fn_(call));
    for (size_t i = 0; i < io.num_outputs; ++i) {
      if (!io.outputs[i]) continue;
      const RtValue& v = call.outputs[i];
      if (!v.is_tensor() || v.tensor.shape != out_shapes_[i] || v.tensor.dtype != out_types_[i])
        return InvalidArgument(node_.Describe(), ": output ", i, " came out as ", v.Describe(),
                               ", but the compiled model fixed it to ", DataTypeName(out_types_[i]), " ",
                               node_.output(i)->ShapeString());
      std::memcpy(io.outputs[i], v.tensor.data.data(), v.tensor.ByteSize());
    }
    return Status::Ok();
  }

 private:
  const Node& node_;
  NativeOpFn fn_;
  std::vector<std::vector<int64_t>> in_shapes_, out_shapes_;
  std::vector<DataType> in_types_, out_types_;
  std::mutex mu_;
  std::map<const Graph*, std::unique_ptr<Interpreter>> bodies_;
  std::map<const Graph*, std::shared_ptr<FastBody>> fast_bodies_;
};

Expected<KernelPtr> MakeControlFlow(const KernelInit& init) {
  const Node& n = init.node;
  for (const Value* v : n.inputs)
    if (v && (v->kind != ValueKind::kTensor || !v->IsStatic()))
      return NotSupported(n.Describe(), ": input '", v->name, "' is not a static tensor (runs in the interpreter)");
  for (const Value* v : n.outputs)
    if (v && (v->kind != ValueKind::kTensor || !v->IsStatic()))
      return NotSupported(n.Describe(), ": output '", v->name, "' is not a static tensor (runs in the interpreter)");
  NativeOpFn fn = FindNativeOp(n.domain, n.op_type);
  if (!fn) return Internal(n.Describe(), ": no native implementation");
  return KernelPtr(new ControlFlowKernel(n, fn));
}

}  // namespace

NativeOpFn FindNativeOp(const std::string& domain, const std::string& op_type) {
  if (!domain.empty()) return nullptr;
  if (op_type == "If") return IfOp;
  if (op_type == "Loop") return LoopOp;
  if (op_type == "Scan") return ScanOp;
  if (op_type == "Identity") return IdentityOp;
  if (NativeOpFn f = FindSequenceOp(op_type)) return f;
  return FindOptionalOp(op_type);
}

bool NeedsInterpreter(const Graph& graph) {
  for (const Value* v : graph.inputs) if (v->kind != ValueKind::kTensor) return true;
  for (const Value* v : graph.outputs) if (v->kind != ValueKind::kTensor) return true;
  for (const auto& n : graph.nodes()) {
    if (n->op_type == "Identity" || !n->domain.empty()) continue;
    if (FindNativeOp(n->domain, n->op_type)) return true;
  }
  return false;
}

void RegisterControlFlowOps(OpRegistry& r) {
  r.Register({.op_type = "If", .infer = InferIf, .kernels = CpuKernel(MakeControlFlow),
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "Loop", .infer = InferLoop, .kernels = CpuKernel(MakeControlFlow),
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "Scan", .infer = InferScan, .kernels = CpuKernel(MakeControlFlow),
              .foldable = false, .native_types = kAllDataTypes});
}

}  // namespace oc
