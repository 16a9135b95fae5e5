#include "llm/model/kv_cache.h"

#include <gtest/gtest.h>

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

TEST(KvCacheTest, RefusesAnEmptyGeometry) {
  KvCacheShape s;
  EXPECT_FALSE(KvCache::Create(s).ok());
}

}  // namespace
}  // namespace oc::llm
