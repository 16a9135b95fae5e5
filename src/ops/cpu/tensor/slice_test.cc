#include <gtest/gtest.h>

#include <climits>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::I64;
using tt::Iota;
using tt::Ravel;
using tt::RunOp;
using tt::Unravel;

// Indices selected along one axis, written as Python's range over clamped bounds.
std::vector<int64_t> Picks(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto fix = [dim](int64_t v) { return v < 0 ? v + dim : v; };
  std::vector<int64_t> out;
  int64_t s = fix(start), e = fix(end);
  if (step > 0) {
    s = std::max<int64_t>(0, std::min(s, dim));
    e = std::max<int64_t>(0, std::min(e, dim));
    for (int64_t i = s; i < e; i += step) out.push_back(i);
  } else {
    s = std::max<int64_t>(0, std::min(s, dim - 1));
    e = std::max<int64_t>(-1, std::min(e, dim - 1));
    for (int64_t i = s; i > e; i += step) out.push_back(i);
  }
  return out;
}

struct Case {
  std::vector<int64_t> shape, starts, ends, axes, steps;
};

void CheckSlice(const Case& c) {
  SCOPED_TRACE(::testing::Message() << "starts " << ::testing::PrintToString(c.starts) << " ends "
                                    << ::testing::PrintToString(c.ends) << " axes " << ::testing::PrintToString(c.axes)
                                    << " steps " << ::testing::PrintToString(c.steps));
  auto x = Iota<float>(c.shape);
  auto r = RunOp("Slice", {x, I64(c.starts), I64(c.ends), I64(c.axes), I64(c.steps)});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  const size_t rank = c.shape.size();
  std::vector<std::vector<int64_t>> picks(rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t i = 0; i < c.shape[d]; ++i) picks[d].push_back(i);
  for (size_t k = 0; k < c.axes.size(); ++k) {
    int64_t a = c.axes[k] < 0 ? c.axes[k] + static_cast<int64_t>(rank) : c.axes[k];
    picks[a] = Picks(c.shape[a], c.starts[k], c.ends[k], c.steps[k]);
  }
  std::vector<int64_t> out_shape;
  for (auto& p : picks) out_shape.push_back(static_cast<int64_t>(p.size()));
  ASSERT_EQ(r[0].shape, out_shape);
  auto in = x.as<float>();
  auto out = r[0].as<float>();
  for (int64_t i = 0; i < tt::Numel(out_shape); ++i) {
    auto o = Unravel(i, out_shape);
    std::vector<int64_t> src(rank);
    for (size_t d = 0; d < rank; ++d) src[d] = picks[d][o[d]];
    ASSERT_EQ(out[i], in[Ravel(src, c.shape)]) << "at " << i;
  }
}

TEST(TensorSlice, ClampsAndNegativeStepsMatchReference) {
  CheckSlice({{4, 5, 6}, {1, -4}, {3, 100}, {0, 2}, {1, 2}});
  CheckSlice({{4, 5, 6}, {-1}, {INT64_MIN}, {1}, {-1}});              // full reverse
  CheckSlice({{4, 5, 6}, {10, 2}, {-10, -100}, {-1, 0}, {-2, -1}});   // out-of-range starts
  CheckSlice({{4, 5, 6}, {3}, {1}, {2}, {1}});                        // empty
  CheckSlice({{7}, {INT64_MAX}, {INT64_MIN}, {0}, {-3}});
  CheckSlice({{3, 40}, {0, 1}, {3, 39}, {0, 1}, {1, 1}});
}

TEST(TensorSlice, OptionalAxesAndStepsAndErrors) {
  auto x = Iota<int64_t>({3, 4});
  auto r = RunOp("Slice", {x, I64({1, 1}), I64({3, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r[0].as<int64_t>(), (std::vector<int64_t>{5, 6, 9, 10}));
  auto zero = RunOp("Slice", {x, I64({0}), I64({1}), I64({0}), I64({0})});
  ASSERT_EQ(zero.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status.message().find("step"), std::string::npos);
  EXPECT_FALSE(RunOp("Slice", {x, I64({0}), I64({1}), I64({2})}).status.ok());
  EXPECT_FALSE(RunOp("Slice", {x, I64({0, 0}), I64({1})}).status.ok());
}

TEST(TensorSlice, Opset1AttributesAreCanonicalised) {
  auto x = Iota<uint8_t>({3, 4});
  auto r = RunOp("Slice", {x}, [](Node& n) {
    n.SetInts("starts", {1});
    n.SetInts("ends", {-1});
    n.SetInts("axes", {1});
  }, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r[0].as<uint8_t>(), (std::vector<uint8_t>{1, 2, 5, 6, 9, 10}));
}

TEST(TensorSlice, RuntimeStartsLeaveSlicedAxesUnknown) {
  Graph g;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {3, 4};
  Value* s = g.AddValue("s");
  s->dtype = DataType::kInt64;
  s->has_shape = true;
  s->shape = {1};
  int64_t one = 1;
  Value* e = g.AddConstant("e", DataType::kInt64, {1}, TensorData::Copy(&one, 8));
  Value* a = g.AddConstant("a", DataType::kInt64, {1}, TensorData::Copy(&one, 8));
  Value* y = g.AddValue("y");
  Node* n = g.AddNode("Slice", "sl", {x, s, e, a}, {y});
  n->opset = 13;
  ASSERT_TRUE(OpRegistry::Global().Find("", "Slice", 13)->infer(*n).ok());
  EXPECT_EQ(y->shape, (std::vector<int64_t>{3, -1}));
}

}  // namespace
}  // namespace oc
