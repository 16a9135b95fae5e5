#include "executor/executable.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace oc {
namespace {

Value* F32(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = DataType::kFloat32;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  return v;
}

// x -> Identity -> a -> Identity -> y ; plus a constant output and a duplicate.
std::shared_ptr<Graph> ChainGraph() {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* x = F32(*g, "x", {2, 3});
  Value* a = F32(*g, "a", {2, 3});
  Value* y = F32(*g, "y", {2, 3});
  float cdata[2] = {4.f, 5.f};
  Value* c = g->AddConstant("c", DataType::kFloat32, {2}, TensorData::Copy(cdata, sizeof(cdata)));
  g->inputs = {x};
  g->AddNode("Identity", "id1", {x}, {a});
  g->AddNode("Identity", "id2", {a}, {y});
  g->outputs = {y, c, y, x};
  a->arena_offset = 0;
  g->arena_size = 64;
  return g;
}

TEST(ExecutableTest, RunsChainAndFillsConstantDuplicateAndInputOutputs) {
  auto ex = Executable::Create(ChainGraph());
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  auto ctx = (*ex)->NewContext();
  ASSERT_TRUE(ctx.ok());
  float in[6] = {1, 2, 3, 4, 5, 6};
  float y[6] = {}, c[2] = {}, y2[6] = {}, x2[6] = {};
  const void* ins[] = {in};
  void* outs[] = {y, c, y2, x2};
  ASSERT_TRUE((*ex)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
  EXPECT_EQ(0, std::memcmp(in, y, sizeof(in)));
  EXPECT_EQ(0, std::memcmp(in, y2, sizeof(in)));
  EXPECT_EQ(0, std::memcmp(in, x2, sizeof(in)));
  EXPECT_EQ(c[0], 4.f);
  EXPECT_EQ(c[1], 5.f);
}

TEST(ExecutableTest, RejectsWrongInputCountAndNullPointers) {
  auto ex = Executable::Create(ChainGraph());
  ASSERT_TRUE(ex.ok());
  auto ctx = (*ex)->NewContext();
  float buf[6];
  void* outs[] = {buf, buf, buf, buf};
  Status st = (*ex)->Run(**ctx, {}, outs, ThreadPool::Global());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  const void* ins[] = {nullptr};
  st = (*ex)->Run(**ctx, ins, outs, ThreadPool::Global());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
}

TEST(ExecutableTest, RejectsPlanOutsideArena) {
  auto g = ChainGraph();
  g->FindValue("a")->arena_offset = 60;  // 24 bytes at 60 > 64
  auto ex = Executable::Create(g);
  EXPECT_FALSE(ex.ok());
}

TEST(ExecutableTest, UnknownOpIsNotSupported) {
  auto g = ChainGraph();
  Value* z = F32(*g, "z", {2, 3});
  g->AddNode("NoSuchOp", "bad", {g->FindValue("y")}, {z});
  z->arena_offset = 0;
  auto ex = Executable::Create(g);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ex.status().message().find("NoSuchOp"), std::string::npos);
}

TEST(ExecutableTest, ContextsFromManyThreadsGiveSameResults) {
  auto ex = Executable::Create(ChainGraph());
  ASSERT_TRUE(ex.ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 100; ++r) {
        auto ctx = (*ex)->AcquireContext();
        float in[6], y[6], c[2], y2[6], x2[6];
        for (int i = 0; i < 6; ++i) in[i] = float(t * 1000 + r * 10 + i);
        const void* ins[] = {in};
        void* outs[] = {y, c, y2, x2};
        if (!(*ex)->Run(**ctx, ins, outs, ThreadPool::Global()).ok() || std::memcmp(in, y, sizeof(in)))
          failures++;
        (*ex)->ReleaseContext(std::move(*ctx));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ExecutableTest, ExternalArenaMustBeLargeEnoughAndAligned) {
  auto ex = Executable::Create(ChainGraph());
  ASSERT_TRUE(ex.ok());
  alignas(64) static uint8_t mem[128];
  EXPECT_FALSE((*ex)->NewContextWithArena(mem, 32).ok());
  EXPECT_FALSE((*ex)->NewContextWithArena(mem + 1, 100).ok());
  EXPECT_TRUE((*ex)->NewContextWithArena(mem, 64).ok());
}

}  // namespace
}  // namespace oc
