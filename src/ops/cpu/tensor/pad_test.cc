#include <gtest/gtest.h>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::OpTester;
using testing::RandomFloats;

// Source index of padded coordinate i on an axis of n, built from the periodic
// patterns the modes describe (numpy.pad semantics), independent of the kernel.
int64_t RefSource(const std::string& mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((i % n) + n) % n;
  // reflect: 0 1 .. n-1 n-2 .. 1 repeats with period 2n-2
  if (n == 1) return 0;
  std::vector<int64_t> period;
  for (int64_t k = 0; k < n; ++k) period.push_back(k);
  for (int64_t k = n - 2; k >= 1; --k) period.push_back(k);
  int64_t p = static_cast<int64_t>(period.size());
  return period[((i % p) + p) % p];
}

std::vector<float> RefPad(const std::vector<float>& x, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& pads, const std::string& mode, float value,
                          std::vector<int64_t>* out_shape) {
  size_t r = shape.size();
  out_shape->clear();
  for (size_t d = 0; d < r; ++d) out_shape->push_back(shape[d] + pads[d] + pads[d + r]);
  int64_t total = 1;
  for (auto d : *out_shape) total *= d;
  std::vector<float> y;
  for (int64_t o = 0; o < total; ++o) {
    int64_t t = o, src = 0, mul = 1;
    bool constant = false;
    for (size_t d = r; d-- > 0;) {
      int64_t od = t % (*out_shape)[d];
      t /= (*out_shape)[d];
      int64_t s = RefSource(mode, od - pads[d], shape[d]);
      if (s < 0) constant = true;
      src += s * mul;
      mul *= shape[d];
    }
    y.push_back(constant ? value : x[src]);
  }
  return y;
}

TEST(PadTest, ConstantWithValueAndNegativePadsCrop) {
  std::vector<int64_t> shape = {2, 3, 4};
  auto x = RandomFloats(24, 1);
  std::vector<int64_t> pads = {1, -1, 2, 0, 2, -1};
  OpTester t("Pad", 13);
  t.InputF(shape, x).InputI64({6}, pads).InputF({}, {7.5f}).Outputs(1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<int64_t> os;
  auto want = RefPad(x, shape, pads, "constant", 7.5f, &os);
  EXPECT_EQ(r->shapes[0], os);
  EXPECT_EQ(r->F(0), want);
}

TEST(PadTest, ReflectEdgeWrapModes) {
  std::vector<int64_t> shape = {2, 3, 5};
  auto x = RandomFloats(30, 2);
  std::vector<int64_t> pads = {0, 2, 4, 1, 1, 3};
  for (const char* mode : {"reflect", "edge", "wrap", "constant"}) {
    OpTester t("Pad", 19);
    t.InputF(shape, x).InputI64({6}, pads).Outputs(1);
    t.node().SetString("mode", mode);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << mode << ": " << r.status().ToString();
    std::vector<int64_t> os;
    EXPECT_EQ(r->F(0), RefPad(x, shape, pads, mode, 0.f, &os)) << mode;
    EXPECT_EQ(r->shapes[0], os);
  }
}

TEST(PadTest, WideReflectAndWrapFollowNumpy) {
  // numpy.pad(arange(3), (7, 5), 'reflect') and (4, 4) 'wrap'.
  std::vector<float> x = {0, 1, 2};
  OpTester t("Pad", 19);
  t.InputF({3}, x).InputI64({2}, {7, 5}).Outputs(1);
  t.node().SetString("mode", "reflect");
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->F(0), (std::vector<float>{1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}));
  OpTester w("Pad", 19);
  w.InputF({3}, x).InputI64({2}, {4, 4}).Outputs(1);
  w.node().SetString("mode", "wrap");
  auto rw = w.Run();
  ASSERT_TRUE(rw.ok()) << rw.status().ToString();
  EXPECT_EQ(rw->F(0), (std::vector<float>{2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
}

TEST(PadTest, Opset2AttributesAreCanonicalisedToInputs) {
  std::vector<int64_t> shape = {2, 2};
  std::vector<float> x = {1, 2, 3, 4};
  OpTester t("Pad", 2);
  t.InputF(shape, x).Outputs(1);
  t.node().SetInts("pads", {1, 0, 0, 2});
  t.node().SetFloat("value", -1.f);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(t.node().inputs.size(), 3u);
  EXPECT_FALSE(t.node().HasAttr("pads"));
  std::vector<int64_t> os;
  EXPECT_EQ(r->F(0), RefPad(x, shape, {1, 0, 0, 2}, "constant", -1.f, &os));
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{3, 4}));
}

TEST(PadTest, AxesInputSelectsPaddedAxes) {
  std::vector<int64_t> shape = {2, 3, 4};
  auto x = RandomFloats(24, 3);
  OpTester t("Pad", 18);
  t.InputF(shape, x).InputI64({4}, {1, 2, 0, 1}).NoInput().InputI64({2}, {-1, 0}).Outputs(1);
  t.node().SetString("mode", "edge");
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<int64_t> os;
  // axes {-1, 0}: axis 2 gets (1, 0), axis 0 gets (2, 1)
  EXPECT_EQ(r->F(0), RefPad(x, shape, {2, 0, 1, 1, 0, 0}, "edge", 0.f, &os));
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{5, 3, 5}));
}

TEST(PadTest, IntegerDtypes) {
  OpTester t("Pad", 13);
  t.InputI64({3}, {5, 6, 7}).InputI64({2}, {1, 2}).InputI64({}, {-9}).Outputs(1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->I64(0), (std::vector<int64_t>{-9, 5, 6, 7, -9, -9}));
  OpTester u("Pad", 11);
  u.Input<uint8_t>({2}, {1, 2}).InputI64({2}, {2, 1}).Outputs(1);
  u.node().SetString("mode", "reflect");
  auto ru = u.Run();
  ASSERT_TRUE(ru.ok()) << ru.status().ToString();
  std::vector<uint8_t> got(ru->data[0].data(), ru->data[0].data() + ru->data[0].size());
  EXPECT_EQ(got, (std::vector<uint8_t>{1, 2, 1, 2, 1}));
}

TEST(PadTest, ErrorsNameTheProblem) {
  OpTester d("Pad", 13);
  d.InputF({2}, {1, 2}).DynamicInput(DataType::kInt64, {2}).Outputs(1);
  Status st = d.Prepare();
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("pads"), std::string::npos) << st.message();

  OpTester c("Pad", 13);
  c.InputF({2, 2}, {1, 2, 3, 4}).InputI64({2}, {1, 1}).Outputs(1);
  EXPECT_EQ(c.Prepare().code(), StatusCode::kInvalidArgument);

  OpTester w("Pad", 13);
  w.InputF({2}, {1, 2}).InputI64({2}, {1, 1}).Outputs(1);
  w.node().SetString("mode", "wrap");
  auto rw = w.Run();
  EXPECT_EQ(rw.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rw.status().message().find("wrap"), std::string::npos);

  OpTester n("Pad", 13);
  n.InputF({2}, {1, 2}).InputI64({2}, {-2, -1}).Outputs(1);
  EXPECT_EQ(n.Prepare().code(), StatusCode::kInvalidArgument);
}

TEST(PadSpaceDepthTest, DepthToSpaceDcrAndCrdMatchNumpyReshapeTranspose) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  // numpy: x.reshape(b,bs,bs,c/4,h,w).transpose(0,3,4,1,5,2) (DCR),
  //        x.reshape(b,c/4,bs,bs,h,w).transpose(0,1,4,2,5,3) (CRD).
  const std::vector<float> dcr = {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15};
  const std::vector<float> crd = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
  for (const char* mode : {"DCR", "CRD"}) {
    OpTester t("DepthToSpace", 13);
    t.InputF({1, 8, 1, 2}, x).Outputs(1);
    t.node().SetInt("blocksize", 2);
    t.node().SetString("mode", mode);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 2, 2, 4}));
    EXPECT_EQ(r->F(0), std::string(mode) == "DCR" ? dcr : crd) << mode;
  }
}

TEST(PadSpaceDepthTest, SpaceToDepthInvertsDepthToSpaceDcr) {
  std::vector<float> y(24);
  for (int i = 0; i < 24; ++i) y[i] = static_cast<float>(i);
  OpTester t("SpaceToDepth", 13);
  t.InputF({1, 2, 2, 6}, y).Outputs(1);
  t.node().SetInt("blocksize", 2);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 8, 1, 3}));
  // numpy: y.reshape(b,c,h/2,2,w/2,2).transpose(0,3,5,1,2,4)
  EXPECT_EQ(r->F(0), (std::vector<float>{0, 2, 4, 12, 14, 16, 1, 3, 5, 13, 15, 17, 6, 8, 10, 18, 20, 22,
                                         7, 9, 11, 19, 21, 23}));
  OpTester back("DepthToSpace", 13);
  back.InputF({1, 8, 1, 3}, r->F(0)).Outputs(1);
  back.node().SetInt("blocksize", 2);
  auto rb = back.Run();
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_EQ(rb->F(0), y);

  OpTester bad("SpaceToDepth", 13);
  bad.InputF({1, 1, 3, 4}, std::vector<float>(12)).Outputs(1);
  bad.node().SetInt("blocksize", 2);
  EXPECT_EQ(bad.Prepare().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace oc
