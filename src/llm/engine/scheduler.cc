#include "llm/engine/scheduler.h"

#include <algorithm>

namespace oc::llm {

// ---- BlockManager ----------------------------------------------------------------------

int64_t BlockManager::BlocksNeeded(const Sequence& s, int64_t positions) const {
  const int64_t blocks = BlocksFor(positions);
  int64_t need = std::max<int64_t>(0, blocks - static_cast<int64_t>(s.table.size()));
  const int64_t end = std::min<int64_t>(blocks, static_cast<int64_t>(s.table.size()));
  for (int64_t i = s.computed / block_size(); i < end; ++i)
    if (ref_count(s.table[static_cast<size_t>(i)]) > 1) ++need;  // shared: written only after a copy
  return need;
}

Status BlockManager::Grow(Sequence& s, int64_t positions) {
  const int64_t end = std::min<int64_t>(BlocksFor(positions), static_cast<int64_t>(s.table.size()));
  for (int64_t i = s.computed / block_size(); i < end; ++i) {
    int32_t& b = s.table[static_cast<size_t>(i)];
    if (ref_count(b) == 1) continue;
    OC_ASSIGN_OR_RETURN(int32_t copy, cache_->allocator().Allocate());
    OC_RETURN_IF_ERROR(cache_->CopyBlock(b, copy));
    OC_RETURN_IF_ERROR(cache_->allocator().Release(b));
    b = copy;
    ++copies_;
  }
  return cache_->Reserve(s.table, positions);
}

Status BlockManager::Free(Sequence& s) {
  s.registered = 0;
  return cache_->Free(s.table);
}

void BlockManager::EnsureHashes(Sequence& s, int64_t blocks) const {
  const int64_t bs = block_size();
  while (static_cast<int64_t>(s.hashes.size()) < blocks) {
    const int64_t i = static_cast<int64_t>(s.hashes.size());
    const uint64_t parent = i == 0 ? kRootBlockHash : s.hashes.back();
    s.hashes.push_back(BlockHash(parent, s.tokens(i * bs, (i + 1) * bs)));
  }
}

BlockManager::Hit BlockManager::FindCachedPrefix(Sequence& s) const {
  Hit hit;
  if (!prefix_caching_ || s.length() < 1) return hit;
  const int64_t bs = block_size();
  const int64_t max_blocks = (s.length() - 1) / bs;  // the last token is always computed
  EnsureHashes(s, max_blocks);
  const BlockAllocator& a = cache_->allocator();
  for (int64_t i = 0; i < max_blocks; ++i) {
    const uint64_t parent = i == 0 ? kRootBlockHash : s.hashes[static_cast<size_t>(i - 1)];
    const int32_t b = a.Find(s.hashes[static_cast<size_t>(i)], parent, s.tokens(i * bs, (i + 1) * bs));
    if (b < 0) break;
    hit.blocks.push_back(b);
    if (a.is_evictable(b)) ++hit.evictable;
  }
  return hit;
}

Status BlockManager::TakeCachedPrefix(Sequence& s, const Hit& hit) {
  if (s.computed != 0 || !s.table.empty())
    return Internal("request '", s.id, "': a cached prefix is taken only by a sequence with no blocks");
  for (int32_t b : hit.blocks) {
    OC_RETURN_IF_ERROR(cache_->allocator().Acquire(b));
    s.table.push_back(b);
  }
  s.computed = static_cast<int64_t>(hit.blocks.size()) * block_size();
  s.registered = static_cast<int64_t>(hit.blocks.size());
  return Status::Ok();
}

Status BlockManager::RegisterFull(Sequence& s) {
  if (!prefix_caching_) return Status::Ok();
  const int64_t bs = block_size();
  const int64_t full = std::min<int64_t>(s.computed / bs, static_cast<int64_t>(s.table.size()));
  EnsureHashes(s, full);
  for (int64_t i = s.registered; i < full; ++i) {
    const uint64_t parent = i == 0 ? kRootBlockHash : s.hashes[static_cast<size_t>(i - 1)];
    // false: another block holds the same prefix (computed at the same time); this one stays private.
    OC_ASSIGN_OR_RETURN(bool cached, cache_->allocator().Cache(s.table[static_cast<size_t>(i)],
                                                               s.hashes[static_cast<size_t>(i)], parent,
                                                               s.tokens(i * bs, (i + 1) * bs)));
    (void)cached;
  }
  s.registered = std::max(s.registered, full);
  return Status::Ok();
}

Status BlockManager::Share(const Sequence& parent, Sequence& child) {
  if (!child.table.empty()) return Internal("request '", child.id, "': a forked choice starts with no blocks");
  for (int32_t b : parent.table) {
    OC_RETURN_IF_ERROR(cache_->allocator().Retain(b));
    child.table.push_back(b);
  }
  child.registered = parent.registered;
  child.hashes = parent.hashes;
  return Status::Ok();
}

// ---- Scheduler -------------------------------------------------------------------------

Status Scheduler::Preempt() {
  std::unique_ptr<Sequence> victim = std::move(running_.back());
  running_.pop_back();
  OC_RETURN_IF_ERROR(blocks_->Free(*victim));
  victim->computed = 0;
  waiting_.push_front(std::move(victim));
  ++preemptions_;
  return Status::Ok();
}

Expected<std::vector<ScheduledSeq>> Scheduler::Schedule() {
  std::vector<ScheduledSeq> batch;
  int64_t budget = cfg_.max_num_batched_tokens;
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0 && static_cast<int32_t>(batch.size()) < cfg_.max_num_seqs;) {
    Sequence* s = running_[i].get();
    if (s->finished) {
      ++i;
      continue;
    }
    const int64_t take = std::min(budget, s->length() - s->computed);
    // Free blocks by preempting the newest running sequences (never one
    // already in this batch: those are older than i).
    bool self = false;
    while (!blocks_->CanGrow(*s, s->computed + take)) {
      self = running_.size() - 1 == i;
      OC_RETURN_IF_ERROR(Preempt());
      preempted = true;
      if (self) break;
    }
    if (self) break;
    OC_RETURN_IF_ERROR(blocks_->Grow(*s, s->computed + take));
    batch.push_back({s, s->computed, take});
    budget -= take;
    ++i;
  }
  while (!preempted && !waiting_.empty() && budget > 0 && static_cast<int32_t>(batch.size()) < cfg_.max_num_seqs) {
    Sequence* s = waiting_.front().get();
    if (s->finished) break;  // aborted: TakeFinished removes it
    const BlockManager::Hit hit = blocks_->FindCachedPrefix(*s);
    const int64_t start = static_cast<int64_t>(hit.blocks.size()) * blocks_->block_size();
    const int64_t take = std::min(budget, s->length() - start);
    const int64_t need = blocks_->BlocksFor(start + take) - static_cast<int64_t>(hit.blocks.size());
    if (need + hit.evictable > blocks_->num_free()) break;
    OC_RETURN_IF_ERROR(blocks_->TakeCachedPrefix(*s, hit));
    if (blocks_->prefix_caching()) {
      queries_ += s->length();
      hits_ += start;
    }
    OC_RETURN_IF_ERROR(blocks_->Grow(*s, start + take));
    batch.push_back({s, start, take});
    budget -= take;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  return batch;
}

Status Scheduler::Computed(const std::vector<ScheduledSeq>& batch) {
  for (const auto& b : batch) {
    b.seq->computed = b.start + b.count;
    OC_RETURN_IF_ERROR(blocks_->RegisterFull(*b.seq));
  }
  return Status::Ok();
}

Expected<std::vector<std::unique_ptr<Sequence>>> Scheduler::TakeFinished() {
  std::vector<std::unique_ptr<Sequence>> done;
  auto sweep = [&](auto& list) -> Status {
    for (auto it = list.begin(); it != list.end();) {
      if ((*it)->finished) {
        OC_RETURN_IF_ERROR(blocks_->Free(**it));
        done.push_back(std::move(*it));
        it = list.erase(it);
      } else {
        ++it;
      }
    }
    return Status::Ok();
  };
  OC_RETURN_IF_ERROR(sweep(running_));
  OC_RETURN_IF_ERROR(sweep(waiting_));
  return done;
}

Status Scheduler::Abort(const std::string& id) {
  bool found = false;
  auto mark = [&](auto& list) {
    for (auto& s : list)
      if (s->id == id && !s->finished) {
        s->finished = true;
        s->finish_reason = "abort";
        found = true;
      }
  };
  mark(running_);
  mark(waiting_);
  if (!found) return NotFound("request '", id, "' is not running or waiting");
  return Status::Ok();
}

bool Scheduler::Has(const std::string& id) const {
  for (const auto& s : running_)
    if (s->id == id) return true;
  for (const auto& s : waiting_)
    if (s->id == id) return true;
  return false;
}

Expected<std::vector<Sequence*>> Scheduler::Fork(Sequence* parent) {
  auto at = std::find_if(running_.begin(), running_.end(), [&](const auto& s) { return s.get() == parent; });
  if (at == running_.end()) return Internal("Fork: the sequence is not running");
  if (parent->forked || parent->index != 0 || !parent->output.empty() || parent->computed != parent->length())
    return Internal("request '", parent->id, "': only choice 0, its prompt computed and no token yet, is forked");
  size_t pos = static_cast<size_t>(at - running_.begin());
  std::vector<Sequence*> kids;
  for (int32_t k = 1; k < parent->params.n; ++k) {
    auto c = std::make_unique<Sequence>();
    c->id = parent->id;
    c->index = k;
    c->prompt = parent->prompt;
    c->params = parent->params;
    c->computed = parent->computed;
    c->forked = true;
    OC_RETURN_IF_ERROR(blocks_->Share(*parent, *c));
    kids.push_back(c.get());
    running_.insert(running_.begin() + static_cast<std::ptrdiff_t>(pos + static_cast<size_t>(k)), std::move(c));
  }
  parent->forked = true;
  return kids;
}

std::vector<const Sequence*> Scheduler::sequences() const {
  std::vector<const Sequence*> all;
  for (const auto& s : running_) all.push_back(s.get());
  for (const auto& s : waiting_) all.push_back(s.get());
  return all;
}

}  // namespace oc::llm
