#include <gtest/gtest.h>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::I64;
using tt::Iota;
using tt::Ravel;
using tt::RunOp;
using tt::Unravel;

TEST(TensorConcat, NegativeAxisMatchesIndexArithmetic) {
  auto a = Iota<int16_t>({2, 2, 3}, 0);
  auto b = Iota<int16_t>({2, 1, 3}, 100);
  auto c = Iota<int16_t>({2, 4, 3}, 200);
  auto r = RunOp("Concat", {a, b, c}, [](Node& n) { n.SetInt("axis", -2); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{2, 7, 3}));
  auto out = r[0].as<int16_t>();
  for (int64_t i = 0; i < 42; ++i) {
    auto o = Unravel(i, {2, 7, 3});
    int16_t want;
    if (o[1] < 2) want = a.as<int16_t>()[Ravel({o[0], o[1], o[2]}, {2, 2, 3})];
    else if (o[1] < 3) want = b.as<int16_t>()[Ravel({o[0], o[1] - 2, o[2]}, {2, 1, 3})];
    else want = c.as<int16_t>()[Ravel({o[0], o[1] - 3, o[2]}, {2, 4, 3})];
    EXPECT_EQ(out[i], want) << i;
  }
}

TEST(TensorConcat, EmptyInputAndMismatchError) {
  auto r = RunOp("Concat", {Iota<float>({0, 2}), Iota<float>({3, 2})}, [](Node& n) { n.SetInt("axis", 0); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].as<float>(), Iota<float>({6}).as<float>());
  auto bad = RunOp("Concat", {Iota<float>({2, 2}), Iota<float>({3, 3})}, [](Node& n) { n.SetInt("axis", 0); });
  ASSERT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("input 1"), std::string::npos) << bad.status.message();
}

void ExpectSplit(const tt::Result& r, const tt::T& x, int64_t axis, const std::vector<int64_t>& sizes) {
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.outputs.size(), sizes.size());
  auto in = x.as<int64_t>();
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = sizes[k];
    ASSERT_EQ(r[k].shape, shape) << "output " << k;
    auto out = r[k].as<int64_t>();
    for (int64_t i = 0; i < tt::Numel(shape); ++i) {
      auto o = Unravel(i, shape);
      o[axis] += begin;
      EXPECT_EQ(out[i], in[Ravel(o, x.shape)]) << "output " << k << " at " << i;
    }
    begin += sizes[k];
  }
}

TEST(TensorSplit, NumOutputsGivesSmallerLastChunk) {
  auto x = Iota<int64_t>({2, 7});
  auto r = RunOp("Split", {x}, [](Node& n) { n.SetInt("axis", -1); n.SetInt("num_outputs", 3); }, 18, 3);
  ExpectSplit(r, x, 1, {3, 3, 1});
}

TEST(TensorSplit, SplitInputAndEvenDefault) {
  auto x = Iota<int64_t>({6, 2});
  ExpectSplit(RunOp("Split", {x, I64({1, 0, 5})}, nullptr, 13, 3), x, 0, {1, 0, 5});
  ExpectSplit(RunOp("Split", {x}, nullptr, 13, 2), x, 0, {3, 3});
  auto bad = RunOp("Split", {x, I64({1, 2})}, nullptr, 13, 2);
  ASSERT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("sums to 3"), std::string::npos) << bad.status.message();
  EXPECT_FALSE(RunOp("Split", {Iota<int64_t>({5})}, nullptr, 13, 2).status.ok());
}

TEST(TensorSplit, Opset11SplitAttributeIsCanonicalised) {
  auto x = Iota<int64_t>({3, 5});
  auto r = RunOp("Split", {x}, [](Node& n) { n.SetInt("axis", 1); n.SetInts("split", {2, 3}); }, 11, 2);
  ExpectSplit(r, x, 1, {2, 3});
}

}  // namespace
}  // namespace oc
