#include "executor/executable.h"

#include <cstring>
#include <new>

#include "executor/node_profile.h"
#include "ops/op_registry.h"
#include "runtime/device/device.h"
#include "runtime/trace.h"

namespace oc {

ExecutionContext::~ExecutionContext() {
  if (arena_ && owns_arena_) ::operator delete(arena_, std::align_val_t(64));
  if (scratch_) ::operator delete(scratch_, std::align_val_t(64));
}

namespace {

// The kernel factory for `def` and the device it runs on (nullptr = the CPU).
struct Placement {
  KernelFactory factory = nullptr;
  rt::Device* device = nullptr;
};

Expected<Placement> Place(const Node& n, const OpDef& def, std::span<rt::Device* const> devices) {
  for (rt::Device* d : devices) {
    if (!d || d->type() == kCpuDevice) continue;
    if (KernelFactory f = d->FindKernel(n, def)) {
      if (!d->host_accessible())
        return NotSupported(n.Describe(), ": placing a node on device '", d->type(),
                            "', whose memory the host cannot access, needs copies between devices, "
                            "which are not supported yet");
      return Placement{f, d};
    }
  }
  if (KernelFactory f = CpuKernelOf(def)) return Placement{f, nullptr};
  return NotSupported(n.Describe(), ": op ", n.op_type, " (opset ", n.opset, ") has no CPU kernel");
}

}  // namespace

Expected<std::shared_ptr<Executable>> Executable::Create(
    std::shared_ptr<const Graph> graph, std::vector<std::span<const uint8_t>> prepacked,
    std::span<rt::Device* const> devices) {
  std::shared_ptr<Executable> ex(new Executable());
  ex->graph_ = graph;
  const Graph& g = *graph;
  if (g.arena_size < 0) return FailedPrecondition("graph '", g.name, "' has no memory plan");
  const size_t nv = g.values().size();
  ex->arena_offsets_.assign(nv, -1);
  ex->const_ptrs_.assign(nv, nullptr);
  for (auto& v : g.values()) {
    if (v->constant) {
      ex->const_ptrs_[v->id] = v->constant->data();
    } else if (v->arena_offset >= 0) {
      if (v->ByteSize() < 0 || v->arena_offset + v->ByteSize() > g.arena_size)
        return InvalidFile("value '", v->name, "' at arena offset ", v->arena_offset, " size ",
                           v->ByteSize(), " exceeds arena size ", g.arena_size);
      ex->arena_offsets_[v->id] = v->arena_offset;
    }
  }
  for (Value* v : g.inputs) ex->input_ids_.push_back(v->id);
  std::vector<bool> bound(nv, false);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    Value* v = g.outputs[i];
    bool produced = v->producer != nullptr && !bound[v->id];
    if (produced) {
      ex->output_ids_.push_back(v->id);
      bound[v->id] = true;
    } else {
      ex->output_ids_.push_back(-1);
      ex->output_copies_.push_back({v->id, i, static_cast<size_t>(std::max<int64_t>(v->ByteSize(), 0))});
    }
  }
  // Every non-constant value read by a node must have a home.
  std::vector<bool> is_io(nv, false);
  for (int id : ex->input_ids_) is_io[id] = true;
  for (int id : ex->output_ids_) if (id >= 0) is_io[id] = true;
  const OpRegistry& reg = OpRegistry::Global();
  size_t node_index = 0;
  for (auto& up : g.nodes()) {
    const Node& n = *up;
    const OpDef* def = reg.Find(n.domain, n.op_type, n.opset);
    if (!def)
      return NotSupported(n.Describe(), ": op ", n.op_type, " (opset ", n.opset, ") is not registered");
    OC_ASSIGN_OR_RETURN(Placement place, Place(n, *def, devices));
    std::span<const uint8_t> packed;
    if (node_index < prepacked.size() && !place.device) packed = prepacked[node_index];
    auto kernel = place.factory(KernelInit{n, packed, ThreadPool::Global().num_threads()});
    if (!kernel.ok()) return kernel.status();
    ex->scratch_bytes_ = std::max(ex->scratch_bytes_, (*kernel)->ScratchBytes());
    Step s{kernel->get(), &n, place.device, static_cast<uint32_t>(ex->step_inputs_.size()),
           static_cast<uint32_t>(n.inputs.size()), static_cast<uint32_t>(ex->step_outputs_.size()),
           static_cast<uint32_t>(n.outputs.size())};
    for (Value* in : n.inputs) {
      if (in && !in->constant && !is_io[in->id] && ex->arena_offsets_[in->id] < 0)
        return InvalidFile(n.Describe(), ": input '", in->name, "' has no memory assigned");
      ex->step_inputs_.push_back(in ? in->id : -1);
    }
    for (Value* out : n.outputs) {
      if (out && !is_io[out->id] && ex->arena_offsets_[out->id] < 0)
        return InvalidFile(n.Describe(), ": output '", out->name, "' has no memory assigned");
      ex->step_outputs_.push_back(out ? out->id : -1);
    }
    ex->max_step_io_ = std::max(ex->max_step_io_, std::max(n.inputs.size(), n.outputs.size()));
    ex->kernels_.push_back(std::move(kernel).value());
    ex->steps_.push_back(s);
    ++node_index;
  }
  // A session already recording: name the nodes now, at load, not in the first run.
  if (trace::Active()) ex->trace_graph_id_ = trace::RegisterGraph(g);
  ex->profile_ = NodeProfilingEnabled();
  if (ex->profile_) {
    ex->step_ns_ = std::make_unique<std::atomic<int64_t>[]>(ex->steps_.size());
    for (size_t i = 0; i < ex->steps_.size(); ++i) ex->step_ns_[i] = 0;
  }
  return ex;
}

Executable::~Executable() {
  if (!profile_ || profiled_runs_ == 0) return;
  std::vector<NodeTime> times;
  times.reserve(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Node& n = *steps_[i].node;
    times.push_back({n.op_type, n.name, n.outputs.empty() || !n.outputs[0] ? "" : n.outputs[0]->ShapeString(),
                     step_ns_[i].load()});
  }
  RecordNodeProfile(graph_->name, profiled_runs_.load(), std::move(times));
}

Expected<std::unique_ptr<ExecutionContext>> Executable::NewContext() const {
  size_t bytes = static_cast<size_t>(graph_->arena_size);
  void* mem = ::operator new(bytes ? bytes : 64, std::align_val_t(64), std::nothrow);
  if (!mem) return ResourceExhausted("cannot allocate an activation arena of ", bytes, " bytes");
  auto ctx = NewContextWithArena(mem, bytes);
  if (ctx.ok()) (*ctx)->owns_arena_ = true;
  else ::operator delete(mem, std::align_val_t(64));
  return ctx;
}

Expected<std::unique_ptr<ExecutionContext>> Executable::NewContextWithArena(void* arena,
                                                                            size_t bytes) const {
  if (bytes < static_cast<size_t>(graph_->arena_size))
    return InvalidArgument("work memory of ", bytes, " bytes is smaller than the ",
                           graph_->arena_size, " bytes the model needs");
  if (!arena && graph_->arena_size > 0) return InvalidArgument("work memory pointer is null");
  if (reinterpret_cast<uintptr_t>(arena) % 64 != 0)
    return InvalidArgument("work memory must be 64-byte aligned");
  std::unique_ptr<ExecutionContext> ctx(new ExecutionContext());
  if (scratch_bytes_) {
    ctx->scratch_ = static_cast<uint8_t*>(
        ::operator new((scratch_bytes_ + 63) / 64 * 64, std::align_val_t(64), std::nothrow));
    if (!ctx->scratch_)
      return ResourceExhausted("cannot allocate ", scratch_bytes_, " bytes of kernel scratch");
  }
  ctx->owns_arena_ = false;
  ctx->arena_ = static_cast<uint8_t*>(arena);
  ctx->arena_bytes_ = bytes;
  ctx->value_ptrs_.assign(arena_offsets_.size(), nullptr);
  for (size_t id = 0; id < arena_offsets_.size(); ++id) {
    if (const_ptrs_[id]) ctx->value_ptrs_[id] = const_cast<void*>(const_ptrs_[id]);
    else if (arena_offsets_[id] >= 0) ctx->value_ptrs_[id] = ctx->arena_ + arena_offsets_[id];
  }
  ctx->in_scratch_.assign(max_step_io_ + 1, nullptr);
  ctx->out_scratch_.assign(max_step_io_ + 1, nullptr);
  return ctx;
}

Expected<std::unique_ptr<ExecutionContext>> Executable::AcquireContext() const {
  {
    std::lock_guard<std::mutex> lk(pool_mu_);
    if (!free_contexts_.empty()) {
      auto ctx = std::move(free_contexts_.back());
      free_contexts_.pop_back();
      return ctx;
    }
  }
  return NewContext();
}

void Executable::ReleaseContext(std::unique_ptr<ExecutionContext> ctx) const {
  if (!ctx) return;
  std::lock_guard<std::mutex> lk(pool_mu_);
  free_contexts_.push_back(std::move(ctx));
}

uint32_t Executable::TraceGraphId() const {
  uint32_t id = trace_graph_id_.load(std::memory_order_acquire);
  if (id) return id;
  std::lock_guard<std::mutex> lk(trace_mu_);
  id = trace_graph_id_.load(std::memory_order_relaxed);
  if (!id) {
    id = trace::RegisterGraph(*graph_);
    trace_graph_id_.store(id, std::memory_order_release);
  }
  return id;
}

template <bool kProfile>
Status Executable::RunSteps(ExecutionContext& ctx, ThreadPool& pool, uint32_t trace_graph) const {
  void** ptrs = ctx.value_ptrs_.data();
  for (size_t si = 0; si < steps_.size(); ++si) {
    const Step& s = steps_[si];
    for (uint32_t k = 0; k < s.in_count; ++k) {
      int id = step_inputs_[s.in_begin + k];
      ctx.in_scratch_[k] = id >= 0 ? ptrs[id] : nullptr;
    }
    for (uint32_t k = 0; k < s.out_count; ++k) {
      int id = step_outputs_[s.out_begin + k];
      ctx.out_scratch_[k] = id >= 0 ? ptrs[id] : nullptr;
    }
    KernelIO io{ctx.in_scratch_.data(), s.in_count, ctx.out_scratch_.data(), s.out_count, &pool,
                ctx.scratch_};
    [[maybe_unused]] int64_t t0 = 0, p0 = 0;
    if constexpr (kProfile) {
      if (trace_graph) t0 = trace::NowNs();
      if (profile_) p0 = ProfileClockNs();
    }
    Status st = s.device ? s.device->Launch(*s.kernel, io) : s.kernel->Run(io);
    if constexpr (kProfile) {
      if (profile_) step_ns_[si].fetch_add(ProfileClockNs() - p0, std::memory_order_relaxed);
      if (trace_graph) trace::EmitNode(trace_graph, static_cast<uint32_t>(si), t0, trace::NowNs());
    }
    if (!st.ok()) return st.WithContext(StrCat("while running ", s.node->Describe()));
  }
  if constexpr (kProfile) {
    if (profile_) profiled_runs_.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Status Executable::Run(ExecutionContext& ctx, std::span<const void* const> inputs,
                       std::span<void* const> outputs, ThreadPool& pool) const {
  if (inputs.size() != input_ids_.size())
    return InvalidArgument("model expects ", input_ids_.size(), " inputs, got ", inputs.size());
  if (outputs.size() != output_ids_.size())
    return InvalidArgument("model expects ", output_ids_.size(), " outputs, got ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] && graph_->inputs[i]->ByteSize() > 0)
      return InvalidArgument("input ", i, " ('", graph_->inputs[i]->name, "') is null");
    ctx.value_ptrs_[input_ids_[i]] = const_cast<void*>(inputs[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i] && graph_->outputs[i]->ByteSize() > 0)
      return InvalidArgument("output ", i, " ('", graph_->outputs[i]->name, "') is null");
    if (output_ids_[i] >= 0) ctx.value_ptrs_[output_ids_[i]] = outputs[i];
  }
  // Profiling off costs this one branch per run.
  const uint32_t trace_graph = trace::On(trace::kTasks) ? TraceGraphId() : 0;
  Status st = profile_ || trace_graph ? RunSteps<true>(ctx, pool, trace_graph) : RunSteps<false>(ctx, pool, 0);
  if (!st.ok()) return st;
  void** ptrs = ctx.value_ptrs_.data();
  for (const OutputCopy& c : output_copies_) {
    if (c.bytes) std::memcpy(outputs[c.output], ptrs[c.value_id], c.bytes);
  }
  return Status::Ok();
}

std::string_view Executable::node_device(size_t node) const {
  if (node >= steps_.size()) return {};
  return steps_[node].device ? steps_[node].device->type() : kCpuDevice;
}

std::vector<std::vector<uint8_t>> Executable::ExportPrepacked() const {
  std::vector<std::vector<uint8_t>> out;
  out.reserve(kernels_.size());
  for (auto& k : kernels_) out.push_back(k->ExportPrepacked());
  return out;
}

std::vector<uint8_t> Executable::ExportPrepacked(size_t node) const {
  return node < kernels_.size() ? kernels_[node]->ExportPrepacked() : std::vector<uint8_t>{};
}

std::vector<std::vector<int>> Executable::PrepackedInputs() const {
  std::vector<std::vector<int>> out;
  out.reserve(kernels_.size());
  for (auto& k : kernels_) out.push_back(k->PrepackedInputs());
  return out;
}

Expected<std::vector<TensorData>> EvaluateNode(const Node& node) {
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, node.opset);
  if (!def || !CpuKernelOf(*def)) return NotSupported(node.Describe(), ": no CPU kernel to evaluate it");
  std::vector<const void*> ins;
  for (Value* v : node.inputs) {
    if (v && !v->constant) return FailedPrecondition(node.Describe(), ": input '", v->name, "' is not constant");
    ins.push_back(v ? v->constant->data() : nullptr);
  }
  std::vector<TensorData> outs;
  std::vector<void*> out_ptrs;
  for (Value* v : node.outputs) {
    if (!v) { outs.emplace_back(); out_ptrs.push_back(nullptr); continue; }
    if (v->ByteSize() < 0) return FailedPrecondition(node.Describe(), ": output '", v->name, "' is not static");
    outs.push_back(TensorData::Allocate(static_cast<size_t>(v->ByteSize())));
    out_ptrs.push_back(outs.back().mutable_data());
  }
  ThreadPool& pool = ThreadPool::Global();
  OC_ASSIGN_OR_RETURN(KernelPtr kernel, CpuKernelOf(*def)(KernelInit{node, {}, pool.num_threads()}));
  TensorData scratch = TensorData::Allocate(kernel->ScratchBytes());
  KernelIO io{ins.data(), ins.size(), out_ptrs.data(), out_ptrs.size(), &pool, scratch.mutable_data()};
  OC_RETURN_IF_ERROR(kernel->Run(io));
  return outs;
}

}  // namespace oc
