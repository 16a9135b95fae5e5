// Dynamic shapes in AscendCL: models with unknown dims and ATC gear models.
//
// A model with free unknown dims runs at the shapes the application sets on
// the input dataset (aclmdlSetDatasetTensorDesc); output shapes come back in
// the output dataset's descs and through aclmdlGetCurOutputDims. A gear model
// (atc --dynamic_batch_size / --dynamic_image_size / --dynamic_dims) has one
// more input, ACL_DYNAMIC_TENSOR_NAME, whose buffer the aclmdlSet* calls fill
// with the selected gear's values (int64, as the flag lists them); every gear
// is specialised when the model loads, so no run pays for compilation, and the
// sizes reported are those of the largest gear.
#include <algorithm>
#include <cstring>

#include "acl/acl_model_internal.h"
#include "ops/cpu/common/tensor_util.h"

using namespace oc::acl;
using oc::StrCat;

namespace {

std::string GearsText(const oc::GearSet& g) {
  std::string s;
  for (size_t k = 0; k < g.values.size(); ++k) {
    s += k ? "; " : "";
    for (size_t i = 0; i < g.values[k].size(); ++i) {
      if (i) s += ',';
      s += std::to_string(g.values[k][i]);
    }
  }
  return s;
}

aclError SpecializeError(const oc::Status& st) {
  aclError code = ACL_ERROR_FAILURE;
  if (st.code() == oc::StatusCode::kInvalidArgument) code = ACL_ERROR_INVALID_PARAM;
  if (st.code() == oc::StatusCode::kNotSupported) code = ACL_ERROR_FEATURE_UNSUPPORTED;
  if (st.code() == oc::StatusCode::kResourceExhausted) code = ACL_ERROR_BAD_ALLOC;
  return Fail(code, st.message());
}

void SetCurrentOutputs(DynamicModel& d, const oc::Executable& exe) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < exe.num_outputs(); ++i) dims.push_back(exe.output(i).shape);
  std::lock_guard<std::mutex> lk(d.mu);
  d.cur_output_dims = std::move(dims);
}

const aclmdlDesc* LiveDesc(const aclmdlDesc* desc, aclError* err) {
  if (!desc) {
    *err = NullArg("modelDesc");
    return nullptr;
  }
  if (!Descs().Contains(desc)) {
    *err = Fail(ACL_ERROR_INVALID_PARAM, StrCat("modelDesc ", PtrString(desc), " is not a live aclmdlDesc"));
    return nullptr;
  }
  if (!desc->filled) {
    *err = Fail(ACL_ERROR_INVALID_PARAM, "modelDesc was not filled by aclmdlGetDesc");
    return nullptr;
  }
  return desc;
}

// Checks the arguments shared by the aclmdlSet* gear calls and returns the
// model and the dynamic tensor's buffer.
aclError GearTarget(uint32_t modelId, aclmdlDataset* dataset, size_t index, oc::GearMode mode, const char* setter,
                    std::shared_ptr<ModelObj>* model, aclDataBuffer** buffer) {
  if (aclError e = RequireInit()) return e;
  auto m = FindModel(modelId);
  if (!m) return UnknownModel(modelId);
  if (!dataset) return NullArg("dataset");
  if (!Datasets().Contains(dataset))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataset ", PtrString(dataset), " is not a live aclmdlDataset"));
  if (!m->dyn || m->dyn->gears.mode == oc::GearMode::kNone)
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("model ", modelId, " has no gears (it was compiled without --",
                                                oc::GearModeName(mode), ")"));
  DynamicModel& d = *m->dyn;
  if (d.gears.mode != mode) {
    const char* right = d.gears.mode == oc::GearMode::kBatch       ? "aclmdlSetDynamicBatchSize"
                        : d.gears.mode == oc::GearMode::kImageSize ? "aclmdlSetDynamicHWSize"
                                                                   : "aclmdlSetInputDynamicDims";
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("model ", modelId, " was compiled with --",
                                                oc::GearModeName(d.gears.mode), ", not --", oc::GearModeName(mode),
                                                ": select its gears with ", right, ", not ", setter));
  }
  if (index != d.dyn_index)
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("index ", index, " is not the dynamic tensor: input '", ACL_DYNAMIC_TENSOR_NAME,
                       "' has index ", d.dyn_index, " (aclmdlGetInputIndexByName)"));
  if (index >= dataset->buffers.size())
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the dataset holds ", dataset->buffers.size(),
                                                " buffers: add the buffer for input ", index, " ('",
                                                ACL_DYNAMIC_TENSOR_NAME, "') first"));
  aclDataBuffer* b = dataset->buffers[index];
  const size_t need = d.dyn_values * sizeof(int64_t);
  if (!b || !DataBuffers().Contains(b))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("buffer ", index, " of the dataset is not a live aclDataBuffer"));
  if (b->size < need || !b->data)
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the buffer of input ", index, " ('", ACL_DYNAMIC_TENSOR_NAME,
                                                "') holds ", b->size, " bytes at ", PtrString(b->data),
                                                "; it needs ", need, " bytes"));
  if (!RuntimeState().memory.Find(b->data, need))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the buffer of input ", index, " ('", ACL_DYNAMIC_TENSOR_NAME,
                                                "') is not memory from aclrtMalloc or aclrtMallocHost"));
  *model = std::move(m);
  *buffer = b;
  return ACL_SUCCESS;
}

// Writes gear `k` into the dynamic tensor and makes it the current gear.
aclError SelectGear(ModelObj& m, aclDataBuffer* b, size_t k) {
  DynamicModel& d = *m.dyn;
  std::memcpy(b->data, d.gears.values[k].data(), d.dyn_values * sizeof(int64_t));
  auto exe = d.spec->Get(d.gears.shapes[k]);  // pinned at load: a look-up
  if (!exe.ok()) return SpecializeError(exe.status());
  if (*exe) SetCurrentOutputs(d, **exe);
  return ACL_SUCCESS;
}

aclError NotAGear(uint32_t modelId, const oc::GearSet& g, const std::string& what) {
  return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " is not a gear of model ", modelId, " (--",
                                              oc::GearModeName(g.mode), " gears: ", GearsText(g), ")"));
}

}  // namespace

namespace oc::acl {

aclError SetUpDynamicModel(ModelObj& m, const std::string& origin) {
  auto d = std::make_unique<DynamicModel>();
  const Graph& g = *m.om.graph;
  auto gears = LoadGears(g);
  if (!gears.ok()) return Fail(ACL_ERROR_PARSE_MODEL, StrCat(origin, ": ", gears.status().message()));
  d->gears = std::move(gears).value();
  size_t capacity = ShapeSpecializer::DefaultCapacity();
  // The packings atc stored were made at its ISA. Kernels specialised here
  // follow this host's: the GEMM and Winograd panels say which micro-kernel
  // they are for, but the NCHWc conv's are told apart by size only, and their
  // channel block follows the ISA (a file compiled for AVX2 and run on an
  // AVX-512 host packed 8-channel blocks where 16 are read). Packings for
  // another ISA are left out: the kernels pack from the raw weights.
  const bool same_isa = m.om.target == HostTarget();
  d->spec = std::make_shared<ShapeSpecializer>(
      m.om.graph, same_isa ? m.om.prepacked : std::vector<std::span<const uint8_t>>{}, capacity);
  d->num_graph_inputs = g.inputs.size();
  if (d->gears.mode == GearMode::kNone) {
    m.dyn = std::move(d);
    return ACL_SUCCESS;
  }
  // Gears run from the first execution without compiling: specialise them now.
  std::vector<size_t> in_bytes(g.inputs.size(), 0), out_bytes(g.outputs.size(), 0);
  std::vector<std::vector<int64_t>> out_dims;
  for (size_t k = 0; k < d->gears.shapes.size(); ++k) {
    Status st = d->spec->Pin(d->gears.shapes[k]);
    if (!st.ok())
      return Fail(st.code() == StatusCode::kNotSupported ? ACL_ERROR_FEATURE_UNSUPPORTED : ACL_ERROR_PARSE_MODEL,
                  StrCat(origin, ": gear ", k, ": ", st.message()));
    auto exe = d->spec->Get(d->gears.shapes[k]);
    if (!exe.ok()) return SpecializeError(exe.status());
    if (!*exe) {
      // This gear runs in the interpreter: inputs have the gear's sizes, outputs are unknown.
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        int64_t count = 1;
        for (int64_t dim : d->gears.shapes[k][i]) count *= dim;
        const int64_t bytes = DataTypeByteSize(g.inputs[i]->dtype, count);  // packed for 4-bit types
        in_bytes[i] = std::max(in_bytes[i], static_cast<size_t>(std::max<int64_t>(bytes, 0)));
      }
      if (k == 0) for (const Value* v : g.outputs) out_dims.push_back(v->has_shape ? v->shape : std::vector<int64_t>{-2});
      continue;
    }
    const Executable& e = **exe;
    for (size_t i = 0; i < e.num_inputs(); ++i)
      in_bytes[i] = std::max(in_bytes[i], static_cast<size_t>(e.input(i).ByteSize()));
    for (size_t i = 0; i < e.num_outputs(); ++i) {
      out_bytes[i] = std::max(out_bytes[i], static_cast<size_t>(e.output(i).ByteSize()));
      // Dims that differ between gears are reported as -1.
      if (k == 0) out_dims.push_back(e.output(i).shape);
      else if (out_dims[i].size() != e.output(i).shape.size()) out_dims[i] = {-2};
      else
        for (size_t j = 0; j < out_dims[i].size(); ++j)
          if (out_dims[i][j] != e.output(i).shape[j]) out_dims[i][j] = -1;
    }
  }
  for (size_t i = 0; i < m.inputs.size(); ++i) m.inputs[i].bytes = in_bytes[i];
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    m.outputs[i].bytes = out_bytes[i];
    m.outputs[i].dims = out_dims[i];
  }
  d->dyn_values = d->gears.values[0].size();
  d->dyn_index = m.inputs.size();
  IoInfo dyn;
  dyn.name = ACL_DYNAMIC_TENSOR_NAME;
  dyn.dtype = ACL_INT64;
  dyn.format = ACL_FORMAT_ND;
  dyn.dims = {static_cast<int64_t>(d->dyn_values)};
  dyn.bytes = d->dyn_values * sizeof(int64_t);
  m.inputs.push_back(dyn);
  m.dyn = std::move(d);
  return ACL_SUCCESS;
}

aclError ResolveDynamicExecutable(ModelObj& m, const aclmdlDataset* input, std::shared_ptr<const Executable>* exe,
                                  ShapeSignature* shapes) {
  DynamicModel& d = *m.dyn;
  if (!input) return NullArg("input");
  if (!Datasets().Contains(input))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("input dataset ", PtrString(input), " is not a live aclmdlDataset"));
  if (input->buffers.size() != m.inputs.size())
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the input dataset holds ", input->buffers.size(),
                                                " buffers but the model has ", m.inputs.size(), " inputs",
                                                d.dyn_index != SIZE_MAX ? StrCat(" (the last is '", ACL_DYNAMIC_TENSOR_NAME, "')")
                                                                        : std::string()));
  ShapeSignature sig;
  if (d.gears.mode != GearMode::kNone) {
    const aclDataBuffer* b = input->buffers[d.dyn_index];
    const size_t need = d.dyn_values * sizeof(int64_t);
    if (!b || !DataBuffers().Contains(b) || b->size < need || !b->data ||
        !RuntimeState().memory.Find(b->data, need))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("input ", d.dyn_index, " ('", ACL_DYNAMIC_TENSOR_NAME, "') needs a buffer of ", need,
                         " bytes of device memory selecting a gear (aclmdlSet", d.gears.mode == GearMode::kBatch
                                                                                      ? "DynamicBatchSize"
                                                                                  : d.gears.mode == GearMode::kImageSize
                                                                                      ? "DynamicHWSize"
                                                                                      : "InputDynamicDims",
                         ")"));
    std::vector<int64_t> values(d.dyn_values);
    std::memcpy(values.data(), b->data, need);
    auto it = std::find(d.gears.values.begin(), d.gears.values.end(), values);
    if (it == d.gears.values.end())
      return NotAGear(m.id, d.gears, StrCat("the dynamic tensor (input ", d.dyn_index, ") holds ", oc::DimsString(values),
                                            ", which"));
    sig = d.gears.shapes[static_cast<size_t>(it - d.gears.values.begin())];
  } else {
    const Graph& g = *m.om.graph;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& in = *g.inputs[i];
      const aclTensorDesc* desc = i < input->descs.size() ? input->descs[i] : nullptr;
      if (desc && !TensorDescs().Contains(desc)) desc = nullptr;
      if (!desc) {
        if (!in.IsStatic())
          return Fail(ACL_ERROR_INVALID_PARAM,
                      StrCat("input ", i, " ('", in.name, "') has unknown dims ", in.ShapeString(),
                             ": set the shape to run at with aclmdlSetDatasetTensorDesc on the input dataset"));
        sig.push_back(in.shape);
        continue;
      }
      if (desc->dtype != ACL_DT_UNDEFINED && desc->dtype != m.inputs[i].dtype)
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("input ", i, " ('", in.name, "'): the tensor desc has data type ",
                                                    desc->dtype, ", the model expects ", m.inputs[i].dtype));
      sig.push_back(desc->dims);
    }
  }
  auto got = d.spec->Get(sig);
  if (!got.ok()) return SpecializeError(got.status());
  *exe = std::move(got).value();
  *shapes = std::move(sig);
  return ACL_SUCCESS;
}

Status RunInterpreted(ModelObj& m, const InterpretedRun& run, const std::vector<const void*>& ins,
                      const std::vector<void*>& outs) {
  const Graph& g = *m.om.graph;
  std::vector<RtValue> inputs;
  inputs.reserve(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    HostTensor t;
    t.dtype = g.inputs[i]->dtype;
    t.shape = run.shapes[i];
    t.data = TensorData::View(nullptr, ins[i], t.ByteSize());
    inputs.push_back(RtValue::FromTensor(std::move(t)));
  }
  ThreadPoolUse use;
  OC_ASSIGN_OR_RETURN(std::vector<RtValue> results, run.interpreter->Run(inputs, use.pool()));
  if (results.size() != outs.size())
    return Internal("the interpreter returned ", results.size(), " outputs for ", outs.size());
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < results.size(); ++i) {
    const RtValue& r = results[i];
    if (!r.is_tensor())
      return NotSupported("output ", i, " ('", g.outputs[i]->name, "') is a ", r.Describe(),
                          ", which a model output buffer cannot hold");
    const size_t bytes = r.tensor.ByteSize();
    void* dst = outs[i];
    if (i < run.allocate.size() && run.allocate[i]) {
      // aclmdlExecute's (NULL, 0) buffer: memory of this size, the caller's from now on.
      aclDataBuffer* b = run.output && Datasets().Contains(run.output) && i < run.output->buffers.size()
                             ? run.output->buffers[i] : nullptr;
      if (!b || !DataBuffers().Contains(b))
        return InvalidArgument("output ", i, " ('", g.outputs[i]->name, "'): its buffer was destroyed during the run");
      if (bytes) {
        OC_ASSIGN_OR_RETURN(dst, RuntimeState().memory.Allocate(bytes, rt::MemKind::kDevice));
        b->data = dst;
        b->size = bytes;
      }
    } else if (bytes > run.out_sizes[i]) {
      return InvalidArgument("output ", i, " ('", g.outputs[i]->name, "') came out with shape ",
                             oc::DimsString(r.tensor.shape), " (", bytes, " bytes) but its buffer holds ", run.out_sizes[i],
                             " bytes", run.out_sizes[i] == 0
                                           ? " (aclmdlExecute allocates an output whose buffer is given as NULL "
                                             "with size 0)"
                                           : "");
    }
    if (bytes) std::memcpy(dst, r.tensor.data.data(), bytes);
    dims.push_back(r.tensor.shape);
  }
  // The output dataset may be gone already (an async caller may destroy it once
  // aclmdlExecuteAsync returns): its descs are updated only while it is live.
  if (run.output && Datasets().Contains(run.output))
    for (size_t i = 0; i < dims.size(); ++i) SetDatasetDesc(run.output, i, m.outputs[i].dtype, ACL_FORMAT_ND, dims[i]);
  std::lock_guard<std::mutex> lk(m.dyn->mu);
  m.dyn->cur_output_dims = std::move(dims);
  return Status::Ok();
}

void SetDatasetDesc(aclmdlDataset* ds, size_t index, aclDataType dtype, aclFormat format,
                    const std::vector<int64_t>& dims) {
  if (ds->descs.size() <= index) ds->descs.resize(index + 1, nullptr);
  auto* d = new aclTensorDesc();
  d->dtype = dtype;
  d->format = format;
  d->dims = dims;
  TensorDescs().Add(d);
  aclTensorDesc* old = ds->descs[index];
  ds->descs[index] = d;
  if (old && TensorDescs().Remove(old)) delete old;
}

void FreeDatasetDescs(aclmdlDataset* ds) {
  for (aclTensorDesc* d : ds->descs)
    if (d && TensorDescs().Remove(d)) delete d;
  ds->descs.clear();
}

void RecordOutputShapes(ModelObj& m, const Executable& exe, aclmdlDataset* output) {
  for (size_t i = 0; i < exe.num_outputs(); ++i)
    SetDatasetDesc(output, i, m.outputs[i].dtype, ACL_FORMAT_ND, exe.output(i).shape);
  SetCurrentOutputs(*m.dyn, exe);
}

}  // namespace oc::acl

// ---- Dataset tensor descs -------------------------------------------------------------------

aclError aclmdlSetDatasetTensorDesc(aclmdlDataset* dataset, aclTensorDesc* tensorDesc, size_t index) {
  return Guard(__func__, [&]() -> aclError {
    if (!dataset) return NullArg("dataset");
    if (!tensorDesc) return NullArg("tensorDesc");
    if (!Datasets().Contains(dataset))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataset ", PtrString(dataset), " is not a live aclmdlDataset"));
    if (!TensorDescs().Contains(tensorDesc))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("tensorDesc ", PtrString(tensorDesc), " is not a live aclTensorDesc"));
    if (index >= dataset->buffers.size())
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("index ", index, " is out of range: the dataset holds ",
                                                  dataset->buffers.size(), " buffers (add the buffer first)"));
    if (tensorDesc->dims.size() > ACL_MAX_DIM_CNT)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("tensorDesc has ", tensorDesc->dims.size(), " dims > ACL_MAX_DIM_CNT"));
    for (size_t i = 0; i < tensorDesc->dims.size(); ++i)
      if (tensorDesc->dims[i] < 0)
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("tensorDesc dim ", i, " is ", tensorDesc->dims[i],
                                                    " (the shape to run at has every dim >= 0)"));
    if (dataset->descs.size() > index && dataset->descs[index] == tensorDesc) return ACL_SUCCESS;
    SetDatasetDesc(dataset, index, tensorDesc->dtype, tensorDesc->format, tensorDesc->dims);
    dataset->descs[index]->name = tensorDesc->name;
    return ACL_SUCCESS;
  });
}

aclTensorDesc* aclmdlGetDatasetTensorDesc(const aclmdlDataset* dataset, size_t index) {
  return GuardValue<aclTensorDesc*>(__func__, nullptr, [&]() -> aclTensorDesc* {
    if (!dataset) {
      NullArg("dataset");
      return nullptr;
    }
    if (!Datasets().Contains(dataset)) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataset ", PtrString(dataset), " is not a live aclmdlDataset"));
      return nullptr;
    }
    if (index >= dataset->descs.size() || !dataset->descs[index] || !TensorDescs().Contains(dataset->descs[index])) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("the dataset has no tensor desc at index ", index));
      return nullptr;
    }
    return dataset->descs[index];
  });
}

// ---- Gear queries -----------------------------------------------------------------------------

aclError aclmdlGetDynamicBatch(const aclmdlDesc* modelDesc, aclmdlBatch* batch) {
  return Guard(__func__, [&]() -> aclError {
    aclError e = ACL_SUCCESS;
    if (!LiveDesc(modelDesc, &e)) return e;
    if (!batch) return NullArg("batch");
    batch->batchCount = 0;
    const auto& g = modelDesc->gears;
    if (!g || g->mode != oc::GearMode::kBatch) return ACL_SUCCESS;
    if (g->values.size() > ACL_MAX_BATCH_NUM)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(g->values.size(), " batch gears > ACL_MAX_BATCH_NUM"));
    batch->batchCount = g->values.size();
    for (size_t k = 0; k < g->values.size(); ++k) batch->batch[k] = static_cast<uint64_t>(g->values[k][0]);
    return ACL_SUCCESS;
  });
}

aclError aclmdlGetDynamicHW(const aclmdlDesc* modelDesc, size_t /*index: reserved*/, aclmdlHW* hw) {
  return Guard(__func__, [&]() -> aclError {
    aclError e = ACL_SUCCESS;
    if (!LiveDesc(modelDesc, &e)) return e;
    if (!hw) return NullArg("hw");
    hw->hwCount = 0;
    const auto& g = modelDesc->gears;
    if (!g || g->mode != oc::GearMode::kImageSize) return ACL_SUCCESS;
    if (g->values.size() > ACL_MAX_HW_NUM)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(g->values.size(), " image-size gears > ACL_MAX_HW_NUM"));
    hw->hwCount = g->values.size();
    for (size_t k = 0; k < g->values.size(); ++k) {
      hw->hw[k][0] = static_cast<uint64_t>(g->values[k][0]);
      hw->hw[k][1] = static_cast<uint64_t>(g->values[k][1]);
    }
    return ACL_SUCCESS;
  });
}

aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc* modelDesc, size_t /*index: reserved*/, size_t* gearCount) {
  return Guard(__func__, [&]() -> aclError {
    aclError e = ACL_SUCCESS;
    if (!LiveDesc(modelDesc, &e)) return e;
    if (!gearCount) return NullArg("gearCount");
    const auto& g = modelDesc->gears;
    *gearCount = g && g->mode == oc::GearMode::kDims ? g->values.size() : 0;
    return ACL_SUCCESS;
  });
}

aclError aclmdlGetInputDynamicDims(const aclmdlDesc* modelDesc, size_t /*index: reserved*/, aclmdlIODims* dims,
                                   size_t gearCount) {
  return Guard(__func__, [&]() -> aclError {
    aclError e = ACL_SUCCESS;
    if (!LiveDesc(modelDesc, &e)) return e;
    if (!dims) return NullArg("dims");
    const auto& g = modelDesc->gears;
    if (!g || g->mode != oc::GearMode::kDims)
      return Fail(ACL_ERROR_INVALID_PARAM, "the model was not compiled with --dynamic_dims (it has no dims gears)");
    if (gearCount != g->values.size())
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("gearCount is ", gearCount, " but the model has ", g->values.size(),
                                                  " gears (aclmdlGetInputDynamicGearCount)"));
    for (size_t k = 0; k < g->shapes.size(); ++k) {
      std::vector<int64_t> all;
      for (const auto& s : g->shapes[k]) all.insert(all.end(), s.begin(), s.end());
      if (all.size() > ACL_MAX_DIM_CNT)
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("gear ", k, " has ", all.size(), " dims > ACL_MAX_DIM_CNT"));
      std::memset(dims[k].name, 0, sizeof dims[k].name);
      dims[k].dimCount = all.size();
      for (size_t i = 0; i < all.size(); ++i) dims[k].dims[i] = all[i];
    }
    return ACL_SUCCESS;
  });
}

// ---- Gear selection ---------------------------------------------------------------------------

aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t batchSize) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<ModelObj> m;
    aclDataBuffer* b = nullptr;
    if (aclError e = GearTarget(modelId, dataset, index, oc::GearMode::kBatch, __func__, &m, &b)) return e;
    const auto& g = m->dyn->gears;
    for (size_t k = 0; k < g.values.size(); ++k)
      if (static_cast<uint64_t>(g.values[k][0]) == batchSize) return SelectGear(*m, b, k);
    return NotAGear(modelId, g, StrCat("batch size ", batchSize));
  });
}

aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t height,
                                uint64_t width) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<ModelObj> m;
    aclDataBuffer* b = nullptr;
    if (aclError e = GearTarget(modelId, dataset, index, oc::GearMode::kImageSize, __func__, &m, &b)) return e;
    const auto& g = m->dyn->gears;
    for (size_t k = 0; k < g.values.size(); ++k)
      if (static_cast<uint64_t>(g.values[k][0]) == height && static_cast<uint64_t>(g.values[k][1]) == width)
        return SelectGear(*m, b, k);
    return NotAGear(modelId, g, StrCat("image size ", height, "x", width));
  });
}

aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset* dataset, size_t index, const aclmdlIODims* dims) {
  return Guard(__func__, [&]() -> aclError {
    if (!dims) return NullArg("dims");
    std::shared_ptr<ModelObj> m;
    aclDataBuffer* b = nullptr;
    if (aclError e = GearTarget(modelId, dataset, index, oc::GearMode::kDims, __func__, &m, &b)) return e;
    const auto& g = m->dyn->gears;
    if (dims->dimCount > ACL_MAX_DIM_CNT)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dims->dimCount ", dims->dimCount, " > ACL_MAX_DIM_CNT"));
    std::vector<int64_t> given(dims->dims, dims->dims + dims->dimCount);
    for (size_t k = 0; k < g.shapes.size(); ++k) {
      std::vector<int64_t> all;
      for (const auto& s : g.shapes[k]) all.insert(all.end(), s.begin(), s.end());
      if (all == given) return SelectGear(*m, b, k);
    }
    return NotAGear(modelId, g, StrCat("dims ", oc::DimsString(given), " (all input shapes one after another)"));
  });
}
