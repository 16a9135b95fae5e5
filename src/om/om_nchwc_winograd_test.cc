// A blocked (NchwcConv) 3x3 layer that Winograd runs, loaded from a .om whose
// W is stored only in the direct kernel's packed bytes (what an atc run sees
// where Winograd was not chosen for the layer, e.g. OPENCANN_WINOGRAD=0): the
// kernel rebuilds W from those bytes and still runs Winograd, with the result
// of the same model stored with its raw W, and of a plain direct convolution.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "base/scoped_env.h"
#include "om/om_file.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

constexpr int64_t kC = 32;  // input and output channels: wide enough for Winograd on every ISA

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

const std::vector<float>& Weights() {
  static const std::vector<float> w = Random(kC * kC * 9, 1);
  return w;
}
const std::vector<float>& Bias() {
  static const std::vector<float> b = Random(kC, 2);
  return b;
}

// y = Relu(Conv3x3 pad 1(x, W, B)), x [1, kC, hw, hw], compiled as atc does
// with the lone conv blocked (OPENCANN_NCHWC=all).
std::shared_ptr<Graph> Compile(int64_t hw) {
  auto g = std::make_shared<Graph>();
  g->name = "wino";
  g->ir_version = 8;
  g->opset_imports = {{"", 17}};
  Value* x = g->AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {1, kC, hw, hw};
  x->dim_params.assign(4, "");
  g->inputs = {x};
  Value* w = g->AddConstant("w", DataType::kFloat32, {kC, kC, 3, 3},
                            TensorData::Copy(Weights().data(), Weights().size() * sizeof(float)));
  Value* b = g->AddConstant("b", DataType::kFloat32, {kC}, TensorData::Copy(Bias().data(), kC * sizeof(float)));
  Value* c = g->AddValue("c");
  Value* y = g->AddValue("y");
  g->AddNode("Conv", "conv", {x, w, b}, {c})->SetInts("pads", {1, 1, 1, 1});
  g->AddNode("Relu", "relu", {c}, {y});
  g->outputs = {y};
  ScopedEnv nchwc("OPENCANN_NCHWC", "all");
  Status st = RunPipeline(*g, CompileOptions{});
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

size_t ConvIndex(const Graph& g) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i]->op_type == "NchwcConv") return i;
  return g.nodes().size();
}

std::vector<float> Input(int64_t hw) { return Random(static_cast<size_t>(kC * hw * hw), 3); }

Expected<std::vector<float>> RunModel(const Executable& exe, const std::vector<float>& x) {
  OC_ASSIGN_OR_RETURN(auto ctx, exe.NewContext());
  std::vector<float> y(static_cast<size_t>(exe.output(0).NumElements()));
  const void* in[] = {x.data()};
  void* out[] = {y.data()};
  OC_RETURN_IF_ERROR(exe.Run(*ctx, in, out, ThreadPool::Global()));
  return y;
}

// The reference: a direct loop over the taps.
std::vector<float> Reference(const std::vector<float>& x, int64_t hw) {
  std::vector<float> y(static_cast<size_t>(kC * hw * hw));
  for (int64_t o = 0; o < kC; ++o)
    for (int64_t r = 0; r < hw; ++r)
      for (int64_t s = 0; s < hw; ++s) {
        double acc = Bias()[o];
        for (int64_t i = 0; i < kC; ++i)
          for (int64_t kr = 0; kr < 3; ++kr)
            for (int64_t ks = 0; ks < 3; ++ks) {
              const int64_t ir = r + kr - 1, is = s + ks - 1;
              if (ir < 0 || ir >= hw || is < 0 || is >= hw) continue;
              acc += double{Weights()[((o * kC + i) * 3 + kr) * 3 + ks]} * x[(i * hw + ir) * hw + is];
            }
        y[(o * hw + r) * hw + s] = std::max(0.f, static_cast<float>(acc));
      }
  return y;
}

TEST(OmNchwcWinograd, WeightStoredOnlyInDirectPanelsIsRebuiltForWinograd) {
  constexpr int64_t kHw = 14;
  auto big = Compile(kHw);
  const size_t ci = ConvIndex(*big);
  if (ci == big->nodes().size()) GTEST_SKIP() << "no NCHWc layout on this CPU";
  auto exe = Executable::Create(big);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  // Winograd's packed bytes are not W, so the kernel claims no input.
  if (!(*exe)->PrepackedInputs()[ci].empty()) GTEST_SKIP() << "Winograd not chosen for this layer here";

  // The same layer at 4x4 outputs runs the direct kernel (too small for
  // Winograd), whose packing depends on the channels and taps only: its bytes
  // are what an atc without Winograd writes for the 14x14 layer.
  auto small = Compile(4);
  const size_t si = ConvIndex(*small);
  ASSERT_LT(si, small->nodes().size());
  auto small_exe = Executable::Create(small);
  ASSERT_TRUE(small_exe.ok()) << small_exe.status().message();
  ASSERT_EQ((*small_exe)->PrepackedInputs()[si], std::vector<int>{1}) << "the 4x4 layer should run direct";

  std::vector<std::vector<uint8_t>> prepacked = (*exe)->ExportPrepacked();
  prepacked[ci] = (*small_exe)->ExportPrepacked()[si];
  OmWriteOptions opts;
  opts.target = HostTarget();
  opts.producer_version = "test";
  auto raw_bytes = SerializeOm(*big, prepacked, opts);
  opts.prepacked_inputs.assign(big->nodes().size(), {});
  opts.prepacked_inputs[ci] = {1};
  auto packed_bytes = SerializeOm(*big, prepacked, opts);
  ASSERT_TRUE(raw_bytes.ok()) << raw_bytes.status().message();
  ASSERT_TRUE(packed_bytes.ok()) << packed_bytes.status().message();

  auto raw = LoadOmMemory(raw_bytes->data(), raw_bytes->size());
  auto packed = LoadOmMemory(packed_bytes->data(), packed_bytes->size());
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  ASSERT_EQ(packed->packed_only_values, 1u);
  const Value* w = packed->graph->nodes()[ci]->input(1);
  ASSERT_TRUE(w && w->constant);
  EXPECT_EQ(w->constant->data(), nullptr) << "W should be stored only in the panels";

  auto raw_exe = Executable::Create(raw->graph, raw->prepacked);
  auto packed_exe = Executable::Create(packed->graph, packed->prepacked);
  ASSERT_TRUE(raw_exe.ok()) << raw_exe.status().message();
  ASSERT_TRUE(packed_exe.ok()) << packed_exe.status().message();
  // Both loaded layers run Winograd (no claim), not the direct panels.
  EXPECT_TRUE((*raw_exe)->PrepackedInputs()[ci].empty());
  EXPECT_TRUE((*packed_exe)->PrepackedInputs()[ci].empty());

  const std::vector<float> x = Input(kHw);
  auto y_raw = RunModel(**raw_exe, x);
  auto y_packed = RunModel(**packed_exe, x);
  ASSERT_TRUE(y_raw.ok()) << y_raw.status().message();
  ASSERT_TRUE(y_packed.ok()) << y_packed.status().message();
  ASSERT_EQ(y_raw->size(), y_packed->size());
  // Rebuilding W from the panels is exact: the same transformed weights.
  EXPECT_EQ(std::memcmp(y_raw->data(), y_packed->data(), y_raw->size() * sizeof(float)), 0);
  const std::vector<float> ref = Reference(x, kHw);
  ASSERT_EQ(ref.size(), y_packed->size());
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR((*y_packed)[i], ref[i], 1e-3f) << i;
}

}  // namespace
}  // namespace oc
