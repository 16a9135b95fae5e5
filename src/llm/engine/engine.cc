#include "llm/engine/engine.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace oc::llm {
namespace {

// config.json's eos_token_id: a number, a list of numbers, or absent.
std::vector<int32_t> ReadEos(const std::string& dir) {
  std::vector<int32_t> eos;
  std::ifstream f(dir + "/config.json");
  if (!f) return eos;
  nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("eos_token_id")) return eos;
  const auto& e = j["eos_token_id"];
  if (e.is_number_integer()) eos.push_back(e.get<int32_t>());
  if (e.is_array())
    for (const auto& x : e)
      if (x.is_number_integer()) eos.push_back(x.get<int32_t>());
  return eos;
}

}  // namespace

Expected<std::unique_ptr<Engine>> Engine::Create(EngineConfig cfg) {
  if (cfg.block_size < 1) return InvalidArgument("block_size ", cfg.block_size, " is invalid (expected >= 1)");
  if (cfg.max_num_seqs < 1) return InvalidArgument("max_num_seqs ", cfg.max_num_seqs, " is invalid (expected >= 1)");
  if (cfg.max_num_batched_tokens < 1)
    return InvalidArgument("max_num_batched_tokens ", cfg.max_num_batched_tokens, " is invalid (expected >= 1)");
  if (cfg.kv_cache_bytes < 1) return InvalidArgument("kv_cache_bytes ", cfg.kv_cache_bytes, " is invalid (expected >= 1)");
  std::unique_ptr<Engine> e(new Engine());
  ModelOptions mo;
  mo.weight_dtype = cfg.weight_dtype;
  mo.group_size = cfg.weight_group_size;
  OC_ASSIGN_OR_RETURN(e->model_, Model::Load(cfg.model_dir, cfg.pool ? cfg.pool : &ThreadPool::Global(), mo));
  const ModelConfig& mc = e->model_->config();
  const int64_t maxpos = mc.max_positions;
  if (cfg.max_model_len == 0) cfg.max_model_len = maxpos;
  if (cfg.max_model_len < 1) return InvalidArgument("max_model_len must be given: config.json names no maximum length");
  if (maxpos > 0 && cfg.max_model_len > maxpos)
    return InvalidArgument("max_model_len ", cfg.max_model_len, " is past the model's ", maxpos, " positions");
  const KvCacheShape one = e->model_->CacheShape(1, cfg.block_size);
  const int64_t per_block = BlockManager::BlockBytes(one);
  const int64_t blocks = cfg.kv_cache_bytes / per_block;
  const int64_t need = (cfg.max_model_len + cfg.block_size - 1) / cfg.block_size;
  if (blocks < need)
    return InvalidArgument("kv_cache_bytes ", cfg.kv_cache_bytes, " holds ", blocks, " blocks of ", per_block,
                           " bytes, but one sequence of max_model_len ", cfg.max_model_len, " needs ", need,
                           " blocks (", need * per_block, " bytes); give more bytes or a smaller max_model_len");
  if (blocks > INT32_MAX) return InvalidArgument("kv_cache_bytes ", cfg.kv_cache_bytes, " gives too many blocks");
  OC_ASSIGN_OR_RETURN(KvCache cache, KvCache::Create(e->model_->CacheShape(static_cast<int32_t>(blocks), cfg.block_size)));
  e->cache_ = std::make_unique<KvCache>(std::move(cache));
  e->blocks_ = std::make_unique<BlockManager>(e->cache_.get(), cfg.enable_prefix_caching);
  e->sched_ = std::make_unique<Scheduler>(SchedulerConfig{cfg.max_num_seqs, cfg.max_num_batched_tokens}, e->blocks_.get());
  e->eos_ = cfg.eos_token_ids.empty() ? ReadEos(cfg.model_dir) : cfg.eos_token_ids;
  e->cfg_ = std::move(cfg);
  return e;
}

Status Engine::AddRequest(const std::string& id, std::vector<int32_t> prompt, const SamplingParams& params) {
  const int64_t vocab = model_->config().vocab;
  if (sched_->Has(id)) return InvalidArgument("request '", id, "': the id is already in use");
  if (prompt.empty()) return InvalidArgument("request '", id, "': the prompt is empty (expected at least one token id)");
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return InvalidArgument("request '", id, "': prompt token ", i, " is ", prompt[i], ", expected 0..", vocab - 1);
  Status st = ValidateSamplingParams(params, vocab);
  if (!st.ok()) return st.WithContext("request '" + id + "'");
  const int64_t len = static_cast<int64_t>(prompt.size());
  if (len + params.max_tokens > cfg_.max_model_len)
    return InvalidArgument("request '", id, "': prompt of ", len, " tokens + max_tokens ", params.max_tokens,
                           " is longer than max_model_len ", cfg_.max_model_len);
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->prompt = std::move(prompt);
  s->params = params;
  Seed(*s, 0);
  sched_->Add(std::move(s));
  return Status::Ok();
}

// Choice i of a request seeded s draws from an RNG seeded s + i (mod 2^64),
// as vLLM V1 seeds its parallel-sampling children; unseeded, from std::random_device.
void Engine::Seed(Sequence& s, int32_t choice) const {
  const SamplingParams& p = s.params;
  s.rng.seed(p.seed ? *p.seed + static_cast<uint64_t>(choice)
                    : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
}

Status Engine::Abort(const std::string& id) { return sched_->Abort(id); }

Expected<std::vector<StepOutput>> Engine::Step() {
  std::vector<StepOutput> out;
  auto emit = [&](std::vector<std::unique_ptr<Sequence>>& done) {
    for (auto& s : done) {
      // An n > 1 request aborted before its prompt was done ends all n choices.
      const int32_t choices = s->forked ? 1 : s->params.n;
      for (int32_t c = 0; c < choices; ++c)
        out.push_back({s->id, {}, {}, true, s->finish_reason, s->forked ? s->index : c});
    }
  };
  OC_ASSIGN_OR_RETURN(auto aborted, sched_->TakeFinished());
  emit(aborted);
  OC_ASSIGN_OR_RETURN(std::vector<ScheduledSeq> batch, sched_->Schedule());
  if (batch.empty()) {
    if (HasUnfinished()) return Internal("the scheduler found nothing to run with requests pending");
    return out;
  }
  ++steps_;
  const int64_t vocab = model_->config().vocab;
  std::vector<std::vector<int32_t>> toks(batch.size());
  std::vector<SeqStep> steps(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const ScheduledSeq& b = batch[i];
    for (int64_t p = b.start; p < b.start + b.count; ++p) toks[i].push_back(b.seq->token(p));
    steps[i] = {toks[i], b.start, b.seq->table};
  }
  logits_.resize(batch.size() * static_cast<size_t>(vocab));
  OC_RETURN_IF_ERROR(model_->Forward(steps, *cache_, logits_.data()));
  OC_RETURN_IF_ERROR(sched_->Computed(batch));
  std::vector<float> row(static_cast<size_t>(vocab));
  std::vector<Sequence*> choices;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i].samples()) continue;
    choices.assign(1, batch[i].seq);
    // n > 1: the prompt is done; choices 1..n-1 share its blocks and sample from the same logits.
    if (batch[i].seq->params.n > 1 && !batch[i].seq->forked) {
      OC_ASSIGN_OR_RETURN(std::vector<Sequence*> kids, sched_->Fork(batch[i].seq));
      for (Sequence* k : kids) {
        Seed(*k, k->index);
        choices.push_back(k);
      }
    }
    const float* raw = logits_.data() + i * static_cast<size_t>(vocab);
    for (Sequence* c : choices) Sample(*c, {raw, static_cast<size_t>(vocab)}, row, out);
  }
  OC_ASSIGN_OR_RETURN(auto done, sched_->TakeFinished());
  (void)done;
  return out;
}

void Engine::Sample(Sequence& s, std::span<const float> raw, std::vector<float>& row, std::vector<StepOutput>& out) {
  row.assign(raw.begin(), raw.end());
  ApplyLogitRules(s.params, s.prompt, s.output, s.params.ignore_eos ? std::span<const int32_t>() : eos_, row);
  const int32_t t = SampleToken(s.params, row, s.rng, scratch_);
  s.output.push_back(t);
  StepOutput o{s.id, {t}, {}, false, "", s.index};
  if (s.params.logprobs >= 0) {
    s.logprobs.push_back(ComputeLogprobs(raw, t, s.params.logprobs));
    o.logprobs.push_back(s.logprobs.back());
  }
  const bool eos = !s.params.ignore_eos && std::find(eos_.begin(), eos_.end(), t) != eos_.end();
  const bool stop = std::find(s.params.stop_token_ids.begin(), s.params.stop_token_ids.end(), t) !=
                    s.params.stop_token_ids.end();
  if (eos || stop) {
    s.finished = true;
    s.finish_reason = "stop";
  } else if (static_cast<int64_t>(s.output.size()) >= s.params.max_tokens || s.length() >= cfg_.max_model_len) {
    s.finished = true;
    s.finish_reason = "length";
  }
  o.finished = s.finished;
  o.finish_reason = s.finish_reason;
  out.push_back(std::move(o));
}

EngineStats Engine::stats() const {
  EngineStats st;
  st.running = static_cast<int64_t>(sched_->num_running());
  st.waiting = static_cast<int64_t>(sched_->num_waiting());
  st.kv_blocks_total = blocks_->num_blocks();
  st.kv_blocks_used = blocks_->num_used();
  st.kv_blocks_evictable = blocks_->num_evictable();
  st.prefix_cache_queries = sched_->prefix_cache_queries();
  st.prefix_cache_hits = sched_->prefix_cache_hits();
  st.prefix_cache_evictions = cache_->allocator().num_evictions();
  st.cow_copies = blocks_->num_copies();
  st.preemptions = sched_->num_preemptions();
  st.steps = steps_;
  st.max_model_len = cfg_.max_model_len;
  st.block_size = cfg_.block_size;
  st.max_concurrency = blocks_->num_blocks() / blocks_->BlocksFor(cfg_.max_model_len);
  return st;
}

Expected<std::vector<RequestOutput>> Engine::Generate(const std::vector<std::vector<int32_t>>& prompts,
                                                      const SamplingParams& params) {
  const size_t n = static_cast<size_t>(std::max<int32_t>(params.n, 1));
  std::vector<RequestOutput> res(prompts.size() * n);
  std::unordered_map<std::string, size_t> slot;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string id = std::to_string(i);
    OC_RETURN_IF_ERROR(AddRequest(id, prompts[i], params));
    slot[id] = i * n;
    for (size_t c = 0; c < n; ++c) {
      res[i * n + c].id = id;
      res[i * n + c].index = static_cast<int32_t>(c);
    }
  }
  while (HasUnfinished()) {
    OC_ASSIGN_OR_RETURN(std::vector<StepOutput> outs, Step());
    for (auto& o : outs) {
      auto it = slot.find(o.id);
      if (it == slot.end() || o.index < 0 || static_cast<size_t>(o.index) >= n) continue;  // someone else's
      RequestOutput& r = res[it->second + static_cast<size_t>(o.index)];
      r.tokens.insert(r.tokens.end(), o.new_tokens.begin(), o.new_tokens.end());
      r.logprobs.insert(r.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
      if (o.finished) r.finish_reason = o.finish_reason;
    }
  }
  return res;
}

}  // namespace oc::llm
