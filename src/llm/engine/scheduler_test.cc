#include "llm/engine/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <map>
#include <set>

namespace oc::llm {
namespace {

KvCache MakeCache(int32_t blocks, int64_t block_size) {
  auto c = KvCache::Create({1, 1, 2, block_size, blocks});
  EXPECT_TRUE(c.ok());
  return std::move(*c);
}

std::unique_ptr<Sequence> MakeSeq(const std::string& id, int64_t prompt_len, int64_t max_tokens, int32_t n = 1) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->prompt.assign(static_cast<size_t>(prompt_len), 1);
  s->params.max_tokens = max_tokens;
  s->params.n = n;
  return s;
}

std::unique_ptr<Sequence> MakeSeq(const std::string& id, std::vector<int32_t> prompt, int64_t max_tokens, int32_t n = 1) {
  auto s = MakeSeq(id, 0, max_tokens, n);
  s->prompt = std::move(prompt);
  return s;
}

// What the fake forward stores at position p: a code of the tokens 0..p (the
// KV of a position depends on its whole prefix).
float PrefixCode(const Sequence& s, int64_t p) {
  uint32_t h = 7;
  for (int64_t q = 0; q <= p; ++q) h = (h * 31 + static_cast<uint32_t>(s.token(q)) + 1) % 1000003;
  return static_cast<float>(h);
}

float* Slot(KvCache& cache, const Sequence& s, int64_t p) {
  const int64_t bs = cache.shape().block_size;
  return cache.k(0) + s.table[static_cast<size_t>(p / bs)] * cache.block_floats() + (p % bs) * 2;
}

// The fake sampler: choice i's k-th token.
int32_t FakeToken(int32_t index, size_t k) { return 2 + static_cast<int32_t>((index * 3 + k) % 5); }

// The block invariants of a step: a block in several live tables has exactly
// that many owners (it is shared, nobody else holds it), and every block a
// scheduled sequence writes is its alone.
void CheckBlocks(const Scheduler& sched, const BlockManager& blocks, const std::vector<ScheduledSeq>& batch) {
  std::map<int32_t, int32_t> owners;
  for (const Sequence* s : sched.sequences())
    for (int32_t b : s->table) ++owners[b];
  for (const auto& [b, n] : owners) EXPECT_EQ(blocks.ref_count(b), n) << "block " << b;
  EXPECT_EQ(blocks.num_used(), static_cast<int32_t>(owners.size()));
  for (const auto& x : batch)
    for (int64_t i = x.start / blocks.block_size(); i < blocks.BlocksFor(x.start + x.count); ++i)
      EXPECT_EQ(blocks.ref_count(x.seq->table[static_cast<size_t>(i)]), 1)
          << x.seq->id << "/" << x.seq->index << " writes shared block " << x.seq->table[static_cast<size_t>(i)];
}

// One engine step with a fake forward: every cached position read holds its
// prefix code, the new ones are written; a sequence that reaches its end
// forks (n > 1) and gets one token per choice.
void FakeStep(Scheduler& sched, BlockManager& blocks, KvCache& cache, const std::vector<ScheduledSeq>& batch,
              std::vector<std::unique_ptr<Sequence>>* finished) {
  CheckBlocks(sched, blocks, batch);
  for (const auto& b : batch) {
    EXPECT_GE(static_cast<int64_t>(b.seq->table.size()) * blocks.block_size(), b.start + b.count);
    for (int64_t p = 0; p < b.start; ++p)
      ASSERT_EQ(*Slot(cache, *b.seq, p), PrefixCode(*b.seq, p)) << b.seq->id << "/" << b.seq->index << " pos " << p;
    for (int64_t p = b.start; p < b.start + b.count; ++p) *Slot(cache, *b.seq, p) = PrefixCode(*b.seq, p);
  }
  ASSERT_TRUE(sched.Computed(batch).ok());
  for (const auto& b : batch) {
    if (!b.samples()) continue;
    std::vector<Sequence*> choices = {b.seq};
    if (b.seq->params.n > 1 && !b.seq->forked) {
      auto kids = sched.Fork(b.seq);
      ASSERT_TRUE(kids.ok()) << kids.status().ToString();
      choices.insert(choices.end(), kids->begin(), kids->end());
    }
    for (Sequence* c : choices) {
      c->output.push_back(FakeToken(c->index, c->output.size()));
      if (static_cast<int64_t>(c->output.size()) >= c->params.max_tokens) c->finished = true;
    }
  }
  auto done = sched.TakeFinished();
  ASSERT_TRUE(done.ok());
  if (finished)
    for (auto& s : *done) finished->push_back(std::move(s));
}

// Drives the scheduler as the engine does; checks the step invariants.
int64_t RunToCompletion(Scheduler& sched, BlockManager& blocks, const SchedulerConfig& cfg, int64_t* steps,
                        KvCache* cache = nullptr, std::vector<std::unique_ptr<Sequence>>* finished = nullptr) {
  std::vector<std::unique_ptr<Sequence>> mine;
  if (!finished) finished = &mine;
  const size_t before = finished->size();
  for (*steps = 0; sched.num_running() + sched.num_waiting() > 0; ++*steps) {
    auto batch = sched.Schedule();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_FALSE(batch->empty()) << "nothing scheduled at step " << *steps;
    if (batch->empty()) break;
    EXPECT_LE(static_cast<int32_t>(batch->size()), cfg.max_num_seqs);
    int64_t tokens = 0;
    for (const auto& b : *batch) tokens += b.count;
    EXPECT_LE(tokens, cfg.max_num_batched_tokens);
    if (cache) {
      FakeStep(sched, blocks, *cache, *batch, finished);
    } else {
      CheckBlocks(sched, blocks, *batch);
      EXPECT_TRUE(sched.Computed(*batch).ok());
      for (const auto& b : *batch) {
        if (!b.samples()) continue;
        b.seq->output.push_back(2);
        if (static_cast<int64_t>(b.seq->output.size()) >= b.seq->params.max_tokens) b.seq->finished = true;
      }
      auto done = sched.TakeFinished();
      EXPECT_TRUE(done.ok());
      for (auto& s : *done) finished->push_back(std::move(s));
    }
    if (*steps > 10000) {
      ADD_FAILURE() << "no progress";
      break;
    }
  }
  int64_t generated = 0;
  for (size_t i = before; i < finished->size(); ++i) generated += static_cast<int64_t>((*finished)[i]->output.size());
  return generated;
}

TEST(SchedulerTest, ChunksLongPromptsUnderTheTokenBudgetAndFreesEveryBlock) {
  KvCache cache = MakeCache(64, 4);
  BlockManager blocks(&cache);
  SchedulerConfig cfg{3, 6};
  Scheduler sched(cfg, &blocks);
  sched.Add(MakeSeq("a", 20, 5));
  sched.Add(MakeSeq("b", 3, 7));
  sched.Add(MakeSeq("c", 1, 2));
  sched.Add(MakeSeq("d", 9, 3));
  int64_t steps = 0;
  EXPECT_EQ(RunToCompletion(sched, blocks, cfg, &steps), 5 + 7 + 2 + 3);
  EXPECT_EQ(blocks.num_free(), 64);
  EXPECT_EQ(sched.num_preemptions(), 0);
  EXPECT_GE(steps, 33 / 6);
}

TEST(SchedulerTest, PreemptsTheNewestWhenBlocksRunOutAndStillFinishesAll) {
  // 6 blocks of 4: one sequence of 24 positions fits, four of 12 do not.
  KvCache cache = MakeCache(6, 4);
  BlockManager blocks(&cache);
  SchedulerConfig cfg{8, 64};
  Scheduler sched(cfg, &blocks);
  for (int i = 0; i < 4; ++i) sched.Add(MakeSeq(std::to_string(i), 5, 7));
  int64_t steps = 0;
  EXPECT_EQ(RunToCompletion(sched, blocks, cfg, &steps), 28);
  EXPECT_GT(sched.num_preemptions(), 0);
  EXPECT_EQ(blocks.num_free(), 6);
}

TEST(SchedulerTest, PreemptedSequenceKeepsItsTokensAndRecomputesThem) {
  KvCache cache = MakeCache(2, 4);
  BlockManager blocks(&cache);
  Scheduler sched({4, 64}, &blocks);
  sched.Add(MakeSeq("old", 4, 8));
  sched.Add(MakeSeq("new", 3, 8));
  auto b1 = sched.Schedule();  // both prefill: one block each
  ASSERT_TRUE(b1.ok());
  ASSERT_EQ(b1->size(), 2u);
  ASSERT_TRUE(sched.Computed(*b1).ok());
  for (auto& b : *b1) b.seq->output.push_back(9);
  // "old" now needs a second block: "new" (newest) is preempted.
  auto b2 = sched.Schedule();
  ASSERT_TRUE(b2.ok());
  ASSERT_EQ(b2->size(), 1u);
  EXPECT_EQ((*b2)[0].seq->id, "old");
  EXPECT_EQ(sched.num_preemptions(), 1);
  EXPECT_EQ(sched.num_waiting(), 1u);
  EXPECT_EQ(blocks.num_free(), 0);
  ASSERT_TRUE(sched.Abort("old").ok());
  ASSERT_TRUE(sched.TakeFinished().ok());
  // "new" comes back with its generated token as part of what it recomputes.
  auto b3 = sched.Schedule();
  ASSERT_TRUE(b3.ok());
  ASSERT_EQ(b3->size(), 1u);
  EXPECT_EQ((*b3)[0].seq->id, "new");
  EXPECT_EQ((*b3)[0].start, 0);
  EXPECT_EQ((*b3)[0].count, 4);
  EXPECT_EQ((*b3)[0].seq->output, std::vector<int32_t>{9});
}

TEST(SchedulerTest, AbortFreesBlocksOfRunningAndWaitingSequences) {
  KvCache cache = MakeCache(8, 4);
  BlockManager blocks(&cache);
  Scheduler sched({1, 64}, &blocks);
  sched.Add(MakeSeq("run", 10, 4));
  sched.Add(MakeSeq("wait", 2, 4));
  ASSERT_TRUE(sched.Schedule().ok());
  EXPECT_EQ(blocks.num_free(), 5);
  ASSERT_TRUE(sched.Abort("run").ok());
  ASSERT_TRUE(sched.Abort("wait").ok());
  Status unknown = sched.Abort("nobody");
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("request 'nobody'"), std::string::npos);
  auto done = sched.TakeFinished();
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->size(), 2u);
  for (auto& s : *done) EXPECT_EQ(s->finish_reason, "abort");
  EXPECT_EQ(blocks.num_free(), 8);
  EXPECT_EQ(sched.num_running() + sched.num_waiting(), 0u);
}

std::vector<int32_t> Range(int32_t from, int32_t n) {
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PrefixCacheTest, ReusesTheFullBlocksOfAFinishedSequenceAndRecomputesTheLastToken) {
  KvCache cache = MakeCache(16, 4);
  BlockManager blocks(&cache, /*prefix_caching=*/true);
  SchedulerConfig cfg{4, 64};
  Scheduler sched(cfg, &blocks);
  const std::vector<int32_t> a = Range(10, 10);
  sched.Add(MakeSeq("a", a, 3));
  int64_t steps = 0;
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  // a computed 10 + 3 - 1 = 12 positions: three full blocks stay cached, nobody holds them.
  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_evictable(), 3);
  EXPECT_EQ(blocks.num_free(), 16);
  EXPECT_EQ(sched.prefix_cache_queries(), 10);
  EXPECT_EQ(sched.prefix_cache_hits(), 0);

  // b shares a's first 9 tokens: blocks 0 and 1 (8 tokens) are reused.
  sched.Add(MakeSeq("b", Concat(Range(10, 9), {30, 31}), 2));
  auto batch = sched.Schedule();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->size(), 1u);
  EXPECT_EQ((*batch)[0].start, 8);
  EXPECT_EQ((*batch)[0].count, 3);
  EXPECT_EQ(sched.prefix_cache_queries(), 10 + 11);
  EXPECT_EQ(sched.prefix_cache_hits(), 8);
  std::vector<std::unique_ptr<Sequence>> done;
  FakeStep(sched, blocks, cache, *batch, &done);  // checks that positions 0..7 hold b's prefix codes
  RunToCompletion(sched, blocks, cfg, &steps, &cache);

  // c is exactly a's first 8 tokens (two full blocks): only the first block is
  // taken, so that the last prompt token is computed and has logits.
  sched.Add(MakeSeq("c", Range(10, 8), 1));
  batch = sched.Schedule();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)[0].start, 4);
  EXPECT_EQ((*batch)[0].count, 4);
  EXPECT_EQ(sched.prefix_cache_hits(), 8 + 4);
  FakeStep(sched, blocks, cache, *batch, &done);
  // d is a's 12 computed tokens (10 prompt + its first two outputs) and one more: 3 blocks.
  sched.Add(MakeSeq("d", Concat(Range(10, 10), {FakeToken(0, 0), FakeToken(0, 1), 5}), 1));
  batch = sched.Schedule();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)[0].start, 12);
  EXPECT_EQ((*batch)[0].count, 1);
  FakeStep(sched, blocks, cache, *batch, &done);
  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_free(), 16);
}

TEST(PrefixCacheTest, OffMeansNoLookupsAndNoCachedBlocks) {
  KvCache cache = MakeCache(16, 4);
  BlockManager blocks(&cache);
  SchedulerConfig cfg{4, 64};
  Scheduler sched(cfg, &blocks);
  sched.Add(MakeSeq("a", Range(10, 10), 3));
  int64_t steps = 0;
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  sched.Add(MakeSeq("b", Range(10, 10), 3));
  auto batch = sched.Schedule();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)[0].start, 0);
  EXPECT_EQ(blocks.num_evictable(), 0);
  EXPECT_EQ(sched.prefix_cache_queries(), 0);
  EXPECT_EQ(sched.prefix_cache_hits(), 0);
}

TEST(PrefixCacheTest, EvictsTheLeastRecentlyReleasedBlocksTailFirst) {
  KvCache cache = MakeCache(4, 4);
  BlockManager blocks(&cache, true);
  SchedulerConfig cfg{4, 64};
  Scheduler sched(cfg, &blocks);
  int64_t steps = 0;
  // a then b, 8 prompt tokens and one output each: two full blocks each stay cached.
  sched.Add(MakeSeq("a", Range(100, 8), 1));
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  sched.Add(MakeSeq("b", Range(200, 8), 1));
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  EXPECT_EQ(blocks.num_evictable(), 4);
  const std::vector<int32_t> lru = cache.allocator().evictable();
  // c (5 tokens) needs two blocks and none is free: it evicts a's tail block
  // (the least recently released), then a's head.
  sched.Add(MakeSeq("c", Range(300, 5), 1));
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  EXPECT_EQ(cache.allocator().num_evictions(), 2);
  // c's first block (now cached under c's prefix) is the one that was lru[0];
  // its partial second block, lru[1], went to the free list; b's two are untouched.
  EXPECT_EQ(cache.allocator().evictable(), (std::vector<int32_t>{lru[2], lru[3], lru[0]}));
  // b's prefix is still cached, a's is gone.
  const int64_t hits = sched.prefix_cache_hits();
  sched.Add(MakeSeq("b2", Concat(Range(200, 8), {1}), 1));
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  EXPECT_EQ(sched.prefix_cache_hits(), hits + 8);
  sched.Add(MakeSeq("a2", Concat(Range(100, 8), {1}), 1));
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  EXPECT_EQ(sched.prefix_cache_hits(), hits + 8);
  EXPECT_EQ(blocks.num_used(), 0);
}

TEST(ForkTest, ChoicesShareThePromptAndCopyExactlyThePartialBlock) {
  KvCache cache = MakeCache(16, 4);
  BlockManager blocks(&cache, true);
  SchedulerConfig cfg{8, 64};
  Scheduler sched(cfg, &blocks);
  sched.Add(MakeSeq("p", Range(10, 6), 4, /*n=*/3));
  auto b1 = sched.Schedule();
  ASSERT_TRUE(b1.ok());
  ASSERT_EQ(b1->size(), 1u);
  FakeStep(sched, blocks, cache, *b1, nullptr);  // prefill, fork, one token per choice
  auto seqs = sched.sequences();
  ASSERT_EQ(seqs.size(), 3u);
  const std::vector<int32_t> prompt_blocks = seqs[0]->table;
  ASSERT_EQ(prompt_blocks.size(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(seqs[i]->index, static_cast<int32_t>(i));
    EXPECT_EQ(seqs[i]->id, "p");
    EXPECT_EQ(seqs[i]->table, prompt_blocks);
    EXPECT_EQ(seqs[i]->output, std::vector<int32_t>{FakeToken(static_cast<int32_t>(i), 0)});
  }
  EXPECT_EQ(blocks.ref_count(prompt_blocks[0]), 3);
  EXPECT_EQ(blocks.ref_count(prompt_blocks[1]), 3);
  EXPECT_EQ(blocks.num_used(), 2);
  // The next step writes position 6 of every choice, in the partial block: the
  // first two choices copy it, the last writes it in place; the full block stays shared.
  auto b2 = sched.Schedule();
  ASSERT_TRUE(b2.ok());
  ASSERT_EQ(b2->size(), 3u);
  EXPECT_EQ(blocks.num_copies(), 2);
  EXPECT_EQ(blocks.num_used(), 4);
  EXPECT_EQ(blocks.ref_count(prompt_blocks[0]), 3);
  std::set<int32_t> second;
  for (const Sequence* s : sched.sequences()) {
    EXPECT_EQ(s->table[0], prompt_blocks[0]);
    second.insert(s->table[1]);
    // The copy holds the prompt's positions 4 and 5.
    for (int64_t p = 4; p < 6; ++p) EXPECT_EQ(*Slot(cache, *s, p), PrefixCode(*s, p));
  }
  EXPECT_EQ(second.size(), 3u);
  EXPECT_TRUE(second.count(prompt_blocks[1]));
  FakeStep(sched, blocks, cache, *b2, nullptr);
  int64_t steps = 0;
  std::vector<std::unique_ptr<Sequence>> done;
  RunToCompletion(sched, blocks, cfg, &steps, &cache, &done);
  EXPECT_EQ(blocks.num_copies(), 2);
  ASSERT_EQ(done.size(), 3u);
  for (const auto& s : done)
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(s->output[k], FakeToken(s->index, k));
  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_free(), 16);
}

TEST(ForkTest, AnAlignedPromptNeedsNoCopy) {
  KvCache cache = MakeCache(16, 4);
  BlockManager blocks(&cache);
  SchedulerConfig cfg{8, 64};
  Scheduler sched(cfg, &blocks);
  sched.Add(MakeSeq("p", Range(10, 8), 3, 2));
  int64_t steps = 0;
  RunToCompletion(sched, blocks, cfg, &steps, &cache);
  EXPECT_EQ(blocks.num_copies(), 0);
  EXPECT_EQ(blocks.num_free(), 16);
}

TEST(ForkTest, AbortEndsEveryChoice) {
  KvCache cache = MakeCache(16, 4);
  BlockManager blocks(&cache);
  Scheduler sched({8, 64}, &blocks);
  sched.Add(MakeSeq("p", Range(10, 5), 8, 4));
  auto b = sched.Schedule();
  ASSERT_TRUE(b.ok());
  FakeStep(sched, blocks, cache, *b, nullptr);
  ASSERT_EQ(sched.num_running(), 4u);
  ASSERT_TRUE(sched.Abort("p").ok());
  auto done = sched.TakeFinished();
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->size(), 4u);
  for (const auto& s : *done) EXPECT_EQ(s->finish_reason, "abort");
  EXPECT_FALSE(sched.Has("p"));
  EXPECT_EQ(blocks.num_free(), 16);
}

TEST(ForkTest, PreemptionWithSharedBlocksKeepsEveryChoiceCorrect) {
  // 7 blocks of 4 for two requests of 3 choices of 5 + 7 positions each: choices get preempted.
  for (bool caching : {false, true}) {
    KvCache cache = MakeCache(7, 4);
    BlockManager blocks(&cache, caching);
    SchedulerConfig cfg{8, 64};
    Scheduler sched(cfg, &blocks);
    sched.Add(MakeSeq("x", Range(10, 5), 8, 3));
    sched.Add(MakeSeq("y", Range(50, 6), 8, 3));
    int64_t steps = 0;
    std::vector<std::unique_ptr<Sequence>> done;
    EXPECT_EQ(RunToCompletion(sched, blocks, cfg, &steps, &cache, &done), 6 * 8);
    EXPECT_GT(sched.num_preemptions(), 0) << caching;
    ASSERT_EQ(done.size(), 6u);
    for (const auto& s : done)
      for (size_t k = 0; k < 8; ++k) EXPECT_EQ(s->output[k], FakeToken(s->index, k)) << s->id << "/" << s->index;
    EXPECT_EQ(blocks.num_used(), 0);
    EXPECT_EQ(blocks.num_free(), 7);
    if (caching) {
      EXPECT_GT(sched.prefix_cache_hits(), 0);  // preempted choices found their blocks again
    } else {
      EXPECT_EQ(blocks.num_evictable(), 0);
    }
  }
}

TEST(PrefixCacheTest, StaggeredSharedPrefixesUnderATinyCacheFinishWithEveryBlockFree) {
  KvCache cache = MakeCache(9, 4);
  BlockManager blocks(&cache, true);
  SchedulerConfig cfg{4, 7};
  Scheduler sched(cfg, &blocks);
  std::vector<std::unique_ptr<Sequence>> done;
  int64_t generated = 0, expected = 0;
  for (int r = 0; r < 8; ++r) {
    sched.Add(MakeSeq(std::to_string(r), Concat(Range(10, 9 + r % 3 * 4), Range(40 + r, r % 4)), 6, 1 + r % 2));
    expected += 6 * (1 + r % 2);
    // Two steps between arrivals.
    for (int k = 0; k < 2 && sched.num_running() + sched.num_waiting() > 0; ++k) {
      auto batch = sched.Schedule();
      ASSERT_TRUE(batch.ok());
      FakeStep(sched, blocks, cache, *batch, &done);
    }
  }
  int64_t steps = 0;
  RunToCompletion(sched, blocks, cfg, &steps, &cache, &done);
  for (const auto& s : done) generated += static_cast<int64_t>(s->output.size());
  EXPECT_EQ(generated, expected);
  EXPECT_GT(sched.num_preemptions(), 0);
  EXPECT_GT(sched.prefix_cache_hits(), 0);
  EXPECT_GT(cache.allocator().num_evictions(), 0);
  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_free(), 9);
}

TEST(BlockManagerTest, BlockBytesCountsKAndVOfEveryLayer) {
  EXPECT_EQ(BlockManager::BlockBytes({2, 2, 16, 16, 1}), 2 * 2 * 2 * 16 * 16 * 4);
}

}  // namespace
}  // namespace oc::llm
