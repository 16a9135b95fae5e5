// The Engine on a tiny random llama written here: abort mid-run, Generate,
// refusals, and that every block is back in the pool at the end. (Agreement
// with transformers and the sampling rules are tests/python/test_llm_engine.py's.)
#include "llm/engine/engine.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace oc::llm {
namespace {

namespace fs = std::filesystem;

// config.json and model.safetensors of a 1-layer llama (vocab 40, hidden 16).
fs::path WriteTinyLlama() {
  const fs::path dir = fs::temp_directory_path() / ("oc_llm_engine_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int64_t V = 40, H = 16, I = 24;
  nlohmann::json cfg = {{"model_type", "llama"}, {"vocab_size", V}, {"hidden_size", H}, {"num_hidden_layers", 1},
                        {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", I},
                        {"max_position_embeddings", 64}, {"eos_token_id", 2}};
  std::ofstream(dir / "config.json") << cfg.dump();
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"model.embed_tokens.weight", {V, H}}, {"model.norm.weight", {H}}, {"lm_head.weight", {V, H}},
      {"model.layers.0.input_layernorm.weight", {H}}, {"model.layers.0.post_attention_layernorm.weight", {H}},
      {"model.layers.0.self_attn.q_proj.weight", {H, H}}, {"model.layers.0.self_attn.k_proj.weight", {H / 2, H}},
      {"model.layers.0.self_attn.v_proj.weight", {H / 2, H}}, {"model.layers.0.self_attn.o_proj.weight", {H, H}},
      {"model.layers.0.mlp.gate_proj.weight", {I, H}}, {"model.layers.0.mlp.up_proj.weight", {I, H}},
      {"model.layers.0.mlp.down_proj.weight", {H, I}}};
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.f, 1.f);
  nlohmann::json header = nlohmann::json::object();
  std::vector<float> data;
  for (const auto& [name, shape] : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const size_t begin = data.size() * 4;
    for (int64_t i = 0; i < n; ++i) data.push_back(shape.size() == 1 ? 1.f : dist(rng));
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, data.size() * 4}}};
  }
  const std::string h = header.dump();
  std::ofstream f(dir / "model.safetensors", std::ios::binary);
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(static_cast<uint64_t>(h.size()) >> (8 * i)));
  f << h;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return dir;
}

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(WriteTinyLlama());
    pool_ = new ThreadPool(2);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete pool_;
  }
  static std::unique_ptr<Engine> Make(int32_t max_seqs = 8, int64_t blocks = 64, int64_t max_len = 0) {
    EngineConfig cfg;
    cfg.model_dir = dir_->string();
    cfg.pool = pool_;
    cfg.block_size = 4;
    // 1 layer, 1 KV head, head_dim 8, block 4: 2 * 4 * 8 * 4 = 256 bytes a block.
    cfg.kv_cache_bytes = blocks * 256;
    cfg.max_num_seqs = max_seqs;
    cfg.max_model_len = max_len;
    auto e = Engine::Create(cfg);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return std::move(e).value();
  }
  static inline fs::path* dir_ = nullptr;
  static inline ThreadPool* pool_ = nullptr;
};

SamplingParams Greedy(int64_t n) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = n;
  p.ignore_eos = true;
  return p;
}

TEST_F(EngineTest, AbortEndsTheRequestAtTheNextStepAndFreesItsBlocks) {
  auto e = Make();
  ASSERT_TRUE(e->AddRequest("a", {1, 5, 7, 9, 11}, Greedy(20)).ok());
  ASSERT_TRUE(e->AddRequest("b", {3, 4}, Greedy(3)).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(e->Step().ok());
  EXPECT_GT(e->stats().kv_blocks_used, 0);
  ASSERT_TRUE(e->Abort("a").ok());
  EXPECT_EQ(e->Abort("zzz").code(), StatusCode::kNotFound);
  bool saw_abort = false;
  while (e->HasUnfinished()) {
    auto outs = e->Step();
    ASSERT_TRUE(outs.ok()) << outs.status().ToString();
    for (const auto& o : *outs)
      if (o.id == "a") {
        EXPECT_TRUE(o.finished);
        EXPECT_EQ(o.finish_reason, "abort");
        saw_abort = true;
      }
  }
  EXPECT_TRUE(saw_abort);
  const EngineStats st = e->stats();
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_EQ(st.kv_blocks_total, 64);
  EXPECT_EQ(st.max_concurrency, 64 / 16);
}

TEST_F(EngineTest, GenerateIsTheSameBatchedAloneAndUnderPreemption) {
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3}, {7, 8, 9, 10, 11, 12, 13}, {5}, {20, 21, 22, 23}};
  auto one = Make(1)->Generate(prompts, Greedy(10));
  auto batched = Make(8)->Generate(prompts, Greedy(10));
  auto tight = Make(8, 6, 20);  // 6 blocks of 4 for sequences up to 17 positions: preempts
  auto squeezed = tight->Generate(prompts, Greedy(10));
  ASSERT_TRUE(one.ok() && batched.ok() && squeezed.ok());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ((*one)[i].tokens.size(), 10u);
    EXPECT_EQ((*one)[i].tokens, (*batched)[i].tokens) << i;
    EXPECT_EQ((*one)[i].tokens, (*squeezed)[i].tokens) << i;
    EXPECT_EQ((*batched)[i].finish_reason, "length");
  }
  EXPECT_GT(tight->stats().preemptions, 0);
  EXPECT_EQ(tight->stats().kv_blocks_used, 0);
}

TEST_F(EngineTest, BadRequestsAndConfigsAreRefused) {
  auto e = Make();
  ASSERT_TRUE(e->AddRequest("a", {1}, Greedy(2)).ok());
  Status dup = e->AddRequest("a", {1}, Greedy(2));
  EXPECT_NE(dup.message().find("request 'a': the id is already in use"), std::string::npos);
  Status bad = e->AddRequest("b", {1, 40}, Greedy(2));
  EXPECT_NE(bad.message().find("prompt token 1 is 40, expected 0..39"), std::string::npos) << bad.ToString();
  SamplingParams p = Greedy(2);
  p.n = 3;
  EXPECT_EQ(e->AddRequest("c", {1}, p).code(), StatusCode::kNotSupported);
  EngineConfig cfg;
  cfg.model_dir = dir_->string();
  cfg.pool = pool_;
  cfg.max_model_len = 65;
  auto too_long = Engine::Create(cfg);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("max_model_len 65 is past the model's 64 positions"), std::string::npos);
}

}  // namespace
}  // namespace oc::llm
