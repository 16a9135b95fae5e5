// .om format version 3: subgraphs (nested Model buffers in Graph attributes),
// captures and sequence/optional value kinds survive the round trip; a static
// outer graph with an If runs in the Executable; damaged nested graphs fail
// cleanly.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/executable.h"
#include "om/om_file.h"
#include "om/om_format.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

Value* TypedValue(Graph& g, const std::string& name, DataType dt, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = dt;
  v->has_shape = true;
  v->shape = shape;
  v->dim_params.assign(shape.size(), "");
  return v;
}

// y = If(cond) then x + c else x * 2, with x [2] read by both branches.
std::unique_ptr<Graph> IfGraph() {
  auto g = std::make_unique<Graph>();
  g->name = "if_model";
  g->opset_imports[""] = 17;
  Value* cond = TypedValue(*g, "cond", DataType::kBool, {});
  Value* x = TypedValue(*g, "x", DataType::kFloat32, {2});
  g->inputs = {cond, x};
  auto branch = [&](const std::string& name, const std::string& op, std::vector<float> k) {
    auto b = std::make_shared<Graph>();
    b->name = name;
    b->opset_imports = g->opset_imports;
    Value* cap = TypedValue(*b, "x", DataType::kFloat32, {2});
    b->captures = {cap};
    Value* c = b->AddConstant(name + "_k", DataType::kFloat32, {2}, TensorData::Copy(k.data(), 8));
    Value* out = TypedValue(*b, name + "_out", DataType::kFloat32, {2});
    Node* n = b->AddNode(op, name + "_op", {cap, c}, {out});
    n->opset = 17;
    b->outputs = {out};
    return b;
  };
  Value* y = g->AddValue("y");
  // Implicit inputs: else_branch's captures, then then_branch's (attribute-name order).
  Node* n = g->AddNode("If", "if0", {cond, x, x}, {y});
  n->opset = 17;
  Attribute t, e;
  t.kind = e.kind = Attribute::Kind::kGraph;
  t.graph = branch("then", "Add", {1.f, 2.f});
  e.graph = branch("else", "Mul", {2.f, 2.f});
  n->attrs["then_branch"] = t;
  n->attrs["else_branch"] = e;
  g->outputs = {y};
  return g;
}

std::vector<uint8_t> Write(const Graph& g) {
  OmWriteOptions o;
  o.target = HostTarget();
  o.producer_version = "test";
  auto bytes = SerializeOm(g, {}, o);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

TEST(OmSubgraphTest, StaticIfRoundTripsAndRunsInTheExecutable) {
  auto g = IfGraph();
  ASSERT_TRUE(g->Verify().ok()) << g->Verify().ToString();
  CompileOptions copts;
  ASSERT_TRUE(RunPipeline(*g, copts).ok()) << RunPipeline(*g, copts).ToString();
  std::vector<uint8_t> file = Write(*g);
  ASSERT_FALSE(file.empty());
  auto om = LoadOmMemory(file.data(), file.size());
  ASSERT_TRUE(om.ok()) << om.status().ToString();
  EXPECT_EQ(om->format_version, kOmFormatVersionSubgraphs);
  EXPECT_FALSE(om->dynamic);
  EXPECT_EQ(om->graph->Dump(), g->Dump());
  const Node& n = *om->graph->nodes()[0];
  ASSERT_EQ(n.Subgraphs().size(), 2u);
  EXPECT_EQ(n.Subgraphs()[0]->captures.size(), 1u);

  auto exe = Executable::Create(om->graph, om->prepacked);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());
  const float x[2] = {3.f, -4.f};
  for (uint8_t cond : {1, 0}) {
    float y[2] = {0, 0};
    const void* ins[2] = {&cond, x};
    void* outs[1] = {y};
    ASSERT_TRUE((*exe)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
    EXPECT_EQ(y[0], cond ? x[0] + 1.f : x[0] * 2.f);
    EXPECT_EQ(y[1], cond ? x[1] + 2.f : x[1] * 2.f);
  }
}

TEST(OmSubgraphTest, SequenceKindsAndUnknownShapesRoundTrip) {
  Graph g;
  g.name = "seq";
  g.opset_imports[""] = 17;
  Value* s = g.AddValue("s");
  s->kind = ValueKind::kSequence;
  s->dtype = DataType::kFloat32;
  g.inputs = {s};
  Value* len = TypedValue(g, "len", DataType::kInt64, {});
  Node* n = g.AddNode("SequenceLength", "n", {s}, {len});
  n->opset = 17;
  g.outputs = {len};
  g.arena_size = 0;
  std::vector<uint8_t> file = Write(g);
  ASSERT_FALSE(file.empty());
  auto om = LoadOmMemory(file.data(), file.size());
  ASSERT_TRUE(om.ok()) << om.status().ToString();
  EXPECT_EQ(om->format_version, kOmFormatVersionSubgraphs);
  EXPECT_EQ(om->graph->inputs[0]->kind, ValueKind::kSequence);
  EXPECT_EQ(om->graph->Dump(), g.Dump());
}

// Every byte of the file changed (checksums resealed) must give a clean
// result: loaded, or an error; never a crash or a hang.
TEST(OmSubgraphTest, DamagedNestedGraphsFailCleanly) {
  auto g = IfGraph();
  CompileOptions copts;
  ASSERT_TRUE(RunPipeline(*g, copts).ok());
  std::vector<uint8_t> file = Write(*g);
  ASSERT_FALSE(file.empty());
  size_t failures = 0;
  for (size_t pos = om_internal::kOmHeaderSize; pos < file.size(); ++pos) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = file;
      bad[pos] ^= x;
      om_internal::Reseal(bad);
      auto om = LoadOmMemory(bad.data(), bad.size());
      if (!om.ok()) {
        ++failures;
        EXPECT_NE(om.status().code(), StatusCode::kInternal) << pos << ": " << om.status().message();
      }
    }
  }
  EXPECT_GT(failures, 0u);
}

TEST(OmSubgraphTest, OlderVersionFilesMayNotCarrySubgraphs) {
  auto g = IfGraph();
  CompileOptions copts;
  ASSERT_TRUE(RunPipeline(*g, copts).ok());
  std::vector<uint8_t> file = Write(*g);
  ASSERT_FALSE(file.empty());
  om_internal::StoreLE32(file.data() + om_internal::kOffVersion, kOmFormatVersion);
  om_internal::Reseal(file);
  auto om = LoadOmMemory(file.data(), file.size());
  ASSERT_FALSE(om.ok());
  EXPECT_NE(om.status().message().find("format version 3"), std::string::npos) << om.status().message();
}

}  // namespace
}  // namespace oc
