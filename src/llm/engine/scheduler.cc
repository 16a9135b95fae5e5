#include "llm/engine/scheduler.h"

#include <algorithm>

namespace oc::llm {

Status Scheduler::Preempt() {
  std::unique_ptr<Sequence> victim = std::move(running_.back());
  running_.pop_back();
  OC_RETURN_IF_ERROR(blocks_->Free(victim->table));
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
    while (!blocks_->CanGrow(s->table, s->computed + take)) {
      self = running_.size() - 1 == i;
      OC_RETURN_IF_ERROR(Preempt());
      preempted = true;
      if (self) break;
    }
    if (self) break;
    OC_RETURN_IF_ERROR(blocks_->Grow(s->table, s->computed + take));
    batch.push_back({s, s->computed, take});
    budget -= take;
    ++i;
  }
  while (!preempted && !waiting_.empty() && budget > 0 && static_cast<int32_t>(batch.size()) < cfg_.max_num_seqs) {
    Sequence* s = waiting_.front().get();
    if (s->finished) break;  // aborted: TakeFinished removes it
    const int64_t take = std::min(budget, s->length() - s->computed);
    if (!blocks_->CanGrow(s->table, s->computed + take)) break;
    OC_RETURN_IF_ERROR(blocks_->Grow(s->table, s->computed + take));
    batch.push_back({s, s->computed, take});
    budget -= take;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  return batch;
}

void Scheduler::Computed(const std::vector<ScheduledSeq>& batch) {
  for (const auto& b : batch) b.seq->computed = b.start + b.count;
}

Expected<std::vector<std::unique_ptr<Sequence>>> Scheduler::TakeFinished() {
  std::vector<std::unique_ptr<Sequence>> done;
  auto sweep = [&](auto& list) -> Status {
    for (auto it = list.begin(); it != list.end();) {
      if ((*it)->finished) {
        OC_RETURN_IF_ERROR(blocks_->Free((*it)->table));
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
  for (auto& s : running_)
    if (s->id == id && !s->finished) return s->finished = true, s->finish_reason = "abort", Status::Ok();
  for (auto& s : waiting_)
    if (s->id == id && !s->finished) return s->finished = true, s->finish_reason = "abort", Status::Ok();
  return NotFound("request '", id, "' is not running or waiting");
}

bool Scheduler::Has(const std::string& id) const {
  for (const auto& s : running_)
    if (s->id == id) return true;
  for (const auto& s : waiting_)
    if (s->id == id) return true;
  return false;
}

}  // namespace oc::llm
