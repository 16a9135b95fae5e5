#include "ops/cpu/common/tensor_util.h"

#include <algorithm>

#include "base/cpu_features.h"
#include "ops/infer_util.h"

namespace oc {

Status RequireIndexInput(const Node& node, size_t i, const char* what) {
  Value* v = node.input(i);
  if (!v) return InvalidArgument(node.Describe(), ": required input ", i, " (", what, ") is missing");
  if (v->dtype != DataType::kInt32 && v->dtype != DataType::kInt64)
    return InvalidArgument(node.Describe(), ": input ", i, " (", what, ", '", v->name,
                           "') must be int32 or int64, got ", DataTypeName(v->dtype));
  return Status::Ok();
}

Status RequireMovableType(const Node& node, DataType t) {
  size_t s = DataTypeSize(t);
  if (s == 1 || s == 2 || s == 4 || s == 8) return Status::Ok();
  return NotSupported(node.Describe(), ": element type ", DataTypeName(t), " is not supported");
}

std::optional<std::vector<int64_t>> IntsFromInputOrAttr(const Node& node, size_t input,
                                                        const char* attr, bool* present) {
  if (present) *present = true;
  if (Value* v = node.input(input)) return ConstInts(v);
  if (const Attribute* a = node.FindAttr(attr); a && a->kind == Attribute::Kind::kInts) return a->ints;
  if (present) *present = false;
  return std::nullopt;
}

Value* AddInt64Constant(Graph& graph, const Node& node, const std::string& suffix,
                        const std::vector<int64_t>& values) {
  std::string name = graph.UniqueName(node.name + "_" + suffix);
  return graph.AddConstant(name, DataType::kInt64, {static_cast<int64_t>(values.size())},
                           TensorData::Copy(values.data(), values.size() * sizeof(int64_t)));
}

Value* AddInt64Scalar(Graph& graph, const Node& node, const std::string& suffix, int64_t value) {
  std::string name = graph.UniqueName(node.name + "_" + suffix);
  return graph.AddConstant(name, DataType::kInt64, {}, TensorData::Copy(&value, sizeof(value)));
}

void SetInputAt(Node& node, size_t i, Value* v) {
  if (node.inputs.size() <= i) node.inputs.resize(i + 1, nullptr);
  node.inputs[i] = v;
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string r = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) r += ',';
    r += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return r + "]";
}

void ParallelCopy(void* dst, const void* src, size_t bytes, ThreadPool* pool) {
  if (dst == src || bytes == 0) return;
  constexpr int64_t kChunk = 256 * 1024;
  const int64_t chunks = (static_cast<int64_t>(bytes) + kChunk - 1) / kChunk;
  pool->ParallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    size_t begin = static_cast<size_t>(b * kChunk);
    size_t end = std::min(bytes, static_cast<size_t>(e * kChunk));
    std::memcpy(static_cast<uint8_t*>(dst) + begin, static_cast<const uint8_t*>(src) + begin, end - begin);
  });
}

void FillElements(void* dst, int64_t n, const void* value, size_t esize) {
  DispatchBySize(esize, [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    std::fill_n(static_cast<T*>(dst), n, v);
  });
}

Expected<StridedCopy> StridedCopy::Make(const Node& node, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& in_strides, int64_t in_offset,
                                        size_t esize) {
  StridedCopy p;
  p.esize_ = esize;
  p.offset_ = in_offset;
  p.total_ = ShapeProduct(dims);
  if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
    return NotSupported(node.Describe(), ": element size ", esize, " is not supported");
  if (p.total_ == 0) return p;
  // Drop unit dims, then merge a dim into its outer neighbour when the pair is
  // contiguous in the input too.
  std::vector<int64_t> md, ms;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!md.empty() && ms.back() == in_strides[d] * dims[d]) {
      md.back() *= dims[d];
      ms.back() = in_strides[d];
    } else {
      md.push_back(dims[d]);
      ms.push_back(in_strides[d]);
    }
  }
  if (md.empty()) { md.push_back(1); ms.push_back(1); }
  if (md.size() > static_cast<size_t>(kMaxPlanRank))
    return NotSupported(node.Describe(), ": copy pattern of rank ", md.size(), " exceeds ", kMaxPlanRank);
  p.rank_ = static_cast<int>(md.size());
  for (int d = 0; d < p.rank_; ++d) { p.dims_[d] = md[d]; p.strides_[d] = ms[d]; }
  int r = p.rank_;
  p.transpose2d_ = r >= 2 && ms[r - 2] == 1 && ms[r - 1] == md[r - 2] && md[r - 1] >= 4 && md[r - 2] >= 4;
  return p;
}

template <typename T>
void StridedCopy::RunGeneric(const T* in, T* out, ThreadPool* pool) const {
  const int r = rank_;
  const int64_t inner = dims_[r - 1];
  const int64_t sl = strides_[r - 1];
  const int64_t rows = total_ / inner;
  const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / (inner * static_cast<int64_t>(sizeof(T))));
  pool->ParallelFor(rows, grain, [&](int64_t b, int64_t e) {
    int64_t idx[kMaxPlanRank];
    int64_t off = offset_;
    int64_t rem = b;
    for (int d = r - 2; d >= 0; --d) {
      idx[d] = rem % dims_[d];
      rem /= dims_[d];
      off += idx[d] * strides_[d];
    }
    T* o = out + b * inner;
    for (int64_t row = b; row < e; ++row, o += inner) {
      const T* src = in + off;
      if (sl == 1) std::memcpy(o, src, static_cast<size_t>(inner) * sizeof(T));
      else if (sl == 0) std::fill_n(o, inner, *src);
      else for (int64_t j = 0; j < inner; ++j) o[j] = src[j * sl];
      for (int d = r - 2; d >= 0; --d) {
        off += strides_[d];
        if (++idx[d] < dims_[d]) break;
        off -= strides_[d] * dims_[d];
        idx[d] = 0;
      }
    }
  });
}

#if defined(__x86_64__) || defined(_M_X64)
void x32_transpose_8x8__avx2(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride);
#endif

namespace {

template <typename T>
void Transpose8x8Scalar(const T* src, int64_t src_stride, T* dst, int64_t dst_stride) {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) dst[i * dst_stride + j] = src[j * src_stride + i];
}

template <typename T>
using Tile8Fn = void (*)(const T*, int64_t, T*, int64_t);

template <typename T>
Tile8Fn<T> SelectTile8() {
#if defined(__x86_64__) || defined(_M_X64)
  if constexpr (sizeof(T) == 4)
    if (SelectedIsa() >= Isa::kAvx2 && SelectedIsa() != Isa::kNeon) return x32_transpose_8x8__avx2;
#endif
  return Transpose8x8Scalar<T>;
}

}  // namespace

// out[b][i][j] = in[b_off + j * R + i]. A task is a band of kBand output rows of
// one batch; it walks the columns in 8x8 tiles, so both the 8 rows read and the
// kBand rows written stay in L1 even when R and C are powers of two.
template <typename T>
void StridedCopy::RunTranspose2D(const T* in, T* out, ThreadPool* pool) const {
  constexpr int64_t kBand = 32;
  const int r = rank_;
  const int64_t R = dims_[r - 2], C = dims_[r - 1];
  const int64_t batch = total_ / (R * C);
  const int64_t bands = (R + kBand - 1) / kBand;
  const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / (kBand * C * static_cast<int64_t>(sizeof(T))));
  const Tile8Fn<T> tile = SelectTile8<T>();
  pool->ParallelFor(batch * bands, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t bi = t / bands, band = t % bands;
      int64_t off = offset_, rem = bi;
      for (int d = r - 3; d >= 0; --d) {
        off += (rem % dims_[d]) * strides_[d];
        rem /= dims_[d];
      }
      const T* src = in + off;
      T* dst = out + bi * R * C;
      const int64_t r0 = band * kBand, r1 = std::min(R, r0 + kBand);
      int64_t c0 = 0;
      for (; c0 + 8 <= C; c0 += 8) {
        int64_t i = r0;
        for (; i + 8 <= r1; i += 8) tile(src + c0 * R + i, R, dst + i * C + c0, C);
        for (; i < r1; ++i)
          for (int64_t j = c0; j < c0 + 8; ++j) dst[i * C + j] = src[j * R + i];
      }
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < C; ++j) dst[i * C + j] = src[j * R + i];
    }
  });
}

void StridedCopy::Run(const void* in, void* out, ThreadPool* pool) const {
  if (total_ == 0) return;
  DispatchBySize(esize_, [&](auto tag) {
    using T = decltype(tag);
    if (transpose2d_) RunTranspose2D(static_cast<const T*>(in), static_cast<T*>(out), pool);
    else RunGeneric(static_cast<const T*>(in), static_cast<T*>(out), pool);
  });
}

}  // namespace oc
