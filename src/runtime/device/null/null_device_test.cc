// The device seam, shown with the test-only null device: a real model (the
// bundled digits MLP) runs with the nodes the null device claims placed on it
// and the rest on the CPU, with the same results bit for bit; the device
// interface's memory, copy, stream and synchronisation contracts hold for the
// CPU device and the null device alike.
#include "runtime/device/null/null_device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "executor/executable.h"
#include "parser/onnx/onnx_parser.h"
#include "passes/pipeline.h"
#include "runtime/device/cpu/cpu_device.h"

namespace oc::rt {
namespace {

class NullDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(NullDevice::RegisterKernels().ok()); }
  void TearDown() override { NullDevice::UnregisterKernels(); }
};

// The digits MLP at batch 4, compiled as atc would (fusion off, so that its
// Relu nodes stay nodes the null device can claim).
std::shared_ptr<const Graph> DigitsModel() {
  OnnxParseOptions opts;
  opts.input_shapes["image"] = {4, 1, 8, 8};
  auto g = ParseOnnxFile(std::string(OC_SOURCE_DIR) + "/models/digits/digits_mlp.onnx", opts);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return nullptr;
  CompileOptions co;
  co.fuse = false;
  Status st = RunPipeline(**g, co);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::shared_ptr<const Graph>(std::move(*g));
}

std::vector<float> RunModel(const Executable& ex, const std::vector<float>& image) {
  auto ctx = ex.NewContext();
  EXPECT_TRUE(ctx.ok());
  std::vector<float> probs(ex.output(0).NumElements());
  const void* ins[] = {image.data()};
  void* outs[] = {probs.data()};
  Status st = ex.Run(**ctx, ins, outs, ThreadPool::Global());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return probs;
}

TEST_F(NullDeviceTest, ModelRunsSplitAcrossNullAndCpuWithIdenticalResults) {
  auto graph = DigitsModel();
  ASSERT_TRUE(graph);
  std::vector<float> image(4 * 64);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>((i * 7) % 17);

  auto cpu_only = Executable::Create(graph);
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status().ToString();
  NullDevice null_device;
  Device* devices[] = {&null_device};
  auto split = Executable::Create(graph, {}, devices);
  ASSERT_TRUE(split.ok()) << split.status().ToString();

  // Placement: the claimed same-shape float ops on "null", the rest on "cpu".
  const std::set<std::string> claimed = {"Relu", "Add", "Sub", "Mul", "Div"};
  int on_null = 0, on_cpu = 0;
  for (size_t i = 0; i < graph->nodes().size(); ++i) {
    const Node& n = *graph->nodes()[i];
    EXPECT_EQ((*cpu_only)->node_device(i), "cpu") << n.Describe();
    bool same_shape = true;
    for (const Value* in : n.inputs) same_shape = same_shape && in && in->shape == n.outputs[0]->shape;
    const bool want_null = claimed.count(n.op_type) && same_shape;
    EXPECT_EQ((*split)->node_device(i), want_null ? "null" : "cpu") << n.Describe();
    (want_null ? on_null : on_cpu)++;
  }
  EXPECT_GE(on_null, 2) << "the model should give the null device its Relu nodes";
  EXPECT_GE(on_cpu, 3) << "Gemm and Softmax have no null kernel and must fall back to the CPU";

  std::vector<float> want = RunModel(**cpu_only, image);
  std::vector<float> got = RunModel(**split, image);
  EXPECT_EQ(null_device.launches(), on_null);
  ASSERT_EQ(want.size(), got.size());
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)));
  // The probabilities are a real answer, not zeros: each row sums to 1.
  for (int r = 0; r < 4; ++r) {
    float sum = 0;
    for (int c = 0; c < 10; ++c) sum += got[r * 10 + c];
    EXPECT_NEAR(sum, 1.f, 1e-5f);
  }
}

TEST_F(NullDeviceTest, WithoutItsKernelsEveryNodeFallsBackToTheCpu) {
  NullDevice::UnregisterKernels();
  auto graph = DigitsModel();
  ASSERT_TRUE(graph);
  NullDevice null_device;
  Device* devices[] = {&null_device};
  auto ex = Executable::Create(graph, {}, devices);
  ASSERT_TRUE(ex.ok());
  for (size_t i = 0; i < graph->nodes().size(); ++i) EXPECT_EQ((*ex)->node_device(i), "cpu");
}

TEST_F(NullDeviceTest, ADeviceTheHostCannotReadIsRefusedNamingTheNode) {
  auto graph = DigitsModel();
  ASSERT_TRUE(graph);
  NullDevice remote(/*host_accessible=*/false);
  Device* devices[] = {&remote};
  auto ex = Executable::Create(graph, {}, devices);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ex.status().message().find("device 'null'"), std::string::npos) << ex.status().ToString();
  EXPECT_NE(ex.status().message().find("not supported"), std::string::npos);
}

TEST(DeviceRegistry, KernelForAnUnknownOpIsRefused) {
  Status st = OpRegistry::Global().RegisterKernel(kNullDevice, "", "NoSuchOp", nullptr);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("NoSuchOp"), std::string::npos);
}

TEST(KernelTableTest, OneEntryPerDeviceAndRemoval) {
  KernelTable t = CpuKernel(reinterpret_cast<KernelFactory>(1));
  EXPECT_TRUE(t.Set("null", reinterpret_cast<KernelFactory>(2)));
  EXPECT_TRUE(t.Set("null", reinterpret_cast<KernelFactory>(3)));  // replaces
  EXPECT_EQ(t.Devices(), (std::vector<std::string_view>{"cpu", "null"}));
  EXPECT_EQ(t.Find("null"), reinterpret_cast<KernelFactory>(3));
  EXPECT_TRUE(t.Set("null", nullptr));
  EXPECT_EQ(t.Find("null"), nullptr);
  EXPECT_EQ(t.Find("cpu"), reinterpret_cast<KernelFactory>(1));
  for (const char* d : {"a", "b", "c"}) EXPECT_TRUE(t.Set(d, reinterpret_cast<KernelFactory>(4)));
  EXPECT_FALSE(t.Set("d", reinterpret_cast<KernelFactory>(5))) << "a full table must say so";
}

// The interface contracts, for both devices.
void CheckDeviceContract(Device& d) {
  SCOPED_TRACE(std::string(d.type()));
  EXPECT_FALSE(d.Allocate(0).ok());
  auto a = d.Allocate(1000), b = d.Allocate(1000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % 64, 0u);
  std::vector<uint8_t> host(1000), back(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 31);
  ASSERT_TRUE(d.Copy(*a, host.data(), 1000, CopyKind::kHostToDevice).ok());
  ASSERT_TRUE(d.Copy(*b, *a, 1000, CopyKind::kDeviceToDevice).ok());
  ASSERT_TRUE(d.Copy(back.data(), *b, 1000, CopyKind::kDeviceToHost).ok());
  EXPECT_EQ(host, back);
  // A range past the block's end, and host memory passed as device memory.
  EXPECT_FALSE(d.Copy(*a, host.data(), 1001, CopyKind::kHostToDevice).ok());
  EXPECT_FALSE(d.Copy(back.data(), host.data(), 10, CopyKind::kDeviceToHost).ok());
  EXPECT_TRUE(d.Free(*a).ok());
  EXPECT_FALSE(d.Free(*a).ok()) << "a double free must be an error";
  EXPECT_TRUE(d.Free(*b).ok());

  // Streams run in order; Synchronize waits for all and reports the first error once.
  auto s1 = d.CreateStream(), s2 = d.CreateStream();
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i) s1->Enqueue([&] { done++; return Status::Ok(); }, "count");
  s2->Enqueue([] { return Internal("boom"); }, "failing task");
  Status st = d.Synchronize();
  EXPECT_EQ(done.load(), 50);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("boom"), std::string::npos);
  EXPECT_TRUE(d.Synchronize().ok()) << "the error is reported once";
}

TEST(DeviceContract, CpuDevice) { CheckDeviceContract(CpuDevice::Get()); }
TEST(DeviceContract, NullDevice) {
  NullDevice d;
  CheckDeviceContract(d);
  EXPECT_EQ(d.live_bytes(), 0u);
}

}  // namespace
}  // namespace oc::rt
