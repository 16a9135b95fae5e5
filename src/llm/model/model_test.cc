// Model::Forward on a tiny random llama written here: batching and mixed
// prefill/decode steps give each sequence what it gets alone, and steps that
// would corrupt the cache are refused. (Agreement with transformers is
// tests/python/test_llm_model.py's job.)
#include "llm/model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace oc::llm {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kVocab = 50, kHidden = 32, kHeads = 4, kKvHeads = 2, kHeadDim = 8, kInter = 48;

// Writes config.json and model.safetensors of a 2-layer llama with random weights.
fs::path WriteTinyLlama() {
  const fs::path dir = fs::temp_directory_path() / ("oc_llm_model_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json cfg = {{"model_type", "llama"},         {"vocab_size", kVocab},
                        {"hidden_size", kHidden},        {"num_hidden_layers", 2},
                        {"num_attention_heads", kHeads}, {"num_key_value_heads", kKvHeads},
                        {"intermediate_size", kInter},   {"max_position_embeddings", 128},
                        {"rms_norm_eps", 1e-6},          {"rope_theta", 10000.0}};
  std::ofstream(dir / "config.json") << cfg.dump();
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {{"model.embed_tokens.weight", {kVocab, kHidden}},
                                                                      {"model.norm.weight", {kHidden}},
                                                                      {"lm_head.weight", {kVocab, kHidden}}};
  for (int l = 0; l < 2; ++l) {
    const std::string b = "model.layers." + std::to_string(l) + ".";
    shapes.push_back({b + "input_layernorm.weight", {kHidden}});
    shapes.push_back({b + "post_attention_layernorm.weight", {kHidden}});
    shapes.push_back({b + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}});
    shapes.push_back({b + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}});
    shapes.push_back({b + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}});
    shapes.push_back({b + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}});
    shapes.push_back({b + "mlp.gate_proj.weight", {kInter, kHidden}});
    shapes.push_back({b + "mlp.up_proj.weight", {kInter, kHidden}});
    shapes.push_back({b + "mlp.down_proj.weight", {kHidden, kInter}});
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 0.3f);
  nlohmann::json header = nlohmann::json::object();
  std::vector<float> data;
  for (const auto& [name, shape] : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const size_t begin = data.size() * 4;
    for (int64_t i = 0; i < n; ++i) data.push_back(shape.size() == 1 ? 1.f + 0.1f * dist(rng) : dist(rng));
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, data.size() * 4}}};
  }
  const std::string h = header.dump();
  std::ofstream f(dir / "model.safetensors", std::ios::binary);
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(n >> (8 * i)));
  f << h;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return dir;
}

class ModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(WriteTinyLlama());
    pool_ = new ThreadPool(2);
    auto m = Model::Load(dir_->string(), pool_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value().release();
  }
  static void TearDownTestSuite() {
    delete model_;
    delete pool_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static KvCache NewCache(int32_t blocks = 16, int64_t block_size = 4) {
    return std::move(KvCache::Create(model_->CacheShape(blocks, block_size))).value();
  }
  // Logits of the last token of `prompt` then of each of `more`, run alone.
  static std::vector<std::vector<float>> Solo(const std::vector<int32_t>& prompt, const std::vector<int32_t>& more) {
    KvCache c = NewCache();
    std::vector<int32_t> table;
    std::vector<std::vector<float>> out;
    int64_t ctx = 0;
    auto step = [&](std::span<const int32_t> toks) {
      EXPECT_TRUE(c.Reserve(table, ctx + static_cast<int64_t>(toks.size())).ok());
      SeqStep s{toks, ctx, table};
      std::vector<float> logits(kVocab);
      Status st = model_->Forward({&s, 1}, c, logits.data());
      EXPECT_TRUE(st.ok()) << st.ToString();
      ctx += static_cast<int64_t>(toks.size());
      out.push_back(logits);
    };
    step(prompt);
    for (const int32_t& t : more) step({&t, 1});
    return out;
  }
  static inline fs::path* dir_ = nullptr;
  static inline ThreadPool* pool_ = nullptr;
  static inline Model* model_ = nullptr;
};

void ExpectClose(const std::vector<float>& a, const float* b) {
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f * (1.f + std::fabs(a[i]))) << "logit " << i;
}

TEST_F(ModelTest, MixedPrefillAndDecodeStepMatchesSoloRuns) {
  const std::vector<int32_t> pa = {1, 2, 3, 4, 5, 6}, pb = {7, 8, 9, 10, 11, 12, 13, 14, 15};
  const std::vector<int32_t> ma = {20, 21, 22}, mb = {30, 31};
  auto sa = Solo(pa, ma), sb = Solo(pb, mb);
  KvCache c = NewCache();
  std::vector<int32_t> ta, tb;
  std::vector<float> logits(2 * kVocab);
  // Step 1: prefill a alone. Step 2: a decodes while b prefills. Steps 3-4: both decode.
  ASSERT_TRUE(c.Reserve(ta, 6).ok());
  SeqStep s1{pa, 0, ta};
  ASSERT_TRUE(model_->Forward({&s1, 1}, c, logits.data()).ok());
  ExpectClose(sa[0], logits.data());
  ASSERT_TRUE(c.Reserve(ta, 7).ok());
  ASSERT_TRUE(c.Reserve(tb, 9).ok());
  SeqStep s2[2] = {{{&ma[0], 1}, 6, ta}, {pb, 0, tb}};
  ASSERT_TRUE(model_->Forward(s2, c, logits.data()).ok());
  ExpectClose(sa[1], logits.data());
  ExpectClose(sb[0], logits.data() + kVocab);
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(c.Reserve(ta, 8 + k).ok());
    ASSERT_TRUE(c.Reserve(tb, 10 + k).ok());
    SeqStep s3[2] = {{{&ma[1 + k], 1}, 7 + k, ta}, {{&mb[k], 1}, 9 + k, tb}};
    ASSERT_TRUE(model_->Forward(s3, c, logits.data()).ok());
    ExpectClose(sa[2 + k], logits.data());
    ExpectClose(sb[1 + k], logits.data() + kVocab);
  }
}

TEST_F(ModelTest, PrefillInPiecesMatchesOnePrefill) {
  // Chunked prefill: 3 + 4 tokens over a cached context give the logits of one 7-token prefill.
  const std::vector<int32_t> p = {3, 1, 4, 1, 5, 9, 2};
  auto whole = Solo(p, {});
  KvCache c = NewCache();
  std::vector<int32_t> t;
  std::vector<float> logits(kVocab);
  ASSERT_TRUE(c.Reserve(t, 7).ok());
  SeqStep a{{p.data(), 3}, 0, t}, b{{p.data() + 3, 4}, 3, t};
  ASSERT_TRUE(model_->Forward({&a, 1}, c, logits.data()).ok());
  ASSERT_TRUE(model_->Forward({&b, 1}, c, logits.data()).ok());
  ExpectClose(whole[0], logits.data());
}

TEST_F(ModelTest, StepsThatWouldCorruptTheCacheAreRefused) {
  KvCache c = NewCache(4, 4);
  std::vector<int32_t> t;
  ASSERT_TRUE(c.Reserve(t, 4).ok());
  const std::vector<int32_t> toks = {1, 2, 3, 4, 5};
  std::vector<float> logits(2 * kVocab);
  auto refused = [&](std::span<const SeqStep> s, const std::string& what) {
    Status st = model_->Forward(s, c, logits.data());
    ASSERT_FALSE(st.ok()) << what;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  SeqStep short_table{toks, 0, t};
  refused({&short_table, 1}, "needs 2 blocks for 5 positions, its block table has 1");
  const std::vector<int32_t> unallocated = {t[0], 3};
  SeqStep bad_block{toks, 0, unallocated};
  refused({&bad_block, 1}, "is block 3, which is not allocated");
  const std::vector<int32_t> outside = {9};
  SeqStep out_of_pool{{toks.data(), 1}, 0, outside};
  refused({&out_of_pool, 1}, "block table entry 0 is 9, expected 0..3");
  ASSERT_TRUE(c.allocator().Retain(t[0]).ok());
  SeqStep shared{{toks.data(), 2}, 0, t};
  refused({&shared, 1}, "which is shared (reference count 2)");
  // Reading a shared block is fine: decode at position 4 writes only the second block.
  ASSERT_TRUE(c.Reserve(t, 5).ok());
  SeqStep reads_shared{{toks.data(), 1}, 4, t};
  EXPECT_TRUE(model_->Forward({&reads_shared, 1}, c, logits.data()).ok());
  ASSERT_TRUE(c.allocator().Release(t[0]).ok());
  SeqStep twice[2] = {{{toks.data(), 1}, 0, t}, {{toks.data(), 1}, 1, t}};
  refused(twice, "is written by two sequences of the step");
  const std::vector<int32_t> bad_token = {kVocab};
  SeqStep tok{bad_token, 0, t};
  refused({&tok, 1}, "token 0 is 50, expected 0..49");
  KvCache wrong = std::move(KvCache::Create({1, kKvHeads, kHeadDim, 4, 4})).value();
  std::vector<int32_t> w;
  ASSERT_TRUE(wrong.Reserve(w, 1).ok());
  SeqStep s{{toks.data(), 1}, 0, w};
  Status st = model_->Forward({&s, 1}, wrong, logits.data());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("KV cache has 1 layers"), std::string::npos) << st.message();
}

// Logits after each token of `toks`, fed one per step (decode-shaped GEMMs),
// or (whole) those of the last token after one prefill of all of them.
std::vector<float> RunTokens(Model& m, const std::vector<int32_t>& toks, bool whole) {
  KvCache c = std::move(KvCache::Create(m.CacheShape(16, 4))).value();
  std::vector<int32_t> table;
  std::vector<float> logits(kVocab);
  EXPECT_TRUE(c.Reserve(table, static_cast<int64_t>(toks.size())).ok());
  if (whole) {
    SeqStep s{toks, 0, table};
    EXPECT_TRUE(m.Forward({&s, 1}, c, logits.data()).ok());
    return logits;
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    SeqStep s{{&toks[i], 1}, static_cast<int64_t>(i), table};
    EXPECT_TRUE(m.Forward({&s, 1}, c, logits.data()).ok());
  }
  return logits;
}

TEST_F(ModelTest, WeightDtypesChosenAtLoad) {
  // 20 tokens: the prefill's GEMMs have 20 rows (int8 / int4: dequantized
  // chunks + sgemm), the decode steps one (the int8 / int4 kernels).
  std::vector<int32_t> toks;
  for (int i = 0; i < 20; ++i) toks.push_back((i * 7 + 3) % kVocab);
  const std::vector<float> ref = RunTokens(*model_, toks, true);
  double ref_scale = 0;
  for (float v : ref) ref_scale = std::max(ref_scale, std::fabs(static_cast<double>(v)));
  int64_t prev_bytes = model_->weight_bytes();
  EXPECT_EQ(model_->weight_dtype(), WeightDtype::kFloat32);
  // Loose bounds against float32 (random weights, 2 layers); the tight
  // comparisons on the same quantized weights are test_llm_model.py's.
  for (const auto& [dtype, tol] : {std::pair{WeightDtype::kBfloat16, 0.05}, std::pair{WeightDtype::kInt8, 0.05},
                                   std::pair{WeightDtype::kInt4, 0.5}}) {
    SCOPED_TRACE(WeightDtypeName(dtype));
    ModelOptions o;
    o.weight_dtype = dtype;
    auto m = Model::Load(dir_->string(), pool_, o);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ((*m)->weight_dtype(), dtype);
    const int64_t bytes = (*m)->weight_bytes();
    if (dtype != WeightDtype::kBfloat16 || gemm::DefaultBf16Ukernel()) {
      EXPECT_LT(bytes, prev_bytes);
    }
    prev_bytes = bytes;
    const std::vector<float> whole = RunTokens(**m, toks, true), steps = RunTokens(**m, toks, false);
    double err = 0, path = 0;
    for (int64_t i = 0; i < kVocab; ++i) {
      err = std::max(err, std::fabs(static_cast<double>(whole[i]) - ref[i]));
      path = std::max(path, std::fabs(static_cast<double>(whole[i]) - steps[i]));
    }
    EXPECT_LT(err, tol * ref_scale) << "vs float32";
    // Decode steps and one prefill agree (bf16: the inputs' rounding may flip between paths).
    EXPECT_LT(path, (dtype == WeightDtype::kBfloat16 ? 1e-2 : 1e-4) * ref_scale) << "steps vs prefill";
  }
  ModelOptions bad;
  bad.weight_dtype = WeightDtype::kInt4;
  bad.group_size = 40;
  auto m = Model::Load(dir_->string(), pool_, bad);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("group size 40 is invalid"), std::string::npos) << m.status().ToString();
  bad.weight_dtype = WeightDtype::kBfloat16;
  bad.group_size = 64;
  EXPECT_FALSE(Model::Load(dir_->string(), pool_, bad).ok());
}

}  // namespace
}  // namespace oc::llm
