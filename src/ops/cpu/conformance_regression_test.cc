// Reproducers for kernel bugs found by the ONNX node conformance suite
// (tests/conformance), each named after the node test that exposed it. The
// references are computed here from the ONNX definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "executor/executable.h"
#include "ops/cpu/common/tensor_test_util.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

// test_spacetodepth_crd_mode_example: opset 28 added mode=CRD to SpaceToDepth;
// it was ignored (DCR order used).
TEST(ConformanceRegression, SpaceToDepthCrdMode) {
  const int64_t C = 2, H = 4, W = 6, bs = 2;
  tt::T x = tt::Iota<float>({1, C, H, W});
  tt::Result r = tt::RunOp("SpaceToDepth", {x}, [](Node& n) {
    n.SetInt("blocksize", 2);
    n.SetString("mode", "CRD");
  }, 28);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{1, C * bs * bs, H / bs, W / bs}));
  std::vector<float> got = r[0].as<float>(), in = x.as<float>();
  // CRD: depth channel c*bs*bs + i*bs + j holds space[c, y*bs + i, x*bs + j].
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < bs; ++i)
      for (int64_t j = 0; j < bs; ++j)
        for (int64_t y = 0; y < H / bs; ++y)
          for (int64_t xx = 0; xx < W / bs; ++xx) {
            int64_t ch = c * bs * bs + i * bs + j;
            float want = in[(c * H + y * bs + i) * W + xx * bs + j];
            ASSERT_EQ(got[(ch * (H / bs) + y) * (W / bs) + xx], want) << "ch " << ch << " y " << y << " x " << xx;
          }
}

// test_convtranspose_output_shape: an output_shape past the transposed extent
// (negative total padding) must grow the end, as output_padding does; the
// begin was padded by -1, shifting every value by one row/column.
TEST(ConformanceRegression, ConvTransposeOutputShapeLargerThanExtent) {
  const int64_t IH = 3, IW = 3, M = 2, K = 3, SH = 3, SW = 2, OH = 10, OW = 8;
  tt::T x = tt::Iota<float>({1, 1, IH, IW});
  tt::T w = tt::Make<float>({1, M, K, K}, std::vector<float>(M * K * K, 1.f));
  tt::Result r = tt::RunOp("ConvTranspose", {x, w}, [&](Node& n) {
    n.SetInts("strides", {SH, SW});
    n.SetInts("output_shape", {OH, OW});
  }, 22);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r[0].shape, (std::vector<int64_t>{1, M, OH, OW}));
  // Full extents are 9 x 7; with no begin padding output (oy, ox) gathers
  // x[iy, ix] * w[ky, kx] for oy = iy*SH + ky, ox = ix*SW + kx.
  std::vector<float> want(M * OH * OW, 0.f), in = x.as<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t iy = 0; iy < IH; ++iy)
      for (int64_t ix = 0; ix < IW; ++ix)
        for (int64_t ky = 0; ky < K; ++ky)
          for (int64_t kx = 0; kx < K; ++kx)
            want[(m * OH + iy * SH + ky) * OW + ix * SW + kx] += in[iy * IW + ix];
  EXPECT_EQ(r[0].as<float>(), want);
}

// test_training_dropout*: training_mode fed at run time was ignored and the
// input copied through, which is not what training-mode Dropout computes.
// Now a run with training_mode=true and ratio > 0 drops elements (each output
// is 0 or x / (1 - ratio)); ratio 0 (a copy by definition) and
// training_mode=false still copy.
TEST(ConformanceRegression, DropoutRuntimeTrainingMode) {
  auto graph = std::make_shared<Graph>();
  graph->opset_imports[""] = 22;
  Value* x = graph->AddValue("x");
  Value* ratio = graph->AddValue("ratio");
  Value* training = graph->AddValue("training");
  Value* y = graph->AddValue("y");
  x->dtype = DataType::kFloat32, x->has_shape = true, x->shape = {4}, x->dim_params = {""};
  ratio->dtype = DataType::kFloat32, ratio->has_shape = true;
  training->dtype = DataType::kBool, training->has_shape = true;
  graph->inputs = {x, ratio, training};
  graph->outputs = {y};
  graph->AddNode("Dropout", "drop", {x, ratio, training}, {y});
  CompileOptions opts;
  opts.fold_constants = false;
  ASSERT_TRUE(RunPipeline(*graph, opts).ok());
  auto exe = Executable::Create(graph);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());

  const float xs[4] = {1, -2, 3, -4};
  auto run = [&](float r, bool t, float* out) {
    const void* ins[3] = {xs, &r, &t};
    void* outs[1] = {out};
    return (*exe)->Run(**ctx, ins, outs, ThreadPool::Global());
  };
  float out[4] = {};
  EXPECT_TRUE(run(0.5f, false, out).ok());
  EXPECT_EQ(std::vector<float>(out, out + 4), std::vector<float>(xs, xs + 4));
  EXPECT_TRUE(run(0.f, true, out).ok());
  EXPECT_EQ(std::vector<float>(out, out + 4), std::vector<float>(xs, xs + 4));
  ASSERT_TRUE(run(0.5f, true, out).ok());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(out[i] == 0.f || out[i] == 2 * xs[i]) << i << ": " << out[i];
}

// test_mod_*_fmod_0*: opset 28 defines fmod=0 (floor modulo, the divisor's
// sign) for floating point; the kernel rejected it.
TEST(ConformanceRegression, ModFloorForFloatsAtOpset28) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> a = {-4.5f, 4.5f, -4.5f, 4.5f, 0.f, -0.f, 3.f, -3.f, inf, 1.f};
  std::vector<float> b = {2.f, -2.f, -2.f, 2.f, -2.f, 2.f, inf, inf, 2.f, 0.f};
  const int64_t n = static_cast<int64_t>(a.size());
  tt::Result r = tt::RunOp("Mod", {tt::Make<float>({n}, a), tt::Make<float>({n}, b)}, nullptr, 28);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  std::vector<float> got = r[0].as<float>();
  // A - floor(A / B) * B, with the spec's zero-sign and infinity cases.
  const std::vector<float> want = {1.5f, -1.5f, -0.5f, 0.5f, -0.f, 0.f, 3.f, inf};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << i;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << i;
  }
  EXPECT_TRUE(std::isnan(got[8]));  // x infinite
  EXPECT_TRUE(std::isnan(got[9]));  // y zero
  // Before opset 28 fmod=0 stays invalid for floats.
  EXPECT_FALSE(tt::RunOp("Mod", {tt::Make<float>({n}, a), tt::Make<float>({n}, b)}, nullptr, 13).status.ok());
}

}  // namespace
}  // namespace oc
