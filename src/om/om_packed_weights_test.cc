// Weights stored only as prepacked panels (header flag 0x1, Value.packed_in_node):
// a model written that way runs bit-identically to the same model written with
// its raw weights, also when the panels were packed for another micro-kernel
// (rebuilt at load), and a blob that does not hold the weights is an error.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "om/om_file.h"
#include "om/om_format.h"
#include "om_schema_generated.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

TensorData RandomData(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return TensorData::Copy(v.data(), n * sizeof(float));
}

Value* Input(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = DataType::kFloat32;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  g.inputs.push_back(v);
  return v;
}

Value* Weight(Graph& g, const std::string& name, std::vector<int64_t> shape, uint32_t seed) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return g.AddConstant(name, DataType::kFloat32, shape, RandomData(n, seed));
}

// Conv (3x3 pad 1; grouped stride 2; 1x1) -> Flatten -> Gemm (transB) ->
// MatMul -> Gemm, a batched MatMul with a constant 3-D B, a weight read by two
// MatMuls (stored packed only), one read by a MatMul and an Add (kept raw), a
// grouped strided ConvTranspose.
std::shared_ptr<Graph> MakeModel() {
  auto g = std::make_shared<Graph>();
  g->name = "packed_weights";
  g->ir_version = 8;
  g->opset_imports = {{"", 17}};
  Value* x = Input(*g, "x", {2, 8, 10, 10});
  Value* x2 = Input(*g, "x2", {3, 4, 10});
  Value* x3 = Input(*g, "x3", {12, 12});
  Value* x5 = Input(*g, "x5", {1, 6, 5, 5});
  auto act = [&](const std::string& n) { return g->AddValue(n); };
  Value* c1 = act("c1"), *c2 = act("c2"), *c3 = act("c3"), *f = act("f"), *g1 = act("g1"), *m1 = act("m1");
  Value* y = act("y"), *y2 = act("y2"), *s1 = act("s1"), *s2 = act("s2"), *y3 = act("y3"), *t1 = act("t1"),
         *y4 = act("y4"), *y5 = act("y5");
  Node* conv1 = g->AddNode("Conv", "conv1", {x, Weight(*g, "w1", {16, 8, 3, 3}, 1), Weight(*g, "b1", {16}, 2)}, {c1});
  conv1->SetInts("pads", {1, 1, 1, 1});
  Node* conv2 = g->AddNode("Conv", "conv2", {c1, Weight(*g, "w2", {16, 8, 3, 3}, 3)}, {c2});
  conv2->SetInt("group", 2);
  conv2->SetInts("strides", {2, 2});
  g->AddNode("Conv", "conv3", {c2, Weight(*g, "w3", {24, 16, 1, 1}, 4)}, {c3});
  g->AddNode("Flatten", "flatten", {c3}, {f});
  Node* gemm1 = g->AddNode("Gemm", "gemm1", {f, Weight(*g, "wg", {40, 384}, 5), Weight(*g, "cg", {40}, 6)}, {g1});
  gemm1->SetInt("transB", 1);
  g->AddNode("MatMul", "matmul1", {g1, Weight(*g, "wm", {40, 24}, 7)}, {m1});
  g->AddNode("Gemm", "gemm2", {m1, Weight(*g, "wg2", {24, 10}, 8)}, {y});
  g->AddNode("MatMul", "matmul_batched", {x2, Weight(*g, "wb", {3, 10, 7}, 9)}, {y2});
  Value* shared = Weight(*g, "shared", {12, 12}, 10);
  g->AddNode("MatMul", "shared_a", {x3, shared}, {s1});
  g->AddNode("MatMul", "shared_b", {s1, shared}, {s2});
  g->AddNode("Relu", "relu", {s2}, {y3});
  Value* mixed = Weight(*g, "mixed", {12, 12}, 11);
  g->AddNode("MatMul", "mixed_mm", {x3, mixed}, {t1});
  g->AddNode("Add", "mixed_add", {t1, mixed}, {y4});
  Node* deconv = g->AddNode("ConvTranspose", "deconv", {x5, Weight(*g, "wt", {6, 2, 3, 3}, 12)}, {y5});
  deconv->SetInt("group", 2);
  deconv->SetInts("strides", {2, 2});
  g->outputs = {y, y2, y3, y4, y5};
  return g;
}

struct Compiled {
  std::shared_ptr<Graph> graph;
  std::vector<std::vector<uint8_t>> prepacked;
  std::vector<std::vector<int>> claims;
};

Compiled Compile() {
  Compiled c;
  c.graph = MakeModel();
  CompileOptions o;
  Status st = RunPipeline(*c.graph, o);
  EXPECT_TRUE(st.ok()) << st.message();
  auto exe = Executable::Create(c.graph);
  EXPECT_TRUE(exe.ok()) << exe.status().message();
  c.prepacked = (*exe)->ExportPrepacked();
  c.claims = (*exe)->PrepackedInputs();
  return c;
}

OmWriteOptions Options(const Compiled* c) {
  OmWriteOptions o;
  o.target = HostTarget();
  o.producer_version = "test";
  if (c) o.prepacked_inputs = c->claims;
  return o;
}

std::vector<std::vector<float>> Inputs(const Graph& g) {
  std::vector<std::vector<float>> ins;
  uint32_t seed = 100;
  for (const Value* v : g.inputs) {
    TensorData t = RandomData(static_cast<size_t>(v->NumElements()), seed++);
    ins.emplace_back(t.as<float>(), t.as<float>() + v->NumElements());
  }
  return ins;
}

// Loads `bytes` and runs the model on fixed inputs.
Expected<std::vector<std::vector<float>>> LoadAndRun(const std::vector<uint8_t>& bytes) {
  OC_ASSIGN_OR_RETURN(OmModel m, LoadOmMemory(bytes.data(), bytes.size()));
  OC_ASSIGN_OR_RETURN(auto exe, Executable::Create(m.graph, m.prepacked));
  OC_ASSIGN_OR_RETURN(auto ctx, exe->NewContext());
  auto ins = Inputs(m.graph.operator*());
  std::vector<const void*> in_ptrs;
  for (auto& v : ins) in_ptrs.push_back(v.data());
  std::vector<std::vector<float>> outs;
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < exe->num_outputs(); ++i) outs.emplace_back(exe->output(i).NumElements());
  for (auto& v : outs) out_ptrs.push_back(v.data());
  OC_RETURN_IF_ERROR(exe->Run(*ctx, in_ptrs, out_ptrs, ThreadPool::Global()));
  return outs;
}

void ExpectBitIdentical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << "output " << i;
    EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)), 0) << "output " << i;
  }
}

const Value* FindValue(const Graph& g, const std::string& name) {
  for (const auto& v : g.values())
    if (v->name == name) return v.get();
  return nullptr;
}

size_t NodeIndex(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i]->name == name) return i;
  return g.nodes().size();
}

TEST(OmPackedWeightsTest, WritesEachClaimedWeightOnceAndRunsBitIdentically) {
  Compiled c = Compile();
  auto raw = SerializeOm(*c.graph, c.prepacked, Options(nullptr));
  auto packed = SerializeOm(*c.graph, c.prepacked, Options(&c));
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  EXPECT_EQ(om_internal::LoadLE32(raw->data() + om_internal::kOffFlags), 0u);
  EXPECT_EQ(om_internal::LoadLE32(packed->data() + om_internal::kOffFlags), om_internal::kOmFlagPackedOnlyWeights);

  auto m = LoadOmMemory(packed->data(), packed->size());
  ASSERT_TRUE(m.ok()) << m.status().message();
  // Every fp32 GEMM weight but the one an Add also reads; biases stay.
  uint64_t dropped = 0;
  for (const char* name : {"w1", "w2", "w3", "wg", "wm", "wg2", "wb", "shared", "wt"}) {
    const Value* v = FindValue(*m->graph, name);
    ASSERT_NE(v, nullptr) << name;
    ASSERT_TRUE(v->constant.has_value()) << name;
    EXPECT_EQ(v->constant->data(), nullptr) << name << " should be stored packed only";
    EXPECT_EQ(static_cast<int64_t>(v->constant->size()), v->ByteSize()) << name;
    dropped += v->constant->size();
  }
  for (const char* name : {"mixed"}) {
    const Value* v = FindValue(*m->graph, name);
    ASSERT_NE(v, nullptr);
    EXPECT_NE(v->constant->data(), nullptr) << name << " is read by an Add: its raw data must stay";
  }
  EXPECT_EQ(m->packed_only_values, 9u);
  EXPECT_EQ(m->packed_only_bytes, dropped);
  EXPECT_LE(packed->size() + dropped, raw->size());
  EXPECT_NE(OmToJson(*m).find("\"packed_in_node\""), std::string::npos);
  EXPECT_NE(OmSummary(*m).find("stored only prepacked"), std::string::npos);

  auto out_raw = LoadAndRun(*raw);
  auto out_packed = LoadAndRun(*packed);
  ASSERT_TRUE(out_raw.ok()) << out_raw.status().message();
  ASSERT_TRUE(out_packed.ok()) << out_packed.status().message();
  ExpectBitIdentical(*out_raw, *out_packed);

  // The loaded kernels borrowed the file's panels: exporting again gives the same bytes.
  auto exe = Executable::Create(m->graph, m->prepacked);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  auto again = (*exe)->ExportPrepacked();
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_TRUE(again[i].size() == m->prepacked[i].size() &&
                std::equal(again[i].begin(), again[i].end(), m->prepacked[i].begin()))
        << "node " << i;
}

// Panels packed for another micro-kernel (as from an atc on another ISA) are
// unpacked into raw weights and repacked at load: same result as raw weights.
TEST(OmPackedWeightsTest, PanelsForAnotherMicroKernelAreRebuilt) {
  const gemm::GemmUkernel& here = gemm::DefaultUkernel();
  const gemm::GemmUkernel* other = nullptr;
  for (const gemm::GemmUkernel& uk : gemm::AllUkernels())
    if ((uk.mr != here.mr || uk.nr != here.nr) && gemm::IsaSupported(uk.isa)) other = &uk;
  if (!other) GTEST_SKIP() << "one micro-kernel geometry only in this build";
  Compiled c = Compile();
  int repacked = 0;
  for (size_t i = 0; i < c.prepacked.size(); ++i) {
    if (c.claims[i].empty()) continue;
    const std::vector<uint8_t>& bytes = c.prepacked[i];
    ASSERT_GE(bytes.size(), 64u);
    // Header fields (gemm_driver.cc): side u32 @8, dim i64 @24, k @32, groups @40.
    uint32_t side;
    int64_t dim, k, groups;
    std::memcpy(&side, bytes.data() + 8, 4);
    std::memcpy(&dim, bytes.data() + 24, 8);
    std::memcpy(&k, bytes.data() + 32, 8);
    std::memcpy(&groups, bytes.data() + 40, 8);
    const auto ps = static_cast<gemm::PackedSide>(side);
    // Raw op(X), untransposed: A is dim x k (ld k), B is k x dim (ld dim).
    std::vector<float> raw(static_cast<size_t>(dim * k * groups));
    const int64_t ld = ps == gemm::PackedSide::kA ? k : dim;
    ASSERT_TRUE(gemm::UnpackPacked(bytes, ps, dim, k, groups, raw.data(), ld, false, dim * k).ok());
    c.prepacked[i] = gemm::PackedOperand::Make(*other, ps, raw.data(), ld, false, dim, k, {}, groups, dim * k).Export();
    ++repacked;
  }
  ASSERT_GT(repacked, 5);
  auto raw = SerializeOm(*c.graph, c.prepacked, Options(nullptr));
  auto packed = SerializeOm(*c.graph, c.prepacked, Options(&c));
  ASSERT_TRUE(raw.ok() && packed.ok());
  auto out_raw = LoadAndRun(*raw);
  auto out_packed = LoadAndRun(*packed);
  ASSERT_TRUE(out_raw.ok()) << out_raw.status().message();
  ASSERT_TRUE(out_packed.ok()) << out_packed.status().message();
  ExpectBitIdentical(*out_raw, *out_packed);
}

TEST(OmPackedWeightsTest, BlobThatDoesNotHoldTheWeightIsAClearError) {
  Compiled c = Compile();
  const size_t gi = NodeIndex(*c.graph, "gemm1");
  ASSERT_LT(gi, c.prepacked.size());
  ASSERT_FALSE(c.claims[gi].empty());
  struct Damage {
    const char* what;
    void (*apply)(std::vector<uint8_t>&);
    const char* expect;
  };
  const Damage damages[] = {
      {"truncated", [](std::vector<uint8_t>& b) { b.resize(b.size() - 64); }, "floats"},
      {"header only", [](std::vector<uint8_t>& b) { b.resize(64); }, "floats"},
      {"too short for a header", [](std::vector<uint8_t>& b) { b.resize(16); }, "header"},
      {"bad magic", [](std::vector<uint8_t>& b) { b[0] ^= 0xff; }, "magic"},
      {"wrong k", [](std::vector<uint8_t>& b) { b[32] ^= 1; }, "expected side"},
  };
  for (const Damage& d : damages) {
    Compiled bad = c;
    d.apply(bad.prepacked[gi]);
    auto bytes = SerializeOm(*bad.graph, bad.prepacked, Options(&bad));
    ASSERT_TRUE(bytes.ok()) << d.what << ": " << bytes.status().message();
    auto run = LoadAndRun(*bytes);
    ASSERT_FALSE(run.ok()) << d.what;
    EXPECT_NE(run.status().message().find("gemm1"), std::string::npos) << d.what << ": " << run.status().message();
    EXPECT_NE(run.status().message().find("prepacked"), std::string::npos) << d.what << ": " << run.status().message();
    EXPECT_NE(run.status().message().find(d.expect), std::string::npos) << d.what << ": " << run.status().message();
  }
}

TEST(OmPackedWeightsTest, HeaderFlagIsCheckedBothWays) {
  Compiled c = Compile();
  auto packed = SerializeOm(*c.graph, c.prepacked, Options(&c));
  ASSERT_TRUE(packed.ok());
  // Flag cleared: a packed-only value without the flag.
  std::vector<uint8_t> f = *packed;
  om_internal::StoreLE32(f.data() + om_internal::kOffFlags, 0);
  om_internal::Reseal(f);
  auto m = LoadOmMemory(f.data(), f.size());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("packed_in_node"), std::string::npos) << m.status().message();
  // Flag set on a file without packed-only values.
  auto raw = SerializeOm(*c.graph, c.prepacked, Options(nullptr));
  ASSERT_TRUE(raw.ok());
  f = *raw;
  om_internal::StoreLE32(f.data() + om_internal::kOffFlags, om_internal::kOmFlagPackedOnlyWeights);
  om_internal::Reseal(f);
  m = LoadOmMemory(f.data(), f.size());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no constant is stored that way"), std::string::npos) << m.status().message();
  // A flag this build does not know (what an older build says of bit 0).
  f = *packed;
  om_internal::StoreLE32(f.data() + om_internal::kOffFlags, 0x3);
  om_internal::Reseal(f);
  m = LoadOmMemory(f.data(), f.size());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("unknown header flags 0x3"), std::string::npos) << m.status().message();
}

// Claims the reader would refuse are never written: a weight claimed by a
// node whose op is not listed in AcceptsPackedOnlyInput keeps its raw data.
TEST(OmPackedWeightsTest, WriterKeepsWeightsOfUnlistedOps) {
  Compiled c = Compile();
  const Value* mixed = FindValue(*c.graph, "mixed");
  ASSERT_NE(mixed, nullptr);
  int readers = 0;
  for (size_t i = 0; i < c.graph->nodes().size(); ++i) {
    const Node& n = *c.graph->nodes()[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != mixed) continue;
      // Claim every input of every reader, as a careless kernel might.
      c.claims[i].clear();
      for (size_t j = 0; j < n.inputs.size(); ++j) c.claims[i].push_back(static_cast<int>(j));
      ++readers;
    }
  }
  ASSERT_GE(readers, 2) << "the Add (or the residual input of a fused MatMul) should read 'mixed' too";
  auto bytes = SerializeOm(*c.graph, c.prepacked, Options(&c));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto m = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NE(FindValue(*m->graph, "mixed")->constant->data(), nullptr);
  EXPECT_FALSE(om_internal::AcceptsPackedOnlyInput("", "Add", 1));
  EXPECT_FALSE(om_internal::AcceptsPackedOnlyInput("", "MatMul", 0));
  EXPECT_TRUE(om_internal::AcceptsPackedOnlyInput("com.opencann", "FusedConv", 1));
}

// ---- Hand-built files: what the writer never produces must not load ---------

// x [2,4] -> MatMul(x, w [4,3], w stored packed only in node 0) -> y, and an
// optional second node; `mutate` edits the description first.
struct HandValue {
  std::string name;
  int32_t dtype = 1;
  std::vector<int64_t> shape;
  om::ValueKind kind = om::ValueKind::Activation;
  int64_t arena_offset = -1;
  uint64_t data_size = 0;
  int32_t packed_in_node = -1;
};
struct HandNode {
  std::string name, domain, op_type;
  std::vector<int32_t> inputs, outputs;
  uint64_t prepacked_size = 64;
};
struct HandModel {
  std::vector<HandValue> values = {{"x", 1, {2, 4}, om::ValueKind::Input},
                                   {"w", 1, {4, 3}, om::ValueKind::Constant, -1, 0, -1},
                                   {"y", 1, {2, 3}, om::ValueKind::Output}};
  std::vector<HandNode> nodes = {{"mm", "", "MatMul", {0, 1}, {2}}};
  std::vector<int32_t> outputs = {2};
  uint32_t flags = om_internal::kOmFlagPackedOnlyWeights;
  uint32_t version = kOmFormatVersion;
};

std::vector<uint8_t> BuildHand(const std::function<void(HandModel&)>& mutate) {
  HandModel h;
  mutate(h);
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<om::Value>> values;
  for (const HandValue& v : h.values)
    values.push_back(om::CreateValue(b, b.CreateString(v.name), v.dtype, b.CreateVector(v.shape), 0, v.kind,
                                     v.arena_offset, 0, v.data_size, false, 0, v.packed_in_node));
  std::vector<flatbuffers::Offset<om::Node>> nodes;
  uint64_t blob_at = 0;
  for (const HandNode& n : h.nodes) {
    nodes.push_back(om::CreateNode(b, b.CreateString(n.name), b.CreateString(n.domain), b.CreateString(n.op_type),
                                   n.domain.empty() ? 17 : 1, b.CreateVector(n.inputs), b.CreateVector(n.outputs),
                                   0, n.prepacked_size ? blob_at : 0, n.prepacked_size));
    blob_at += (n.prepacked_size + 63) / 64 * 64;
  }
  std::vector<flatbuffers::Offset<om::OpsetImport>> opsets = {om::CreateOpsetImport(b, b.CreateString(""), 17),
                                                              om::CreateOpsetImport(b, b.CreateString("com.opencann"), 1)};
  std::vector<int32_t> inputs = {0};
  auto model = om::CreateModel(b, b.CreateString("hand"), b.CreateString("test"), b.CreateString(HostTarget()),
                               b.CreateString("onnx"), 0, 8, b.CreateVector(opsets), 0, b.CreateVector(values),
                               b.CreateVector(nodes), b.CreateVector(inputs), b.CreateVector(h.outputs), 0, -1);
  om::FinishModelBuffer(b, model);
  std::vector<uint8_t> blob(std::max<uint64_t>(blob_at, 64), 0);
  return om_internal::PackContainer(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()), blob, HostTarget(),
                                    h.version, h.flags);
}

Status LoadHand(const std::function<void(HandModel&)>& mutate) {
  auto file = BuildHand(mutate);
  auto m = LoadOmMemory(file.data(), file.size());
  return m.ok() ? Status::Ok() : m.status();
}

void ExpectRefused(const char* what, const std::function<void(HandModel&)>& mutate, const char* expect) {
  Status st = LoadHand(mutate);
  EXPECT_FALSE(st.ok()) << what;
  EXPECT_NE(st.message().find(expect), std::string::npos) << what << ": " << st.message();
}

TEST(OmPackedWeightsTest, ReaderRefusesPackedOnlyWeightsWhereNoKernelRebuildsThem) {
  auto packed = [](HandModel& h) { h.values[1].packed_in_node = 0; };
  {
    // Well formed, so it loads; its blob is zeros, not GEMM panels, which
    // kernel creation reports instead of running on a null weight.
    auto file = BuildHand(packed);
    auto m = LoadOmMemory(file.data(), file.size());
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto exe = Executable::Create(m->graph, m->prepacked);
    ASSERT_FALSE(exe.ok());
    EXPECT_NE(exe.status().message().find("'mm'"), std::string::npos) << exe.status().message();
    EXPECT_NE(exe.status().message().find("magic"), std::string::npos) << exe.status().message();
  }
  ExpectRefused("read by an Add", [&](HandModel& h) {
    packed(h);
    h.values.push_back({"z", 1, {2, 3}, om::ValueKind::Output});
    h.nodes.push_back({"add", "", "Add", {1, 1}, {3}, 0});
    h.outputs.push_back(3);
  }, "cannot use");
  ExpectRefused("as MatMul input 0", [&](HandModel& h) {
    packed(h);
    h.values[1].shape = {2, 4};
    h.nodes[0].inputs = {1, 0};
    h.values[0].shape = {4, 3};
  }, "cannot use");
  ExpectRefused("node without prepacked bytes", [&](HandModel& h) {
    packed(h);
    h.nodes[0].prepacked_size = 0;
  }, "without prepacked bytes");
  ExpectRefused("a graph output", [&](HandModel& h) {
    packed(h);
    h.outputs.push_back(1);
  }, "stored only in prepacked bytes");
  ExpectRefused("packed_in_node of a node not reading it", [&](HandModel& h) {
    packed(h);
    h.values[1].packed_in_node = 7;
  }, "does not read it");
  ExpectRefused("int64 weight", [&](HandModel& h) {
    packed(h);
    h.values[1].dtype = 7;
  }, "float32");
  ExpectRefused("float64 input 0", [&](HandModel& h) {
    packed(h);
    h.values[0].dtype = 11;
  }, "cannot use");
  ExpectRefused("carrying data", [&](HandModel& h) {
    packed(h);
    h.values[1].data_size = 48;
  }, "carries data");
  ExpectRefused("on an activation", [&](HandModel& h) {
    packed(h);
    h.values[2].packed_in_node = 0;
  }, "no constant");
  ExpectRefused("flag off", [&](HandModel& h) {
    packed(h);
    h.flags = 0;
  }, "header flag 0x1");
  ExpectRefused("flag on, nothing packed only", [&](HandModel& h) { h.values[1].data_size = 48; },
                "no constant is stored that way");
  ExpectRefused("flag in a version-2 file", [&](HandModel& h) {
    packed(h);
    h.version = kOmFormatVersionDynamic;
  }, "need format version 1");
}

}  // namespace
}  // namespace oc
