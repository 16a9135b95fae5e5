// Shared pieces of the data-movement op groups (shape, transpose, concat, slice,
// gather, generator, tensor): element-size dispatch, index loading, int lists
// that come from a constant input or an older-opset attribute, and the strided
// copy plan that Transpose, Slice, Expand and Tile all reduce to.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"

namespace oc {

// Largest rank a plan handles after merging adjacent dims (Tile doubles the rank).
inline constexpr int kMaxPlanRank = 24;
// Bytes a worker chunk should move at least, so small copies stay on one thread.
inline constexpr int64_t kCopyGrainBytes = 32 * 1024;

// Same-size unsigned integer type: data movement only needs the element width.
template <size_t N> struct UIntOfSize;
template <> struct UIntOfSize<1> { using type = uint8_t; };
template <> struct UIntOfSize<2> { using type = uint16_t; };
template <> struct UIntOfSize<4> { using type = uint32_t; };
template <> struct UIntOfSize<8> { using type = uint64_t; };

// Calls f(T{}) with T the unsigned type of width `esize`; false if none fits.
template <typename F>
bool DispatchBySize(size_t esize, F&& f) {
  switch (esize) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

// Calls f(T{}) with the C++ type of a plain arithmetic dtype (no fp16/bf16/bool).
template <typename F>
bool DispatchArithmetic(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32: f(float{}); return true;
    case DataType::kFloat64: f(double{}); return true;
    case DataType::kInt8: f(int8_t{}); return true;
    case DataType::kUInt8: f(uint8_t{}); return true;
    case DataType::kInt16: f(int16_t{}); return true;
    case DataType::kUInt16: f(uint16_t{}); return true;
    case DataType::kInt32: f(int32_t{}); return true;
    case DataType::kUInt32: f(uint32_t{}); return true;
    case DataType::kInt64: f(int64_t{}); return true;
    case DataType::kUInt64: f(uint64_t{}); return true;
    default: return false;
  }
}

// Element i of an int32 or int64 buffer.
inline int64_t LoadIndex(const void* p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
}

// Error unless input i is present with dtype int32 or int64.
Status RequireIndexInput(const Node& node, size_t i, const char* what);
// Error unless the element size of `t` is 1, 2, 4 or 8 (strings are not movable here).
Status RequireMovableType(const Node& node, DataType t);

// The int list of input `input` if it is constant, else the `attr` attribute
// (older opsets), else nullopt. `present` tells whether either exists at all.
std::optional<std::vector<int64_t>> IntsFromInputOrAttr(const Node& node, size_t input,
                                                        const char* attr, bool* present = nullptr);

// Appends a 1-D int64 constant named after `node` (for canonicalisation).
Value* AddInt64Constant(Graph& graph, const Node& node, const std::string& suffix,
                        const std::vector<int64_t>& values);
// A 0-D int64 constant.
Value* AddInt64Scalar(Graph& graph, const Node& node, const std::string& suffix, int64_t value);
// Sets node input i to v, growing the input list with nullptr as needed.
void SetInputAt(Node& node, size_t i, Value* v);

// "[2,3,?]"
std::string DimsString(const std::vector<int64_t>& dims);

// memcpy split across the pool for large buffers; no-op when dst == src.
void ParallelCopy(void* dst, const void* src, size_t bytes, ThreadPool* pool);

// Fills n elements of width esize with the element at `value`.
void FillElements(void* dst, int64_t n, const void* value, size_t esize);

// out (dense, row-major over `dims`) = in[offset + sum(idx[d] * in_strides[d])].
// Strides may be zero (broadcast) or negative (reversed slices). Built once in a
// kernel factory; Run does not allocate. Adjacent dims that are contiguous in the
// input are merged, so a transpose that only swaps two blocks of axes (last two
// axes, NCHW<->NHWC, plain 2-D) becomes a batched 2-D transpose and runs blocked.
class StridedCopy {
 public:
  static Expected<StridedCopy> Make(const Node& node, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& in_strides, int64_t in_offset,
                                    size_t esize);
  void Run(const void* in, void* out, ThreadPool* pool) const;
  bool is_transpose2d() const { return transpose2d_; }
  int rank() const { return rank_; }

 private:
  template <typename T> void RunGeneric(const T* in, T* out, ThreadPool* pool) const;
  template <typename T> void RunTranspose2D(const T* in, T* out, ThreadPool* pool) const;

  int rank_ = 0;
  int64_t dims_[kMaxPlanRank] = {};
  int64_t strides_[kMaxPlanRank] = {};
  int64_t offset_ = 0;
  int64_t total_ = 0;
  size_t esize_ = 1;
  bool transpose2d_ = false;
};

}  // namespace oc
