#include "train/program.h"

#include <cstring>
#include <set>

#include "executor/executable.h"
#include "passes/pipeline.h"
#include "train/autodiff.h"

namespace oc::train {

// ---- TensorStore ----------------------------------------------------------

Status TensorStore::Set(const std::string& name, DataType dtype, std::vector<int64_t> shape, const void* data) {
  if (name.empty()) return InvalidArgument("a stored tensor needs a name");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("stored tensor '", name, "': dims must be >= 0");
    if (d > 0 && count > (int64_t{1} << 40) / d) return InvalidArgument("stored tensor '", name, "' is too large");
    count *= d;
  }
  const int64_t bytes = DataTypeByteSize(dtype, count);
  if (bytes < 0 || dtype == DataType::kUndefined || dtype == DataType::kString)
    return InvalidArgument("stored tensor '", name, "': element type ", DataTypeName(dtype), " is not storable");
  auto& slot = tensors_[name];
  if (!slot) slot = std::make_unique<StoredTensor>();
  StoredTensor& t = *slot;
  if (t.dtype != dtype || t.shape != shape || t.data.size() != static_cast<size_t>(bytes)) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = TensorData::Allocate(static_cast<size_t>(bytes));
  }
  if (data)
    std::memcpy(t.data.mutable_data(), data, static_cast<size_t>(bytes));
  else
    std::memset(t.data.mutable_data(), 0, static_cast<size_t>(bytes));
  return Status::Ok();
}

StoredTensor* TensorStore::Find(const std::string& name) {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.get();
}
const StoredTensor* TensorStore::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.get();
}

Status TensorStore::Remove(const std::string& name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound("no stored tensor '", name, "'");
  // Programs may still point at it: keep the object, drop its bytes, so that
  // their binding check fails naming it instead of reading freed memory.
  it->second->dtype = DataType::kUndefined;
  it->second->data = TensorData();
  retired_.push_back(std::move(it->second));
  tensors_.erase(it);
  return Status::Ok();
}

std::vector<std::string> TensorStore::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

// ---- Program ----------------------------------------------------------------

namespace {

std::string Describe(DataType dt, const std::vector<int64_t>& shape) {
  std::string s = DataTypeName(dt);
  s += " [";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

TensorInfo InfoOf(const Value& v) {
  return {v.name, v.dtype, v.shape, static_cast<size_t>(std::max<int64_t>(v.ByteSize(), 0))};
}

Status Compile(Graph& g, bool fuse) {
  CompileOptions opts;
  opts.fuse = fuse;
  return RunPipeline(g, opts);
}

}  // namespace

Program::~Program() = default;

Status Program::CheckBindings(const std::vector<Binding>& bindings) const {
  for (const Binding& b : bindings)
    if (b.tensor->dtype != b.dtype || b.tensor->shape != b.shape)
      return FailedPrecondition("stored tensor '", b.name, "' is now ", Describe(b.tensor->dtype, b.tensor->shape),
                                "; this program was compiled for ", Describe(b.dtype, b.shape), ": compile it again");
  return Status::Ok();
}

Expected<std::unique_ptr<Program>> Program::Compile(std::unique_ptr<Graph> graph, const ProgramSpec& spec,
                                                    TensorStore& store) {
  std::unique_ptr<Program> p(new Program());
  const bool update = spec.optimizer.kind != OptimizerSpec::Kind::kNone;
  if (!graph) {
    if (!update || !spec.loss.empty())
      return InvalidArgument("a program without a graph applies an optimiser to fed gradients: it takes no loss");
    p->update_only_ = true;
  } else {
    if (update && spec.loss.empty()) return InvalidArgument("an optimiser needs a loss to differentiate");
    if (update && spec.return_grads)
      return InvalidArgument("return_grads and an optimiser exclude each other: the optimiser consumes the gradients");
    if (!spec.loss.empty() && spec.params.empty()) return InvalidArgument("a loss is given but no parameters to train");
    OC_RETURN_IF_ERROR(p->CompileMain(std::move(graph), spec, store));
  }
  if (update) OC_RETURN_IF_ERROR(p->CompileUpdate(spec, store));
  return p;
}

Status Program::CompileMain(std::unique_ptr<Graph> graph, const ProgramSpec& spec, TensorStore& store) {
  Graph& g = *graph;
  // Bind the inputs that name stored tensors; the others are fed.
  std::vector<std::string> feed_names;
  for (Value* in : g.inputs) {
    if (StoredTensor* t = store.Find(in->name)) {
      if (in->dtype != t->dtype)
        return InvalidArgument("graph input '", in->name, "' is ", DataTypeName(in->dtype), " but the stored tensor is ",
                               Describe(t->dtype, t->shape));
      if (in->has_shape) {
        bool same = in->shape.size() == t->shape.size();
        for (size_t i = 0; same && i < in->shape.size(); ++i) same = in->shape[i] < 0 || in->shape[i] == t->shape[i];
        if (!same)
          return InvalidArgument("graph input '", in->name, "' has shape ", in->ShapeString(),
                                 " but the stored tensor is ", Describe(t->dtype, t->shape));
      }
      in->has_shape = true;
      in->shape = t->shape;
      in->dim_params.assign(t->shape.size(), "");
    } else {
      if (!in->IsStatic())
        return InvalidArgument("graph input '", in->name, "' has shape ", in->ShapeString(),
                               ": fed inputs need static shapes");
      feed_names.push_back(in->name);
      feeds_.push_back(InfoOf(*in));
    }
  }
  auto find = [&](const std::string& name, const char* what) -> Expected<Value*> {
    Value* v = g.FindValue(name);
    if (!v) return InvalidArgument(what, " '", name, "' is not a value of the graph");
    return v;
  };
  std::vector<Value*> outputs;
  for (const std::string& f : spec.fetches) {
    OC_ASSIGN_OR_RETURN(Value * v, find(f, "fetch"));
    outputs.push_back(v);
  }
  num_user_fetches_ = outputs.size();
  std::vector<StoredTensor*> state_targets;
  for (const auto& [value, target] : spec.state_updates) {
    OC_ASSIGN_OR_RETURN(Value * v, find(value, "state update"));
    StoredTensor* t = store.Find(target);
    if (!t) return InvalidArgument("state update '", value, "' writes to '", target, "', which is not a stored tensor");
    outputs.push_back(v);
    state_targets.push_back(t);
  }
  std::vector<Value*> grads;
  if (!spec.loss.empty()) {
    OC_ASSIGN_OR_RETURN(Value * loss, find(spec.loss, "loss"));
    std::vector<Value*> wrt;
    std::set<std::string> seen;
    for (const std::string& name : spec.params) {
      if (!seen.insert(name).second) return InvalidArgument("parameter '", name, "' is listed twice");
      Value* v = g.FindValue(name);
      const bool fed = v && g.IsGraphInput(v) && !store.Find(name);
      if (fed && spec.optimizer.kind != OptimizerSpec::Kind::kNone)
        return InvalidArgument("parameter '", name, "' is a fed input: the optimiser updates stored tensors only");
      if (!fed && !store.Find(name)) return InvalidArgument("parameter '", name, "' is not a stored tensor");
      if (!v || !g.IsGraphInput(v)) {
        // Not read by the graph: its gradient is zero.
        const StoredTensor& t = *store.Find(name);
        v = g.AddValue(name);
        v->dtype = t.dtype;
        v->has_shape = true;
        v->shape = t.shape;
        v->dim_params.assign(t.shape.size(), "");
        g.inputs.push_back(v);
      }
      wrt.push_back(v);
    }
    OC_ASSIGN_OR_RETURN(grads, AppendGradients(g, loss, wrt));
  }
  for (Value* gv : grads) outputs.push_back(gv);
  g.outputs = outputs;
  OC_RETURN_IF_ERROR(train::Compile(g, true));

  auto shared = std::shared_ptr<Graph>(std::move(graph));
  OC_ASSIGN_OR_RETURN(main_, Executable::Create(shared));
  OC_ASSIGN_OR_RETURN(main_ctx_, main_->NewContext());
  const Graph& cg = main_->graph();
  // The compiled graph's inputs: each is a binding or a feed (by name).
  main_feed_inputs_.assign(feed_names.size(), SIZE_MAX);
  main_in_.assign(cg.inputs.size(), nullptr);
  for (size_t i = 0; i < cg.inputs.size(); ++i) {
    const Value& in = *cg.inputs[i];
    if (StoredTensor* t = store.Find(in.name)) {
      main_bound_.push_back({i, in.name, t, t->dtype, t->shape});
      continue;
    }
    for (size_t f = 0; f < feed_names.size(); ++f)
      if (feed_names[f] == in.name) main_feed_inputs_[f] = i;
  }
  for (size_t i = 0; i < num_user_fetches_; ++i) fetches_.push_back(InfoOf(main_->output(i)));
  main_out_.assign(cg.outputs.size(), nullptr);
  for (size_t s = 0; s < state_targets.size(); ++s) {
    const Value& v = main_->output(num_user_fetches_ + s);
    StoredTensor* t = state_targets[s];
    if (v.dtype != t->dtype || v.shape != t->shape)
      return InvalidArgument("state update '", spec.state_updates[s].first, "' is ", Describe(v.dtype, v.shape),
                             " but '", spec.state_updates[s].second, "' is ", Describe(t->dtype, t->shape));
    state_out_.emplace_back(TensorData::Allocate(static_cast<size_t>(v.ByteSize())), t);
    main_out_[num_user_fetches_ + s] = state_out_.back().first.mutable_data();
  }
  const size_t grad_base = num_user_fetches_ + state_targets.size();
  for (size_t k = 0; k < grads.size(); ++k) {
    const Value& v = main_->output(grad_base + k);
    if (spec.return_grads) {
      TensorInfo info = InfoOf(v);
      info.name = "grad." + spec.params[k];
      fetches_.push_back(info);
    } else {
      grads_.push_back(TensorData::Allocate(static_cast<size_t>(v.ByteSize())));
      main_out_[grad_base + k] = grads_.back().mutable_data();
    }
  }
  return Status::Ok();
}

Status Program::CompileUpdate(const ProgramSpec& spec, TensorStore& store) {
  const OptimizerSpec& opt = spec.optimizer;
  std::vector<ParamInfo> params;
  for (const std::string& name : spec.params) {
    const StoredTensor* t = store.Find(name);
    if (!t) return InvalidArgument("parameter '", name, "' is not a stored tensor");
    params.push_back({name, t->dtype, t->shape});
  }
  if (params.empty()) return InvalidArgument("the optimiser has no parameters to update");
  OC_ASSIGN_OR_RETURN(UpdateGraph ug, BuildUpdateGraph(params, opt));
  // State tensors and the step counter: created (zeros) when missing.
  for (const std::string& prefix : opt.StatePrefixes())
    for (const ParamInfo& pi : params) {
      const std::string name = prefix + pi.name;
      const StoredTensor* t = store.Find(name);
      if (!t) {
        OC_RETURN_IF_ERROR(store.Set(name, pi.dtype, pi.shape, nullptr));
      } else if (t->dtype != pi.dtype || t->shape != pi.shape) {
        return InvalidArgument("optimiser state '", name, "' is ", Describe(t->dtype, t->shape), " but parameter '",
                               pi.name, "' is ", Describe(pi.dtype, pi.shape));
      }
    }
  if (const StoredTensor* t = store.Find(opt.step_name)) {
    if (t->dtype != DataType::kInt64 || !(t->shape.empty() || t->shape == std::vector<int64_t>{1}))
      return InvalidArgument("step counter '", opt.step_name, "' must be an int64 scalar, got ",
                             Describe(t->dtype, t->shape));
  } else {
    OC_RETURN_IF_ERROR(store.Set(opt.step_name, DataType::kInt64, {}, nullptr));
  }
  step_ = store.Find(opt.step_name);

  std::vector<std::string> alias_names;
  for (size_t a : ug.aliases) alias_names.push_back(ug.graph->inputs[a]->name);
  OC_RETURN_IF_ERROR(train::Compile(*ug.graph, false));
  OC_ASSIGN_OR_RETURN(update_, Executable::Create(ug.graph));
  OC_ASSIGN_OR_RETURN(update_ctx_, update_->NewContext());
  const Graph& cg = update_->graph();
  update_in_.assign(cg.inputs.size(), nullptr);
  update_out_.assign(cg.outputs.size(), nullptr);
  update_grad_inputs_.assign(params.size(), SIZE_MAX);
  for (size_t i = 0; i < cg.inputs.size(); ++i) {
    const std::string& name = cg.inputs[i]->name;
    if (name == "lr") {
      update_in_[i] = &lr_;
      continue;
    }
    bool is_grad = false;
    for (size_t k = 0; k < params.size(); ++k)
      if (name == "grad." + params[k].name) {
        update_grad_inputs_[k] = i;
        is_grad = true;
      }
    if (is_grad) continue;
    StoredTensor* t = store.Find(name);
    if (!t) return Internal("optimiser input '", name, "' is neither a gradient nor a stored tensor");
    update_bound_.push_back({i, name, t, t->dtype, t->shape});
  }
  for (size_t k = 0; k < alias_names.size(); ++k) {
    size_t idx = SIZE_MAX;
    for (size_t i = 0; i < cg.inputs.size(); ++i)
      if (cg.inputs[i]->name == alias_names[k]) idx = i;
    if (idx == SIZE_MAX) return Internal("optimiser output ", k, " has no input '", alias_names[k], "' to update");
    update_aliases_.push_back(idx);
  }
  if (update_only_) {
    for (size_t k = 0; k < params.size(); ++k) {
      if (update_grad_inputs_[k] == SIZE_MAX) return Internal("optimiser lost the gradient of '", params[k].name, "'");
      const Value& v = *cg.inputs[update_grad_inputs_[k]];
      TensorInfo info = InfoOf(v);
      feeds_.push_back(info);
    }
  } else {
    if (grads_.size() != params.size()) return Internal("gradient buffers do not match the parameters");
    for (size_t k = 0; k < params.size(); ++k)
      if (update_grad_inputs_[k] != SIZE_MAX) update_in_[update_grad_inputs_[k]] = grads_[k].data();
  }
  return Status::Ok();
}

Status Program::Run(std::span<const void* const> feeds, std::span<void* const> fetches, float lr,
                    ThreadPool& pool) {
  if (feeds.size() != feeds_.size())
    return InvalidArgument("the program takes ", feeds_.size(), " feeds, got ", feeds.size());
  if (fetches.size() != fetches_.size())
    return InvalidArgument("the program returns ", fetches_.size(), " fetches, got ", fetches.size());
  for (size_t i = 0; i < feeds.size(); ++i)
    if (!feeds[i] && feeds_[i].bytes) return InvalidArgument("feed ", i, " ('", feeds_[i].name, "') is null");
  for (size_t i = 0; i < fetches.size(); ++i)
    if (!fetches[i] && fetches_[i].bytes) return InvalidArgument("fetch ", i, " ('", fetches_[i].name, "') is null");
  if (main_) {
    OC_RETURN_IF_ERROR(CheckBindings(main_bound_));
    for (size_t f = 0; f < feeds.size(); ++f)
      if (main_feed_inputs_[f] != SIZE_MAX) main_in_[main_feed_inputs_[f]] = feeds[f];
    for (const Binding& b : main_bound_) main_in_[b.input] = b.tensor->data.data();
    for (size_t i = 0; i < num_user_fetches_; ++i) main_out_[i] = fetches[i];
    for (size_t i = num_user_fetches_; i < fetches.size(); ++i)  // return_grads
      main_out_[num_user_fetches_ + state_out_.size() + (i - num_user_fetches_)] = fetches[i];
    OC_RETURN_IF_ERROR(main_->Run(*main_ctx_, main_in_, main_out_, pool));
    for (auto& [bytes, target] : state_out_) std::memcpy(target->data.mutable_data(), bytes.data(), bytes.size());
  }
  if (!update_) return Status::Ok();
  OC_RETURN_IF_ERROR(CheckBindings(update_bound_));
  if (update_only_)
    for (size_t k = 0; k < feeds.size(); ++k) update_in_[update_grad_inputs_[k]] = feeds[k];
  for (const Binding& b : update_bound_) update_in_[b.input] = b.tensor->data.data();
  for (size_t k = 0; k < update_aliases_.size(); ++k) update_out_[k] = const_cast<void*>(update_in_[update_aliases_[k]]);
  lr_ = lr;
  int64_t* step = reinterpret_cast<int64_t*>(step_->data.mutable_data());
  ++*step;
  Status st = update_->Run(*update_ctx_, update_in_, update_out_, pool);
  if (!st.ok()) --*step;
  return st;
}

}  // namespace oc::train
