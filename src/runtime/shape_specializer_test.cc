// Dynamic shapes end to end in C++: compile with unknown dims, .om round trip
// (format version 2), specialise per shape, run, and check against a plain
// loop-nest reference; the cache stays within its capacity.
#include "runtime/shape_specializer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "base/scoped_env.h"
#include "om/om_file.h"
#include "om/om_format.h"
#include "passes/pass_test_util.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

using testing::Const;
using testing::Pattern;
using testing::Tensor;

constexpr int64_t kIn = 4, kOut = 3;

// y = Relu(x @ W + b), z = Reshape(y, Shape(y)) with x: [N, 4], N symbolic.
// The Reshape's target comes from Shape(): unknown at compile time, folded at
// specialisation.
std::shared_ptr<Graph> MlpGraph() {
  auto g = std::make_shared<Graph>();
  g->name = "mlp";
  g->opset_imports[""] = 17;
  Value* x = Tensor(*g, "x", {-1, kIn});
  x->dim_params = {"N", ""};
  Value* w = Const<float>(*g, "W", {kIn, kOut}, Pattern(kIn * kOut, -1, 1, 3));
  Value* b = Const<float>(*g, "b", {kOut}, Pattern(kOut, -1, 1, 4));
  Value* mm = g->AddValue("mm");
  Value* add = g->AddValue("add");
  Value* y = g->AddValue("y");
  Value* shape = g->AddValue("shape");
  Value* z = g->AddValue("z");
  g->AddNode("MatMul", "matmul", {x, w}, {mm});
  g->AddNode("Add", "bias", {mm, b}, {add});
  g->AddNode("Relu", "relu", {add}, {y});
  g->AddNode("Shape", "shape_of_y", {y}, {shape});
  g->AddNode("Reshape", "reshape", {y, shape}, {z});
  g->inputs = {x};
  g->outputs = {z};
  return g;
}

std::vector<float> Reference(const std::vector<float>& x, int64_t n) {
  std::vector<float> w = Pattern(kIn * kOut, -1, 1, 3), b = Pattern(kOut, -1, 1, 4);
  std::vector<float> y(n * kOut);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < kOut; ++j) {
      double acc = b[j];
      for (int64_t k = 0; k < kIn; ++k) acc += double(x[i * kIn + k]) * w[k * kOut + j];
      y[i * kOut + j] = acc > 0 ? float(acc) : 0.f;
    }
  return y;
}

std::shared_ptr<Graph> CompileDynamic() {
  auto g = MlpGraph();
  CompileOptions opts;
  opts.allow_dynamic = true;
  opts.verify_each_pass = true;
  Status st = RunPipeline(*g, opts);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return g;
}

Status RunAt(ShapeSpecializer& spec, int64_t n, std::vector<float>* out, const std::vector<float>& x) {
  OC_ASSIGN_OR_RETURN(auto exe, spec.Get({{n, kIn}}));
  if (exe->output(0).shape != std::vector<int64_t>{n, kOut})
    return Internal("output shape ", exe->output(0).ShapeString());
  out->assign(n * kOut, -7.f);
  OC_ASSIGN_OR_RETURN(auto ctx, exe->AcquireContext());
  const void* ins[] = {x.data()};
  void* outs[] = {out->data()};
  Status st = exe->Run(*ctx, ins, outs, ThreadPool::Global());
  exe->ReleaseContext(std::move(ctx));
  return st;
}

TEST(DynamicShapes, PipelineKeepsUnknownDimsAndDefersThePlan) {
  auto g = CompileDynamic();
  EXPECT_TRUE(IsDynamicGraph(*g));
  EXPECT_EQ(g->arena_size, 0);
  EXPECT_EQ(g->inputs[0]->ShapeString(), "[N,4]");
  EXPECT_FALSE(g->outputs[0]->IsStatic());
  // Probing recovers the fixed dim and the name of the varying one, also through
  // the Reshape whose target is computed from Shape().
  EXPECT_EQ(g->outputs[0]->ShapeString(), "[N,3]");
  // ... but nothing downstream of N became a constant.
  for (auto& n : g->nodes())
    for (Value* out : n->outputs) EXPECT_FALSE(out && out->IsConstant()) << out->name;
  for (auto& v : g->values()) EXPECT_EQ(v->arena_offset, -1) << v->name;
  // The same graph without allow_dynamic is refused as before.
  auto s = MlpGraph();
  Status st = RunPipeline(*s, CompileOptions{});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("dynamic shapes are not supported yet"), std::string::npos) << st.message();
}

// Static input shapes, but a node whose infer function fails: a Pad whose
// pads are an input (its data is known only at run time; the Add after it
// must not be inferred on the shape placeholder pads would give) is left to
// the interpreter; a node rejected whatever its data (TfIdfVectorizer over
// float ids: not supported) is an error when specialising, i.e. at atc, not
// at the first run.
std::shared_ptr<Graph> StaticInputsGraph(bool data_dependent) {
  auto g = std::make_shared<Graph>();
  g->name = data_dependent ? "pad_by_input" : "tfidf_float";
  g->opset_imports[""] = 17;
  Value* x = Tensor(*g, "x", {2, 6});
  Value* y = g->AddValue("y");
  if (data_dependent) {
    Value* pads = Tensor(*g, "pads", {4}, DataType::kInt64);
    Value* padded = g->AddValue("padded");
    Value* ones = Const<float>(*g, "ones", {3, 8}, std::vector<float>(24, 1.f));
    g->AddNode("Pad", "pad", {x, pads}, {padded});
    g->AddNode("Add", "add", {padded, ones}, {y});
    g->inputs = {x, pads};
  } else {
    Node* n = g->AddNode("TfIdfVectorizer", "tfidf", {x}, {y});
    n->SetString("mode", "TF");
    n->SetInt("min_gram_length", 1);
    n->SetInt("max_gram_length", 1);
    n->SetInt("max_skip_count", 0);
    n->SetInts("ngram_counts", {0});
    n->SetInts("ngram_indexes", {0, 1});
    n->SetInts("pool_int64s", {3, 4});
    g->inputs = {x};
  }
  g->outputs = {y};
  CompileOptions opts;
  opts.allow_dynamic = true;
  Status st = RunPipeline(*g, opts);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return g;
}

TEST(DynamicShapes, StaticInputsTellDataDependentShapesFromUnsupportedNodes) {
  ShapeSpecializer pad(StaticInputsGraph(true), {}, 1);
  auto exe = pad.Get({{2, 6}, {4}});
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(*exe, nullptr);  // the interpreter's case
  ShapeSpecializer tfidf(StaticInputsGraph(false), {}, 1);
  auto bad = tfidf.Get({{2, 6}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(bad.status().message().find("input of type float32 is not supported"), std::string::npos)
      << bad.status().message();
}

TEST(DynamicShapes, OmRoundTripKeepsUnknownDimsAsFormatVersion2) {
  auto g = CompileDynamic();
  OmWriteOptions w;
  w.target = HostTarget();
  w.producer_version = "test";
  auto bytes = SerializeOm(*g, {}, w);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto om = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(om.ok()) << om.status().ToString();
  EXPECT_TRUE(om->dynamic);
  EXPECT_EQ(om->format_version, kOmFormatVersionDynamic);
  const Graph& r = *om->graph;
  EXPECT_EQ(r.inputs[0]->shape, (std::vector<int64_t>{-1, kIn}));
  EXPECT_EQ(r.inputs[0]->dim_params, (std::vector<std::string>{"N", ""}));
  ASSERT_EQ(r.nodes().size(), g->nodes().size());
  for (size_t i = 0; i < r.values().size(); ++i) {
    EXPECT_EQ(r.values()[i]->has_shape, g->values()[i]->has_shape) << g->values()[i]->name;
    EXPECT_EQ(r.values()[i]->shape, g->values()[i]->shape) << g->values()[i]->name;
    EXPECT_EQ(r.values()[i]->dtype, g->values()[i]->dtype) << g->values()[i]->name;
  }
  // A static graph still writes format version 1.
  auto s = MlpGraph();
  s->inputs[0]->shape = {2, kIn};
  ASSERT_TRUE(RunPipeline(*s, CompileOptions{}).ok());
  auto sbytes = SerializeOm(*s, {}, w);
  ASSERT_TRUE(sbytes.ok());
  auto som = LoadOmMemory(sbytes->data(), sbytes->size());
  ASSERT_TRUE(som.ok());
  EXPECT_EQ(som->format_version, kOmFormatVersion);
  EXPECT_FALSE(som->dynamic);
}

TEST(DynamicShapes, RunsAtSeveralShapesInOneProcess) {
  auto g = CompileDynamic();
  OmWriteOptions w;
  w.target = HostTarget();
  auto bytes = SerializeOm(*g, {}, w);
  ASSERT_TRUE(bytes.ok());
  auto om = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(om.ok());
  ShapeSpecializer spec(om->graph, om->prepacked, 4);
  for (int64_t n : {1, 7, 2, 7, 1}) {
    std::vector<float> x = Pattern(n * kIn, -2, 2, static_cast<uint32_t>(n)), y;
    Status st = RunAt(spec, n, &y, x);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<float> want = Reference(x, n);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << "N=" << n << " i=" << i;
  }
  EXPECT_EQ(spec.specializations(), 3u);  // 1, 7, 2: repeats hit the cache
  EXPECT_EQ(spec.cached(), 3u);
}

// What atc does for a dynamic model: specialise at a probe shape, store what
// the kernels packed by node in the .om; the run time then packs nothing at
// other shapes, and the results stay right.
TEST(DynamicShapes, PackingsStoredInTheOmAreUsedAtOtherShapes) {
  auto g = CompileDynamic();
  ShapeSpecializer probe(g, {}, 1);
  ASSERT_TRUE(probe.Get({{1, kIn}}).ok());
  const auto packs = probe.PackedByName();
  EXPECT_EQ(probe.learnt(), packs.size());
  std::vector<std::vector<uint8_t>> prepacked(g->nodes().size());
  size_t stored = 0;
  for (size_t i = 0; i < g->nodes().size(); ++i) {
    auto it = packs.find(g->nodes()[i]->name);
    if (it == packs.end()) continue;
    prepacked[i].assign(it->second.begin(), it->second.end());
    ++stored;
  }
  ASSERT_EQ(stored, 1u);  // the MatMul's weights
  OmWriteOptions w;
  w.target = HostTarget();
  auto bytes = SerializeOm(*g, prepacked, w);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto om = LoadOmMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(om.ok()) << om.status().ToString();
  ShapeSpecializer spec(om->graph, om->prepacked, 4);
  for (int64_t n : {5, 1, 33}) {
    std::vector<float> x = Pattern(n * kIn, -2, 2, static_cast<uint32_t>(n + 40)), y;
    Status st = RunAt(spec, n, &y, x);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<float> want = Reference(x, n);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << "N=" << n << " i=" << i;
  }
  EXPECT_EQ(spec.learnt(), 0u);
  // Without the stored bytes the same run learns the packing once.
  ShapeSpecializer bare(om->graph, {}, 4);
  std::vector<float> x = Pattern(5 * kIn, -2, 2, 45), y;
  ASSERT_TRUE(RunAt(bare, 5, &y, x).ok());
  ASSERT_TRUE(RunAt(bare, 9, &y, Pattern(9 * kIn, -2, 2, 49)).ok());
  EXPECT_EQ(bare.learnt(), 1u);
}

TEST(DynamicShapes, BadSignaturesAreRefusedWithTheInputNamed) {
  auto g = CompileDynamic();
  ShapeSpecializer spec(g, {});
  auto e = spec.Get({{2, 5}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("fixes it to 4"), std::string::npos) << e.status().message();
  e = spec.Get({{2}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("rank 2"), std::string::npos) << e.status().message();
  e = spec.Get({{-1, 4}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'x'"), std::string::npos) << e.status().message();
  e = spec.Get({});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(spec.cached(), 0u);
}

size_t RssBytes() {
  long pages = 0, rss = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
  std::fclose(f);
  return static_cast<size_t>(rss) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

TEST(DynamicShapes, CacheStaysWithinItsCapacityOver1000RunsOf20Shapes) {
  auto g = CompileDynamic();
  ShapeSpecializer spec(g, {}, 8);
  std::vector<float> y;
  size_t rss_after_warmup = 0;
  for (int run = 0; run < 1000; ++run) {
    int64_t n = 1 + (run * 7) % 20;
    std::vector<float> x = Pattern(n * kIn, -2, 2, static_cast<uint32_t>(run));
    Status st = RunAt(spec, n, &y, x);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_LE(spec.cached(), 8u);
    if (run == 100) rss_after_warmup = RssBytes();
    if (run % 97 == 0) {
      std::vector<float> want = Reference(x, n);
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-5);
    }
  }
  EXPECT_GT(spec.specializations(), 20u);  // cycling 20 shapes through 8 slots misses
  // 900 more specialisations (and evictions) must not leave memory behind.
  // Not under AddressSanitizer: its quarantine keeps freed memory resident on
  // purpose (up to 256 MiB); LeakSanitizer checks for leaks there instead.
  // Nor under ThreadSanitizer, whose shadow memory counts in the RSS.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (rss_after_warmup > 0) {
    EXPECT_LT(RssBytes(), rss_after_warmup + (8u << 20));
  }
#endif
}

TEST(DynamicShapes, PinnedEntriesAreNeverEvicted) {
  auto g = CompileDynamic();
  ShapeSpecializer spec(g, {}, 1);
  ASSERT_TRUE(spec.Pin({{8, kIn}}).ok());
  ASSERT_TRUE(spec.Pin({{4, kIn}}).ok());
  std::vector<float> y;
  for (int64_t n : {1, 2, 3}) {
    std::vector<float> x = Pattern(n * kIn, -2, 2);
    ASSERT_TRUE(RunAt(spec, n, &y, x).ok());
  }
  EXPECT_EQ(spec.cached(), 3u);  // two pinned + one
  uint64_t made = spec.specializations();
  ASSERT_TRUE(spec.Get({{8, kIn}}).ok());
  ASSERT_TRUE(spec.Get({{4, kIn}}).ok());
  EXPECT_EQ(spec.specializations(), made);
}

TEST(DynamicShapes, CacheSizeComesFromTheEnvironment) {
  for (const auto& [value, want] : {std::pair<const char*, size_t>{"3", 3u},
                                    {"0", ShapeSpecializer::kDefaultCapacity},
                                    {"12abc", ShapeSpecializer::kDefaultCapacity}}) {
    ScopedEnv env("OPENCANN_SHAPE_CACHE_SIZE", value);
    EXPECT_EQ(ShapeSpecializer::DefaultCapacity(), want) << value;
  }
  ScopedEnv unset("OPENCANN_SHAPE_CACHE_SIZE", nullptr);
  EXPECT_EQ(ShapeSpecializer::DefaultCapacity(), 8u);
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

TEST(DynamicShapes, OmVersionAndDynamicFlagMustAgree) {
  auto g = CompileDynamic();
  OmWriteOptions w;
  w.target = HostTarget();
  auto dyn = SerializeOm(*g, {}, w);
  ASSERT_TRUE(dyn.ok());
  std::vector<uint8_t> bytes = *dyn;
  bytes[8] = 1;  // format_version field: claim a static file
  om_internal::Reseal(bytes);
  auto om = LoadOmMemory(bytes.data(), bytes.size());
  ASSERT_FALSE(om.ok());
  EXPECT_NE(om.status().message().find("dynamic"), std::string::npos) << om.status().message();

  auto s = MlpGraph();
  s->inputs[0]->shape = {3, kIn};
  ASSERT_TRUE(RunPipeline(*s, CompileOptions{}).ok());
  auto stat = SerializeOm(*s, {}, w);
  ASSERT_TRUE(stat.ok());
  bytes = *stat;
  bytes[8] = 2;  // a static graph section under the dynamic version
  om_internal::Reseal(bytes);
  om = LoadOmMemory(bytes.data(), bytes.size());
  ASSERT_FALSE(om.ok());
  EXPECT_NE(om.status().message().find("static"), std::string::npos) << om.status().message();
  bytes[8] = 3;
  om_internal::Reseal(bytes);
  om = LoadOmMemory(bytes.data(), bytes.size());
  ASSERT_FALSE(om.ok());
  EXPECT_NE(om.status().message().find("format version"), std::string::npos) << om.status().message();
}

TEST(DynamicShapes, WriterRefusesUnknownDimsWhereTheyCannotBe) {
  auto g = CompileDynamic();
  OmWriteOptions w;
  w.target = HostTarget();
  // A planned arena with unknown dims is a contradiction.
  g->arena_size = 64;
  auto bytes = SerializeOm(*g, {}, w);
  ASSERT_FALSE(bytes.ok());
  g->arena_size = 0;
  // Graph inputs need a rank.
  g->inputs[0]->has_shape = false;
  g->inputs[0]->shape.clear();
  g->inputs[0]->dim_params.clear();
  bytes = SerializeOm(*g, {}, w);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("rank is unknown"), std::string::npos) << bytes.status().message();
}

}  // namespace
}  // namespace oc

#include <atomic>
#include <thread>

namespace oc {
namespace {

TEST(DynamicShapes, ConcurrentRunsAtManyShapesShareOneCache) {
  auto g = CompileDynamic();
  ShapeSpecializer spec(g, {}, 3);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> y;
      for (int run = 0; run < 150; ++run) {
        const int64_t n = 1 + (run * 5 + t * 3) % 9;
        std::vector<float> x = Pattern(n * kIn, -2, 2, static_cast<uint32_t>(run * 4 + t));
        if (!RunAt(spec, n, &y, x).ok()) {
          ++failures;
          continue;
        }
        std::vector<float> want = Reference(x, n);
        for (size_t i = 0; i < want.size(); ++i)
          if (std::abs(y[i] - want[i]) > 1e-5f) {
            ++failures;
            break;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(spec.cached(), 3u);
}

}  // namespace
}  // namespace oc
