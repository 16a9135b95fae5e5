// Model loading, description, datasets and execution.
//
// A model is an OmModel (verified .om) plus an Executable. Executions take an
// ExecutionContext (activation arena) from the executable's free list, so one
// model runs concurrently from many streams/threads; a model loaded "with
// memory" has a single context over the caller's work memory and serialises
// its executions on a mutex. A model with unknown dims (format-version-2 .om)
// has one executable per input-shape signature instead (acl_dynamic.cc).
#include <atomic>
#include <condition_variable>
#include <cstring>

#include "acl/acl_model_internal.h"
#include "executor/interpreter_ops.h"
#include "runtime/single_op.h"

using namespace oc::acl;
using oc::StrCat;

namespace oc::acl {

aclError NullArg(const char* name) {
  return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL"));
}

aclDataType ToAclType(oc::DataType t) { return static_cast<aclDataType>(oc::DataTypeToAcl(t)); }

void ModelObj::BeginExecution() {
  std::lock_guard<std::mutex> lk(inflight_mu);
  ++inflight;
}

void ModelObj::EndExecution() {
  {
    std::lock_guard<std::mutex> lk(inflight_mu);
    --inflight;
  }
  inflight_cv.notify_all();
}

void ModelObj::WaitIdle() {
  std::unique_lock<std::mutex> lk(inflight_mu);
  inflight_cv.wait(lk, [&] { return inflight == 0; });
}

oc::Status ModelObj::Run(const oc::Executable& ex, const std::vector<const void*>& ins,
                         const std::vector<void*>& outs) {
  oc::trace::ModelRunScope trace_run(id);  // profiling: this run, on this stream
  ThreadPoolUse use;  // keeps the pool alive against aclrtSetOpExecuteThreads
  oc::ThreadPool& pool = use.pool();
  if (user_ctx) {
    std::lock_guard<std::mutex> lk(user_mu);
    return ex.Run(*user_ctx, ins, outs, pool);
  }
  auto ctx = ex.AcquireContext();
  if (!ctx.ok()) return ctx.status();
  oc::Status st = ex.Run(**ctx, ins, outs, pool);
  ex.ReleaseContext(std::move(*ctx));
  return st;
}

}  // namespace oc::acl

namespace {

aclFormat FormatFromString(const std::string& s) {
  if (s == "NCHW") return ACL_FORMAT_NCHW;
  if (s == "NHWC") return ACL_FORMAT_NHWC;
  if (s == "NCDHW") return ACL_FORMAT_NCDHW;
  if (s == "NDHWC") return ACL_FORMAT_NDHWC;
  return ACL_FORMAT_ND;
}

// Maps a load failure to the code CANN applications test for.
aclError LoadCode(const oc::Status& st) {
  switch (st.code()) {
    case oc::StatusCode::kIoError:
    case oc::StatusCode::kNotFound: return ACL_ERROR_READ_MODEL_FAILURE;
    case oc::StatusCode::kInvalidFile:
    case oc::StatusCode::kOutOfRange: return ACL_ERROR_PARSE_MODEL;
    case oc::StatusCode::kNotSupported: return ACL_ERROR_FEATURE_UNSUPPORTED;
    case oc::StatusCode::kInvalidArgument: return ACL_ERROR_INVALID_PARAM;
    case oc::StatusCode::kResourceExhausted: return ACL_ERROR_BAD_ALLOC;
    default: return ACL_ERROR_FAILURE;
  }
}

struct ModelRegistry {
  std::mutex mu;
  uint32_t next_id = 1;
  std::map<uint32_t, std::shared_ptr<ModelObj>> models;
};

ModelRegistry& Models() {
  static ModelRegistry* r = new ModelRegistry();
  return *r;
}

}  // namespace

namespace oc::acl {
HandleSet& Datasets() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& Descs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
}  // namespace oc::acl

namespace {

IoInfo MakeIoInfo(const oc::Value& v, aclFormat format) {
  IoInfo io;
  io.name = v.name;
  io.dtype = ToAclType(v.dtype);
  io.format = format;
  io.dims = v.has_shape ? v.shape : std::vector<int64_t>{-2};  // -2: unknown rank
  io.bytes = v.ByteSize() > 0 ? static_cast<size_t>(v.ByteSize()) : 0;
  return io;
}

aclFormat InputFormat(const oc::Graph& g, const oc::Value& v) {
  auto it = g.metadata.find("input_format");
  if (it != g.metadata.end()) {
    aclFormat f = FormatFromString(it->second);
    // A layout only describes rank-4/5 tensors; others stay ND.
    if ((f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC) && v.shape.size() == 4) return f;
    if ((f == ACL_FORMAT_NCDHW || f == ACL_FORMAT_NDHWC) && v.shape.size() == 5) return f;
    return ACL_FORMAT_ND;
  }
  return v.shape.size() == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
}

// Builds a model from a verified .om. `work` (optional) is caller memory.
aclError BuildModel(oc::Expected<oc::OmModel> loaded, const std::string& origin, void* work, size_t work_size,
                    void* weight, size_t weight_size, bool with_mem, uint32_t* modelId) {
  oc::trace::Scope trace_load(oc::trace::Kind::kModelLoad, oc::trace::kAll);
  if (!loaded.ok()) return Fail(LoadCode(loaded.status()), StrCat(origin, ": ", loaded.status().message()));
  auto m = std::make_shared<ModelObj>();
  m->om = std::move(loaded).value();
  const oc::Graph& g = *m->om.graph;
  if (with_mem && m->om.dynamic)
    return Fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                StrCat(origin, " has unknown dims, so its work memory depends on the shapes it runs at: load it "
                               "with aclmdlLoadFromFile or aclmdlLoadFromMem"));
  if (with_mem) {
    size_t need = g.arena_size > 0 ? static_cast<size_t>(g.arena_size) : 0;
    if (work && work_size < need)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("workSize ", work_size, " is smaller than the ", need, " bytes ", origin, " needs"));
    if (weight && weight_size < m->om.weights_size)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("weightSize ", weight_size, " is smaller than the ",
                                                  m->om.weights_size, " weight bytes of ", origin));
    if (work) {
      auto block = RuntimeState().memory.Find(work, need ? need : 1);
      if (!block || block->kind != oc::rt::MemKind::kDevice)
        return Fail(ACL_ERROR_INVALID_PARAM,
                    StrCat("workPtr ", PtrString(work), " (", need,
                           " bytes) is not inside one device allocation from aclrtMalloc"));
    }
  }
  for (const oc::Value* v : g.inputs) m->inputs.push_back(MakeIoInfo(*v, InputFormat(g, *v)));
  for (const oc::Value* v : g.outputs) m->outputs.push_back(MakeIoInfo(*v, ACL_FORMAT_ND));
  if (m->om.dynamic) {
    if (aclError e = SetUpDynamicModel(*m, origin)) return e;
  } else if (auto exe = oc::Executable::Create(m->om.graph, m->om.prepacked);
             !exe.ok() && exe.status().code() == oc::StatusCode::kNotSupported && oc::NeedsInterpreter(g) &&
             !with_mem) {
    // Static shapes, but ops without a compiled kernel (optionals or sequences
    // inside): the dynamic path runs it node by node.
    if (aclError e = SetUpDynamicModel(*m, origin)) return e;
  } else {
    if (!exe.ok()) return Fail(LoadCode(exe.status()), StrCat(origin, ": ", exe.status().message()));
    m->exe = std::move(exe).value();
    if (with_mem && work) {
      auto ctx = m->exe->NewContextWithArena(work, work_size);
      if (!ctx.ok()) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("workPtr: ", ctx.status().message()));
      m->user_ctx = std::move(ctx).value();
    }
  }
  ModelRegistry& reg = Models();
  std::lock_guard<std::mutex> lk(reg.mu);
  m->id = reg.next_id++;
  trace_load.set_model(m->id);
  reg.models[m->id] = m;
  *modelId = m->id;
  Log(kLogInfo, StrCat("loaded ", origin, " as model ", m->id, ": ", g.nodes().size(), " nodes, ",
                       m->inputs.size(), " inputs, ", m->outputs.size(), " outputs, arena ", g.arena_size, " bytes"));
  return ACL_SUCCESS;
}

}  // namespace

namespace oc::acl {
std::shared_ptr<ModelObj> FindModel(uint32_t id) {
  ModelRegistry& reg = Models();
  std::lock_guard<std::mutex> lk(reg.mu);
  auto it = reg.models.find(id);
  return it == reg.models.end() ? nullptr : it->second;
}

aclError UnknownModel(uint32_t id) {
  return Fail(ACL_ERROR_INVALID_MODEL_ID, StrCat("modelId ", id, " is not a loaded model (never loaded or unloaded)"));
}
}  // namespace oc::acl

namespace {

// Checks one dataset against the model's inputs or outputs and collects the
// addresses. `need` (dynamic models): the bytes each buffer must at least hold
// for the shapes of this run, instead of the sizes the model states.
aclError CheckDataset(const aclmdlDataset* ds, const std::vector<IoInfo>& io, bool is_input,
                      std::vector<void*>* ptrs, const std::vector<size_t>* need = nullptr) {
  const char* what = is_input ? "input" : "output";
  if (!ds) return NullArg(is_input ? "input" : "output");
  if (!Datasets().Contains(ds))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " dataset ", PtrString(ds), " is not a live aclmdlDataset"));
  if (ds->buffers.size() != io.size())
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the ", what, " dataset holds ", ds->buffers.size(),
                                                " buffers but the model has ", io.size(), " ", what, "s"));
  auto& mem = RuntimeState().memory;
  for (size_t i = 0; i < io.size(); ++i) {
    const aclDataBuffer* b = ds->buffers[i];
    if (!b || !DataBuffers().Contains(b))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, " ('", io[i].name,
                                                  "'): the dataset's buffer is no longer a live aclDataBuffer"));
    const size_t bytes = need ? (*need)[i] : io[i].bytes;
    bool size_ok = is_input && !need ? b->size == bytes : b->size >= bytes;
    if (!size_ok)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat(what, " ", i, " ('", io[i].name, "'): buffer size is ", b->size, " bytes but the model ",
                         is_input && !need ? "expects exactly " : "needs at least ", bytes, " bytes",
                         need ? " for the shapes of this run" : "",
                         !is_input && !b->data && b->size == 0
                             ? " (aclmdlExecute allocates an output whose buffer is given as NULL with size 0)"
                             : ""));
    if (bytes > 0) {
      if (!b->data)
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, " ('", io[i].name, "'): buffer address is NULL"));
      if (!mem.Find(b->data, bytes))
        return Fail(ACL_ERROR_INVALID_PARAM,
                    StrCat(what, " ", i, " ('", io[i].name, "'): buffer ", PtrString(b->data), " (", bytes,
                           " bytes) is not inside memory from aclrtMalloc or aclrtMallocHost"));
    }
    ptrs->push_back(b->data);
  }
  return ACL_SUCCESS;
}

// The output buffers given as (NULL, 0) for outputs aclmdlExecute is to
// allocate (`allocate` false: none; aclmdlExecuteAsync checks them as buffers
// of 0 bytes).
std::vector<bool> OutputsToAllocate(const aclmdlDataset* output, size_t count, bool allocate) {
  std::vector<bool> out(count, false);
  if (!allocate || !output || !Datasets().Contains(output) || output->buffers.size() != count) return out;
  for (size_t i = 0; i < count; ++i) {
    const aclDataBuffer* b = output->buffers[i];
    out[i] = b && DataBuffers().Contains(b) && !b->data && b->size == 0;
  }
  return out;
}

// Gives each output buffer in `which` device memory of `need[i]` bytes (none
// for 0 bytes); the caller owns it from then on (aclrtFree).
aclError AllocateOutputs(aclmdlDataset* output, const std::vector<bool>& which, const std::vector<size_t>& need) {
  for (size_t i = 0; i < which.size(); ++i) {
    if (!which[i] || need[i] == 0) continue;
    auto p = RuntimeState().memory.Allocate(need[i], oc::rt::MemKind::kDevice);
    if (!p.ok())
      return Fail(ACL_ERROR_BAD_ALLOC, StrCat("output ", i, ": cannot allocate the ", need[i], " bytes it needs: ",
                                              p.status().message()));
    output->buffers[i]->data = *p;
    output->buffers[i]->size = need[i];
  }
  return ACL_SUCCESS;
}

// Validates and enqueues one execution; `*stream_out` receives the stream used.
// `allocate` (aclmdlExecute): output buffers of (NULL, 0) get device memory of
// the size this run needs (for outputs whose shapes depend on data, when the
// run has made them).
aclError EnqueueExecution(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream,
                          std::shared_ptr<StreamObj>* stream_out, bool allocate) {
  if (aclError e = RequireInit()) return e;
  auto model = FindModel(modelId);
  if (!model) return UnknownModel(modelId);
  std::vector<void*> in_ptrs, out_ptrs;
  std::shared_ptr<const oc::Executable> exe = model->exe;
  InterpretedRun interpreted;
  if (model->dyn) {
    // The shapes of this run pick (or make) the executable; buffers must hold them.
    if (aclError e = ResolveDynamicExecutable(*model, input, &exe, &interpreted.shapes)) return e;
  }
  const std::vector<bool> to_allocate = OutputsToAllocate(output, model->outputs.size(), allocate);
  if (model->dyn && !exe) {
    // Shapes that depend on data: the interpreter runs it, output sizes are
    // checked (or outputs allocated) when they are known.
    auto interp = model->dyn->spec->GetInterpreter();
    if (!interp.ok()) return FailStatus(interp.status(), ACL_ERROR_FEATURE_UNSUPPORTED);
    interpreted.interpreter = std::move(interp).value();
    const oc::Graph& g = *model->om.graph;
    std::vector<size_t> in_need, out_need(model->outputs.size(), 0);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      int64_t count = 1;
      for (int64_t d : interpreted.shapes[i]) count *= d;
      in_need.push_back(static_cast<size_t>(std::max<int64_t>(oc::DataTypeByteSize(g.inputs[i]->dtype, count), 0)));
    }
    for (size_t i = g.inputs.size(); i < model->inputs.size(); ++i) in_need.push_back(model->inputs[i].bytes);
    // Every output buffer must be device memory over its whole size: the run
    // may fill all of it.
    if (output && Datasets().Contains(output) && output->buffers.size() == out_need.size())
      for (size_t i = 0; i < out_need.size(); ++i)
        if (output->buffers[i] && DataBuffers().Contains(output->buffers[i])) out_need[i] = output->buffers[i]->size;
    if (aclError e = CheckDataset(input, model->inputs, true, &in_ptrs, &in_need)) return e;
    if (aclError e = CheckDataset(output, model->outputs, false, &out_ptrs, &out_need)) return e;
    in_ptrs.resize(g.inputs.size());
    interpreted.out_sizes = out_need;
    interpreted.output = output;
    interpreted.allocate = to_allocate;
  } else if (model->dyn) {
    std::vector<size_t> in_need, out_need;
    for (size_t i = 0; i < exe->num_inputs(); ++i) in_need.push_back(static_cast<size_t>(exe->input(i).ByteSize()));
    for (size_t i = exe->num_inputs(); i < model->inputs.size(); ++i) in_need.push_back(model->inputs[i].bytes);
    for (size_t i = 0; i < exe->num_outputs(); ++i)
      out_need.push_back(static_cast<size_t>(exe->output(i).ByteSize()));
    if (aclError e = CheckDataset(input, model->inputs, true, &in_ptrs, &in_need)) return e;
    if (aclError e = AllocateOutputs(output, to_allocate, out_need)) return e;
    if (aclError e = CheckDataset(output, model->outputs, false, &out_ptrs, &out_need)) return e;
    in_ptrs.resize(exe->num_inputs());  // the dynamic tensor is not a graph input
  } else {
    std::vector<size_t> out_need;
    for (const IoInfo& io : model->outputs) out_need.push_back(io.bytes);
    if (aclError e = CheckDataset(input, model->inputs, true, &in_ptrs)) return e;
    if (aclError e = AllocateOutputs(output, to_allocate, out_need)) return e;
    if (aclError e = CheckDataset(output, model->outputs, false, &out_ptrs)) return e;
  }
  if (aclError e = ResolveStream(stream, stream_out)) return e;
  if (model->dyn && exe) RecordOutputShapes(*model, *exe, output);
  std::vector<const void*> ins(in_ptrs.begin(), in_ptrs.end());
  model->BeginExecution();
  try {
    (*stream_out)->queue->Enqueue(
        [model, exe, interpreted = std::move(interpreted), ins = std::move(ins),
         outs = std::move(out_ptrs)]() -> oc::Status {
          struct Done {
            ModelObj* m;
            ~Done() { m->EndExecution(); }
          } done{model.get()};
          if (!exe) return RunInterpreted(*model, interpreted, ins, outs);
          return model->Run(*exe, ins, outs);
        },
        StrCat("execution of model ", modelId));
  } catch (...) {
    model->EndExecution();  // never queued: aclmdlUnload must not wait for it
    throw;
  }
  return ACL_SUCCESS;
}

const IoInfo* DescEntry(const aclmdlDesc* desc, size_t index, bool input) {
  if (!desc) {
    Fail(ACL_ERROR_INVALID_PARAM, "argument 'modelDesc' is NULL");
    return nullptr;
  }
  if (!Descs().Contains(desc)) {
    Fail(ACL_ERROR_INVALID_PARAM, StrCat("modelDesc ", PtrString(desc), " is not a live aclmdlDesc"));
    return nullptr;
  }
  const auto& v = input ? desc->inputs : desc->outputs;
  if (index >= v.size()) {
    Fail(ACL_ERROR_INVALID_PARAM, StrCat("index ", index, " is out of range: the model has ", v.size(), " ",
                                         input ? "inputs" : "outputs",
                                         desc->filled ? "" : " (the desc was not filled by aclmdlGetDesc)"));
    return nullptr;
  }
  return &v[index];
}

aclError FillDims(const aclmdlDesc* desc, size_t index, aclmdlIODims* dims, bool input) {
  if (!dims) return NullArg("dims");
  const IoInfo* io = DescEntry(desc, index, input);
  if (!io) return ACL_ERROR_INVALID_PARAM;
  if (io->dims.size() > ACL_MAX_DIM_CNT)
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("tensor '", io->name, "' has rank ", io->dims.size(), " > ACL_MAX_DIM_CNT"));
  std::memset(dims->name, 0, sizeof dims->name);
  std::strncpy(dims->name, io->name.c_str(), ACL_MAX_TENSOR_NAME_LEN - 1);
  dims->dimCount = io->dims.size();
  for (size_t i = 0; i < io->dims.size(); ++i) dims->dims[i] = io->dims[i];
  return ACL_SUCCESS;
}

aclError IndexByName(const aclmdlDesc* desc, const char* name, size_t* index, bool input) {
  if (!desc) return NullArg("modelDesc");
  if (!name) return NullArg("name");
  if (!index) return NullArg("index");
  if (!Descs().Contains(desc))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("modelDesc ", PtrString(desc), " is not a live aclmdlDesc"));
  const auto& v = input ? desc->inputs : desc->outputs;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].name == name) {
      *index = i;
      return ACL_SUCCESS;
    }
  }
  std::string names;
  for (const auto& io : v) names += (names.empty() ? "'" : ", '") + io.name + "'";
  return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the model has no ", input ? "input" : "output", " named '", name,
                                              "' (it has ", names.empty() ? "none" : names, ")"));
}

}  // namespace

namespace oc::acl {
void UnloadAllModels() {
  std::map<uint32_t, std::shared_ptr<ModelObj>> all;
  {
    std::lock_guard<std::mutex> lk(Models().mu);
    all.swap(Models().models);
  }
  for (auto& [id, m] : all) m->WaitIdle();
}
}  // namespace oc::acl

// ---- Loading ---------------------------------------------------------------------------------

aclError aclmdlLoadFromFile(const char* modelPath, uint32_t* modelId) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!modelPath) return NullArg("modelPath");
    if (!modelId) return NullArg("modelId");
    return BuildModel(oc::LoadOmFile(modelPath), StrCat("model file '", modelPath, "'"), nullptr, 0, nullptr, 0,
                      false, modelId);
  });
}

aclError aclmdlLoadFromMem(const void* model, size_t modelSize, uint32_t* modelId) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!model) return NullArg("model");
    if (!modelId) return NullArg("modelId");
    if (modelSize == 0) return Fail(ACL_ERROR_INVALID_PARAM, "modelSize is 0");
    return BuildModel(oc::LoadOmMemory(model, modelSize, true), "model in memory", nullptr, 0, nullptr, 0, false,
                      modelId);
  });
}

aclError aclmdlLoadFromFileWithMem(const char* modelPath, uint32_t* modelId, void* workPtr, size_t workSize,
                                   void* weightPtr, size_t weightSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!modelPath) return NullArg("modelPath");
    if (!modelId) return NullArg("modelId");
    return BuildModel(oc::LoadOmFile(modelPath), StrCat("model file '", modelPath, "'"), workPtr, workSize,
                      weightPtr, weightSize, true, modelId);
  });
}

aclError aclmdlLoadFromMemWithMem(const void* model, size_t modelSize, uint32_t* modelId, void* workPtr,
                                  size_t workSize, void* weightPtr, size_t weightSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!model) return NullArg("model");
    if (!modelId) return NullArg("modelId");
    if (modelSize == 0) return Fail(ACL_ERROR_INVALID_PARAM, "modelSize is 0");
    return BuildModel(oc::LoadOmMemory(model, modelSize, true), "model in memory", workPtr, workSize, weightPtr,
                      weightSize, true, modelId);
  });
}

namespace {
aclError QuerySizes(oc::Expected<oc::OmModel> om, const std::string& origin, size_t* workSize, size_t* weightSize) {
  if (!om.ok()) return Fail(LoadCode(om.status()), StrCat(origin, ": ", om.status().message()));
  *workSize = om->graph->arena_size > 0 ? static_cast<size_t>(om->graph->arena_size) : 0;
  *weightSize = static_cast<size_t>(om->weights_size);
  return ACL_SUCCESS;
}
}  // namespace

aclError aclmdlQuerySize(const char* fileName, size_t* workSize, size_t* weightSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!fileName) return NullArg("fileName");
    if (!workSize) return NullArg("workSize");
    if (!weightSize) return NullArg("weightSize");
    return QuerySizes(oc::LoadOmFile(fileName), StrCat("model file '", fileName, "'"), workSize, weightSize);
  });
}

aclError aclmdlQuerySizeFromMem(const void* model, size_t modelSize, size_t* workSize, size_t* weightSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!model) return NullArg("model");
    if (!workSize) return NullArg("workSize");
    if (!weightSize) return NullArg("weightSize");
    if (modelSize == 0) return Fail(ACL_ERROR_INVALID_PARAM, "modelSize is 0");
    return QuerySizes(oc::LoadOmMemory(model, modelSize, false), "model in memory", workSize, weightSize);
  });
}

aclError aclmdlUnload(uint32_t modelId) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    std::shared_ptr<ModelObj> m;
    {
      ModelRegistry& reg = Models();
      std::lock_guard<std::mutex> lk(reg.mu);
      auto it = reg.models.find(modelId);
      if (it == reg.models.end()) return UnknownModel(modelId);
      m = std::move(it->second);
      reg.models.erase(it);
    }
    m->WaitIdle();
    return ACL_SUCCESS;
  });
}

// ---- Description ---------------------------------------------------------------------------------

aclmdlDesc* aclmdlCreateDesc(void) {
  return GuardValue<aclmdlDesc*>(__func__, nullptr, [] {
    auto* d = new aclmdlDesc();
    Descs().Add(d);
    return d;
  });
}

aclError aclmdlDestroyDesc(aclmdlDesc* modelDesc) {
  return Guard(__func__, [&]() -> aclError {
    if (!modelDesc) return NullArg("modelDesc");
    if (!Descs().Remove(modelDesc))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("modelDesc ", PtrString(modelDesc),
                                                  " is not a live aclmdlDesc (never created or already destroyed)"));
    delete modelDesc;
    return ACL_SUCCESS;
  });
}

aclError aclmdlGetDesc(aclmdlDesc* modelDesc, uint32_t modelId) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!modelDesc) return NullArg("modelDesc");
    if (!Descs().Contains(modelDesc))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("modelDesc ", PtrString(modelDesc), " is not a live aclmdlDesc"));
    auto m = FindModel(modelId);
    if (!m) return UnknownModel(modelId);
    modelDesc->model_id = modelId;
    modelDesc->inputs = m->inputs;
    modelDesc->outputs = m->outputs;
    modelDesc->gears.reset();
    if (m->dyn && m->dyn->gears.mode != oc::GearMode::kNone)
      modelDesc->gears = std::make_shared<const oc::GearSet>(m->dyn->gears);
    modelDesc->filled = true;
    return ACL_SUCCESS;
  });
}

size_t aclmdlGetNumInputs(aclmdlDesc* modelDesc) {
  return GuardValue<size_t>(__func__, 0, [&]() -> size_t {
    if (!modelDesc || !Descs().Contains(modelDesc)) {
      Fail(ACL_ERROR_INVALID_PARAM, "modelDesc is NULL or not a live aclmdlDesc");
      return 0;
    }
    return modelDesc->inputs.size();
  });
}

size_t aclmdlGetNumOutputs(aclmdlDesc* modelDesc) {
  return GuardValue<size_t>(__func__, 0, [&]() -> size_t {
    if (!modelDesc || !Descs().Contains(modelDesc)) {
      Fail(ACL_ERROR_INVALID_PARAM, "modelDesc is NULL or not a live aclmdlDesc");
      return 0;
    }
    return modelDesc->outputs.size();
  });
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<size_t>(__func__, 0, [&]() -> size_t {
    const IoInfo* io = DescEntry(modelDesc, index, true);
    return io ? io->bytes : 0;
  });
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<size_t>(__func__, 0, [&]() -> size_t {
    const IoInfo* io = DescEntry(modelDesc, index, false);
    return io ? io->bytes : 0;
  });
}

aclError aclmdlGetInputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return Guard(__func__, [&] { return FillDims(modelDesc, index, dims, true); });
}

aclError aclmdlGetOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return Guard(__func__, [&] { return FillDims(modelDesc, index, dims, false); });
}

aclError aclmdlGetInputDimsV2(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return Guard(__func__, [&] { return FillDims(modelDesc, index, dims, true); });
}

const char* aclmdlGetInputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<const char*>(__func__, "", [&]() -> const char* {
    const IoInfo* io = DescEntry(modelDesc, index, true);
    return io ? io->name.c_str() : "";
  });
}

const char* aclmdlGetOutputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<const char*>(__func__, "", [&]() -> const char* {
    const IoInfo* io = DescEntry(modelDesc, index, false);
    return io ? io->name.c_str() : "";
  });
}

aclFormat aclmdlGetInputFormat(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<aclFormat>(__func__, ACL_FORMAT_UNDEFINED, [&] {
    const IoInfo* io = DescEntry(modelDesc, index, true);
    return io ? io->format : ACL_FORMAT_UNDEFINED;
  });
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<aclFormat>(__func__, ACL_FORMAT_UNDEFINED, [&] {
    const IoInfo* io = DescEntry(modelDesc, index, false);
    return io ? io->format : ACL_FORMAT_UNDEFINED;
  });
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<aclDataType>(__func__, ACL_DT_UNDEFINED, [&] {
    const IoInfo* io = DescEntry(modelDesc, index, true);
    return io ? io->dtype : ACL_DT_UNDEFINED;
  });
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc* modelDesc, size_t index) {
  return GuardValue<aclDataType>(__func__, ACL_DT_UNDEFINED, [&] {
    const IoInfo* io = DescEntry(modelDesc, index, false);
    return io ? io->dtype : ACL_DT_UNDEFINED;
  });
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return Guard(__func__, [&] { return IndexByName(modelDesc, name, index, true); });
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return Guard(__func__, [&] { return IndexByName(modelDesc, name, index, false); });
}

// ---- Datasets -------------------------------------------------------------------------------------

aclmdlDataset* aclmdlCreateDataset(void) {
  return GuardValue<aclmdlDataset*>(__func__, nullptr, [] {
    auto* d = new aclmdlDataset();
    Datasets().Add(d);
    return d;
  });
}

aclError aclmdlDestroyDataset(const aclmdlDataset* dataset) {
  return Guard(__func__, [&]() -> aclError {
    if (!dataset) return NullArg("dataset");
    if (!Datasets().Remove(dataset))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataset ", PtrString(dataset),
                                                  " is not a live aclmdlDataset (never created or already destroyed)"));
    FreeDatasetDescs(const_cast<aclmdlDataset*>(dataset));
    delete dataset;
    return ACL_SUCCESS;
  });
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset* dataset, aclDataBuffer* dataBuffer) {
  return Guard(__func__, [&]() -> aclError {
    if (!dataset) return NullArg("dataset");
    if (!dataBuffer) return NullArg("dataBuffer");
    if (!Datasets().Contains(dataset))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataset ", PtrString(dataset), " is not a live aclmdlDataset"));
    if (!DataBuffers().Contains(dataBuffer))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("dataBuffer ", PtrString(dataBuffer), " is not a live aclDataBuffer"));
    dataset->buffers.push_back(dataBuffer);
    return ACL_SUCCESS;
  });
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset* dataset) {
  if (!dataset || !Datasets().Contains(dataset)) return 0;
  return dataset->buffers.size();
}

aclDataBuffer* aclmdlGetDatasetBuffer(const aclmdlDataset* dataset, size_t index) {
  if (!dataset || !Datasets().Contains(dataset) || index >= dataset->buffers.size()) return nullptr;
  return dataset->buffers[index];
}

// ---- Execution ----------------------------------------------------------------------------------------

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output,
                            aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    return EnqueueExecution(modelId, input, output, stream, &s, false);
  });
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = EnqueueExecution(modelId, input, output, nullptr, &s, true)) return e;
    return SyncStream(*s, -1);
  });
}

aclError aclmdlGetCurOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = FillDims(modelDesc, index, dims, false)) return e;
    if (!modelDesc->filled) return ACL_SUCCESS;
    auto m = FindModel(modelDesc->model_id);
    if (!m || !m->dyn) return ACL_SUCCESS;  // the desc's snapshot then
    std::lock_guard<std::mutex> lk(m->dyn->mu);
    if (index < m->dyn->cur_output_dims.size()) {
      const auto& cur = m->dyn->cur_output_dims[index];
      if (cur.size() > ACL_MAX_DIM_CNT)
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("output ", index, " has rank ", cur.size(), " > ACL_MAX_DIM_CNT"));
      dims->dimCount = cur.size();
      for (size_t i = 0; i < cur.size(); ++i) dims->dims[i] = cur[i];
    }
    return ACL_SUCCESS;
  });
}
