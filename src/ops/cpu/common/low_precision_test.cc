// Invariants of the low-precision conversions that need no reference table
// (tests/python/test_dtypes.py checks every code and dense float sets against
// ml_dtypes / onnx.reference bit for bit).
#include "ops/cpu/common/low_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace oc::lp {
namespace {

const MiniFloat* const kFormats[] = {&kE4M3FN, &kE4M3FNUZ, &kE5M2, &kE5M2FNUZ, &kE2M1};
const char* const kNames[] = {"E4M3FN", "E4M3FNUZ", "E5M2", "E5M2FNUZ", "E2M1"};

int Codes(const MiniFloat& f) { return 1 << (f.exp_bits + f.man_bits + 1); }

TEST(LowPrecision, EveryFiniteCodeRoundTripsExactly) {
  for (int fi = 0; fi < 5; ++fi) {
    const MiniFloat& f = *kFormats[fi];
    for (int c = 0; c < Codes(f); ++c) {
      const float v = MiniToFloat(static_cast<uint8_t>(c), f);
      if (!std::isfinite(v)) continue;
      for (bool sat : {true, false}) {
        const uint8_t back = MiniFromDouble(v, f, sat);
        // FNUZ has one zero; everything else maps back to its own code.
        if (v == 0 && f.special == Special::kFnuz) EXPECT_EQ(back, 0) << kNames[fi];
        else EXPECT_EQ(back, c) << kNames[fi] << " code " << c << " value " << v;
      }
    }
  }
}

TEST(LowPrecision, LargestFiniteValueAndOverflow) {
  for (int fi = 0; fi < 5; ++fi) {
    const MiniFloat& f = *kFormats[fi];
    EXPECT_EQ(MiniToFloat(MaxCode(f), f), f.max) << kNames[fi];
    const double huge = 1e30;
    EXPECT_EQ(MiniToFloat(MiniFromDouble(huge, f, true), f), f.max) << kNames[fi];
    EXPECT_EQ(MiniToFloat(MiniFromDouble(-INFINITY, f, true), f), -f.max) << kNames[fi];
    const float unsat = MiniToFloat(MiniFromDouble(huge, f, false), f);
    if (f.special == Special::kIeee) EXPECT_EQ(unsat, INFINITY) << kNames[fi];
    else if (f.special == Special::kFinite) EXPECT_EQ(unsat, f.max) << kNames[fi];
    else EXPECT_TRUE(std::isnan(unsat)) << kNames[fi];
  }
}

TEST(LowPrecision, TiesRoundToEven) {
  // E4M3FN near 1: spacing 1/8. 1 + 1/16 is a tie between 1 (even) and 1.125.
  EXPECT_EQ(MiniToFloat(MiniFromDouble(1.0625, kE4M3FN, true), kE4M3FN), 1.0f);
  EXPECT_EQ(MiniToFloat(MiniFromDouble(1.1875, kE4M3FN, true), kE4M3FN), 1.25f);  // 1.125|1.25: to even
  EXPECT_EQ(MiniToFloat(MiniFromDouble(1.0626, kE4M3FN, true), kE4M3FN), 1.125f);
  // E2M1: 2.5 ties between 2 and 3 -> 2; 5 ties between 4 and 6 -> 4.
  EXPECT_EQ(MiniToFloat(MiniFromDouble(2.5, kE2M1, true), kE2M1), 2.0f);
  EXPECT_EQ(MiniToFloat(MiniFromDouble(5.0, kE2M1, true), kE2M1), 4.0f);
  // Smallest E5M2 subnormal is 2^-16; half of it ties to zero, a bit more rounds up.
  EXPECT_EQ(MiniFromDouble(std::ldexp(1.0, -17), kE5M2, true), 0);
  EXPECT_EQ(MiniFromDouble(std::ldexp(1.01, -17), kE5M2, true), 1);
}

TEST(LowPrecision, NaNAndSignedZero) {
  EXPECT_TRUE(std::isnan(MiniToFloat(MiniFromDouble(NAN, kE4M3FN, true), kE4M3FN)));
  EXPECT_EQ(MiniFromDouble(NAN, kE4M3FNUZ, true), 0x80);
  EXPECT_EQ(MiniFromDouble(-0.0, kE4M3FN, true), 0x80);   // negative zero kept
  EXPECT_EQ(MiniFromDouble(-0.0, kE4M3FNUZ, true), 0x00);  // no negative zero
  EXPECT_EQ(MiniFromDouble(-1e-30, kE5M2FNUZ, true), 0x00);
}

TEST(LowPrecision, E8M0FollowsOnnxRounding) {
  EXPECT_EQ(E8M0FromFloat(1.0f, true, E8M0Round::kUp), 127);
  EXPECT_EQ(E8M0FromFloat(1.5f, true, E8M0Round::kUp), 128);
  EXPECT_EQ(E8M0FromFloat(1.5f, true, E8M0Round::kDown), 127);
  EXPECT_EQ(E8M0FromFloat(1.5f, true, E8M0Round::kNearest), 128);
  EXPECT_EQ(E8M0FromFloat(1.25f, true, E8M0Round::kNearest), 127);
  EXPECT_EQ(E8M0FromFloat(-4.0f, true, E8M0Round::kUp), 129);  // sign dropped
  EXPECT_EQ(E8M0FromFloat(INFINITY, true, E8M0Round::kUp), 0xFF);
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(E8M0FromFloat(big, true, E8M0Round::kUp), 0xFE);   // saturates below NaN
  EXPECT_EQ(E8M0FromFloat(big, false, E8M0Round::kUp), 0xFF);  // rounds into NaN
  EXPECT_EQ(E8M0ToFloat(127), 1.0f);
  EXPECT_EQ(E8M0ToFloat(0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(E8M0ToFloat(0xFF)));
}

TEST(LowPrecision, PackedNibblesAndSignExtension) {
  const uint8_t bytes[2] = {0x8F, 0x31};  // elements (low first): F, 8, 1, 3
  EXPECT_EQ(PackedGet(bytes, 0, 4), 0xF);
  EXPECT_EQ(PackedGet(bytes, 1, 4), 0x8);
  EXPECT_EQ(PackedGet(bytes, 2, 4), 0x1);
  EXPECT_EQ(PackedGet(bytes, 3, 4), 0x3);
  EXPECT_EQ(SignExtend(0xF, 4), -1);
  EXPECT_EQ(SignExtend(0x8, 4), -8);
  EXPECT_EQ(SignExtend(0x7, 4), 7);
  EXPECT_EQ(PackedGet(bytes, 1, 2), 0x3);  // 0x8F = 10 00 11 11: elements 3, 3, 0, 2
  EXPECT_EQ(PackedGet(bytes, 3, 2), 0x2);
  EXPECT_EQ(SignExtend(0x2, 2), -2);
}

}  // namespace
}  // namespace oc::lp
