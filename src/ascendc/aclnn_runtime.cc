// The two-phase operator API of custom-operator packages: tensor/scalar/array
// handles (aclnn/acl_meta.h) and the generic prepare/run the generated
// aclnnXxxGetWorkspaceSize / aclnnXxx call (aclnn/oc_op_call.h): the
// operator's definition checks the tensors, its inference the outputs, its
// tiling function sizes the launch, and its kernel runs on the stream.
#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_hooks.h"
#include "aclnn/oc_op_call.h"
#include "ascendc/context.h"
#include "register/op_def_registry.h"

struct aclTensor {
  std::vector<int64_t> dims, strides, storage;
  aclDataType dtype;
  aclFormat format;
  int64_t offset;
  void* data;
};
struct aclScalar {
  aclDataType dtype;
  uint8_t bytes[8];
};
struct aclIntArray {
  std::vector<int64_t> v;
};
struct aclFloatArray {
  std::vector<float> v;
};
struct aclBoolArray {
  std::vector<bool> v;
};

struct aclOpExecutor {
  std::string op_type;
  uint32_t (*entry)(uint32_t, void*, const void*, size_t) = nullptr;
  uint32_t block_dim = 0;
  uint64_t tiling_key = 0;
  std::vector<uint8_t> tiling;
  std::vector<void*> args;  // inputs, outputs, workspace, tiling (filled at run)
  uint64_t workspace = 0;
  void* tiling_dev = nullptr;
  void* own_workspace = nullptr;  // allocated by the runtime (aclopExecuteV2 of a custom operator)
};

namespace {

// Every handle this file created and has not destroyed. Never destroyed
// itself: a model's kernels may release their prepared operators after this
// library's static destructors ran (a model not unloaded before exit).
struct Handles {
  std::mutex mu;
  std::set<const void*> live;
};
Handles& LiveHandles() {
  static Handles* h = new Handles;
  return *h;
}

template <typename T>
T* Track(T* p) {
  Handles& h = LiveHandles();
  std::lock_guard<std::mutex> lock(h.mu);
  h.live.insert(p);
  return p;
}
bool Untrack(const void* p) {
  Handles& h = LiveHandles();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.live.erase(p) > 0;
}
bool Live(const void* p) {
  Handles& h = LiveHandles();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.live.count(p) > 0;
}

thread_local std::string t_last_error;  // for callers that report it themselves

aclnnStatus Error(aclnnStatus code, const char* api, const std::string& what) {
  std::fprintf(stderr, "[ERROR] %s: %s\n", api, what.c_str());
  t_last_error = what;
  return code;
}

int ElementSize(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 0;
  }
}

std::string Snake(const std::string& type) {
  std::string s;
  for (size_t i = 0; i < type.size(); ++i) {
    char c = type[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      bool after_lower = i > 0 && !std::isupper(static_cast<unsigned char>(type[i - 1]));
      bool before_lower = i + 1 < type.size() && std::islower(static_cast<unsigned char>(type[i + 1])) && i > 0 &&
                          std::isupper(static_cast<unsigned char>(type[i - 1]));
      if (after_lower || before_lower) s += '_';
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      s += c;
    }
  }
  return s;
}

std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

bool Contiguous(const aclTensor& t) {
  if (t.strides.empty()) return true;
  int64_t expect = 1;
  for (size_t i = t.dims.size(); i-- > 0;) {
    if (t.dims[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.dims[i];
  }
  return true;
}

void* DataOf(const aclTensor* t) {
  return t ? static_cast<uint8_t*>(t->data) + t->offset * ElementSize(t->dtype) : nullptr;
}

void ReleaseExecutor(void* p) {
  auto* ex = static_cast<aclOpExecutor*>(p);
  if (ex->tiling_dev) aclrtFree(ex->tiling_dev);
  if (ex->own_workspace) aclrtFree(ex->own_workspace);
  Untrack(ex);
  delete ex;
}
int32_t NoTask(void*, char*, size_t) { return 0; }

}  // namespace

extern "C" {

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                           int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                           void* tensorData) {
  if ((viewDimsNum && !viewDims) || viewDimsNum > 25 || ElementSize(dataType) == 0 || offset < 0) {
    Error(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
          "viewDims is NULL with a rank, the rank is over 25, the data type is not supported or the offset is "
          "negative");
    return nullptr;
  }
  try {
    auto* t = new aclTensor{{}, {}, {}, dataType, format, offset, tensorData};
    t->dims.assign(viewDims, viewDims + viewDimsNum);
    for (int64_t d : t->dims)
      if (d < 0) {
        delete t;
        Error(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor", "a dimension is negative");
        return nullptr;
      }
    if (stride) t->strides.assign(stride, stride + viewDimsNum);
    if (storageDims) t->storage.assign(storageDims, storageDims + storageDimsNum);
    return Track(t);
  } catch (...) {
    return nullptr;
  }
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  if (!tensor) return ACLNN_SUCCESS;
  if (!Untrack(tensor)) return Error(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor", "not a live aclTensor");
  delete tensor;
  return ACLNN_SUCCESS;
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  int n = ElementSize(dataType);
  if (!value || n == 0) return nullptr;
  auto* s = new (std::nothrow) aclScalar{dataType, {}};
  if (!s) return nullptr;
  std::memcpy(s->bytes, value, static_cast<size_t>(n));
  return Track(s);
}
aclnnStatus aclDestroyScalar(const aclScalar* s) {
  if (!s) return ACLNN_SUCCESS;
  if (!Untrack(s)) return Error(ACLNN_ERR_PARAM_INVALID, "aclDestroyScalar", "not a live aclScalar");
  delete s;
  return ACLNN_SUCCESS;
}

aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (size && !value) return nullptr;
  auto* a = new (std::nothrow) aclIntArray{std::vector<int64_t>(value, value + size)};
  return a ? Track(a) : nullptr;
}
aclnnStatus aclDestroyIntArray(const aclIntArray* a) {
  if (!a) return ACLNN_SUCCESS;
  if (!Untrack(a)) return Error(ACLNN_ERR_PARAM_INVALID, "aclDestroyIntArray", "not a live aclIntArray");
  delete a;
  return ACLNN_SUCCESS;
}
aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  if (size && !value) return nullptr;
  auto* a = new (std::nothrow) aclFloatArray{std::vector<float>(value, value + size)};
  return a ? Track(a) : nullptr;
}
aclnnStatus aclDestroyFloatArray(const aclFloatArray* a) {
  if (!a) return ACLNN_SUCCESS;
  if (!Untrack(a)) return Error(ACLNN_ERR_PARAM_INVALID, "aclDestroyFloatArray", "not a live aclFloatArray");
  delete a;
  return ACLNN_SUCCESS;
}
aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  if (size && !value) return nullptr;
  auto* a = new (std::nothrow) aclBoolArray{std::vector<bool>(value, value + size)};
  return a ? Track(a) : nullptr;
}
aclnnStatus aclDestroyBoolArray(const aclBoolArray* a) {
  if (!a) return ACLNN_SUCCESS;
  if (!Untrack(a)) return Error(ACLNN_ERR_PARAM_INVALID, "aclDestroyBoolArray", "not a live aclBoolArray");
  delete a;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
  if (!tensor || !viewDims || !viewDimsNum) return ACLNN_ERR_PARAM_NULLPTR;
  if (!Live(tensor)) return Error(ACLNN_ERR_PARAM_INVALID, "aclGetViewShape", "not a live aclTensor");
  *viewDims = const_cast<int64_t*>(tensor->dims.data());
  *viewDimsNum = tensor->dims.size();
  return ACLNN_SUCCESS;
}

}  // extern "C"

namespace {

// The node state the host functions see, from the tensors (checked against
// the definition). outputs may be NULL (inference: their shapes are empty);
// need_data: the tensors must have data (aclnn), or are descriptions.
aclnnStatus FillNode(const char* api, const ops::OpDef& def, const char* opType, const aclTensor* const* inputs,
                     size_t numInputs, const aclTensor* const* outputs, size_t numOutputs, const OcAclnnAttr* attrs,
                     size_t numAttrs, bool need_data, gert::OcNodeState* node) {
  if (numInputs != def.GetInputs().size() || numOutputs != def.GetOutputs().size())
    return Error(ACLNN_ERR_INNER, api, "the generated call and the operator's definition disagree on parameters");
  node->name = opType;
  node->type = opType;
  auto check = [&](const aclTensor* t, const ops::OpParamDef& p, const char* role) -> aclnnStatus {
    if (!t) {
      if (p.GetParamType() == ops::OPTIONAL) return ACLNN_SUCCESS;
      return Error(ACLNN_ERR_PARAM_NULLPTR, api, std::string(role) + " '" + p.Name() + "' is NULL");
    }
    if (!Live(t)) return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(role) + " '" + p.Name() +
                                                                 "' is not a live aclTensor");
    if (need_data && !t->data)
      return Error(ACLNN_ERR_PARAM_NULLPTR, api, std::string(role) + " '" + p.Name() + "' has no data");
    if (!Contiguous(*t))
      return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(role) + " '" + p.Name() +
                                                     "' is a non-contiguous view: not supported yet");
    const auto& allowed = p.GetDataTypes();
    bool ok = allowed.empty();
    for (ge::DataType d : allowed) ok = ok || static_cast<int>(d) == static_cast<int>(t->dtype);
    if (!ok) {
      std::string list;
      for (ge::DataType d : allowed) list += (list.empty() ? "" : ", ") + std::to_string(static_cast<int>(d));
      return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(role) + " '" + p.Name() + "' has data type " +
                                                     std::to_string(static_cast<int>(t->dtype)) + "; " + opType +
                                                     " takes " + list + " (aclDataType values)");
    }
    return ACLNN_SUCCESS;
  };
  for (size_t i = 0; i < numInputs; ++i) {
    if (aclnnStatus e = check(inputs[i], def.GetInputs()[i], "input")) return e;
    const aclTensor* t = inputs[i];
    gert::Shape s;
    if (t)
      for (int64_t d : t->dims) s.AppendDim(d);
    node->input_shapes.emplace_back(s);
    node->input_present.push_back(t != nullptr);
    node->input_descs.emplace_back(t ? static_cast<ge::DataType>(t->dtype) : ge::DT_UNDEFINED,
                                   t ? static_cast<ge::Format>(t->format) : ge::FORMAT_ND);
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    gert::Shape s;
    if (!outputs) {
      node->output_shapes.emplace_back(s);
      node->output_descs.emplace_back(ge::DT_UNDEFINED, ge::FORMAT_ND);
      continue;
    }
    if (aclnnStatus e = check(outputs[i], def.GetOutputs()[i], "output")) return e;
    for (int64_t d : outputs[i]->dims) s.AppendDim(d);
    node->output_shapes.emplace_back(s);
    node->output_descs.emplace_back(static_cast<ge::DataType>(outputs[i]->dtype),
                                    static_cast<ge::Format>(outputs[i]->format));
  }
  for (size_t i = 0; i < numAttrs; ++i) {
    gert::RuntimeAttrs::Value v;
    const OcAclnnAttr& a = attrs[i];
    switch (a.kind) {
      case OC_ATTR_BOOL: v.kind = v.kBool; v.b = a.b; break;
      case OC_ATTR_INT: v.kind = v.kInt; v.i = a.i; break;
      case OC_ATTR_FLOAT: v.kind = v.kFloat; v.f = static_cast<float>(a.f); break;
      case OC_ATTR_STRING: v.kind = v.kString; v.s = a.s ? a.s : ""; break;
      case OC_ATTR_LIST_INT: v.kind = v.kListInt; if (a.li) v.li = a.li->v; break;
      case OC_ATTR_LIST_FLOAT: v.kind = v.kListFloat; if (a.lf) v.lf = a.lf->v; break;
      default: return Error(ACLNN_ERR_INNER, api, "unknown attribute kind");
    }
    node->attrs.OcValues().push_back(std::move(v));
  }
  return ACLNN_SUCCESS;
}

// Runs the operator's InferShape and InferDataType on a copy of `node`. An
// operator without InferDataType gives each output its definition's only
// data type, else input 0's.
aclnnStatus Infer(const char* api, const ops::OpDef& def, const char* opType, const gert::OcNodeState& node,
                  gert::OcNodeState* inferred) {
  *inferred = node;
  gert::InferShapeContext ictx(inferred);
  if (def.GetInferShape()(&ictx) != ge::GRAPH_SUCCESS)
    return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(opType) + "'s InferShape refused the input shapes");
  if (def.GetInferDataType()) {
    gert::InferDataTypeContext dctx(inferred);
    if (def.GetInferDataType()(&dctx) != ge::GRAPH_SUCCESS)
      return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(opType) + "'s InferDataType refused the inputs");
  } else {
    for (size_t i = 0; i < inferred->output_descs.size(); ++i) {
      const auto& types = def.GetOutputs()[i].GetDataTypes();
      ge::DataType t = types.size() == 1 ? types[0]
                       : node.input_descs.empty() ? ge::DT_UNDEFINED
                                                  : node.input_descs[0].GetDataType();
      if (inferred->output_descs[i].GetDataType() == ge::DT_UNDEFINED)
        inferred->output_descs[i].SetDataType(t);
    }
  }
  return ACLNN_SUCCESS;
}

aclnnStatus Prepare(const char* api, const char* opType, const aclTensor* const* inputs, size_t numInputs,
                    const aclTensor* const* outputs, size_t numOutputs, const OcAclnnAttr* attrs, size_t numAttrs,
                    bool need_data, uint64_t* workspaceSize, aclOpExecutor** executor) {
  try {
    if (!workspaceSize || !executor)
      return Error(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize and executor must not be NULL");
    auto& reg = ops::OcOpRegistry();
    auto it = reg.find(opType);
    if (it == reg.end())
      return Error(ACLNN_ERR_PARAM_INVALID, api, std::string("operator ") + opType + " is not registered (its "
                                                 "package library did not load)");
    const ops::OpDef& def = *it->second;
    gert::OcNodeState node;
    if (aclnnStatus e = FillNode(api, def, opType, inputs, numInputs, outputs, numOutputs, attrs, numAttrs,
                                 need_data, &node))
      return e;
    // The outputs the caller passed must be what the operator infers.
    if (def.GetInferShape()) {
      gert::OcNodeState inferred;
      if (aclnnStatus e = Infer(api, def, opType, node, &inferred)) return e;
      for (size_t i = 0; i < numOutputs; ++i) {
        const gert::Shape& want = inferred.output_shapes[i].GetOriginShape();
        std::vector<int64_t> w;
        for (size_t k = 0; k < want.GetDimNum(); ++k) w.push_back(want.GetDim(k));
        if (w != outputs[i]->dims)
          return Error(ACLNN_ERR_PARAM_INVALID, api, "output '" + def.GetOutputs()[i].Name() + "' is " +
                                                         Dims(outputs[i]->dims) + " but " + opType +
                                                         " infers " + Dims(w) + " from the inputs");
        if (def.GetInferDataType() && inferred.output_descs[i].GetDataType() != node.output_descs[i].GetDataType())
          return Error(ACLNN_ERR_PARAM_INVALID, api, "output '" + def.GetOutputs()[i].Name() + "' has data type " +
                                                         std::to_string(node.output_descs[i].GetDataType()) +
                                                         "; " + opType + " infers " +
                                                         std::to_string(inferred.output_descs[i].GetDataType()));
      }
    }
    if (!def.GetAICore().GetTiling())
      return Error(ACLNN_ERR_INNER, api, std::string(opType) + " has no tiling function (AICore().SetTiling)");
    auto ex = std::make_unique<aclOpExecutor>();
    ex->op_type = opType;
    std::vector<uint8_t> buf(64 * 1024);
    gert::TilingData raw(buf.data(), buf.size());
    gert::TilingContext tctx(&node, &raw, nullptr);
    if (def.GetAICore().GetTiling()(&tctx) != ge::GRAPH_SUCCESS)
      return Error(ACLNN_ERR_PARAM_INVALID, api, std::string(opType) + "'s tiling function failed");
    if (tctx.GetBlockDim() == 0)
      return Error(ACLNN_ERR_INNER, api, std::string(opType) + "'s tiling function set no block count (SetBlockDim)");
    if (raw.GetDataSize() > raw.GetCapacity())
      return Error(ACLNN_ERR_INNER, api, std::string(opType) + "'s tiling data is larger than its buffer");
    ex->block_dim = tctx.GetBlockDim();
    ex->tiling_key = tctx.GetTilingKey();
    ex->tiling.assign(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(std::max<size_t>(raw.GetDataSize(), 8)));
    size_t num_ws = tctx.GetWorkspaceNum();
    const size_t* ws = tctx.GetWorkspaceSizes(num_ws);
    for (size_t i = 0; i < num_ws; ++i) ex->workspace += ws[i];
    std::string symbol = "__ocasc_argsentry_" + Snake(opType);
    ex->entry = reinterpret_cast<uint32_t (*)(uint32_t, void*, const void*, size_t)>(dlsym(RTLD_DEFAULT,
                                                                                          symbol.c_str()));
    if (!ex->entry)
      return Error(ACLNN_ERR_INNER, api, std::string("the kernel of ") + opType + " (" + Snake(opType) +
                                             ") is not loaded: build op_kernel/ into the package with ascendc++");
    for (size_t i = 0; i < numInputs; ++i) ex->args.push_back(DataOf(inputs[i]));
    for (size_t i = 0; i < numOutputs; ++i) ex->args.push_back(DataOf(outputs[i]));
    ex->args.push_back(nullptr);  // workspace
    ex->args.push_back(nullptr);  // tiling
    *workspaceSize = ex->workspace;
    *executor = Track(ex.release());
    return ACLNN_SUCCESS;
  } catch (const std::exception& e) {
    return Error(ACLNN_ERR_INNER, api, e.what());
  }
}

}  // namespace

extern "C" {

aclnnStatus OcAclnnPrepare(const char* api, const char* opType, const aclTensor* const* inputs, size_t numInputs,
                           const aclTensor* const* outputs, size_t numOutputs, const OcAclnnAttr* attrs,
                           size_t numAttrs, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return Prepare(api, opType, inputs, numInputs, outputs, numOutputs, attrs, numAttrs, true, workspaceSize, executor);
}

aclnnStatus OcAclnnRun(const char* api, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                       aclrtStream stream) {
  if (!executor || !Live(executor))
    return Error(ACLNN_ERR_PARAM_INVALID, api, "executor is NULL or not live (each executor runs once)");
  aclOpExecutor* ex = executor;
  if (workspaceSize < ex->workspace || (ex->workspace && !workspace))
    return Error(ACLNN_ERR_PARAM_INVALID, api, "the workspace is " + std::to_string(workspaceSize) + " bytes; " +
                                                   ex->op_type + " needs " + std::to_string(ex->workspace));
  if (aclrtMalloc(&ex->tiling_dev, ex->tiling.size(), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMemcpy(ex->tiling_dev, ex->tiling.size(), ex->tiling.data(), ex->tiling.size(),
                  ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
    return Error(ACLNN_ERR_RUNTIME_ERROR, api, std::string("tiling data to the device: ") + aclGetRecentErrMsg());
  ex->args[ex->args.size() - 2] = workspace;
  ex->args.back() = ex->tiling_dev;
  AscendC::ocimpl::SetNextTilingKey(ex->tiling_key);
  uint32_t rc = ex->entry(ex->block_dim, stream, ex->args.data(), ex->args.size() * sizeof(void*));
  if (rc != 0) {
    ReleaseExecutor(ex);
    return Error(ACLNN_ERR_RUNTIME_ERROR, api, "the kernel launch was refused (" + std::to_string(rc) + ")");
  }
  // Released in stream order, after the kernel read its arguments and tiling.
  if (aclrtOcEnqueueHostTask(stream, &NoTask, ex, &ReleaseExecutor, "release aclnn executor") != ACL_SUCCESS)
    return Error(ACLNN_ERR_RUNTIME_ERROR, api, aclGetRecentErrMsg());
  return ACLNN_SUCCESS;
}

}  // extern "C"

// ---- custom operators by op type (ops/custom_op_abi.h) ---------------------------------
namespace {

int HasOp(const char* op_type) { return ops::OcOpRegistry().count(op_type) ? 1 : 0; }

int32_t Fail(char* msg, size_t msg_len, const std::string& m) {
  std::snprintf(msg, msg_len, "%s", m.c_str());
  return static_cast<int32_t>(ACL_ERROR_INVALID_PARAM);
}

// The handles one call by op type creates, destroyed with it.
struct CallState {
  std::vector<std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor*)>> tensors;
  std::vector<std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray*)>> ints;
  std::vector<std::unique_ptr<aclFloatArray, aclnnStatus (*)(const aclFloatArray*)>> floats;
  std::vector<const aclTensor*> ins, outs;
  std::vector<OcAclnnAttr> attrs;
};

// Tensors (an input is omitted when `omitted` says so) and the attributes in
// the definition's order, by name; absent ones take their defaults. Returns
// "" or what is wrong.
std::string Gather(const ops::OpDef& def, const OcOpTensor* in, size_t ni, const OcOpTensor* out, size_t no,
                   const OcOpAttr* attrs, size_t na, bool (*omitted)(const OcOpTensor&), CallState* st) {
  if (ni != def.GetInputs().size() || no != def.GetOutputs().size())
    return "takes " + std::to_string(def.GetInputs().size()) + " inputs and " +
           std::to_string(def.GetOutputs().size()) + " outputs, not " + std::to_string(ni) + " and " +
           std::to_string(no);
  auto make = [&](const OcOpTensor& t) -> const aclTensor* {
    aclTensor* a = aclCreateTensor(t.dims, t.num_dims, static_cast<aclDataType>(t.dtype), nullptr, 0,
                                   static_cast<aclFormat>(t.format), t.dims, t.num_dims, t.data);
    st->tensors.emplace_back(a, &aclDestroyTensor);
    return a;
  };
  for (size_t i = 0; i < ni; ++i) {
    if (omitted(in[i])) {
      st->ins.push_back(nullptr);
      continue;
    }
    st->ins.push_back(make(in[i]));
    if (!st->ins.back()) return "input '" + def.GetInputs()[i].Name() + "': " + t_last_error;
  }
  for (size_t i = 0; out && i < no; ++i) {
    st->outs.push_back(make(out[i]));
    if (!st->outs.back()) return "output '" + def.GetOutputs()[i].Name() + "': " + t_last_error;
  }
  for (const ops::OpAttrDef& d : def.GetAttrs()) {
    const OcOpAttr* given = nullptr;
    for (size_t k = 0; k < na; ++k)
      if (d.Name() == attrs[k].name) given = &attrs[k];
    const auto& dv = d.Default();
    if (!given && !d.HasDefault()) return "attribute '" + d.Name() + "' is required";
    OcAclnnAttr a{};
    using K = gert::RuntimeAttrs::Value;
    switch (dv.kind) {
      case K::kBool: a.kind = OC_ATTR_BOOL; a.b = given ? given->i != 0 : dv.b; break;
      case K::kInt: a.kind = OC_ATTR_INT; a.i = given ? given->i : dv.i; break;
      case K::kFloat: a.kind = OC_ATTR_FLOAT; a.f = given ? given->f : dv.f; break;
      case K::kString: a.kind = OC_ATTR_STRING; a.s = given ? given->s : dv.s.c_str(); break;
      case K::kListInt:
        a.kind = OC_ATTR_LIST_INT;
        st->ints.emplace_back(given ? aclCreateIntArray(given->ints, given->count)
                                    : aclCreateIntArray(dv.li.data(), dv.li.size()),
                              &aclDestroyIntArray);
        a.li = st->ints.back().get();
        break;
      case K::kListFloat:
        a.kind = OC_ATTR_LIST_FLOAT;
        st->floats.emplace_back(given ? aclCreateFloatArray(given->floats, given->count)
                                      : aclCreateFloatArray(dv.lf.data(), dv.lf.size()),
                                &aclDestroyFloatArray);
        a.lf = st->floats.back().get();
        break;
      default: return "attribute '" + d.Name() + "' has no type in the definition";
    }
    static const int kWant[] = {-1, 0, 0, 1, 2, 3, 4};  // OcOpAttr kind of each OC_ATTR_* (bool and int share 0)
    if (given && given->kind != kWant[a.kind])
      return "attribute '" + d.Name() + "' has the wrong type (kind " + std::to_string(given->kind) + ", the "
             "definition's is " + std::to_string(kWant[a.kind]) + ")";
    st->attrs.push_back(a);
  }
  return "";
}

bool NoData(const OcOpTensor& t) { return t.data == nullptr; }
bool Undefined(const OcOpTensor& t) { return t.dtype < 0; }

const ops::OpDef* Find(const char* op_type) {
  auto it = ops::OcOpRegistry().find(op_type);
  return it == ops::OcOpRegistry().end() ? nullptr : it->second.get();
}

int32_t RunOp(const char* op_type, const OcOpTensor* in, size_t ni, const OcOpTensor* out, size_t no,
              const OcOpAttr* attrs, size_t na, void* stream, char* msg, size_t msg_len) {
  try {
    const ops::OpDef* def = Find(op_type);
    if (!def) return Fail(msg, msg_len, "not registered");
    CallState st;
    std::string bad = Gather(*def, in, ni, out, no, attrs, na, &NoData, &st);
    if (!bad.empty()) return Fail(msg, msg_len, bad);
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    if (OcAclnnPrepare("aclopExecuteV2", op_type, st.ins.data(), st.ins.size(), st.outs.data(), st.outs.size(),
                       st.attrs.data(), st.attrs.size(), &ws, &ex) != ACLNN_SUCCESS)
      return Fail(msg, msg_len, t_last_error);
    if (ws && aclrtMalloc(&ex->own_workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
      ReleaseExecutor(ex);
      return Fail(msg, msg_len, "cannot allocate the " + std::to_string(ws) + "-byte workspace");
    }
    if (OcAclnnRun("aclopExecuteV2", ex->own_workspace, ws, ex, stream) != ACLNN_SUCCESS)
      return Fail(msg, msg_len, t_last_error);
    return 0;
  } catch (const std::exception& e) {
    return Fail(msg, msg_len, e.what());
  }
}

int32_t InferOp(const char* op_type, const OcOpTensor* in, size_t ni, const OcOpAttr* attrs, size_t na,
                OcOpInferred* out, size_t no, char* msg, size_t msg_len) {
  try {
    const ops::OpDef* def = Find(op_type);
    if (!def) return Fail(msg, msg_len, "not registered");
    if (!def->GetInferShape())
      return Fail(msg, msg_len, std::string(op_type) + " defines no InferShape (SetInferShape), which a model "
                                                      "needs to use it");
    CallState st;
    std::string bad = Gather(*def, in, ni, nullptr, no, attrs, na, &Undefined, &st);
    if (!bad.empty()) return Fail(msg, msg_len, bad);
    gert::OcNodeState node, inferred;
    if (FillNode("infer", *def, op_type, st.ins.data(), ni, nullptr, no, st.attrs.data(), st.attrs.size(), false,
                 &node) != ACLNN_SUCCESS ||
        Infer("infer", *def, op_type, node, &inferred) != ACLNN_SUCCESS)
      return Fail(msg, msg_len, t_last_error);
    for (size_t i = 0; i < no; ++i) {
      const gert::Shape& shape = inferred.output_shapes[i].GetOriginShape();
      if (shape.GetDimNum() > OC_CUSTOM_OP_MAX_DIMS)
        return Fail(msg, msg_len, "output " + std::to_string(i) + " is inferred with rank " +
                                      std::to_string(shape.GetDimNum()));
      out[i].num_dims = shape.GetDimNum();
      for (size_t k = 0; k < shape.GetDimNum(); ++k) out[i].dims[k] = shape.GetDim(k);
      out[i].dtype = static_cast<int32_t>(inferred.output_descs[i].GetDataType());
    }
    return 0;
  } catch (const std::exception& e) {
    return Fail(msg, msg_len, e.what());
  }
}

void* PrepareOp(const char* op_type, const OcOpTensor* in, size_t ni, const OcOpTensor* out, size_t no,
                const OcOpAttr* attrs, size_t na, uint64_t* workspace, char* msg, size_t msg_len) {
  try {
    const ops::OpDef* def = Find(op_type);
    if (!def) return Fail(msg, msg_len, "not registered"), nullptr;
    CallState st;
    std::string bad = Gather(*def, in, ni, out, no, attrs, na, &Undefined, &st);
    if (!bad.empty()) return Fail(msg, msg_len, bad), nullptr;
    aclOpExecutor* ex = nullptr;
    if (Prepare("prepare", op_type, st.ins.data(), st.ins.size(), st.outs.data(), st.outs.size(), st.attrs.data(),
                st.attrs.size(), false, workspace, &ex) != ACLNN_SUCCESS)
      return Fail(msg, msg_len, t_last_error), nullptr;
    return ex;
  } catch (const std::exception& e) {
    return Fail(msg, msg_len, e.what()), nullptr;
  }
}

int32_t LaunchOp(void* prepared, const void* const* in, size_t ni, void* const* out, size_t no, void* workspace,
                 char* msg, size_t msg_len) {
  const auto* ex = static_cast<const aclOpExecutor*>(prepared);
  if (!ex || !Live(ex)) return Fail(msg, msg_len, "not a prepared custom operator");
  if (ni + no + 2 != ex->args.size()) return Fail(msg, msg_len, "the node's tensor count changed");
  std::vector<const void*> args(in, in + ni);
  args.insert(args.end(), out, out + no);
  args.push_back(workspace);
  args.push_back(ex->tiling.data());
  std::string error;
  bool ok = AscendC::ocimpl::RunLaunchesInline(
      [&] {
        AscendC::ocimpl::SetNextTilingKey(ex->tiling_key);
        return ex->entry(ex->block_dim, nullptr, args.data(), args.size() * sizeof(void*));
      },
      &error);
  if (ok) return 0;
  std::snprintf(msg, msg_len, "%s", error.c_str());
  return 507015;  // ACL_ERROR_RT_AICORE_EXCEPTION
}

void ReleaseOp(void* prepared) {
  if (prepared && Live(prepared)) ReleaseExecutor(prepared);
}

const OcCustomOps kCustomOps{&HasOp, &RunOp, &InferOp, &PrepareOp, &LaunchOp, &ReleaseOp};
// Installed while libascendc.so is loaded (a package library links it); taken
// back when it unloads (a kernel library dlclosed by aclrtBinaryUnLoad may have
// been what loaded it).
struct Installer {
  Installer() { aclrtOcSetCustomOps(&kCustomOps); }
  ~Installer() { aclrtOcSetCustomOps(nullptr); }
} g_installer;

}  // namespace

// The table, for programs that load packages with their own copy of the
// runtime (atc: ops/custom_op.cc).
extern "C" __attribute__((visibility("default"))) const OcCustomOps* OcAscendcCustomOps(void) { return &kCustomOps; }
