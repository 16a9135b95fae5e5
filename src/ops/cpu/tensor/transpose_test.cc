#include <gtest/gtest.h>

#include "ops/cpu/common/tensor_test_util.h"
#include "ops/cpu/common/tensor_util.h"

namespace oc {
namespace {

using tt::Iota;
using tt::Ravel;
using tt::RunOp;
using tt::Unravel;

template <typename E>
void CheckTranspose(std::vector<int64_t> shape, std::vector<int64_t> perm) {
  SCOPED_TRACE(::testing::Message() << "shape " << ::testing::PrintToString(shape) << " perm "
                                    << ::testing::PrintToString(perm) << " esize " << sizeof(E));
  auto x = Iota<E>(shape);
  auto r = RunOp("Transpose", {x}, [&](Node& n) { n.SetInts("perm", perm); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  std::vector<int64_t> out_shape(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out_shape[d] = shape[perm[d]];
  ASSERT_EQ(r[0].shape, out_shape);
  auto in = x.template as<E>();
  auto out = r[0].template as<E>();
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < out.size(); ++i) {
    auto o = Unravel(static_cast<int64_t>(i), out_shape);
    std::vector<int64_t> src(shape.size());
    for (size_t d = 0; d < perm.size(); ++d) src[perm[d]] = o[d];
    ASSERT_EQ(out[i], in[Ravel(src, shape)]) << "at output " << i;
  }
}

TEST(TensorTranspose, GeneralPermutationsEveryElementSize) {
  CheckTranspose<uint8_t>({2, 3, 4, 5}, {2, 0, 3, 1});
  CheckTranspose<uint16_t>({2, 3, 4, 5}, {3, 1, 0, 2});
  CheckTranspose<float>({5}, {0});
  CheckTranspose<int64_t>({2, 1, 3, 1, 4}, {4, 3, 2, 1, 0});
  CheckTranspose<double>({3, 4}, {0, 1});
}

TEST(TensorTranspose, FastPathsMatchIndexArithmetic) {
  CheckTranspose<uint32_t>({70, 45}, {1, 0});              // 2-D blocked
  CheckTranspose<uint16_t>({3, 33, 40}, {0, 2, 1});        // last two axes
  CheckTranspose<float>({2, 16, 9, 7}, {0, 2, 3, 1});      // NCHW -> NHWC
  CheckTranspose<uint8_t>({2, 9, 7, 16}, {0, 3, 1, 2});    // NHWC -> NCHW
  CheckTranspose<int64_t>({129, 65}, {1, 0});
}

TEST(TensorTranspose, DefaultPermReverses) {
  auto x = Iota<int32_t>({2, 3, 4});
  auto r = RunOp("Transpose", {x});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{4, 3, 2}));
  auto out = r[0].as<int32_t>();
  for (int64_t i = 0; i < 24; ++i) {
    auto o = Unravel(i, {4, 3, 2});
    EXPECT_EQ(out[i], Ravel({o[2], o[1], o[0]}, {2, 3, 4}));
  }
}

TEST(TensorTranspose, PlanDetectsBatchedTransposeLayouts) {
  Node n;
  n.name = "t";
  n.op_type = "Transpose";
  // NCHW -> NHWC: out [N,H,W,C] reads in strides [CHW, W, 1, HW].
  auto p = StridedCopy::Make(n, {2, 9, 7, 16}, {16 * 63, 7, 1, 63}, 0, 4);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->is_transpose2d());
  EXPECT_EQ(p->rank(), 3);
  auto q = StridedCopy::Make(n, {4, 5, 6}, {30, 6, 1}, 0, 4);  // identity: one contiguous run
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->is_transpose2d());
  EXPECT_EQ(q->rank(), 1);
}

TEST(TensorTranspose, BadPermNamesNode) {
  auto r = RunOp("Transpose", {Iota<float>({2, 3})}, [](Node& n) { n.SetInts("perm", {0, 0}); });
  ASSERT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status.message().find("node_Transpose"), std::string::npos) << r.status.message();
}

}  // namespace
}  // namespace oc
