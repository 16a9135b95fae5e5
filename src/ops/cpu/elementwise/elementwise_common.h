// Shared machinery of the element-wise op groups (binary arithmetic, compare /
// logic, Where, unary ops): numpy broadcast plans computed once in the kernel
// factory, the chunked iteration over them used from ParallelFor, and the
// inference helpers the groups share.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"

namespace oc::ew {

// Smallest number of elements worth handing to another thread.
inline constexpr int64_t kGrain = 16384;

// The iteration space of an n-ary broadcast, with dims of size 1 dropped and
// adjacent dims merged wherever every input is contiguous (or constant) across
// them. The innermost dim is walked with a per-input stride of 0 or 1, so the
// inner loops are plain vectorisable loops.
struct BroadcastPlan {
  static constexpr int kMaxInputs = 3;
  int num_inputs = 0;
  std::vector<int64_t> dims;                                  // collapsed, >= 1 entry
  std::vector<std::array<int64_t, kMaxInputs>> strides;       // per dim, per input (elements)
  int64_t inner = 1;                                          // dims.back()
  std::array<int, kMaxInputs> inner_stride{};                 // 0 or 1
  int64_t total = 0;                                          // output elements
};

// Builds the plan for inputs of `in_shapes` broadcast to `out_shape` (which must
// be their broadcast, or for unidirectional ops the first input's shape). Error
// names the node when an input does not broadcast to the output.
Expected<BroadcastPlan> MakeBroadcastPlan(const Node& node,
                                          const std::vector<std::vector<int64_t>>& in_shapes,
                                          const std::vector<int64_t>& out_shape);

// Calls fn(out_offset, in_offsets, len) for the contiguous inner runs that
// cover output elements [begin, end). Offsets are in elements.
template <typename Fn>
void ForEachRun(const BroadcastPlan& p, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int rank = static_cast<int>(p.dims.size());
  const int n = p.num_inputs;
  int64_t row = begin / p.inner;
  int64_t col = begin % p.inner;
  // Multi-index of `row` over the outer dims, and the input offsets it gives.
  std::array<int64_t, 16> idx_small{};
  std::vector<int64_t> idx_big;
  int64_t* idx = idx_small.data();
  if (rank > 16) {  // collapsed ranks above 16 are practically impossible
    idx_big.resize(rank);
    idx = idx_big.data();
  }
  std::array<int64_t, BroadcastPlan::kMaxInputs> off{};
  {
    int64_t r = row;
    for (int d = rank - 2; d >= 0; --d) {
      idx[d] = r % p.dims[d];
      r /= p.dims[d];
      for (int k = 0; k < n; ++k) off[k] += idx[d] * p.strides[d][k];
    }
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = std::min(p.inner - col, end - pos);
    std::array<int64_t, BroadcastPlan::kMaxInputs> in_off;
    for (int k = 0; k < n; ++k) in_off[k] = off[k] + col * p.inner_stride[k];
    fn(pos, in_off.data(), len);
    pos += len;
    col = 0;
    // Advance the outer multi-index by one row.
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < p.dims[d]) {
        for (int k = 0; k < n; ++k) off[k] += p.strides[d][k];
        break;
      }
      for (int k = 0; k < n; ++k) off[k] -= (p.dims[d] - 1) * p.strides[d][k];
      idx[d] = 0;
    }
  }
}

template <int SA, int SB, typename TA, typename TB, typename TO, typename Op>
void BinaryLoop(const TA* a, const TB* b, TO* o, int64_t n) {
  Op op;
  for (int64_t i = 0; i < n; ++i) o[i] = op(a[i * SA], b[i * SB]);
}

// One broadcast binary step: o = op(a, b) over `plan`.
template <typename TA, typename TB, typename TO, typename Op>
class BinaryStep {
 public:
  explicit BinaryStep(BroadcastPlan plan) : plan_(std::move(plan)) {
    int sa = plan_.inner_stride[0], sb = plan_.inner_stride[1];
    if (sa && sb) loop_ = BinaryLoop<1, 1, TA, TB, TO, Op>;
    else if (sa) loop_ = BinaryLoop<1, 0, TA, TB, TO, Op>;
    else if (sb) loop_ = BinaryLoop<0, 1, TA, TB, TO, Op>;
    else loop_ = BinaryLoop<0, 0, TA, TB, TO, Op>;
  }
  void Run(const TA* a, const TB* b, TO* o, ThreadPool& pool) const {
    pool.ParallelFor(plan_.total, kGrain, [&](int64_t begin, int64_t end) {
      ForEachRun(plan_, begin, end, [&](int64_t oo, const int64_t* off, int64_t len) {
        loop_(a + off[0], b + off[1], o + oo, len);
      });
    });
  }
  const BroadcastPlan& plan() const { return plan_; }

 private:
  BroadcastPlan plan_;
  void (*loop_)(const TA*, const TB*, TO*, int64_t) = nullptr;
};

// Broadcast of all present inputs' shapes; error names the node.
Expected<std::vector<int64_t>> BroadcastAll(const Node& node);
// Requires every present input to share input 0's dtype; error names the node.
Status RequireSameDtype(const Node& node, size_t first = 0, size_t last = SIZE_MAX);

bool IsFloatType(DataType t);
bool IsSignedIntType(DataType t);
bool IsUnsignedIntType(DataType t);

// NotSupported naming the node and the dtype.
Status UnsupportedDtype(const Node& node, DataType t);

}  // namespace oc::ew
