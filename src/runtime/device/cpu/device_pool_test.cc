#include "runtime/device/cpu/device_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "runtime/device/cpu/memory_registry.h"

namespace oc::rt {
namespace {

TEST(DevicePoolTest, ChunkSizesAreGranularAndCoverTheRequest) {
  EXPECT_EQ(DevicePool::ChunkSize(1), 512u);
  EXPECT_EQ(DevicePool::ChunkSize(512), 512u);
  EXPECT_EQ(DevicePool::ChunkSize(513), 1024u);
  EXPECT_EQ(DevicePool::ChunkSize((1u << 20) + 1), (1u << 20) + 65536u);
  EXPECT_EQ(DevicePool::ChunkSize((64u << 20) + 1), (66u << 20));
  for (size_t s : {1ul, 100ul, 4097ul, 3000000ul, 70000000ul}) EXPECT_GE(DevicePool::ChunkSize(s), s);
}

TEST(DevicePoolTest, RepeatedSizesComeFromTheCache) {
  DevicePool pool(size_t{64} << 20);
  std::vector<size_t> sizes = {150528, 4000, 1000, 4 << 20};
  // Warm-up: one round from the system.
  std::vector<std::pair<void*, size_t>> live;
  for (size_t s : sizes) {
    size_t chunk = 0;
    auto p = pool.Allocate(s, &chunk);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 64, 0u);
    std::memset(*p, 0xAB, s);  // the whole request is usable
    live.push_back({*p, chunk});
  }
  for (size_t i = 0; i < sizes.size(); ++i) pool.Free(live[i].first, sizes[i], live[i].second);
  PoolStats warm = pool.Stats();
  EXPECT_EQ(warm.system_allocations, sizes.size());
  EXPECT_EQ(warm.in_use_bytes, 0u);
  EXPECT_EQ(warm.cached_bytes, warm.reserved_bytes);

  for (int round = 0; round < 100; ++round) {
    live.clear();
    for (size_t s : sizes) {
      size_t chunk = 0;
      auto p = pool.Allocate(s, &chunk);
      ASSERT_TRUE(p.ok());
      live.push_back({*p, chunk});
    }
    for (size_t i = 0; i < sizes.size(); ++i) pool.Free(live[i].first, sizes[i], live[i].second);
  }
  PoolStats after = pool.Stats();
  EXPECT_EQ(after.system_allocations, sizes.size()) << "steady state must not touch the system allocator";
  EXPECT_EQ(after.reserved_bytes, warm.reserved_bytes) << "no growth across repeated rounds";
  EXPECT_EQ(after.cache_hits, 100 * sizes.size());
  EXPECT_EQ(after.allocations, 101 * sizes.size());
}

TEST(DevicePoolTest, SmallRequestDoesNotPinALargeChunk) {
  DevicePool pool(size_t{64} << 20);
  size_t chunk = 0;
  auto big = pool.Allocate(8 << 20, &chunk);
  ASSERT_TRUE(big.ok());
  pool.Free(*big, 8 << 20, chunk);
  size_t small_chunk = 0;
  auto small = pool.Allocate(4096, &small_chunk);
  ASSERT_TRUE(small.ok());
  EXPECT_NE(*small, *big);
  EXPECT_EQ(small_chunk, 4096u);
  EXPECT_EQ(pool.Stats().cache_hits, 0u);
  pool.Free(*small, 4096, small_chunk);
}

TEST(DevicePoolTest, CacheLimitBoundsWhatIsKept) {
  DevicePool pool(size_t{1} << 20);  // 1 MiB of cache
  std::vector<std::pair<void*, size_t>> live;
  for (int i = 0; i < 8; ++i) {
    size_t chunk = 0;
    auto p = pool.Allocate(512 * 1024, &chunk);
    ASSERT_TRUE(p.ok());
    live.push_back({*p, chunk});
  }
  for (auto& [p, c] : live) pool.Free(p, 512 * 1024, c);
  PoolStats s = pool.Stats();
  EXPECT_LE(s.cached_bytes, size_t{1} << 20);
  EXPECT_EQ(s.reserved_bytes, s.cached_bytes);
  EXPECT_EQ(s.system_frees, 6u);
  pool.ReleaseCached();
  EXPECT_EQ(pool.Stats().reserved_bytes, 0u);
}

TEST(DevicePoolTest, ZeroLimitReturnsEverythingToTheSystem) {
  DevicePool pool(0);
  size_t chunk = 0;
  auto p = pool.Allocate(1000, &chunk);
  ASSERT_TRUE(p.ok());
  pool.Free(*p, 1000, chunk);
  EXPECT_EQ(pool.Stats().reserved_bytes, 0u);
  EXPECT_FALSE(pool.Allocate(0).ok());
}

TEST(DevicePoolTest, RegistryKeepsRequestedBoundsOverPooledChunks) {
  MemoryRegistry reg;
  auto p = reg.Allocate(1000, MemKind::kDevice);
  ASSERT_TRUE(p.ok());
  // The chunk is 1024 bytes, but copies are checked against the 1000 asked for.
  EXPECT_TRUE(reg.Find(*p, 1000).has_value());
  EXPECT_FALSE(reg.Find(*p, 1001).has_value());
  MemStats st = reg.Stats();
  EXPECT_EQ(st.device_bytes, 1000u);
  EXPECT_EQ(st.pool.in_use_bytes, 1000u);
  ASSERT_TRUE(reg.Free(*p, MemKind::kDevice).ok());
  EXPECT_FALSE(reg.Free(*p, MemKind::kDevice).ok()) << "double free must be refused";
  // Reuse hands the chunk out again, and the registry knows it as a new block.
  auto q = reg.Allocate(1000, MemKind::kHost);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(reg.Free(*q, MemKind::kDevice).ok()) << "kind mismatch";
  ASSERT_TRUE(reg.Free(*q, MemKind::kHost).ok());
  reg.FreeAll();
  EXPECT_EQ(reg.Stats().pool.reserved_bytes, 0u);
}

TEST(DevicePoolTest, ConcurrentAllocFreeKeepsStatsConsistent) {
  MemoryRegistry reg;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&reg, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 2000; ++i) {
        size_t s = 1 + rng() % 200000;
        auto p = reg.Allocate(s, i % 2 ? MemKind::kDevice : MemKind::kHost);
        ASSERT_TRUE(p.ok());
        static_cast<uint8_t*>(*p)[s - 1] = 1;
        ASSERT_TRUE(reg.Free(*p, i % 2 ? MemKind::kDevice : MemKind::kHost).ok());
      }
    });
  for (auto& th : threads) th.join();
  MemStats st = reg.Stats();
  EXPECT_EQ(st.live_blocks, 0u);
  EXPECT_EQ(st.pool.in_use_bytes, 0u);
  EXPECT_EQ(st.pool.allocations, 8000u);
  EXPECT_EQ(st.pool.reserved_bytes, st.pool.cached_bytes);
}

}  // namespace
}  // namespace oc::rt
