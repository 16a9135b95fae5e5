// oc-llm-generate: greedy generation with a Hugging Face decoder-only model
// (src/llm/model/), for checking the model against transformers and timing it.
//
//   oc-llm-generate --model DIR --prompt-ids 1,2,3 [--max-tokens N]
//                   [--dump-logits FILE.npy] [--threads N] [--block-size N]
//                   [--dtype auto|float32|bfloat16|int8|int4] [--group-size N]
//   oc-llm-generate --model DIR --batch PROMPTS.json [--stagger] ...
//
// Prints the generated ids as a JSON array (one line per prompt with --batch,
// whose file is a JSON list of id lists). With --batch all prompts are
// prefilled in one forward and every decode step of all of them is one
// batched forward; with --stagger prompt s joins at step s, so that steps mix
// one prefill with the other sequences' decodes. --dump-logits writes the
// logits of each generated step as float32 .npy: [steps, vocab], or
// [prompts, steps, vocab] with --batch.
// --dtype picks the projections' weight precision (default float32; see
// src/llm/model/weight_dtype.h), --group-size the inputs per int8 / int4
// scale. Timing and the weights' bytes go to stderr.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/thread_pool.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model.h"

namespace {

using oc::Status;

int Fail(const std::string& msg) {
  std::fprintf(stderr, "oc-llm-generate: %s\n", msg.c_str());
  return 1;
}

bool ParseIds(const std::string& s, std::vector<int32_t>& out, std::string& err) {
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      out.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      err = "--prompt-ids: \"" + item + "\" is not a token id (expected comma-separated non-negative integers)";
      return false;
    }
  }
  if (out.empty()) err = "--prompt-ids: no ids";
  return !out.empty();
}

bool WriteNpy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& data) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return false;
  const uint16_t hl = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(hl & 0xff));
  f.put(static_cast<char>(hl >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return static_cast<bool>(f);
}

int32_t ArgMax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return static_cast<int32_t>(best);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir, prompt_ids, batch_file, dump;
  int64_t max_tokens = 16, block_size = 16;
  oc::llm::ModelOptions options;
  int threads = 0;
  bool stagger = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    bool ok = true;
    if (a == "--model")
      ok = value(model_dir);
    else if (a == "--prompt-ids")
      ok = value(prompt_ids);
    else if (a == "--batch")
      ok = value(batch_file);
    else if (a == "--dump-logits")
      ok = value(dump);
    else if (a == "--stagger")
      stagger = true;
    else if (a == "--dtype") {
      ok = value(v);
      if (ok) {
        auto d = oc::llm::ParseWeightDtype(v);
        if (!d.ok()) return Fail("--dtype: " + d.status().message());
        options.weight_dtype = *d;
      }
    } else if (a == "--group-size") {
      ok = value(v);
      if (ok) {
        try {
          size_t used = 0;
          long long n = std::stoll(v, &used);
          if (used != v.size() || n < 0) throw std::invalid_argument(v);
          options.group_size = n;
        } catch (const std::exception&) {
          return Fail("--group-size: \"" + v + "\" is not a valid size (expected a multiple of 32, or 0)");
        }
      }
    }
    else if (a == "--max-tokens" || a == "--threads" || a == "--block-size") {
      ok = value(v);
      if (ok) {
        try {
          size_t used = 0;
          long long n = std::stoll(v, &used);
          if (used != v.size() || n < (a == "--max-tokens" ? 0 : 1)) throw std::invalid_argument(v);
          if (a == "--max-tokens")
            max_tokens = n;
          else if (a == "--threads")
            threads = static_cast<int>(std::min<long long>(n, oc::ThreadPool::kMaxThreads));
          else
            block_size = n;
        } catch (const std::exception&) {
          return Fail(a + ": \"" + v + "\" is not a valid count");
        }
      }
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: oc-llm-generate --model DIR (--prompt-ids 1,2,3 | --batch FILE.json) [--max-tokens N] "
          "[--dump-logits FILE.npy] [--threads N] [--block-size N] [--stagger] "
          "[--dtype auto|float32|bfloat16|int8|int4] [--group-size N]\n");
      return 0;
    } else {
      return Fail("unknown argument " + a);
    }
    if (!ok) return Fail(a + " needs a value");
  }
  if (model_dir.empty()) return Fail("--model DIR is required");
  if (prompt_ids.empty() == batch_file.empty()) return Fail("give exactly one of --prompt-ids and --batch");
  if (stagger && batch_file.empty()) return Fail("--stagger needs --batch");

  std::vector<std::vector<int32_t>> prompts;
  if (!prompt_ids.empty()) {
    std::vector<int32_t> ids;
    std::string err;
    if (!ParseIds(prompt_ids, ids, err)) return Fail(err);
    prompts.push_back(std::move(ids));
  } else {
    std::ifstream in(batch_file);
    if (!in) return Fail("cannot open " + batch_file);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      return Fail(batch_file + ": not valid JSON: " + e.what());
    }
    if (!j.is_array() || j.empty()) return Fail(batch_file + ": expected a non-empty JSON list of token id lists");
    for (size_t p = 0; p < j.size(); ++p) {
      if (!j[p].is_array() || j[p].empty())
        return Fail(batch_file + ": prompt " + std::to_string(p) + " is not a non-empty list of token ids");
      std::vector<int32_t> ids;
      for (const auto& t : j[p]) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
          return Fail(batch_file + ": prompt " + std::to_string(p) + " holds " + t.dump() + ", expected token ids");
        ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
      }
      prompts.push_back(std::move(ids));
    }
  }

  std::unique_ptr<oc::ThreadPool> own_pool;
  oc::ThreadPool* pool = &oc::ThreadPool::Global();
  if (threads > 0) {
    own_pool = std::make_unique<oc::ThreadPool>(threads);
    pool = own_pool.get();
  }
  auto t_load = std::chrono::steady_clock::now();
  auto model = oc::llm::Model::Load(model_dir, pool, options);
  if (!model.ok()) return Fail(model.status().ToString());
  oc::llm::Model& m = **model;
  std::fprintf(stderr, "oc-llm-generate: weights %s: %lld bytes (%.1f MiB)\n", m.WeightSummary().c_str(),
               static_cast<long long>(m.weight_bytes()), static_cast<double>(m.weight_bytes()) / (1 << 20));
  const int64_t vocab = m.config().vocab;

  const size_t S = prompts.size();
  int64_t blocks = 0;
  for (const auto& p : prompts) blocks += (static_cast<int64_t>(p.size()) + max_tokens + block_size - 1) / block_size;
  auto cache = oc::llm::KvCache::Create(m.CacheShape(static_cast<int32_t>(blocks), block_size));
  if (!cache.ok()) return Fail(cache.status().ToString());
  std::vector<std::vector<int32_t>> tables(S), generated(S);
  std::vector<int64_t> context(S, 0);
  std::vector<std::vector<float>> dumped(S);
  std::vector<float> logits(S * static_cast<size_t>(vocab));
  auto t_start = std::chrono::steady_clock::now();
  double prefill_s = 0;
  // Step k runs every sequence that has joined (all at step 0, or sequence s
  // at step s with --stagger) and still has tokens to generate: its prompt
  // the first time, else its last token. With --stagger a step mixes one
  // prefill with the others' decodes.
  for (int64_t step = 0;; ++step) {
    std::vector<size_t> active;
    for (size_t s = 0; s < S; ++s)
      if ((!stagger || static_cast<int64_t>(s) <= step) && static_cast<int64_t>(generated[s].size()) < max_tokens)
        active.push_back(s);
    if (active.empty()) break;
    std::vector<oc::llm::SeqStep> batch(active.size());
    std::vector<int32_t> last(S);
    for (size_t i = 0; i < active.size(); ++i) {
      const size_t s = active[i];
      std::span<const int32_t> toks;
      if (generated[s].empty()) {
        toks = prompts[s];
      } else {
        last[s] = generated[s].back();
        toks = std::span<const int32_t>(&last[s], 1);
      }
      Status st = cache->Reserve(tables[s], context[s] + static_cast<int64_t>(toks.size()));
      if (!st.ok()) return Fail(st.ToString());
      batch[i] = {toks, context[s], tables[s]};
    }
    Status st = m.Forward(batch, *cache, logits.data());
    if (!st.ok()) return Fail(st.ToString());
    for (size_t i = 0; i < active.size(); ++i) {
      const size_t s = active[i];
      context[s] += static_cast<int64_t>(batch[i].tokens.size());
      const float* row = logits.data() + i * static_cast<size_t>(vocab);
      generated[s].push_back(ArgMax(row, vocab));
      if (!dump.empty()) dumped[s].insert(dumped[s].end(), row, row + vocab);
    }
    if (step == 0) prefill_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  }
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  const double load_s = std::chrono::duration<double>(t_start - t_load).count();
  for (size_t s = 0; s < S; ++s) std::cout << nlohmann::json(generated[s]).dump() << "\n";
  if (max_tokens > 1)
    std::fprintf(stderr,
                 "oc-llm-generate: %zu prompt(s), %d thread(s): load %.3f s, prefill %.2f ms, decode %.2f tokens/s "
                 "per sequence (%lld steps)\n",
                 S, pool->num_threads(), load_s, prefill_s * 1e3,
                 static_cast<double>(max_tokens - 1) / (total_s - prefill_s), static_cast<long long>(max_tokens - 1));
  if (!dump.empty()) {
    std::vector<float> all;
    for (auto& d : dumped) all.insert(all.end(), d.begin(), d.end());
    std::vector<int64_t> shape = {max_tokens, vocab};
    if (!batch_file.empty()) shape.insert(shape.begin(), static_cast<int64_t>(S));
    if (!WriteNpy(dump, shape, all)) return Fail("cannot write " + dump);
  }
  return 0;
}
