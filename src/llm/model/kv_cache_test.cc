#include "llm/model/kv_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace oc::llm {
namespace {

TEST(BlockAllocatorTest, HandsOutEveryBlockOnceThenReportsExhaustion) {
  BlockAllocator a(3);
  std::set<int32_t> got;
  for (int i = 0; i < 3; ++i) {
    auto b = a.Allocate();
    ASSERT_TRUE(b.ok());
    got.insert(*b);
  }
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2}));
  auto none = a.Allocate();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("all 3 blocks are in use"), std::string::npos);
}

TEST(BlockAllocatorTest, SharedBlockReturnsToTheFreeListAtLastRelease) {
  BlockAllocator a(2);
  int32_t b = *a.Allocate();
  ASSERT_TRUE(a.Retain(b).ok());
  EXPECT_EQ(a.ref_count(b), 2);
  ASSERT_TRUE(a.Release(b).ok());
  EXPECT_EQ(a.num_free(), 1);
  ASSERT_TRUE(a.Release(b).ok());
  EXPECT_EQ(a.num_free(), 2);
  // Releasing or retaining a free block is the caller's bug, reported by name.
  Status s = a.Release(b);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("block " + std::to_string(b) + " is not allocated"), std::string::npos);
  EXPECT_FALSE(a.Retain(7).ok());
}

TEST(KvCacheTest, ReserveGrowsTheTableByWholeBlocksAndFreeReturnsThem) {
  KvCacheShape s;
  s.layers = 2;
  s.kv_heads = 2;
  s.head_dim = 8;
  s.block_size = 4;
  s.num_blocks = 4;
  auto c = KvCache::Create(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->block_floats(), 2 * 4 * 8);
  std::vector<int32_t> t;
  ASSERT_TRUE(c->Reserve(t, 5).ok());
  EXPECT_EQ(t.size(), 2u);
  ASSERT_TRUE(c->Reserve(t, 8).ok());
  EXPECT_EQ(t.size(), 2u);
  std::vector<int32_t> u;
  ASSERT_TRUE(c->Reserve(u, 8).ok());
  EXPECT_FALSE(c->Reserve(u, 9).ok());  // the pool holds 4 blocks
  ASSERT_TRUE(c->Free(t).ok());
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(c->allocator().num_free(), 2);
  EXPECT_TRUE(c->Reserve(u, 16).ok());
}

TEST(BlockHashTest, ChainsTheParentHashAndTheTokens) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 5}, c = {5, 6, 7, 8};
  const uint64_t ha = BlockHash(kRootBlockHash, a);
  EXPECT_EQ(ha, BlockHash(kRootBlockHash, a));  // deterministic
  EXPECT_NE(ha, BlockHash(kRootBlockHash, b));  // one token differs
  EXPECT_NE(ha, BlockHash(ha, a));              // same tokens after another prefix
  EXPECT_NE(ha, BlockHash(kRootBlockHash, std::vector<int32_t>{1, 2, 3}));
  // The second block's hash names the whole prefix: equal only when both blocks are equal.
  EXPECT_EQ(BlockHash(ha, c), BlockHash(BlockHash(kRootBlockHash, a), c));
  EXPECT_NE(BlockHash(ha, c), BlockHash(BlockHash(kRootBlockHash, b), c));
  // Token order matters.
  EXPECT_NE(BlockHash(kRootBlockHash, std::vector<int32_t>{2, 1}), BlockHash(kRootBlockHash, std::vector<int32_t>{1, 2}));
}

TEST(BlockAllocatorTest, ReleasedCachedBlocksAreEvictableAndFoundAgain) {
  BlockAllocator a(3);
  const std::vector<int32_t> t = {4, 5};
  const uint64_t h = BlockHash(kRootBlockHash, t);
  int32_t b = *a.Allocate();
  EXPECT_EQ(a.Find(h, kRootBlockHash, t), -1);
  ASSERT_TRUE(*a.Cache(b, h, kRootBlockHash, t));
  EXPECT_EQ(a.Find(h, kRootBlockHash, t), b);
  // A lookup checks the parent and the tokens, not only the hash.
  EXPECT_EQ(a.Find(h, kRootBlockHash + 1, t), -1);
  EXPECT_EQ(a.Find(h, kRootBlockHash, std::vector<int32_t>{4, 6}), -1);
  // Cached and owned by one: not free. Released: free (allocatable) and evictable, still found.
  EXPECT_EQ(a.num_used(), 1);
  ASSERT_TRUE(a.Release(b).ok());
  EXPECT_EQ(a.num_used(), 0);
  EXPECT_EQ(a.num_free(), 3);
  EXPECT_EQ(a.num_evictable(), 1);
  EXPECT_TRUE(a.is_evictable(b));
  EXPECT_EQ(a.Find(h, kRootBlockHash, t), b);
  // Acquire revives it with one owner; a second Acquire shares it.
  ASSERT_TRUE(a.Acquire(b).ok());
  EXPECT_EQ(a.ref_count(b), 1);
  EXPECT_EQ(a.num_evictable(), 0);
  ASSERT_TRUE(a.Acquire(b).ok());
  EXPECT_EQ(a.ref_count(b), 2);
  // Another block with the same content is not registered twice.
  int32_t b2 = *a.Allocate();
  EXPECT_FALSE(*a.Cache(b2, h, kRootBlockHash, t));
  EXPECT_FALSE(a.is_cached(b2));
  EXPECT_TRUE(*a.Cache(b, h, kRootBlockHash, t));  // already registered under it: fine
  EXPECT_FALSE(a.Cache(b, h + 1, kRootBlockHash, t).ok());
  EXPECT_FALSE(a.Acquire(b2).ok());  // not cached
  ASSERT_TRUE(a.Release(b2).ok());
  EXPECT_EQ(a.num_evictable(), 0);  // uncached: straight to the free list
  EXPECT_FALSE(a.Cache(b2, h, kRootBlockHash, t).ok());  // not allocated
}

TEST(BlockAllocatorTest, EvictsOnlyWhenTheFreeListIsEmptyLeastRecentlyReleasedFirst) {
  BlockAllocator a(4);
  std::vector<int32_t> blocks;
  std::vector<std::vector<int32_t>> toks;
  uint64_t parent = kRootBlockHash;
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 3; ++i) {
    blocks.push_back(*a.Allocate());
    toks.push_back({i, i + 10});
    hashes.push_back(BlockHash(parent, toks.back()));
    ASSERT_TRUE(*a.Cache(blocks.back(), hashes.back(), parent, toks.back()));
    parent = hashes.back();
  }
  // Released in the order 2, 0, 1: the LRU is [2, 0, 1].
  for (int i : {2, 0, 1}) ASSERT_TRUE(a.Release(blocks[static_cast<size_t>(i)]).ok());
  EXPECT_EQ(a.evictable(), (std::vector<int32_t>{blocks[2], blocks[0], blocks[1]}));
  EXPECT_EQ(a.num_free(), 4);
  // The one never-used block goes first, and evicts nothing.
  int32_t fresh = *a.Allocate();
  EXPECT_EQ(std::count(blocks.begin(), blocks.end(), fresh), 0);
  EXPECT_EQ(a.num_evictions(), 0);
  EXPECT_EQ(a.num_evictable(), 3);
  // Reusing block 0 moves it out of the LRU; its release puts it at the recent end.
  ASSERT_TRUE(a.Acquire(blocks[0]).ok());
  ASSERT_TRUE(a.Release(blocks[0]).ok());
  EXPECT_EQ(a.evictable(), (std::vector<int32_t>{blocks[2], blocks[1], blocks[0]}));
  // Now the free list is empty: allocations evict 2, then 1, then 0, forgetting their hashes.
  for (int i : {2, 1, 0}) {
    const auto b = a.Allocate();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*b, blocks[static_cast<size_t>(i)]);
    EXPECT_FALSE(a.is_cached(*b));
    EXPECT_EQ(a.ref_count(*b), 1);
    const uint64_t p = i == 0 ? kRootBlockHash : hashes[static_cast<size_t>(i - 1)];
    EXPECT_EQ(a.Find(hashes[static_cast<size_t>(i)], p, toks[static_cast<size_t>(i)]), -1);
  }
  EXPECT_EQ(a.num_evictions(), 3);
  EXPECT_FALSE(a.Allocate().ok());
}

TEST(KvCacheTest, FreeReleasesTheTailFirstAndCopyBlockCopiesOneBlockOfEveryLayer) {
  auto c = KvCache::Create({2, 2, 4, 2, 4});
  ASSERT_TRUE(c.ok());
  std::vector<int32_t> t;
  ASSERT_TRUE(c->Reserve(t, 6).ok());  // blocks for positions 0..5
  ASSERT_EQ(t.size(), 3u);
  for (size_t i = 0; i < t.size(); ++i) {
    const std::vector<int32_t> tok = {static_cast<int32_t>(i)};
    ASSERT_TRUE(*c->allocator().Cache(t[i], BlockHash(kRootBlockHash + i, tok), kRootBlockHash + i, tok));
  }
  const std::vector<int32_t> kept = t;
  ASSERT_TRUE(c->Free(t).ok());
  // The tail block is released first, so it is evicted first.
  EXPECT_EQ(c->allocator().evictable(), (std::vector<int32_t>{kept[2], kept[1], kept[0]}));

  const int64_t n = c->block_floats();
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t i = 0; i < 4 * n; ++i) {
      c->k(l)[i] = static_cast<float>(1000 * l + i);
      c->v(l)[i] = static_cast<float>(-1000 * l - i);
    }
  std::vector<int32_t> u;
  ASSERT_TRUE(c->Reserve(u, 8).ok());  // all four blocks
  ASSERT_TRUE(c->CopyBlock(u[1], u[3]).ok());
  for (int64_t l = 0; l < 2; ++l)
    for (int32_t b = 0; b < 4; ++b)
      for (int64_t i = 0; i < n; ++i) {
        const int32_t from = b == u[3] ? u[1] : b;  // only the destination block changed
        EXPECT_EQ(c->k(l)[b * n + i], static_cast<float>(1000 * l + from * n + i));
        EXPECT_EQ(c->v(l)[b * n + i], static_cast<float>(-1000 * l - from * n - i));
      }
  std::vector<int32_t> one = {u[0]};
  ASSERT_TRUE(c->Free(u).ok());
  EXPECT_FALSE(c->CopyBlock(one[0], 1).ok());  // not allocated
}

TEST(KvCacheTest, RefusesAnEmptyGeometry) {
  KvCacheShape s;
  EXPECT_FALSE(KvCache::Create(s).ok());
}

}  // namespace
}  // namespace oc::llm
