/* OpenCANN: declaring a custom operator (namespace ops): its inputs, outputs
 * and attributes with their types and formats, its shape and type inference,
 * and its AI Core tiling function; OP_ADD registers it when the library that
 * holds it is loaded (docs/ascendc.md). */
#ifndef OPENCANN_ASCENDC_REGISTER_OP_DEF_REGISTRY_H_
#define OPENCANN_ASCENDC_REGISTER_OP_DEF_REGISTRY_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exe_graph/runtime/tiling_context.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"
#include "register/tilingdata_base.h"

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

using TilingFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);

class OpParamDef {
 public:
  explicit OpParamDef(const char* name) : name_(name) {}
  OpParamDef& ParamType(Option o) { type_ = o; return *this; }
  OpParamDef& DataType(std::vector<ge::DataType> types) { dtypes_ = std::move(types); return *this; }
  OpParamDef& DataTypeList(std::vector<ge::DataType> types) { dtypes_ = std::move(types); return *this; }
  OpParamDef& Format(std::vector<ge::Format> formats) { formats_ = std::move(formats); return *this; }
  OpParamDef& FormatList(std::vector<ge::Format> formats) { formats_ = std::move(formats); return *this; }
  OpParamDef& UnknownShapeFormat(std::vector<ge::Format> formats) { (void)formats; return *this; }
  OpParamDef& ValueDepend(Option) { return *this; }
  OpParamDef& IgnoreContiguous() { return *this; }
  OpParamDef& AutoContiguous() { return *this; }
  OpParamDef& Scalar() { return *this; }
  OpParamDef& ScalarList() { return *this; }
  const std::string& Name() const { return name_; }
  Option GetParamType() const { return type_; }
  const std::vector<ge::DataType>& GetDataTypes() const { return dtypes_; }
  const std::vector<ge::Format>& GetFormats() const { return formats_; }

 private:
  std::string name_;
  Option type_ = REQUIRED;
  std::vector<ge::DataType> dtypes_;
  std::vector<ge::Format> formats_;
};

class OpAttrDef {
 public:
  explicit OpAttrDef(const char* name) : name_(name) {}
  OpAttrDef& AttrType(Option o) { type_ = o; return *this; }
  OpAttrDef& Bool() { return Kind(gert::RuntimeAttrs::Value::kBool); }
  OpAttrDef& Bool(bool v) { def_.b = v; has_default_ = true; return Bool(); }
  OpAttrDef& Int() { return Kind(gert::RuntimeAttrs::Value::kInt); }
  OpAttrDef& Int(int64_t v) { def_.i = v; has_default_ = true; return Int(); }
  OpAttrDef& Float() { return Kind(gert::RuntimeAttrs::Value::kFloat); }
  OpAttrDef& Float(float v) { def_.f = v; has_default_ = true; return Float(); }
  OpAttrDef& String() { return Kind(gert::RuntimeAttrs::Value::kString); }
  OpAttrDef& String(const char* v) { def_.s = v; has_default_ = true; return String(); }
  OpAttrDef& ListInt() { return Kind(gert::RuntimeAttrs::Value::kListInt); }
  OpAttrDef& ListInt(std::vector<int64_t> v) { def_.li = std::move(v); has_default_ = true; return ListInt(); }
  OpAttrDef& ListFloat() { return Kind(gert::RuntimeAttrs::Value::kListFloat); }
  OpAttrDef& ListFloat(std::vector<float> v) { def_.lf = std::move(v); has_default_ = true; return ListFloat(); }
  const std::string& Name() const { return name_; }
  Option GetAttrType() const { return type_; }
  const gert::RuntimeAttrs::Value& Default() const { return def_; }
  bool HasDefault() const { return has_default_; }

 private:
  OpAttrDef& Kind(gert::RuntimeAttrs::Value::Kind k) { def_.kind = k; return *this; }
  std::string name_;
  Option type_ = REQUIRED;
  gert::RuntimeAttrs::Value def_;
  bool has_default_ = false;
};

class OpAICoreConfig {
 public:
  OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
  OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
  OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
  OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
  OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
  OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
  OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
};

class OpAICoreDef {
 public:
  OpAICoreDef& SetTiling(TilingFunc f) { tiling_ = f; return *this; }
  OpAICoreDef& AddConfig(const char* soc) { socs_.emplace_back(soc); return *this; }
  OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }
  template <typename F>
  OpAICoreDef& SetCheckSupport(F) { return *this; }
  template <typename F>
  OpAICoreDef& SetOpSelectFormat(F) { return *this; }
  TilingFunc GetTiling() const { return tiling_; }
  const std::vector<std::string>& GetSocs() const { return socs_; }

 private:
  TilingFunc tiling_ = nullptr;
  std::vector<std::string> socs_;
};

class OpDef {
 public:
  explicit OpDef(const char* type) : type_(type) {}
  virtual ~OpDef() = default;
  OpParamDef& Input(const char* name) { return Find(inputs_, name); }
  OpParamDef& Output(const char* name) { return Find(outputs_, name); }
  OpAttrDef& Attr(const char* name) {
    for (auto& a : attrs_)
      if (a.Name() == name) return a;
    attrs_.emplace_back(name);
    return attrs_.back();
  }
  OpDef& SetInferShape(InferShapeFunc f) { infer_shape_ = f; return *this; }
  template <typename F>
  OpDef& SetInferShapeRange(F) { return *this; }
  OpDef& SetInferDataType(InferDataTypeFunc f) { infer_dtype_ = f; return *this; }
  OpAICoreDef& AICore() { return aicore_; }

  const std::string& GetOpType() const { return type_; }
  const std::deque<OpParamDef>& GetInputs() const { return inputs_; }
  const std::deque<OpParamDef>& GetOutputs() const { return outputs_; }
  const std::deque<OpAttrDef>& GetAttrs() const { return attrs_; }
  InferShapeFunc GetInferShape() const { return infer_shape_; }
  InferDataTypeFunc GetInferDataType() const { return infer_dtype_; }
  const OpAICoreDef& GetAICore() const { return aicore_; }

 private:
  // Deques: a definition's chained calls keep references to earlier entries.
  static OpParamDef& Find(std::deque<OpParamDef>& v, const char* name) {
    for (auto& p : v)
      if (p.Name() == name) return p;
    v.emplace_back(name);
    return v.back();
  }
  std::string type_;
  std::deque<OpParamDef> inputs_, outputs_;
  std::deque<OpAttrDef> attrs_;
  InferShapeFunc infer_shape_ = nullptr;
  InferDataTypeFunc infer_dtype_ = nullptr;
  OpAICoreDef aicore_;
};

/* The operators OP_ADD registered in this process, by type. */
std::map<std::string, std::unique_ptr<OpDef>>& OcOpRegistry();
inline int OcAddOp(std::unique_ptr<OpDef> def) {
  std::string type = def->GetOpType();
  OcOpRegistry()[type] = std::move(def);
  return 0;
}

}  // namespace ops

#define OP_ADD(op_type, ...) \
  static const int g_oc_op_added_##op_type = ::ops::OcAddOp(std::make_unique<op_type>(#op_type))

#endif  // OPENCANN_ASCENDC_REGISTER_OP_DEF_REGISTRY_H_
