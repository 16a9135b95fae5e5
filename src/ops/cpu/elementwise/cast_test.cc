#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/elementwise/elementwise_test_util.h"

namespace oc {
namespace {

// The compiler's own IEEE half type is the reference: g++ has _Float16 in C++
// on x86 only; on Arm its __fp16 converts with the same rounding.
#if defined(__aarch64__)
using CompilerHalf = __fp16;
#else
using CompilerHalf = _Float16;
#endif

using ewtest::Make;
using ewtest::RunOp;

auto To(DataType t) {
  return [t](Node& n) { n.SetInt("to", static_cast<int64_t>(t)); };
}

// Nearest bfloat16 by comparing the two neighbours in double (ties to even).
uint16_t RefBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t lo = x & 0xffff0000u, hi = lo + 0x10000u;
  double dl = std::fabs(static_cast<double>(f) - static_cast<double>(std::bit_cast<float>(lo)));
  float fh = std::bit_cast<float>(hi);
  double dh = std::isinf(fh) ? std::fabs(static_cast<double>(f)) * 0 + std::fabs(std::ldexp(1.0, 128) - std::fabs(double(f)))
                             : std::fabs(static_cast<double>(fh) - static_cast<double>(f));
  if (dl < dh) return static_cast<uint16_t>(lo >> 16);
  if (dh < dl) return static_cast<uint16_t>(hi >> 16);
  return static_cast<uint16_t>(((lo >> 16) & 1) ? hi >> 16 : lo >> 16);
}

TEST(EwCastUtil, HalfConversionsAreExactAndRoundToNearestEven) {
#ifdef __FLT16_MAX__
  for (uint32_t h = 0; h < 65536; ++h) {
    CompilerHalf ref = std::bit_cast<CompilerHalf>(static_cast<uint16_t>(h));
    float f = ew::HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(static_cast<float>(ref))) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(f, static_cast<float>(ref)) << h;
    ASSERT_EQ(ew::FloatToHalf(f), h) << h;
  }
  // Random floats over the whole half range, including halfway cases.
  uint32_t s = 7;
  for (int i = 0; i < 2000000; ++i) {
    s = s * 1664525u + 1013904223u;
    uint32_t bits = (s & 0x80000000u) | (0x30000000u + (s % 0x18000000u));
    if (i % 4 == 0) bits = (bits & 0xffffe000u) | 0x1000u;  // exact ties for normals
    float f = std::bit_cast<float>(bits);
    uint16_t want = std::bit_cast<uint16_t>(static_cast<CompilerHalf>(f));
    ASSERT_EQ(ew::FloatToHalf(f), want) << f;
  }
  for (float f : {65504.f, 65519.f, 65520.f, 1e6f, -1e6f, 5.96e-8f, 2.98e-8f, 2.99e-8f, 1e-10f,
                  std::numeric_limits<float>::infinity()})
    ASSERT_EQ(ew::FloatToHalf(f), std::bit_cast<uint16_t>(static_cast<CompilerHalf>(f))) << f;
#endif
  EXPECT_EQ(ew::FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(ew::FloatToHalf(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(ew::HalfToFloat(ew::FloatToHalf(std::nanf("")))));
}

TEST(EwCastUtil, BFloat16RoundsToNearestEven) {
  uint32_t s = 11;
  for (int i = 0; i < 1000000; ++i) {
    s = s * 1664525u + 1013904223u;
    uint32_t bits = s;
    if (i % 3 == 0) bits = (bits & 0xffff0000u) | 0x8000u;  // ties
    float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(ew::FloatToBFloat16(f), RefBf16(f)) << f;
  }
  EXPECT_EQ(ew::BFloat16ToFloat(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(ew::BFloat16ToFloat(ew::FloatToBFloat16(std::nanf("")))));
}

TEST(EwCast, FloatToIntegersMatchesOnnxruntimeOnX86) {
  // Expected values taken from numpy's x86 casts, which onnxruntime matches.
  auto x = Make<float>({5}, {300.7f, -300.2f, 1e10f, std::nanf(""), -1.9f});
  auto r = RunOp("Cast", {x}, To(DataType::kInt8));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dtype, DataType::kInt8);
  EXPECT_EQ((*r)[0].as<int8_t>(), (std::vector<int8_t>{44, -44, 0, 0, -1}));
  r = RunOp("Cast", {x}, To(DataType::kUInt8));
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{44, 212, 0, 0, 255}));
  r = RunOp("Cast", {x}, To(DataType::kInt32));
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{300, -300, INT32_MIN, INT32_MIN, -1}));
  r = RunOp("Cast", {x}, To(DataType::kUInt32));
  EXPECT_EQ((*r)[0].as<uint32_t>(), (std::vector<uint32_t>{300, 4294966996u, 0, 2147483648u, 4294967295u}));
  r = RunOp("Cast", {x}, To(DataType::kInt64));
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{300, -300, 10000000000LL, INT64_MIN, -1}));
  r = RunOp("Cast", {x}, To(DataType::kUInt64));
  EXPECT_EQ((*r)[0].as<uint64_t>(),
            (std::vector<uint64_t>{300, 18446744073709551316ull, 10000000000ull, 9223372036854775808ull,
                                   18446744073709551615ull}));
  r = RunOp("Cast", {Make<float>({4}, {0.f, -0.f, std::nanf(""), 0.1f})}, To(DataType::kBool));
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 1}));
}

TEST(EwCast, EveryPairOfTypesRoundTripsSmallIntegers) {
  const DataType types[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
                            DataType::kInt8,    DataType::kUInt8,   DataType::kInt16,   DataType::kUInt16,
                            DataType::kInt32,   DataType::kUInt32,  DataType::kInt64,   DataType::kUInt64,
                            DataType::kBool};
  // 0, 1, 5, 100 survive every type (bool: 0/1 only).
  std::vector<int64_t> vals = {0, 1, 5, 100};
  for (DataType from : types) {
    auto start = RunOp("Cast", {Make<int64_t>({4}, vals)}, To(from));
    ASSERT_TRUE(start.ok()) << DataTypeName(from) << ": " << start.status().ToString();
    for (DataType to : types) {
      auto mid = RunOp("Cast", {(*start)[0]}, To(to));
      ASSERT_TRUE(mid.ok()) << DataTypeName(from) << "->" << DataTypeName(to) << ": " << mid.status().ToString();
      auto back = RunOp("Cast", {(*mid)[0]}, To(DataType::kInt64));
      ASSERT_TRUE(back.ok());
      std::vector<int64_t> want = vals;
      if (from == DataType::kBool || to == DataType::kBool) want = {0, 1, 1, 1};
      EXPECT_EQ((*back)[0].as<int64_t>(), want) << DataTypeName(from) << "->" << DataTypeName(to);
    }
  }
}

TEST(EwCast, HalfTensorsLargeAndCastLike) {
  const int64_t n = 1000003;
  auto x = ewtest::RandomFloats(n, -70000.f, 70000.f, 5);
  auto r = RunOp("Cast", {Make({n}, x)}, To(DataType::kFloat16));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto h = (*r)[0].as<uint16_t>();
  x[5] = std::nanf("");
  x[6] = 1e-7f;      // subnormal half
  x[7] = -65520.f;   // rounds to -inf
  r = RunOp("Cast", {Make({n}, x)}, To(DataType::kFloat16));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  h = (*r)[0].as<uint16_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(h[i], ew::FloatToHalf(x[i])) << i;
  r = RunOp("Cast", {(*r)[0]}, To(DataType::kFloat32));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto back = (*r)[0].as<float>();
  for (int64_t i = 0; i < n; ++i) {
    float want = ew::HalfToFloat(h[i]);
    if (std::isnan(want)) ASSERT_TRUE(std::isnan(back[i])) << i;
    else ASSERT_EQ(back[i], want) << i;
  }
  auto like = Make<uint16_t>({1}, {0}, DataType::kBFloat16);
  r = RunOp("CastLike", {Make<double>({2}, {1.5, -3.0}), like}, nullptr, 15);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dtype, DataType::kBFloat16);
  EXPECT_EQ((*r)[0].as<uint16_t>(), (std::vector<uint16_t>{0x3fc0, 0xc040}));
  r = RunOp("Cast", {Make<float>({1}, {1.f})}, To(DataType::kString));
  EXPECT_FALSE(r.ok());
  r = RunOp("Cast", {Make<float>({1}, {1.f})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace oc
