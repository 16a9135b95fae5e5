// Single-operator execution (acl_op.h): an operator call becomes a one-node
// graph (or a few nodes, for CANN op types that ONNX spells differently),
// compiled with the model pipeline into an Executable, cached by its
// description, and run on a stream like a model.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <set>
#include <sstream>
#include <variant>

#include "acl/acl_custom_op.h"
#include "acl/acl_model_internal.h"
#include "acl/acl_op.h"
#include "executor/executable.h"
#include "om/om_file.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/op_registry.h"
#include "passes/pipeline.h"
#include "runtime/single_op.h"

using namespace oc::acl;
using oc::StrCat;

struct aclopAttr {
  std::map<std::string, oc::Attribute> attrs;
  std::set<std::string> data_types;  // names set by aclopSetAttr(List)DataType
};

namespace oc::acl {

struct CompiledOp {
  std::shared_ptr<const void> storage;  // a loaded single-op .om: holds the prepacked bytes
  std::string op_type;
  std::shared_ptr<const oc::Executable> exe;
  size_t num_inputs = 0, num_outputs = 0;
  std::vector<size_t> slots;      // per executable input: the caller's input index
  std::vector<size_t> in_bytes;   // per caller input (0 for absent or constant ones)
  std::vector<size_t> out_bytes;  // per caller output
  std::vector<std::vector<int64_t>> out_dims;
  std::vector<oc::DataType> out_types;
};

}  // namespace oc::acl

struct aclopHandle {
  std::shared_ptr<const CompiledOp> op;
};

namespace {

HandleSet& Attrs() {
  static HandleSet* s = new HandleSet;
  return *s;
}
// Live handles and their operators: a run copies the operator under the lock,
// so a concurrent destroy cannot free it under the run.
struct HandleTable {
  std::mutex mu;
  std::map<const aclopHandle*, std::shared_ptr<const CompiledOp>> live;
};
HandleTable& Handles() {
  static HandleTable* t = new HandleTable;
  return *t;
}

// The caller's descriptions as a spec (descs already checked live).
oc::SingleOpSpec Spec(const char* op, int ni, const aclTensorDesc* const* in, int no, const aclTensorDesc* const* out,
                      const aclopAttr* attr) {
  oc::SingleOpSpec spec;
  spec.op_type = op;
  auto tensor = [](const aclTensorDesc& d) {
    oc::SingleOpTensor t;
    t.dtype = oc::DataTypeFromAcl(EnumBits(d.dtype));
    t.dims = d.dims;
    t.const_value = d.const_value;
    t.format = EnumBits(d.format);
    return t;
  };
  for (int i = 0; i < ni; ++i) spec.inputs.push_back(tensor(*in[i]));
  for (int i = 0; i < no; ++i) spec.outputs.push_back(tensor(*out[i]));
  if (attr) {
    spec.attrs = attr->attrs;
    spec.acl_type_attrs = attr->data_types;
  }
  return spec;
}

aclError CodeOf(oc::SingleOpErrorKind kind) {
  using K = oc::SingleOpErrorKind;
  switch (kind) {
    case K::kOpNotFound: return ACL_ERROR_OP_NOT_FOUND;
    case K::kInputMismatch: return ACL_ERROR_OP_INPUT_NOT_MATCH;
    case K::kOutputMismatch: return ACL_ERROR_OP_OUTPUT_NOT_MATCH;
    case K::kAttrMismatch: return ACL_ERROR_OP_ATTR_NOT_MATCH;
    case K::kUnsupportedType: return ACL_ERROR_UNSUPPORTED_DATA_TYPE;
    case K::kUnsupported: return ACL_ERROR_FEATURE_UNSUPPORTED;
    case K::kLoadFailed: return ACL_ERROR_OP_LOAD_FAILED;
    default: return ACL_ERROR_INTERNAL_ERROR;
  }
}

// ---- The cache ------------------------------------------------------------------------------

class OpCache {
 public:
  OpCache() {
    const char* env = std::getenv("OPENCANN_OP_CACHE_SIZE");
    char* end = nullptr;
    long v = env && *env ? std::strtol(env, &end, 10) : 0;
    capacity_ = env && *env && *end == '\0' && v >= 1 && v <= 65536 ? static_cast<size_t>(v) : 64;
  }
  std::shared_ptr<const CompiledOp> Find(const std::string& key) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    return nullptr;
  }
  void Put(const std::string& key, std::shared_ptr<const CompiledOp> op) {
    std::lock_guard<std::mutex> lk(mu_);
    entries_.emplace_front(key, std::move(op));
    while (entries_.size() > capacity_) entries_.pop_back();
  }

 private:
  std::mutex mu_;
  size_t capacity_ = 64;
  std::list<std::pair<std::string, std::shared_ptr<const CompiledOp>>> entries_;
};

OpCache& Cache() {
  static OpCache* c = new OpCache;
  return *c;
}

// Operators from single-op .om files (aclopSetModelDir, aclopLoad): kept for
// the process, never evicted.
class LoadedOps {
 public:
  std::shared_ptr<const CompiledOp> Find(const std::string& key) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = ops_.find(key);
    return it == ops_.end() ? nullptr : it->second;
  }
  void Put(const std::string& key, std::shared_ptr<const CompiledOp> op) {
    std::lock_guard<std::mutex> lk(mu_);
    ops_[key] = std::move(op);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const CompiledOp>> ops_;
};

LoadedOps& Loaded() {
  static LoadedOps* l = new LoadedOps;
  return *l;
}

aclError DescArray(const char* what, int n, const aclTensorDesc* const* descs) {
  if (n < 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("num", what, "s is ", n));
  if (n > 0 && !descs) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("the ", what, " desc array is NULL"));
  for (int i = 0; i < n; ++i)
    if (!descs[i] || !TensorDescs().Contains(descs[i]))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": the desc is NULL or not a live aclTensorDesc"));
  return ACL_SUCCESS;
}

// Kernels for a compiled single-op graph (prepacked: from a single-op .om).
aclError MakeOp(const std::string& op_type, oc::CompiledSingleOp compiled, size_t ni, size_t no,
                std::vector<std::span<const uint8_t>> prepacked, std::shared_ptr<const void> storage,
                std::shared_ptr<const CompiledOp>* result) {
  auto exe = oc::Executable::Create(compiled.graph, prepacked);
  if (!exe.ok())
    return Fail(exe.status().code() == oc::StatusCode::kNotSupported ? ACL_ERROR_FEATURE_UNSUPPORTED
                                                                     : ACL_ERROR_OP_LOAD_FAILED,
                StrCat(op_type, ": ", exe.status().message()));
  auto op = std::make_shared<CompiledOp>();
  op->storage = std::move(storage);
  op->op_type = op_type;
  op->exe = std::shared_ptr<const oc::Executable>(std::move(exe).value());
  op->num_inputs = ni;
  op->num_outputs = no;
  op->slots = std::move(compiled.slots);
  op->in_bytes = std::move(compiled.in_bytes);
  op->out_bytes = std::move(compiled.out_bytes);
  op->out_dims = std::move(compiled.out_dims);
  op->out_types = std::move(compiled.out_types);
  *result = std::move(op);
  return ACL_SUCCESS;
}

aclError Resolve(const char* opType, int ni, const aclTensorDesc* const* in, int no, const aclTensorDesc* const* out,
                 const aclopAttr* attr, std::shared_ptr<const CompiledOp>* result) {
  if (!opType || !*opType) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'opType' is NULL or empty");
  if (aclError e = DescArray("input", ni, in)) return e;
  if (aclError e = DescArray("output", no, out)) return e;
  if (attr && !Attrs().Contains(attr))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attr ", PtrString(attr), " is not a live aclopAttr"));
  for (int k = 0; k < ni + no; ++k) {
    const aclTensorDesc& d = k < ni ? *in[k] : *out[k - ni];
    if (EnumBits(d.dtype) != ACL_DT_UNDEFINED && oc::DataTypeFromAcl(EnumBits(d.dtype)) == oc::DataType::kUndefined)
      return Fail(ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                  StrCat(opType, ": ", k < ni ? "input " : "output ", k < ni ? k : k - ni, ": data type ",
                         EnumBits(d.dtype), " is not supported by the CPU operators"));
  }
  const oc::SingleOpSpec spec = Spec(opType, ni, in, no, out, attr);
  const std::string key = oc::SingleOpKey(spec);
  if ((*result = Loaded().Find(key))) return ACL_SUCCESS;
  if ((*result = Cache().Find(key))) return ACL_SUCCESS;
  oc::SingleOpResult compiled = oc::CompileSingleOp(spec);
  if (compiled.error != oc::SingleOpErrorKind::kNone) return Fail(CodeOf(compiled.error), compiled.message);
  if (aclError e = MakeOp(opType, std::move(compiled.op), ni, no, {}, nullptr, result)) return e;
  Cache().Put(key, *result);
  return ACL_SUCCESS;
}

// A single-op .om (atc --singleop) into the loaded table.
aclError RegisterOm(oc::OmModel om, const std::string& origin) {
  const auto& md = om.graph->metadata;
  auto get = [&](const char* k) -> const std::string* {
    auto it = md.find(k);
    return it == md.end() ? nullptr : &it->second;
  };
  const std::string *type = get(oc::kSingleOpTypeKey), *key = get(oc::kSingleOpKeyKey);
  const std::string *ni_s = get("single_op_num_inputs"), *no_s = get("single_op_num_outputs");
  const std::string* slots_s = get("single_op_slots");
  if (!type || !key || !ni_s || !no_s || !slots_s || om.dynamic)
    return Fail(ACL_ERROR_PARSE_MODEL, StrCat(origin, " is not a single-operator model (made by atc --singleop)"));
  const int64_t ni = std::atoll(ni_s->c_str()), no = std::atoll(no_s->c_str());
  oc::CompiledSingleOp c;
  c.graph = om.graph;
  std::stringstream ss(*slots_s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) c.slots.push_back(static_cast<size_t>(std::atoll(item.c_str())));
  const oc::Graph& g = *om.graph;
  bool ok = ni >= 0 && no >= 0 && c.slots.size() == g.inputs.size() && static_cast<size_t>(no) == g.outputs.size();
  c.in_bytes.assign(ok ? static_cast<size_t>(ni) : 0, 0);
  for (size_t i = 0; ok && i < c.slots.size(); ++i) {
    ok = c.slots[i] < static_cast<size_t>(ni) && g.inputs[i]->ByteSize() >= 0;
    if (ok) c.in_bytes[c.slots[i]] = static_cast<size_t>(g.inputs[i]->ByteSize());
  }
  for (size_t k = 0; ok && k < g.outputs.size(); ++k) {
    ok = g.outputs[k]->ByteSize() >= 0;
    c.out_bytes.push_back(static_cast<size_t>(std::max<int64_t>(g.outputs[k]->ByteSize(), 0)));
    c.out_dims.push_back(g.outputs[k]->shape);
    c.out_types.push_back(g.outputs[k]->dtype);
  }
  if (!ok) return Fail(ACL_ERROR_PARSE_MODEL, StrCat(origin, ": its single-operator description is inconsistent"));
  std::shared_ptr<const CompiledOp> op;
  if (aclError e = MakeOp(*type, std::move(c), static_cast<size_t>(ni), static_cast<size_t>(no),
                          std::move(om.prepacked), std::move(om.storage), &op))
    return e;
  Loaded().Put(*key, std::move(op));
  return ACL_SUCCESS;
}

// Checks the buffers and queues the run on the stream.
aclError Enqueue(const std::shared_ptr<const CompiledOp>& op, int ni, const aclDataBuffer* const* inputs, int no,
                 aclDataBuffer* const* outputs, aclrtStream stream) {
  if (ni != static_cast<int>(op->num_inputs) || no != static_cast<int>(op->num_outputs))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(op->op_type, " was compiled for ", op->num_inputs, " inputs and ",
                                                op->num_outputs, " outputs; ", ni, " and ", no, " were given"));
  if ((ni > 0 && !inputs) || (no > 0 && !outputs))
    return Fail(ACL_ERROR_INVALID_PARAM, "the inputs or outputs buffer array is NULL");
  auto& mem = RuntimeState().memory;
  auto check = [&](const char* what, size_t i, const aclDataBuffer* b, size_t need) -> aclError {
    if (!b || !DataBuffers().Contains(b))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": the buffer is NULL or not a live aclDataBuffer"));
    if (b->size < need)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat(what, " ", i, ": buffer size is ", b->size, " bytes but the tensor needs ", need));
    if (need > 0 && (!b->data || !mem.Find(b->data, need)))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " ", i, ": buffer ", PtrString(b->data), " (", need,
                                                  " bytes) is not inside memory from aclrtMalloc or aclrtMallocHost"));
    return ACL_SUCCESS;
  };
  std::vector<const void*> ins;
  for (size_t slot : op->slots) {
    if (aclError e = check("input", slot, inputs[slot], op->in_bytes[slot])) return e;
    ins.push_back(inputs[slot]->data);
  }
  std::vector<void*> outs;
  for (int k = 0; k < no; ++k) {
    if (aclError e = check("output", k, outputs[k], op->out_bytes[k])) return e;
    outs.push_back(outputs[k]->data);
  }
  std::shared_ptr<StreamObj> s;
  if (aclError e = ResolveStream(stream, &s)) return e;
  s->queue->Enqueue(
      [op, ins = std::move(ins), outs = std::move(outs)]() -> oc::Status {
        ThreadPoolUse use;
        auto ctx = op->exe->AcquireContext();
        if (!ctx.ok()) return ctx.status();
        oc::Status st = op->exe->Run(**ctx, ins, outs, use.pool());
        op->exe->ReleaseContext(std::move(*ctx));
        return st;
      },
      StrCat("operator ", op->op_type));
  return ACL_SUCCESS;
}

aclError Execute(const char* opType, int ni, const aclTensorDesc* const* inDesc, const aclDataBuffer* const* inputs,
                 int no, const aclTensorDesc* const* outDesc, aclDataBuffer* const* outputs, const aclopAttr* attr,
                 aclrtStream stream, aclTensorDesc* const* update) {
  if (aclError e = RequireInit()) return e;
  if (IsCustomOp(opType)) {
    if (attr && !Attrs().Contains(attr)) return Fail(ACL_ERROR_INVALID_PARAM, "attr is not a live aclopAttr");
    return RunCustomOp(opType, ni, inDesc, inputs, no, outDesc, outputs, attr ? &attr->attrs : nullptr, stream);
  }
  std::shared_ptr<const CompiledOp> op;
  if (aclError e = Resolve(opType, ni, inDesc, no, outDesc, attr, &op)) return e;
  if (update)
    for (int k = 0; k < no; ++k) {
      update[k]->dims = op->out_dims[k];
      if (EnumBits(update[k]->dtype) == ACL_DT_UNDEFINED) update[k]->dtype = ToAclType(op->out_types[k]);
    }
  return Enqueue(op, ni, inputs, no, outputs, stream);
}

aclError SetAttr(aclopAttr* attr, const char* name, oc::Attribute a) {
  if (!attr) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attr' is NULL");
  if (!Attrs().Contains(attr)) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attr ", PtrString(attr), " is not a live aclopAttr"));
  if (!name || !*name) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attrName' is NULL or empty");
  attr->attrs[name] = std::move(a);
  attr->data_types.erase(name);
  return ACL_SUCCESS;
}

template <typename T>
aclError CheckList(int n, const T* values) {
  if (n < 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("numValues is ", n));
  if (n > 0 && !values) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'values' is NULL");
  return ACL_SUCCESS;
}

oc::Attribute IntAttr(int64_t v) {
  oc::Attribute a;
  a.kind = oc::Attribute::Kind::kInt;
  a.i = v;
  return a;
}

oc::Attribute IntsAttr(std::vector<int64_t> v) {
  oc::Attribute a;
  a.kind = oc::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

}  // namespace

// ---- The C API ----------------------------------------------------------------------------------

aclopAttr* aclopCreateAttr() {
  return GuardValue<aclopAttr*>(__func__, nullptr, [&]() -> aclopAttr* {
    auto* a = new aclopAttr;
    Attrs().Add(a);
    return a;
  });
}

void aclopDestroyAttr(const aclopAttr* attr) {
  GuardValue<int>(__func__, 0, [&] {
    if (attr && Attrs().Remove(attr)) delete attr;
    return 0;
  });
}

aclError aclopSetAttrBool(aclopAttr* attr, const char* attrName, uint8_t attrValue) {
  return Guard(__func__, [&] { return SetAttr(attr, attrName, IntAttr(attrValue ? 1 : 0)); });
}

aclError aclopSetAttrInt(aclopAttr* attr, const char* attrName, int64_t attrValue) {
  return Guard(__func__, [&] { return SetAttr(attr, attrName, IntAttr(attrValue)); });
}

aclError aclopSetAttrFloat(aclopAttr* attr, const char* attrName, float attrValue) {
  return Guard(__func__, [&] {
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kFloat;
    a.f = attrValue;
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrString(aclopAttr* attr, const char* attrName, const char* attrValue) {
  return Guard(__func__, [&]() -> aclError {
    if (!attrValue) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'attrValue' is NULL");
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kString;
    a.s = attrValue;
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrDataType(aclopAttr* attr, const char* attrName, aclDataType attrValue) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = SetAttr(attr, attrName, IntAttr(EnumBits(attrValue)))) return e;
    attr->data_types.insert(attrName);
    return ACL_SUCCESS;
  });
}

aclError aclopSetAttrListBool(aclopAttr* attr, const char* attrName, int numValues, const uint8_t* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    std::vector<int64_t> v;
    for (int i = 0; i < numValues; ++i) v.push_back(values[i] ? 1 : 0);
    return SetAttr(attr, attrName, IntsAttr(std::move(v)));
  });
}

aclError aclopSetAttrListInt(aclopAttr* attr, const char* attrName, int numValues, const int64_t* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    return SetAttr(attr, attrName, IntsAttr(std::vector<int64_t>(values, values + numValues)));
  });
}

aclError aclopSetAttrListFloat(aclopAttr* attr, const char* attrName, int numValues, const float* values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kFloats;
    a.floats.assign(values, values + numValues);
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrListString(aclopAttr* attr, const char* attrName, int numValues, const char** values) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    oc::Attribute a;
    a.kind = oc::Attribute::Kind::kStrings;
    for (int i = 0; i < numValues; ++i) {
      if (!values[i]) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("values[", i, "] is NULL"));
      a.strings.emplace_back(values[i]);
    }
    return SetAttr(attr, attrName, std::move(a));
  });
}

aclError aclopSetAttrListDataType(aclopAttr* attr, const char* attrName, int numValues, const aclDataType values[]) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numValues, values)) return e;
    std::vector<int64_t> v;
    for (int i = 0; i < numValues; ++i) v.push_back(EnumBits(values[i]));
    if (aclError e = SetAttr(attr, attrName, IntsAttr(std::move(v)))) return e;
    attr->data_types.insert(attrName);
    return ACL_SUCCESS;
  });
}

aclError aclopSetAttrListListInt(aclopAttr* attr, const char* attrName, int numLists, const int* numValues,
                                 const int64_t* const values[]) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckList(numLists, numValues)) return e;
    if (numLists > 0 && !values) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'values' is NULL");
    std::vector<int64_t> flat;
    for (int i = 0; i < numLists; ++i) {
      if (numValues[i] < 0 || (numValues[i] > 0 && !values[i]))
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("list ", i, " is NULL or has a negative length"));
      flat.insert(flat.end(), values[i], values[i] + numValues[i]);
    }
    return SetAttr(attr, attrName, IntsAttr(std::move(flat)));
  });
}

aclError aclopExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[], aclDataBuffer* inputs[],
                        int numOutputs, aclTensorDesc* outputDesc[], aclDataBuffer* outputs[], aclopAttr* attr,
                        aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, outputDesc);
  });
}

aclError aclopExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                      const aclDataBuffer* const inputs[], int numOutputs, const aclTensorDesc* const outputDesc[],
                      aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, nullptr);
  });
}

aclError aclopCompile(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                      const aclTensorDesc* const outputDesc[], const aclopAttr* attr, aclopEngineType,
                      aclopCompileType, const char*) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (IsCustomOp(opType)) {
      if (attr && !Attrs().Contains(attr)) return Fail(ACL_ERROR_INVALID_PARAM, "attr is not a live aclopAttr");
      return CompileCustomOp(opType, numInputs, inputDesc, numOutputs, outputDesc, attr ? &attr->attrs : nullptr);
    }
    std::shared_ptr<const CompiledOp> op;
    return Resolve(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &op);
  });
}

aclError aclopCompileAndExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                                const aclDataBuffer* const inputs[], int numOutputs,
                                const aclTensorDesc* const outputDesc[], aclDataBuffer* const outputs[],
                                const aclopAttr* attr, aclopEngineType, aclopCompileType, const char*,
                                aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, nullptr);
  });
}

aclError aclopCompileAndExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[],
                                  aclDataBuffer* inputs[], int numOutputs, aclTensorDesc* outputDesc[],
                                  aclDataBuffer* outputs[], aclopAttr* attr, aclopEngineType, aclopCompileType,
                                  const char*, aclrtStream stream) {
  return Guard(__func__, [&] {
    return Execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream, outputDesc);
  });
}

aclError aclopSetCompileFlag(aclOpCompileFlag flag) {
  return Guard(__func__, [&]() -> aclError {
    const int f = EnumBits(flag);
    if (f != ACL_OP_COMPILE_DEFAULT && f != ACL_OP_COMPILE_FUZZ)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("flag ", f, " is not an aclOpCompileFlag"));
    return ACL_SUCCESS;
  });
}

aclError aclopCreateHandle(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                           const aclTensorDesc* const outputDesc[], const aclopAttr* opAttr, aclopHandle** handle) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!handle) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'handle' is NULL");
    std::shared_ptr<const CompiledOp> op;
    if (aclError e = Resolve(opType, numInputs, inputDesc, numOutputs, outputDesc, opAttr, &op)) return e;
    auto* h = new aclopHandle{op};
    {
      std::lock_guard<std::mutex> lk(Handles().mu);
      Handles().live[h] = std::move(op);
    }
    *handle = h;
    return ACL_SUCCESS;
  });
}

void aclopDestroyHandle(aclopHandle* handle) {
  GuardValue<int>(__func__, 0, [&] {
    if (!handle) return 0;
    bool found;
    {
      std::lock_guard<std::mutex> lk(Handles().mu);
      found = Handles().live.erase(handle) > 0;
    }
    if (found) delete handle;
    return 0;
  });
}

aclError aclopExecWithHandle(aclopHandle* handle, int numInputs, const aclDataBuffer* const inputs[], int numOutputs,
                             aclDataBuffer* const outputs[], aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    std::shared_ptr<const CompiledOp> op;
    {
      std::lock_guard<std::mutex> lk(Handles().mu);
      auto it = handle ? Handles().live.find(handle) : Handles().live.end();
      if (it != Handles().live.end()) op = it->second;
    }
    if (!op) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("handle ", PtrString(handle), " is not a live aclopHandle"));
    return Enqueue(op, numInputs, inputs, numOutputs, outputs, stream);
  });
}

aclError aclopSetModelDir(const char* modelDir) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!modelDir) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'modelDir' is NULL");
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("'", modelDir, "' is not a directory"));
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(modelDir, ec))
      if (entry.is_regular_file(ec) && entry.path().extension() == ".om") files.push_back(entry.path());
    if (ec) return Fail(ACL_ERROR_READ_MODEL_FAILURE, StrCat("cannot list '", modelDir, "': ", ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      auto om = oc::LoadOmFile(path.string());
      if (!om.ok())
        return Fail(ACL_ERROR_READ_MODEL_FAILURE, StrCat("cannot load '", path.string(), "': ", om.status().message()));
      if (aclError e = RegisterOm(std::move(om).value(), "'" + path.string() + "'")) return e;
    }
    return ACL_SUCCESS;
  });
}

aclError aclopLoad(const void* model, size_t modelSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!model) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'model' is NULL");
    auto om = oc::LoadOmMemory(model, modelSize);
    if (!om.ok()) return Fail(ACL_ERROR_READ_MODEL_FAILURE, StrCat("cannot load the model: ", om.status().message()));
    return RegisterOm(std::move(om).value(), "the model");
  });
}
