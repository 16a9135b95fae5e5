#include <gtest/gtest.h>

#include "ops/cpu/elementwise/elementwise_test_util.h"

namespace oc {
namespace {

using ewtest::BroadcastIndex;
using ewtest::Make;
using ewtest::RunOp;

TEST(EwCompare, FloatComparisonsBroadcast) {
  std::vector<int64_t> sa = {2, 3, 4}, sb = {3, 1}, so = {2, 3, 4};
  auto a = ewtest::RandomFloats(24, -2.f, 2.f, 1);
  auto b = ewtest::RandomFloats(3, -2.f, 2.f, 2);
  a[5] = b[1];  // force an equal pair
  struct C { const char* op; bool (*f)(float, float); };
  for (C c : {C{"Equal", [](float x, float y) { return x == y; }}, C{"Less", [](float x, float y) { return x < y; }},
              C{"Greater", [](float x, float y) { return x > y; }},
              C{"LessOrEqual", [](float x, float y) { return x <= y; }},
              C{"GreaterOrEqual", [](float x, float y) { return x >= y; }}}) {
    auto r = RunOp(c.op, {Make(sa, a), Make(sb, b)});
    ASSERT_TRUE(r.ok()) << c.op << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0].dtype, DataType::kBool);
    EXPECT_EQ((*r)[0].shape, so);
    auto o = (*r)[0].as<uint8_t>();
    for (int i = 0; i < 24; ++i)
      EXPECT_EQ(o[i] != 0, c.f(a[BroadcastIndex(sa, so, i)], b[BroadcastIndex(sb, so, i)])) << c.op << " " << i;
  }
}

TEST(EwCompare, IntegerAndBoolInputs) {
  auto r = RunOp("Less", {Make<int64_t>({3}, {1, 5, -2}), Make<int64_t>({}, {1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  r = RunOp("Equal", {Make<int32_t>({3}, {1, 5, -2}), Make<int32_t>({3}, {1, 4, -2})});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  auto t = Make<uint8_t>({4}, {1, 1, 0, 0}, DataType::kBool);
  auto u = Make<uint8_t>({4}, {1, 0, 1, 0}, DataType::kBool);
  r = RunOp("Equal", {t, u});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
  r = RunOp("And", {t, u});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0}));
  r = RunOp("Or", {t, u});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 0}));
  r = RunOp("Xor", {t, u});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
  r = RunOp("Less", {t, u});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_FALSE(RunOp("And", {Make<float>({1}, {1.f}), Make<float>({1}, {1.f})}).ok());
}

TEST(EwWhere, ThreeWayBroadcastForSeveralTypes) {
  std::vector<int64_t> sc = {2, 1, 4}, sx = {3, 1}, sy = {}, so = {2, 3, 4};
  std::vector<uint8_t> c = {1, 0, 1, 1, 0, 0, 1, 0};
  auto x = ewtest::RandomFloats(3, -1.f, 1.f, 3);
  float y = 42.f;
  auto r = RunOp("Where", {Make(sc, c, DataType::kBool), Make(sx, x), Make<float>(sy, {y})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape, so);
  auto o = (*r)[0].as<float>();
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(o[i], c[BroadcastIndex(sc, so, i)] ? x[BroadcastIndex(sx, so, i)] : y) << i;
  std::vector<int64_t> xi = {1, 2, 3};
  r = RunOp("Where", {Make<uint8_t>({3}, {0, 1, 0}, DataType::kBool), Make({3}, xi), Make<int64_t>({1}, {-1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{-1, 2, -1}));
  r = RunOp("Where", {Make<uint8_t>({1}, {1}, DataType::kBool), Make<uint8_t>({2}, {1, 0}, DataType::kBool),
                      Make<uint8_t>({2}, {0, 0}, DataType::kBool)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype, DataType::kBool);
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0}));
}

TEST(EwWhere, LargeTensorAndErrors) {
  const int64_t n = 1000003;
  auto x = ewtest::RandomFloats(n, -1.f, 1.f, 4);
  std::vector<uint8_t> c(n);
  for (int64_t i = 0; i < n; ++i) c[i] = x[i] > 0;
  auto r = RunOp("Where", {Make({n}, c, DataType::kBool), Make({n}, x), Make<float>({}, {0.f})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto o = (*r)[0].as<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(o[i], x[i] > 0 ? x[i] : 0.f);
  EXPECT_FALSE(RunOp("Where", {Make<float>({1}, {1.f}), Make<float>({1}, {1.f}), Make<float>({1}, {1.f})}).ok());
  EXPECT_FALSE(RunOp("Where", {Make<uint8_t>({2}, {1, 0}, DataType::kBool), Make<float>({3}, {1, 2, 3}),
                               Make<float>({1}, {1.f})}).ok());
  EXPECT_FALSE(RunOp("Where", {Make<uint8_t>({1}, {1}, DataType::kBool), Make<float>({1}, {1.f}),
                               Make<int32_t>({1}, {1})}).ok());
}

}  // namespace
}  // namespace oc
