#include <gtest/gtest.h>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::Iota;
using tt::Make;
using tt::Ravel;
using tt::RunOp;
using tt::Unravel;

TEST(TensorGather, Int64DataNegativeIndicesOnAxis1) {
  auto data = Iota<int64_t>({2, 5, 3}, 1000);
  for (DataType it : {DataType::kInt64, DataType::kInt32}) {
    tt::T idx = it == DataType::kInt64 ? Make<int64_t>({2, 2}, {-1, 0, 2, -5}) : Make<int32_t>({2, 2}, {-1, 0, 2, -5});
    auto r = RunOp("Gather", {data, idx}, [](Node& n) { n.SetInt("axis", 1); });
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    const std::vector<int64_t> out_shape{2, 2, 2, 3};
    ASSERT_EQ(r[0].shape, out_shape);
    const int64_t iv[] = {-1, 0, 2, -5};
    auto in = data.as<int64_t>();
    auto out = r[0].as<int64_t>();
    for (int64_t i = 0; i < tt::Numel(out_shape); ++i) {
      auto o = Unravel(i, out_shape);
      int64_t k = iv[o[1] * 2 + o[2]];
      if (k < 0) k += 5;
      EXPECT_EQ(out[i], in[Ravel({o[0], k, o[3]}, {2, 5, 3})]) << i;
    }
  }
}

TEST(TensorGather, ScalarIndexDropsAxis) {
  auto r = RunOp("Gather", {Iota<float>({4, 3}), Make<int64_t>({}, {-2})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(r[0].as<float>(), (std::vector<float>{6, 7, 8}));
}

TEST(TensorGather, OutOfRangeIndexIsStatusNamingNode) {
  auto r = RunOp("Gather", {Iota<int64_t>({3, 2}), Make<int64_t>({2}, {1, 3})});
  ASSERT_EQ(r.status.code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status.message().find("node_Gather"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("index 3"), std::string::npos) << r.status.message();
  EXPECT_FALSE(RunOp("Gather", {Iota<int64_t>({3, 2}), Make<int64_t>({1}, {-4})}).status.ok());
}

// Indices arriving at run time: the error comes out of Executable::Run.
TEST(TensorGather, RuntimeOutOfRangeThroughExecutable) {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 13;
  auto data = Iota<float>({4, 2});
  Value* d = g->AddConstant("d", DataType::kFloat32, {4, 2}, TensorData::Copy(data.bytes.data(), data.bytes.size()));
  Value* idx = g->AddValue("idx");
  idx->dtype = DataType::kInt32;
  idx->has_shape = true;
  idx->shape = {3};
  idx->dim_params.assign(1, "");
  Value* y = g->AddValue("y");
  Node* n = g->AddNode("Gather", "my_gather", {d, idx}, {y});
  ASSERT_TRUE(OpRegistry::Global().Find("", "Gather", 13)->infer(*n).ok());
  g->inputs = {idx};
  g->outputs = {y};
  g->arena_size = 0;
  auto ex = Executable::Create(g);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  auto ctx = (*ex)->NewContext();
  ASSERT_TRUE(ctx.ok());
  int32_t good[3] = {3, -4, 1};
  float out[6] = {};
  const void* ins[] = {good};
  void* outs[] = {out};
  ASSERT_TRUE((*ex)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
  EXPECT_EQ(out[0], 6.f);
  EXPECT_EQ(out[2], 0.f);
  EXPECT_EQ(out[5], 3.f);
  int32_t bad[3] = {0, 4, 1};
  const void* bad_ins[] = {bad};
  Status st = (*ex)->Run(**ctx, bad_ins, outs, ThreadPool::Global());
  ASSERT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("my_gather"), std::string::npos) << st.message();
}

TEST(TensorGatherElements, NegativeIndicesAlongAxis) {
  auto data = Iota<float>({3, 4});
  auto idx = Make<int64_t>({3, 2}, {0, -1, 2, 1, -4, 3});
  auto r = RunOp("GatherElements", {data, idx}, [](Node& n) { n.SetInt("axis", -1); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{3, 2}));
  auto iv = idx.as<int64_t>();
  auto out = r[0].as<float>();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      int64_t k = iv[i * 2 + j];
      if (k < 0) k += 4;
      EXPECT_EQ(out[i * 2 + j], static_cast<float>(i * 4 + k));
    }
  auto bad = RunOp("GatherElements", {data, Make<int64_t>({1, 1}, {4})}, [](Node& n) { n.SetInt("axis", 1); });
  EXPECT_EQ(bad.status.code(), StatusCode::kOutOfRange);
}

TEST(TensorGatherND, BatchDimsOne) {
  auto data = Iota<int32_t>({2, 3, 4});
  auto idx = Make<int64_t>({2, 2, 1}, {0, -1, 2, 1});
  auto r = RunOp("GatherND", {data, idx}, [](Node& n) { n.SetInt("batch_dims", 1); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{2, 2, 4}));
  auto iv = idx.as<int64_t>();
  auto out = r[0].as<int32_t>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t j = 0; j < 4; ++j) {
        int64_t row = iv[b * 2 + t];
        if (row < 0) row += 3;
        EXPECT_EQ(out[(b * 2 + t) * 4 + j], Ravel({b, row, j}, {2, 3, 4}));
      }
  auto full = RunOp("GatherND", {data, Make<int64_t>({2, 3}, {1, 2, 3, 0, 0, 0})});
  ASSERT_TRUE(full.status.ok()) << full.status.ToString();
  EXPECT_EQ(full[0].as<int32_t>(), (std::vector<int32_t>{static_cast<int32_t>(Ravel({1, 2, 3}, {2, 3, 4})), 0}));
}

TEST(TensorScatterElements, AddReductionAccumulatesDuplicates) {
  auto data = Make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto idx = Make<int64_t>({2, 2}, {0, 0, 2, -1});
  auto upd = Make<float>({2, 2}, {10, 20, 30, 40});
  auto r = RunOp("ScatterElements", {data, idx, upd}, [](Node& n) {
    n.SetInt("axis", 1);
    n.SetString("reduction", "add");
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  std::vector<float> want{1, 2, 3, 4, 5, 6};
  auto iv = idx.as<int64_t>();
  auto uv = upd.as<float>();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      int64_t k = iv[i * 2 + j] < 0 ? iv[i * 2 + j] + 3 : iv[i * 2 + j];
      want[i * 3 + k] += uv[i * 2 + j];
    }
  EXPECT_EQ(r[0].as<float>(), want);
}

TEST(TensorScatterND, NoneAndMulReductions) {
  auto data = Iota<int64_t>({3, 2}, 1);
  auto idx = Make<int64_t>({2, 1}, {2, -3});
  auto upd = Make<int64_t>({2, 2}, {7, 8, 9, 10});
  auto r = RunOp("ScatterND", {data, idx, upd});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].as<int64_t>(), (std::vector<int64_t>{9, 10, 3, 4, 7, 8}));
  auto m = RunOp("ScatterND", {data, idx, upd}, [](Node& n) { n.SetString("reduction", "mul"); });
  ASSERT_TRUE(m.status.ok()) << m.status.ToString();
  EXPECT_EQ(m[0].as<int64_t>(), (std::vector<int64_t>{1 * 9, 2 * 10, 3, 4, 5 * 7, 6 * 8}));
  auto bad = RunOp("ScatterND", {data, Make<int64_t>({1, 1}, {3}), Make<int64_t>({1, 2}, {0, 0})});
  EXPECT_EQ(bad.status.code(), StatusCode::kOutOfRange);
  EXPECT_NE(bad.status.message().find("node_ScatterND"), std::string::npos);
}

}  // namespace
}  // namespace oc
