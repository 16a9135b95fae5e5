#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::I64;
using tt::Make;
using tt::RunOp;

TEST(TensorConstantOfShape, DefaultZeroAndTypedValue) {
  auto r = RunOp("ConstantOfShape", {I64({2, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].dtype, DataType::kFloat32);
  EXPECT_EQ(r[0].as<float>(), std::vector<float>(6, 0.f));
  auto v = RunOp("ConstantOfShape", {I64({4})}, [](Node& n) {
    Attribute a;
    a.kind = Attribute::Kind::kTensor;
    a.tensor_dtype = DataType::kInt64;
    a.tensor_shape = {1};
    int64_t seven = -7;
    a.tensor = TensorData::Copy(&seven, 8);
    n.attrs["value"] = a;
  });
  ASSERT_TRUE(v.status.ok()) << v.status.ToString();
  EXPECT_EQ(v[0].as<int64_t>(), std::vector<int64_t>(4, -7));
  EXPECT_FALSE(RunOp("ConstantOfShape", {I64({2, -1})}).status.ok());
}

TEST(TensorRange, FloatAndIntegerCounts) {
  auto f = RunOp("Range", {Make<float>({}, {1.f}), Make<float>({}, {2.f}), Make<float>({}, {0.3f})});
  ASSERT_TRUE(f.status.ok()) << f.status.ToString();
  auto fv = f[0].as<float>();
  ASSERT_EQ(fv.size(), static_cast<size_t>(std::ceil((2.f - 1.f) / 0.3f)));
  for (size_t i = 0; i < fv.size(); ++i) EXPECT_FLOAT_EQ(fv[i], 1.f + static_cast<float>(i) * 0.3f);
  auto i = RunOp("Range", {Make<int32_t>({}, {10}), Make<int32_t>({}, {1}), Make<int32_t>({}, {-3})});
  ASSERT_TRUE(i.status.ok()) << i.status.ToString();
  EXPECT_EQ(i[0].as<int32_t>(), (std::vector<int32_t>{10, 7, 4}));
  auto e = RunOp("Range", {Make<int64_t>({}, {5}), Make<int64_t>({}, {1}), Make<int64_t>({}, {1})});
  ASSERT_TRUE(e.status.ok());
  EXPECT_EQ(e[0].shape, (std::vector<int64_t>{0}));
}

TEST(TensorEyeLike, OffsetDiagonalAndDtype) {
  auto r = RunOp("EyeLike", {Make<float>({3, 4}, std::vector<float>(12, 5.f))}, [](Node& n) {
    n.SetInt("k", 1);
    n.SetInt("dtype", static_cast<int64_t>(DataType::kInt32));
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].dtype, DataType::kInt32);
  auto out = r[0].as<int32_t>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[i * 4 + j], j == i + 1 ? 1 : 0);
}

TEST(TensorOneHot, AxisNegativeIndicesAndOutOfRange) {
  auto idx = Make<int64_t>({2, 2}, {0, -1, 3, 5});
  auto values = Make<float>({2}, {-1.f, 4.f});
  auto r = RunOp("OneHot", {idx, Make<int64_t>({}, {4}), values}, [](Node& n) { n.SetInt("axis", 1); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{2, 4, 2}));
  auto out = r[0].as<float>();
  auto iv = idx.as<int64_t>();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t d = 0; d < 4; ++d)
      for (int64_t b = 0; b < 2; ++b) {
        int64_t k = iv[a * 2 + b];
        if (k < 0) k += 4;
        EXPECT_EQ(out[(a * 4 + d) * 2 + b], k == d ? 4.f : -1.f);
      }
}

}  // namespace
}  // namespace oc
