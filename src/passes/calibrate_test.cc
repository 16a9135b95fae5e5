// int8 post-training quantization: which ops get QDQ form, that fuse-qdq then
// makes integer ops of them, and that the quantized graph computes what a
// plain float32 evaluation (written out here) computes, within quantization
// error. Sample splitting rules. (Whole models through atc vs onnxruntime:
// tests/python/test_int8.py.)
#include "passes/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "passes/pass_test_util.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

using testing::Const;
using testing::Pattern;
using testing::Tensor;

constexpr int64_t kB = 2, kK = 4, kH = 3, kN = 2;
const std::vector<float> kW1 = Pattern(kK * kH, -1.f, 1.f, 3);
const std::vector<float> kW2 = Pattern(kH * kN, -1.f, 1.f, 4);

// x[2,4] -> MatMul(W1) -> Relu -> MatMul(W2) -> Sigmoid -> y; with
// `output_m2` the second MatMul's output is a graph output too.
std::unique_ptr<Graph> Mlp(bool output_m2 = false) {
  auto g = std::make_unique<Graph>();
  g->opset_imports[""] = 13;
  Value* x = Tensor(*g, "x", {kB, kK});
  g->inputs = {x};
  Value* m1 = Tensor(*g, "m1", {kB, kH});
  g->AddNode("MatMul", "mm1", {x, Const<float>(*g, "w1", {kK, kH}, kW1)}, {m1});
  Value* r = Tensor(*g, "r", {kB, kH});
  g->AddNode("Relu", "relu", {m1}, {r});
  Value* m2 = Tensor(*g, "m2", {kB, kN});
  g->AddNode("MatMul", "mm2", {r, Const<float>(*g, "w2", {kH, kN}, kW2)}, {m2});
  Value* y = Tensor(*g, "y", {kB, kN});
  g->AddNode("Sigmoid", "sig", {m2}, {y});
  g->outputs = {y};
  if (output_m2) g->outputs.push_back(m2);
  for (auto& n : g->nodes()) n->opset = 13;
  return g;
}

std::vector<float> Reference(const std::vector<float>& x) {
  std::vector<float> y(kB * kN);
  for (int64_t b = 0; b < kB; ++b) {
    std::vector<float> h(kH, 0.f);
    for (int64_t j = 0; j < kH; ++j) {
      for (int64_t k = 0; k < kK; ++k) h[j] += x[b * kK + k] * kW1[k * kH + j];
      h[j] = std::max(h[j], 0.f);
    }
    for (int64_t n = 0; n < kN; ++n) {
      float s = 0.f;
      for (int64_t j = 0; j < kH; ++j) s += h[j] * kW2[j * kN + n];
      y[b * kN + n] = 1.f / (1.f + std::exp(-s));
    }
  }
  return y;
}

quant::CalibrationSet Samples(int n) {
  quant::CalibrationSet s;
  for (int i = 0; i < n; ++i) s.push_back({Pattern(kB * kK, -2.f, 2.f, 10 + i)});
  return s;
}

int Count(const Graph& g, const char* op) {
  int c = 0;
  for (auto& n : g.nodes()) c += n->op_type == op;
  return c;
}

// The scale constant of the QuantizeLinear that reads `value`.
float ActivationScale(const Graph& g, const std::string& value) {
  for (auto& n : g.nodes())
    if (n->op_type == "QuantizeLinear" && n->input(0)->name == value) return n->input(1)->constant->as<float>()[0];
  return -1.f;
}

quant::GraphFactory Factory(bool output_m2 = false) {
  return [output_m2]() -> Expected<std::unique_ptr<Graph>> { return Mlp(output_m2); };
}

TEST(Int8Calibrate, MlpBecomesQLinearMatMulsAndStaysClose) {
  auto g = Mlp();
  quant::Int8Report report;
  auto samples = Samples(6);
  ASSERT_TRUE(quant::QuantizeInt8(*g, Factory(), samples, {}, &report).ok());
  EXPECT_EQ(report.quantized_ops, 2);
  EXPECT_EQ(report.skipped_ops, 0);
  EXPECT_EQ(report.quantized_tensors, 4);  // x, m1, r, m2
  ASSERT_EQ(report.reference_outputs.size(), 6u);
  // The float32 calibration run is the plain model.
  const auto ref0 = Reference(samples[0][0]);
  for (size_t i = 0; i < ref0.size(); ++i) EXPECT_NEAR(report.reference_outputs[0][0][i], ref0[i], 1e-5f);
  // Activation scales cover the observed range (x spans about [-2, 2]).
  EXPECT_NEAR(ActivationScale(*g, "x"), 4.f / 255.f, 0.2f / 255.f);

  std::shared_ptr<Graph> compiled(std::move(g));
  ASSERT_TRUE(RunPipeline(*compiled, {}).ok());
  EXPECT_EQ(Count(*compiled, "QLinearMatMul"), 2);
  EXPECT_EQ(Count(*compiled, "MatMul"), 0);
  auto exe = Executable::Create(compiled);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());
  ThreadPool pool(1);
  for (const auto& s : samples) {
    std::vector<float> y(kB * kN);
    const void* in[] = {s[0].data()};
    void* out[] = {y.data()};
    ASSERT_TRUE((*exe)->Run(**ctx, in, out, pool).ok());
    const auto ref = Reference(s[0]);
    // A few uint8 steps of the pre-sigmoid range (sigmoid's slope is <= 1/4).
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 0.03f) << i;
  }
}

TEST(Int8Calibrate, OpWhoseOutputIsAGraphOutputStaysFloat) {
  auto g = Mlp(/*output_m2=*/true);
  quant::Int8Report report;
  ASSERT_TRUE(quant::QuantizeInt8(*g, Factory(true), Samples(2), {}, &report).ok());
  EXPECT_EQ(report.quantized_ops, 1);
  EXPECT_EQ(report.skipped_ops, 1);
  std::shared_ptr<Graph> compiled(std::move(g));
  ASSERT_TRUE(RunPipeline(*compiled, {}).ok());
  EXPECT_EQ(Count(*compiled, "QLinearMatMul"), 1);
  EXPECT_EQ(Count(*compiled, "MatMul"), 1);
}

TEST(Int8Calibrate, PercentileIgnoresARareOutlier) {
  auto samples = Samples(8);
  samples[3][0][5] = 100.f;  // one value far outside the rest
  auto minmax = Mlp();
  auto pct = Mlp();
  quant::Int8Report r1, r2;
  ASSERT_TRUE(quant::QuantizeInt8(*minmax, Factory(), samples, {}, &r1).ok());
  quant::Int8Options opts;
  opts.method = quant::CalibrationMethod::kPercentile;
  opts.percentile = 95.0;  // 64 values: 3.2 clipped at each end, the outlier among them
  ASSERT_TRUE(quant::QuantizeInt8(*pct, Factory(), samples, opts, &r2).ok());
  EXPECT_GT(ActivationScale(*minmax, "x"), 100.f / 255.f);
  EXPECT_LT(ActivationScale(*pct, "x"), 10.f / 255.f);
}

TEST(Int8Calibrate, RejectsNoSamplesAndDynamicInputs) {
  auto g = Mlp();
  quant::Int8Report report;
  EXPECT_FALSE(quant::QuantizeInt8(*g, Factory(), {}, {}, &report).ok());
  auto d = Mlp();
  d->inputs[0]->shape[0] = -1;
  Status st = quant::QuantizeInt8(*d, Factory(), Samples(1), {}, &report);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("static input shapes"), std::string::npos) << st.message();
  // Samples of the wrong size are refused before anything runs on them.
  quant::CalibrationSet short_sample = Samples(2);
  short_sample[1][0].pop_back();
  st = quant::QuantizeInt8(*Mlp(), Factory(), short_sample, {}, &report);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("sample 1"), std::string::npos) << st.message();
  quant::CalibrationSet no_inputs = Samples(1);
  no_inputs[0].clear();
  EXPECT_FALSE(quant::QuantizeInt8(*Mlp(), Factory(), no_inputs, {}, &report).ok());
}

TEST(Int8Calibrate, SplitSamplesShapes) {
  auto g = Mlp();
  auto arr = [](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return std::make_pair(shape, std::vector<float>(static_cast<size_t>(n), 1.f));
  };
  auto count = [&](std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> a) -> int {
    auto s = quant::SplitSamples(*g, {a});
    return s.ok() ? static_cast<int>(s->size()) : -1;
  };
  EXPECT_EQ(count({arr({kB, kK})}), 1);             // the input's shape
  EXPECT_EQ(count({arr({3, kB, kK})}), 3);          // a leading sample dim
  EXPECT_EQ(count({arr({3 * kB, kK})}), 3);         // a multiple of the batch dim
  EXPECT_EQ(count({arr({kB, kK}), arr({2, kB, kK})}), 3);  // files add up
  EXPECT_EQ(count({arr({kB + 1, kK})}), -1);
  EXPECT_EQ(count({arr({kB, kK + 1})}), -1);
  EXPECT_FALSE(quant::SplitSamples(*g, {}).ok());  // no data for x
}

}  // namespace
}  // namespace oc
