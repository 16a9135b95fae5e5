#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::I64;
using tt::I64Scalar;
using tt::Iota;
using tt::Make;
using tt::Ravel;
using tt::RunOp;
using tt::Unravel;

TEST(TensorExpand, BidirectionalBroadcast) {
  auto x = Iota<uint16_t>({3, 1});
  auto r = RunOp("Expand", {x, I64({2, 1, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{2, 3, 4}));
  auto out = r[0].as<uint16_t>();
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(out[i], Unravel(i, {2, 3, 4})[1]);
  // Shape dims of 1 keep the larger input dim.
  auto keep = RunOp("Expand", {Iota<float>({2, 3}), I64({1, 1})});
  ASSERT_TRUE(keep.status.ok());
  EXPECT_EQ(keep[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(RunOp("Expand", {Iota<float>({2, 3}), I64({4})}).status.ok());
}

TEST(TensorTile, RepeatsEachAxis) {
  auto x = Iota<int64_t>({2, 3});
  auto r = RunOp("Tile", {x, I64({3, 2})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{6, 6}));
  auto out = r[0].as<int64_t>();
  for (int64_t i = 0; i < 36; ++i) {
    auto o = Unravel(i, {6, 6});
    EXPECT_EQ(out[i], Ravel({o[0] % 2, o[1] % 3}, {2, 3}));
  }
  auto zero = RunOp("Tile", {x, I64({0, 1})});
  ASSERT_TRUE(zero.status.ok());
  EXPECT_EQ(zero[0].shape, (std::vector<int64_t>{0, 3}));
}

TEST(TensorTrilu, UpperAndLowerWithK) {
  auto x = Iota<float>({2, 3, 4}, 1.f);
  for (int upper : {0, 1})
    for (int64_t k : {-1, 0, 2, 7}) {
      auto r = RunOp("Trilu", {x, I64Scalar(k)}, [&](Node& n) { n.SetInt("upper", upper); });
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      auto out = r[0].as<float>();
      auto in = x.as<float>();
      for (int64_t i = 0; i < 24; ++i) {
        auto o = Unravel(i, {2, 3, 4});
        bool keep = upper ? o[2] - o[1] >= k : o[2] - o[1] <= k;
        EXPECT_EQ(out[i], keep ? in[i] : 0.f) << "upper " << upper << " k " << k << " at " << i;
      }
    }
}

TEST(TensorCumSum, ExclusiveReverseOnEachAxis) {
  auto x = Iota<int32_t>({2, 3, 2}, 1);
  auto in = x.as<int32_t>();
  for (int64_t axis : {0, -2, 2})
    for (int excl : {0, 1})
      for (int rev : {0, 1}) {
        auto r = RunOp("CumSum", {x, Make<int32_t>({}, {static_cast<int32_t>(axis)})}, [&](Node& n) {
          n.SetInt("exclusive", excl);
          n.SetInt("reverse", rev);
        });
        ASSERT_TRUE(r.status.ok()) << r.status.ToString();
        int64_t a = axis < 0 ? axis + 3 : axis;
        auto out = r[0].as<int32_t>();
        for (int64_t i = 0; i < 12; ++i) {
          auto o = Unravel(i, {2, 3, 2});
          int32_t want = 0;
          for (int64_t j = 0; j < (std::vector<int64_t>{2, 3, 2})[a]; ++j) {
            bool take = rev ? (excl ? j > o[a] : j >= o[a]) : (excl ? j < o[a] : j <= o[a]);
            auto src = o;
            src[a] = j;
            if (take) want += in[Ravel(src, {2, 3, 2})];
          }
          EXPECT_EQ(out[i], want) << "axis " << axis << " excl " << excl << " rev " << rev << " at " << i;
        }
      }
}

TEST(TensorTopK, LargestAndSmallestWithTiesOnInnerAxis) {
  // Axis 1 of [2, 5, 3]: slices are strided in memory.
  std::vector<float> v(30);
  for (int i = 0; i < 30; ++i) v[i] = static_cast<float>((i * 7) % 11);
  auto x = Make<float>({2, 5, 3}, v);
  for (int largest : {1, 0}) {
    auto r = RunOp("TopK", {x, I64({3})}, [&](Node& n) { n.SetInt("axis", 1); n.SetInt("largest", largest); }, 11, 2);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_EQ(r[0].shape, (std::vector<int64_t>{2, 3, 3}));
    ASSERT_EQ(r[1].dtype, DataType::kInt64);
    auto vals = r[0].as<float>();
    auto idx = r[1].as<int64_t>();
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t i = 0; i < 3; ++i) {
        std::vector<int64_t> order(5);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          float va = v[(o * 5 + a) * 3 + i], vb = v[(o * 5 + b) * 3 + i];
          return largest ? va > vb : va < vb;
        });
        for (int64_t t = 0; t < 3; ++t) {
          EXPECT_EQ(idx[(o * 3 + t) * 3 + i], order[t]);
          EXPECT_EQ(vals[(o * 3 + t) * 3 + i], v[(o * 5 + order[t]) * 3 + i]);
        }
      }
  }
}

TEST(TensorTopK, Opset1AttributeAndRuntimeKIsUnknown) {
  auto r = RunOp("TopK", {Make<int64_t>({4}, {3, 9, -1, 9})}, [](Node& n) { n.SetInt("k", 2); }, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].as<int64_t>(), (std::vector<int64_t>{9, 9}));
  EXPECT_EQ(r[1].as<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(RunOp("TopK", {Iota<float>({4}), I64({5})}, nullptr, 11, 2).status.ok());

  Graph g;
  Value* x = g.AddConstant("x", DataType::kFloat32, {4}, TensorData::Allocate(16));
  Value* k = g.AddValue("k");
  k->dtype = DataType::kInt64;
  k->has_shape = true;
  k->shape = {1};
  Value* y = g.AddValue("y");
  Value* yi = g.AddValue("yi");
  Node* n = g.AddNode("TopK", "tk", {x, k}, {y, yi});
  n->opset = 11;
  const OpDef* def = OpRegistry::Global().Find("", "TopK", 11);
  ASSERT_TRUE(def->infer(*n).ok());
  EXPECT_EQ(y->shape, (std::vector<int64_t>{-1}));
  auto kernel = CpuKernelOf(*def)(KernelInit{*n, {}});
  EXPECT_EQ(kernel.status().code(), StatusCode::kNotSupported);
}

}  // namespace
}  // namespace oc
