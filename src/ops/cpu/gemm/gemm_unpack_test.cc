// gemm::UnpackPacked / RawOrUnpacked: panels packed for any micro-kernel give
// back exactly the operand they were packed from (below, at and above the
// tile, both sides, transposed or not, grouped), and bytes that do not hold
// the operand are refused with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {
namespace {

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(GemmUnpackTest, EveryMicroKernelSideTransposeAndGroupRoundTripsExactly) {
  int cases = 0;
  for (const GemmUkernel& uk : AllUkernels()) {
    if (!IsaSupported(uk.isa)) continue;
    for (PackedSide side : {PackedSide::kA, PackedSide::kB}) {
      const int width = side == PackedSide::kA ? uk.mr : uk.nr;
      for (int64_t dim : {int64_t{1}, int64_t{width - 1}, int64_t{width}, int64_t{width + 1}, int64_t{2 * width + 3}}) {
        if (dim < 1) continue;
        for (int64_t k : {1, 2, 7}) {
          for (bool trans : {false, true}) {
            for (int64_t groups : {1, 3}) {
              // op(X) is dim x k (side A) or k x dim (side B); stored transposed when `trans`.
              const bool row_major_dim = side == PackedSide::kA ? !trans : trans;
              const int64_t ld = (row_major_dim ? k : dim) + 2;  // padded rows: never written
              const int64_t stride = (row_major_dim ? dim : k) * ld + 5;
              const std::vector<float> raw = RandomFloats(static_cast<size_t>(groups * stride), ++cases);
              PackedOperand p = PackedOperand::Make(uk, side, raw.data(), ld, trans, dim, k, {}, groups, stride);
              const std::vector<uint8_t> bytes = p.Export();
              std::vector<float> back(raw.size(), 0.f);
              Status st = UnpackPacked(bytes, side, dim, k, groups, back.data(), ld, trans, stride);
              ASSERT_TRUE(st.ok()) << uk.name << ": " << st.message();
              for (int64_t g = 0; g < groups; ++g)
                for (int64_t r = 0; r < (row_major_dim ? dim : k); ++r)
                  for (int64_t c = 0; c < (row_major_dim ? k : dim); ++c) {
                    const size_t at = static_cast<size_t>(g * stride + r * ld + c);
                    ASSERT_EQ(std::memcmp(&back[at], &raw[at], sizeof(float)), 0)
                        << uk.name << " side " << static_cast<int>(side) << " dim " << dim << " k " << k
                        << " trans " << trans << " group " << g << " at (" << r << ", " << c << ")";
                  }
              // Repacked from the rebuilt values: the same panels.
              std::vector<float> storage;
              auto src = RawOrUnpacked(nullptr, bytes, nullptr, false, side, dim, k, groups, ld, trans, stride,
                                       groups * stride, storage);
              ASSERT_TRUE(src.ok()) << src.status().message();
              EXPECT_EQ(PackedOperand::Make(uk, side, *src, ld, trans, dim, k, {}, groups, stride).Export(), bytes);
              // Panels that suit `uk` are borrowed: no raw values needed.
              auto none = RawOrUnpacked(nullptr, bytes, &uk, true, side, dim, k, groups, ld, trans, stride,
                                        groups * stride, storage);
              ASSERT_TRUE(none.ok());
              EXPECT_EQ(*none, nullptr);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 100);
}

TEST(GemmUnpackTest, BytesThatDoNotHoldTheOperandAreRefused) {
  const GemmUkernel& uk = DefaultUkernel();
  constexpr int64_t dim = 5, k = 3;  // the defaults of `unpack` below
  const std::vector<float> raw = RandomFloats(dim * k, 1);
  const std::vector<uint8_t> good =
      PackedOperand::Make(uk, PackedSide::kB, raw.data(), dim, false, dim, k, {}).Export();
  std::vector<float> out(dim * k);
  auto unpack = [&](std::span<const uint8_t> b, PackedSide side = PackedSide::kB, int64_t d = 5, int64_t kk = 3,
                    int64_t groups = 1) { return UnpackPacked(b, side, d, kk, groups, out.data(), dim, false, 0); };
  ASSERT_TRUE(unpack(good).ok());
  EXPECT_NE(unpack(std::span(good).first(10)).message().find("header"), std::string::npos);
  EXPECT_NE(unpack(std::span(good).first(good.size() - 4)).message().find("floats"), std::string::npos);
  EXPECT_NE(unpack(good, PackedSide::kA).message().find("expected side"), std::string::npos);
  EXPECT_NE(unpack(good, PackedSide::kB, dim + 1).message().find("expected side"), std::string::npos);
  EXPECT_NE(unpack(good, PackedSide::kB, dim, k, 2).message().find("groups"), std::string::npos);
  std::vector<uint8_t> bad = good;
  bad[0] ^= 1;
  EXPECT_NE(unpack(bad).message().find("magic"), std::string::npos);
  bad = good;
  const int32_t huge = 1 << 20;
  std::memcpy(bad.data() + 20, &huge, 4);  // nr
  EXPECT_NE(unpack(bad).message().find("micro-tile"), std::string::npos);
  // An operand too small for the dims: refused before anything is written.
  std::vector<float> storage;
  auto r = RawOrUnpacked(nullptr, good, nullptr, false, PackedSide::kB, dim, k, 1, dim, false, 0, dim * k - 1, storage);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace oc::gemm
