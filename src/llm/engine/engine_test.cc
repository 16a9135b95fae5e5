// The Engine on a tiny random llama written here: abort mid-run, Generate,
// refusals, and that every block is back in the pool at the end. (Agreement
// with transformers and the sampling rules are tests/python/test_llm_engine.py's.)
#include "llm/engine/engine.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

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
  static std::unique_ptr<Engine> Make(int32_t max_seqs = 8, int64_t blocks = 64, int64_t max_len = 0,
                                      bool prefix_caching = true) {
    EngineConfig cfg;
    cfg.enable_prefix_caching = prefix_caching;
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
  for (int32_t n : {0, -1, 129}) {
    p.n = n;
    Status st = e->AddRequest("c", {1}, p);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("n " + std::to_string(n) + " is invalid (expected 1..128)"), std::string::npos)
        << st.ToString();
  }
  EngineConfig cfg;
  cfg.model_dir = dir_->string();
  cfg.pool = pool_;
  cfg.max_model_len = 65;
  auto too_long = Engine::Create(cfg);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("max_model_len 65 is past the model's 64 positions"), std::string::npos);
}

std::vector<int32_t> SharedPrefix(int32_t r, size_t extra) {
  std::vector<int32_t> p = {1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 3};  // 11 tokens: two full blocks of 4 and 3
  for (size_t i = 0; i < extra; ++i) p.push_back(static_cast<int32_t>((r * 7 + i * 3 + 4) % 40));
  return p;
}

TEST_F(EngineTest, PrefixCachingGivesTheSameTokensAsWithoutAndCountsHitsInTokens) {
  std::vector<std::vector<int32_t>> prompts;
  for (int32_t r = 0; r < 5; ++r) prompts.push_back(SharedPrefix(r, static_cast<size_t>(r)));
  auto off = Make(8, 64, 0, false);
  auto ref = off->Generate(prompts, Greedy(6));
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(off->stats().prefix_cache_queries, 0);
  EXPECT_EQ(off->stats().kv_blocks_evictable, 0);
  // Prompts one after another through one engine: each finds the earlier ones' blocks.
  auto on = Make(8, 64, 0, true);
  int64_t queries = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto one = on->Generate({prompts[i]}, Greedy(6));
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ((*one)[0].tokens, (*ref)[i].tokens) << i;
    queries += static_cast<int64_t>(prompts[i].size());
  }
  const EngineStats st = on->stats();
  EXPECT_EQ(st.prefix_cache_queries, queries);
  // Prompt 0 (11 tokens) finds nothing; prompts 1..4 (12..15 tokens) each find
  // the shared two full blocks (8 tokens) at least.
  EXPECT_GE(st.prefix_cache_hits, 4 * 8);
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_GT(st.kv_blocks_evictable, 0);
  // A batch of them at once, and under a budget that preempts and evicts, gives the same tokens.
  auto tight = Make(8, 6, 24, true);
  auto squeezed = tight->Generate(prompts, Greedy(6));
  ASSERT_TRUE(squeezed.ok()) << squeezed.status().ToString();
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ((*squeezed)[i].tokens, (*ref)[i].tokens) << i;
  EXPECT_GT(tight->stats().preemptions, 0);
  EXPECT_GT(tight->stats().prefix_cache_evictions, 0);
  EXPECT_EQ(tight->stats().kv_blocks_used, 0);
}

TEST_F(EngineTest, ParallelSamplingChoicesAreTheirSeedsNEqualsOneRuns) {
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3, 4, 5, 6}, {7, 8, 9}};
  SamplingParams p;
  p.temperature = 1.0;
  p.max_tokens = 8;
  p.ignore_eos = true;
  p.seed = 41;
  p.n = 4;
  for (bool caching : {true, false}) {
    auto e = Make(8, 64, 0, caching);
    auto got = e->Generate(prompts, p);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 8u);
    std::set<std::vector<int32_t>> distinct;
    for (size_t i = 0; i < prompts.size(); ++i)
      for (int32_t c = 0; c < 4; ++c) {
        const RequestOutput& o = (*got)[i * 4 + static_cast<size_t>(c)];
        EXPECT_EQ(o.id, std::to_string(i));
        EXPECT_EQ(o.index, c);
        EXPECT_EQ(o.tokens.size(), 8u);
        EXPECT_EQ(o.finish_reason, "length");
        SamplingParams one = p;
        one.n = 1;
        one.seed = 41 + static_cast<uint64_t>(c);
        auto alone = Make(8, 64, 0, caching)->Generate({prompts[i]}, one);
        ASSERT_TRUE(alone.ok());
        EXPECT_EQ(o.tokens, (*alone)[0].tokens) << "prompt " << i << " choice " << c;
        distinct.insert(o.tokens);
      }
    EXPECT_GT(distinct.size(), 4u);  // the choices differ
    EXPECT_GT(e->stats().cow_copies, 0);  // both prompts end mid-block (blocks of 4)
    EXPECT_EQ(e->stats().kv_blocks_used, 0);
  }
  // Greedy: n identical choices; under a tight budget (preemption of choices) the same.
  auto greedy = Greedy(10);
  greedy.n = 2;
  auto g = Make(8, 6, 20)->Generate(prompts, greedy);
  auto ref = Make()->Generate(prompts, Greedy(10));
  ASSERT_TRUE(g.ok() && ref.ok());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ((*g)[2 * i].tokens, (*ref)[i].tokens);
    EXPECT_EQ((*g)[2 * i + 1].tokens, (*ref)[i].tokens);
  }
}

TEST_F(EngineTest, AbortEndsEveryChoiceBeforeAndAfterTheFork) {
  auto e = Make(1);  // one sequence a step: "late" waits while "a" runs
  SamplingParams p = Greedy(20);
  p.n = 3;
  ASSERT_TRUE(e->AddRequest("a", {1, 5, 7, 9, 11}, p).ok());
  ASSERT_TRUE(e->AddRequest("late", {3, 4}, p).ok());
  auto first = e->Step();  // a's prompt, forked: three tokens
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  for (int32_t c = 0; c < 3; ++c) EXPECT_EQ((*first)[static_cast<size_t>(c)].index, c);
  EXPECT_EQ(e->stats().running, 3);
  ASSERT_TRUE(e->Abort("a").ok());
  ASSERT_TRUE(e->Abort("late").ok());  // not started: all three choices end
  auto outs = e->Step();
  ASSERT_TRUE(outs.ok());
  std::set<std::pair<std::string, int32_t>> aborted;
  for (const auto& o : *outs) {
    EXPECT_TRUE(o.finished && o.finish_reason == "abort") << o.id << "/" << o.index;
    aborted.insert({o.id, o.index});
  }
  EXPECT_EQ(aborted.size(), 6u);
  EXPECT_FALSE(e->HasUnfinished());
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
  EXPECT_EQ(e->Abort("a").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace oc::llm
