/* OpenCANN: the contexts an operator's host functions receive (namespace
 * gert): TilingContext (shapes, types and attributes in; block count, tiling
 * key, tiling data and workspace sizes out), InferShapeContext and
 * InferDataTypeContext. The runtime that calls them fills them
 * (docs/ascendc.md). */
#ifndef OPENCANN_ASCENDC_EXE_GRAPH_TILING_CONTEXT_H_
#define OPENCANN_ASCENDC_EXE_GRAPH_TILING_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace fe {
class PlatFormInfos;  // what the chip offers (tiling/platform/platform_ascendc.h)
}

namespace gert {

class Shape {
 public:
  static constexpr size_t kMaxDimNum = 25;
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
  void SetDimNum(size_t n) { dims_.resize(n, 0); }
  void SetDim(size_t i, int64_t v) {
    if (i < dims_.size()) dims_[i] = v;
  }
  Shape& AppendDim(int64_t v) {
    dims_.push_back(v);
    return *this;
  }
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  bool IsScalar() const { return dims_.empty(); }
  const int64_t& operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

 private:
  std::vector<int64_t> dims_;
};

class StorageShape {
 public:
  StorageShape() = default;
  explicit StorageShape(const Shape& s) : origin_(s), storage_(s) {}
  const Shape& GetOriginShape() const { return origin_; }
  const Shape& GetStorageShape() const { return storage_; }
  Shape& MutableOriginShape() { return origin_; }
  Shape& MutableStorageShape() { return storage_; }

 private:
  Shape origin_, storage_;
};

class CompileTimeTensorDesc {
 public:
  CompileTimeTensorDesc() = default;
  CompileTimeTensorDesc(ge::DataType dt, ge::Format f) : dtype_(dt), format_(f) {}
  ge::DataType GetDataType() const { return dtype_; }
  ge::Format GetStorageFormat() const { return format_; }
  ge::Format GetOriginFormat() const { return format_; }
  void SetDataType(ge::DataType dt) { dtype_ = dt; }

 private:
  ge::DataType dtype_ = ge::DT_FLOAT;
  ge::Format format_ = ge::FORMAT_ND;
};

/* The raw tiling buffer a tiling function writes. */
class TilingData {
 public:
  TilingData(void* data, size_t capacity) : data_(data), capacity_(capacity) {}
  void* GetData() { return data_; }
  const void* GetData() const { return data_; }
  size_t GetCapacity() const { return capacity_; }
  size_t GetDataSize() const { return size_; }
  void SetDataSize(size_t size) { size_ = size; }

 private:
  void* data_;
  size_t capacity_;
  size_t size_ = 0;
};

/* An operator's attributes in declaration order. */
class RuntimeAttrs {
 public:
  struct Value {
    enum Kind { kNone, kBool, kInt, kFloat, kString, kListInt, kListFloat } kind = kNone;
    bool b = false;
    int64_t i = 0;
    float f = 0;
    std::string s;
    std::vector<int64_t> li;
    std::vector<float> lf;
  };
  /* The attribute at `index` as T (bool, int64_t, float, char for a string),
   * or NULL when it is absent or of another type. */
  template <typename T>
  const T* GetAttrPointer(size_t i) const {
    if (i >= values_.size()) return nullptr;
    const Value& v = values_[i];
    if constexpr (std::is_same_v<T, bool>) return v.kind == Value::kBool ? &v.b : nullptr;
    else if constexpr (std::is_same_v<T, int64_t>) return v.kind == Value::kInt ? &v.i : nullptr;
    else if constexpr (std::is_same_v<T, float>) return v.kind == Value::kFloat ? &v.f : nullptr;
    else if constexpr (std::is_same_v<T, char>) return v.kind == Value::kString ? v.s.c_str() : nullptr;
    else return nullptr;
  }
  const int64_t* GetInt(size_t index) const { return GetAttrPointer<int64_t>(index); }
  const float* GetFloat(size_t index) const { return GetAttrPointer<float>(index); }
  const bool* GetBool(size_t index) const { return GetAttrPointer<bool>(index); }
  const char* GetStr(size_t index) const {
    return index < values_.size() && values_[index].kind == Value::kString ? values_[index].s.c_str() : nullptr;
  }
  size_t GetAttrNum() const { return values_.size(); }
  std::vector<Value>& OcValues() { return values_; }

 private:
  std::vector<Value> values_;
};
/* The state every context shares: the node and its tensors' shapes and types. */
struct OcNodeState {
  std::string name, type;
  std::vector<StorageShape> input_shapes, output_shapes;
  std::vector<CompileTimeTensorDesc> input_descs, output_descs;
  std::vector<bool> input_present;  // optional inputs may be absent
  RuntimeAttrs attrs;
};

class TilingContext {
 public:
  TilingContext(OcNodeState* node, TilingData* tiling, fe::PlatFormInfos* platform)
      : node_(node), tiling_(tiling), platform_(platform) {}
  const char* GetNodeName() const { return node_->name.c_str(); }
  const char* GetNodeType() const { return node_->type.c_str(); }
  const StorageShape* GetInputShape(size_t i) const {
    return i < node_->input_shapes.size() && node_->input_present[i] ? &node_->input_shapes[i] : nullptr;
  }
  const StorageShape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
  const StorageShape* GetOutputShape(size_t i) const {
    return i < node_->output_shapes.size() ? &node_->output_shapes[i] : nullptr;
  }
  const CompileTimeTensorDesc* GetInputDesc(size_t i) const {
    return i < node_->input_descs.size() ? &node_->input_descs[i] : nullptr;
  }
  const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const { return GetInputDesc(i); }
  const CompileTimeTensorDesc* GetOutputDesc(size_t i) const {
    return i < node_->output_descs.size() ? &node_->output_descs[i] : nullptr;
  }
  size_t GetComputeNodeInputNum() const { return node_->input_shapes.size(); }
  const RuntimeAttrs* GetAttrs() const { return &node_->attrs; }
  ge::graphStatus SetBlockDim(uint32_t block_dim) {
    block_dim_ = block_dim;
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetBlockDim() const { return block_dim_; }
  ge::graphStatus SetTilingKey(uint64_t key) {
    tiling_key_ = key;
    return ge::GRAPH_SUCCESS;
  }
  uint64_t GetTilingKey() const { return tiling_key_; }
  ge::graphStatus SetScheduleMode(uint32_t) { return ge::GRAPH_SUCCESS; }
  TilingData* GetRawTilingData() { return tiling_; }
  /* The sizes of `num` workspaces the kernel needs (index 0: the system's and
   * the user's, as one buffer here). */
  size_t* GetWorkspaceSizes(size_t num) {
    if (workspaces_.size() < num) workspaces_.resize(num, 0);
    return workspaces_.data();
  }
  size_t GetWorkspaceNum() const { return workspaces_.size(); }
  fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }

 private:
  OcNodeState* node_;
  TilingData* tiling_;
  fe::PlatFormInfos* platform_;
  uint32_t block_dim_ = 0;
  uint64_t tiling_key_ = 0;
  std::vector<size_t> workspaces_;
};

class InferShapeContext {
 public:
  explicit InferShapeContext(OcNodeState* node) : node_(node) {}
  const Shape* GetInputShape(size_t i) const {
    return i < node_->input_shapes.size() && node_->input_present[i] ? &node_->input_shapes[i].GetOriginShape()
                                                                     : nullptr;
  }
  const Shape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
  Shape* GetOutputShape(size_t i) {
    return i < node_->output_shapes.size() ? &node_->output_shapes[i].MutableOriginShape() : nullptr;
  }
  const RuntimeAttrs* GetAttrs() const { return &node_->attrs; }
  const char* GetNodeName() const { return node_->name.c_str(); }

 private:
  OcNodeState* node_;
};

class InferDataTypeContext {
 public:
  explicit InferDataTypeContext(OcNodeState* node) : node_(node) {}
  ge::DataType GetInputDataType(size_t i) const {
    return i < node_->input_descs.size() ? node_->input_descs[i].GetDataType() : ge::DT_UNDEFINED;
  }
  ge::graphStatus SetOutputDataType(size_t i, ge::DataType dt) {
    if (i >= node_->output_descs.size()) return ge::GRAPH_FAILED;
    node_->output_descs[i].SetDataType(dt);
    return ge::GRAPH_SUCCESS;
  }
  const RuntimeAttrs* GetAttrs() const { return &node_->attrs; }

 private:
  OcNodeState* node_;
};

}  // namespace gert

#endif  // OPENCANN_ASCENDC_EXE_GRAPH_TILING_CONTEXT_H_
