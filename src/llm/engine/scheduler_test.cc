#include "llm/engine/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

namespace oc::llm {
namespace {

KvCache MakeCache(int32_t blocks, int64_t block_size) {
  auto c = KvCache::Create({1, 1, 2, block_size, blocks});
  EXPECT_TRUE(c.ok());
  return std::move(*c);
}

std::unique_ptr<Sequence> MakeSeq(const std::string& id, int64_t prompt_len, int64_t max_tokens) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->prompt.assign(static_cast<size_t>(prompt_len), 1);
  s->params.max_tokens = max_tokens;
  return s;
}

// Drives the scheduler as the engine does, with a fake forward: every
// sequence that reaches its end gets one token; checks the step invariants.
int64_t RunToCompletion(Scheduler& sched, BlockManager& blocks, const SchedulerConfig& cfg, int64_t* steps) {
  int64_t generated = 0;
  for (*steps = 0; sched.num_running() + sched.num_waiting() > 0; ++*steps) {
    auto batch = sched.Schedule();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_FALSE(batch->empty()) << "nothing scheduled at step " << *steps;
    if (batch->empty()) return generated;
    EXPECT_LE(static_cast<int32_t>(batch->size()), cfg.max_num_seqs);
    int64_t tokens = 0;
    std::set<int32_t> used;
    for (const auto& b : *batch) {
      tokens += b.count;
      EXPECT_GE(static_cast<int64_t>(b.seq->table.size()) * blocks.block_size(), b.start + b.count);
      for (int32_t blk : b.seq->table) EXPECT_TRUE(used.insert(blk).second) << "block " << blk << " in two tables";
    }
    EXPECT_LE(tokens, cfg.max_num_batched_tokens);
    sched.Computed(*batch);
    for (const auto& b : *batch) {
      if (!b.samples()) continue;
      b.seq->output.push_back(2);
      ++generated;
      if (static_cast<int64_t>(b.seq->output.size()) >= b.seq->params.max_tokens) b.seq->finished = true;
    }
    auto done = sched.TakeFinished();
    EXPECT_TRUE(done.ok());
    if (*steps > 10000) {
      ADD_FAILURE() << "no progress";
      break;
    }
  }
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
  sched.Computed(*b1);
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

TEST(BlockManagerTest, BlockBytesCountsKAndVOfEveryLayer) {
  EXPECT_EQ(BlockManager::BlockBytes({2, 2, 16, 16, 1}), 2 * 2 * 2 * 16 * 16 * 4);
}

}  // namespace
}  // namespace oc::llm
