// oc-llm-batch: offline batch generation through the LLM engine
// (src/llm/engine/): continuous batching, chunked prefill, preemption,
// prefix caching, per-request sampling with n choices.
//
//   oc-llm-batch --model DIR --requests FILE.json [--kv-cache-bytes N] [--max-num-seqs N]
//                [--max-num-batched-tokens N] [--block-size N] [--max-model-len N] [--threads N]
//                [--enable-prefix-caching | --no-enable-prefix-caching]
//                [--dtype auto|float32|bfloat16|int8|int4] [--group-size N]
//   oc-llm-batch --sampling-probe FILE.json
//
// FILE.json is a list of requests: {"prompt_ids": [...], "arrival_step": 0, "id": "...",
// and sampling fields: temperature, top_k, top_p, min_p, repetition_penalty,
// presence_penalty, frequency_penalty, logit_bias {"id": bias}, stop_token_ids,
// ignore_eos, max_tokens, min_tokens, seed, logprobs, n}. A request joins the
// engine before step arrival_step. Prints one JSON line per request and
// choice, in file order and then choice order: {"id", "index", "output_ids",
// "finish_reason"[, "logprobs", "top_logprobs"]}; the engine's stats go to
// stderr as one JSON line.
//
// --sampling-probe (a debug entry point for the sampling rules, no model):
// FILE.json is {"logits": [...], "params": {...}, "prompt_ids": [...],
// "output_ids": [...], "eos": [...], "draws": N}; prints {"probs": [...]}
// (the filtered distribution after every rule, one-hot for greedy) and
// "counts" of N draws of the request's RNG.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/thread_pool.h"
#include "llm/engine/engine.h"
#include "llm/engine/sampling.h"

namespace {

using nlohmann::json;
using oc::Status;
using oc::llm::SamplingParams;

int Fail(const std::string& msg) {
  std::fprintf(stderr, "oc-llm-batch: %s\n", msg.c_str());
  return 1;
}

bool ReadJson(const std::string& path, json& j, std::string& err) {
  std::ifstream in(path);
  if (!in) return err = "cannot open " + path, false;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    return err = path + ": not valid JSON: " + e.what(), false;
  }
  return true;
}

// The sampling fields of a request object; `where` names it in errors.
bool ParseParams(const json& r, SamplingParams& p, std::string& err, const std::string& where) {
  static const char* kKnown[] = {"prompt_ids", "arrival_step", "id", "temperature", "top_k", "top_p", "min_p",
                                 "repetition_penalty", "presence_penalty", "frequency_penalty", "logit_bias",
                                 "stop_token_ids", "ignore_eos", "max_tokens", "min_tokens", "seed", "logprobs", "n"};
  for (auto it = r.begin(); it != r.end(); ++it) {
    bool known = false;
    for (const char* k : kKnown) known = known || it.key() == k;
    if (!known) return err = where + ": unknown field \"" + it.key() + "\"", false;
  }
  try {
    auto num = [&](const char* k, double& out) {
      if (!r.contains(k)) return;
      if (!r[k].is_number()) throw std::invalid_argument(std::string(k) + " must be a number");
      out = r[k].get<double>();
    };
    auto integer = [&](const char* k, auto& out) {
      if (!r.contains(k) || r[k].is_null()) return;
      if (!r[k].is_number_integer() || r[k].get<int64_t>() < INT32_MIN || r[k].get<int64_t>() > INT32_MAX)
        throw std::invalid_argument(std::string(k) + " must be an integer (32-bit)");
      out = r[k].get<std::remove_reference_t<decltype(out)>>();
    };
    num("temperature", p.temperature);
    num("top_p", p.top_p);
    num("min_p", p.min_p);
    num("repetition_penalty", p.repetition_penalty);
    num("presence_penalty", p.presence_penalty);
    num("frequency_penalty", p.frequency_penalty);
    integer("top_k", p.top_k);
    integer("max_tokens", p.max_tokens);
    integer("min_tokens", p.min_tokens);
    integer("logprobs", p.logprobs);
    integer("n", p.n);
    if (r.contains("seed") && !r["seed"].is_null()) {
      if (!r["seed"].is_number_unsigned()) throw std::invalid_argument("seed must be a non-negative integer");
      p.seed = r["seed"].get<uint64_t>();
    }
    if (r.contains("ignore_eos")) {
      if (!r["ignore_eos"].is_boolean()) throw std::invalid_argument("ignore_eos must be true or false");
      p.ignore_eos = r["ignore_eos"].get<bool>();
    }
    if (r.contains("stop_token_ids")) {
      if (!r["stop_token_ids"].is_array()) throw std::invalid_argument("stop_token_ids must be a list of token ids");
      for (const auto& t : r["stop_token_ids"]) {
        if (!t.is_number_integer() || t.get<int64_t>() < INT32_MIN || t.get<int64_t>() > INT32_MAX)
          throw std::invalid_argument("stop_token_ids must be a list of token ids");
        p.stop_token_ids.push_back(t.get<int32_t>());
      }
    }
    if (r.contains("logit_bias")) {
      if (!r["logit_bias"].is_object()) throw std::invalid_argument("logit_bias must be an object {\"token id\": bias}");
      for (auto it = r["logit_bias"].begin(); it != r["logit_bias"].end(); ++it) {
        size_t used = 0;
        long id = -1;
        try {
          id = std::stol(it.key(), &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != it.key().size() || id < INT32_MIN || id > INT32_MAX || !it.value().is_number())
          throw std::invalid_argument("logit_bias must map token ids to numbers");
        p.logit_bias.emplace_back(static_cast<int32_t>(id), it.value().get<float>());
      }
    }
  } catch (const std::exception& e) {
    return err = where + ": " + e.what(), false;
  }
  return true;
}

bool Ids(const json& j, const char* key, std::vector<int32_t>& out, std::string& err, const std::string& where) {
  if (!j.contains(key)) return true;
  if (!j[key].is_array()) return err = where + ": " + key + " must be a list of token ids", false;
  for (const auto& t : j[key]) {
    if (!t.is_number_integer() || t.get<int64_t>() < INT32_MIN || t.get<int64_t>() > INT32_MAX)
      return err = where + ": " + key + " holds " + t.dump() + ", expected token ids", false;
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return true;
}

int Probe(const std::string& path) {
  json j;
  std::string err;
  if (!ReadJson(path, j, err)) return Fail(err);
  if (!j.is_object() || !j.contains("logits") || !j["logits"].is_array() || j["logits"].empty())
    return Fail(path + ": expected an object with a non-empty \"logits\" list");
  std::vector<float> logits;
  for (const auto& x : j["logits"]) {
    if (!x.is_number()) return Fail(path + ": logits must be numbers");
    logits.push_back(x.get<float>());
  }
  if (j.contains("draws") && !j["draws"].is_number_unsigned()) return Fail(path + ": draws must be a non-negative integer");
  SamplingParams p;
  if (j.contains("params") && !ParseParams(j["params"], p, err, path + ": params")) return Fail(err);
  std::vector<int32_t> prompt, output, eos;
  if (!Ids(j, "prompt_ids", prompt, err, path) || !Ids(j, "output_ids", output, err, path) ||
      !Ids(j, "eos", eos, err, path))
    return Fail(err);
  const int64_t vocab = static_cast<int64_t>(logits.size());
  Status st = oc::llm::ValidateSamplingParams(p, vocab);
  if (!st.ok()) return Fail(st.ToString());
  for (int32_t t : prompt)
    if (t < 0 || t >= vocab) return Fail(path + ": prompt_ids holds " + std::to_string(t) + ", outside the vocab");
  for (int32_t t : output)
    if (t < 0 || t >= vocab) return Fail(path + ": output_ids holds " + std::to_string(t) + ", outside the vocab");
  oc::llm::ApplyLogitRules(p, prompt, output, eos, logits);
  std::vector<double> probs;
  if (p.temperature == 0) {
    probs.assign(logits.size(), 0.0);
    std::mt19937_64 unused;
    probs[static_cast<size_t>(oc::llm::SampleToken(p, logits, unused, probs))] = 1.0;
  } else {
    oc::llm::FilteredProbs(p, logits, probs);
  }
  std::mt19937_64 rng(p.seed ? *p.seed : 0);
  std::vector<int64_t> counts(logits.size(), 0);
  std::vector<double> scratch;
  const int64_t draws = j.value("draws", int64_t{0});
  for (int64_t d = 0; d < draws; ++d) ++counts[static_cast<size_t>(oc::llm::SampleToken(p, logits, rng, scratch))];
  std::cout << json{{"probs", probs}, {"counts", counts}}.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  oc::llm::EngineConfig cfg;
  std::string requests_file, probe;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("usage: oc-llm-batch --model DIR --requests FILE.json [--kv-cache-bytes N] [--max-num-seqs N] "
                  "[--max-num-batched-tokens N] [--block-size N] [--max-model-len N] [--threads N] "
                  "[--enable-prefix-caching | --no-enable-prefix-caching]\n"
                  "[--dtype auto|float32|bfloat16|int8|int4] [--group-size N]\n"
                  "       oc-llm-batch --sampling-probe FILE.json\n");
      return 0;
    }
    if (a == "--enable-prefix-caching" || a == "--no-enable-prefix-caching") {
      cfg.enable_prefix_caching = a == "--enable-prefix-caching";
      continue;
    }
    if (i + 1 >= argc) return Fail(a + " needs a value (or is unknown)");
    std::string v = argv[++i];
    if (a == "--model") {
      cfg.model_dir = v;
    } else if (a == "--requests") {
      requests_file = v;
    } else if (a == "--sampling-probe") {
      probe = v;
    } else if (a == "--dtype") {
      auto d = oc::llm::ParseWeightDtype(v);
      if (!d.ok()) return Fail("--dtype: " + d.status().message());
      cfg.weight_dtype = *d;
    } else if (a == "--group-size") {
      try {
        size_t used = 0;
        const long long n = std::stoll(v, &used);
        if (used != v.size() || n < 0) throw std::invalid_argument(v);
        cfg.weight_group_size = n;
      } catch (const std::exception&) {
        return Fail("--group-size: \"" + v + "\" is not a valid size (expected a multiple of 32, or 0)");
      }
    } else if (a == "--kv-cache-bytes" || a == "--max-num-seqs" || a == "--max-num-batched-tokens" ||
               a == "--block-size" || a == "--max-model-len" || a == "--threads") {
      long long n = 0;
      try {
        size_t used = 0;
        n = std::stoll(v, &used);
        if (used != v.size() || n < 1) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        return Fail(a + ": \"" + v + "\" is not a positive integer");
      }
      if (a == "--kv-cache-bytes") cfg.kv_cache_bytes = n;
      if (a == "--max-num-seqs") cfg.max_num_seqs = static_cast<int32_t>(std::min<long long>(n, INT32_MAX));
      if (a == "--max-num-batched-tokens") cfg.max_num_batched_tokens = n;
      if (a == "--block-size") cfg.block_size = n;
      if (a == "--max-model-len") cfg.max_model_len = n;
      if (a == "--threads") threads = static_cast<int>(std::min<long long>(n, oc::ThreadPool::kMaxThreads));
    } else {
      return Fail("unknown argument " + a);
    }
  }
  if (!probe.empty()) return Probe(probe);
  if (cfg.model_dir.empty() || requests_file.empty()) return Fail("--model DIR and --requests FILE.json are required");

  json j;
  std::string err;
  if (!ReadJson(requests_file, j, err)) return Fail(err);
  if (!j.is_array() || j.empty()) return Fail(requests_file + ": expected a non-empty JSON list of requests");
  struct Req {
    std::string id;
    std::vector<int32_t> prompt;
    SamplingParams params;
    int64_t arrival = 0;
  };
  std::vector<Req> reqs;
  for (size_t r = 0; r < j.size(); ++r) {
    const std::string where = requests_file + ": request " + std::to_string(r);
    if (!j[r].is_object()) return Fail(where + " is not an object");
    Req q;
    if (j[r].contains("id") && !j[r]["id"].is_string()) return Fail(where + ": id must be a string");
    q.id = j[r].contains("id") ? j[r]["id"].get<std::string>() : std::to_string(r);
    if (!j[r].contains("prompt_ids")) return Fail(where + ": prompt_ids is missing");
    if (!Ids(j[r], "prompt_ids", q.prompt, err, where) || !ParseParams(j[r], q.params, err, where)) return Fail(err);
    if (j[r].contains("arrival_step")) {
      if (!j[r]["arrival_step"].is_number_integer() || j[r]["arrival_step"].get<int64_t>() < 0)
        return Fail(where + ": arrival_step must be a non-negative integer");
      q.arrival = j[r]["arrival_step"].get<int64_t>();
    }
    for (const Req& o : reqs)
      if (o.id == q.id) return Fail(where + ": id \"" + q.id + "\" is used twice");
    reqs.push_back(std::move(q));
  }

  std::unique_ptr<oc::ThreadPool> own;
  if (threads > 0) {
    own = std::make_unique<oc::ThreadPool>(threads);
    cfg.pool = own.get();
  }
  auto engine = oc::llm::Engine::Create(cfg);
  if (!engine.ok()) return Fail(engine.status().ToString());
  oc::llm::Engine& e = **engine;
  std::map<std::string, size_t> index;
  std::vector<std::vector<json>> results(reqs.size());  // per request, per choice
  size_t added = 0;
  for (int64_t step = 0; added < reqs.size() || e.HasUnfinished(); ++step) {
    for (size_t r = 0; r < reqs.size(); ++r) {
      if (reqs[r].arrival != step) continue;
      Status st = e.AddRequest(reqs[r].id, reqs[r].prompt, reqs[r].params);
      if (!st.ok()) return Fail(requests_file + ": request " + std::to_string(r) + ": " + st.ToString());
      index[reqs[r].id] = r;
      for (int32_t c = 0; c < reqs[r].params.n; ++c)
        results[r].push_back({{"id", reqs[r].id}, {"index", c}, {"output_ids", json::array()}});
      ++added;
    }
    auto outs = e.Step();
    if (!outs.ok()) return Fail(outs.status().ToString());
    for (const auto& o : *outs) {
      std::vector<json>& choices = results[index[o.id]];
      if (o.index < 0 || static_cast<size_t>(o.index) >= choices.size())
        return Fail("request '" + o.id + "': the engine gave choice " + std::to_string(o.index));
      json& res = choices[static_cast<size_t>(o.index)];
      for (int32_t t : o.new_tokens) res["output_ids"].push_back(t);
      for (const auto& lp : o.logprobs) {
        res["logprobs"].push_back(lp.logprob);
        json top = json::array();
        for (const auto& [t, l] : lp.top) top.push_back({t, l});
        res["top_logprobs"].push_back(top);
      }
      if (o.finished) res["finish_reason"] = o.finish_reason;
    }
  }
  for (const auto& r : results)
    for (const auto& c : r) std::cout << c.dump() << "\n";
  const auto st = e.stats();
  std::cerr << json{{"kv_blocks_total", st.kv_blocks_total}, {"kv_blocks_used", st.kv_blocks_used},
                    {"kv_blocks_evictable", st.kv_blocks_evictable}, {"block_size", st.block_size},
                    {"max_model_len", st.max_model_len}, {"max_concurrency", st.max_concurrency},
                    {"preemptions", st.preemptions}, {"steps", st.steps}, {"running", st.running},
                    {"waiting", st.waiting}, {"prefix_caching", cfg.enable_prefix_caching},
                    {"prefix_cache_queries", st.prefix_cache_queries}, {"prefix_cache_hits", st.prefix_cache_hits},
                    {"prefix_cache_evictions", st.prefix_cache_evictions}, {"cow_copies", st.cow_copies},
                    {"weight_dtype", oc::llm::WeightDtypeName(e.model().weight_dtype())},
                    {"weight_bytes", e.model().weight_bytes()}}
                   .dump()
            << "\n";
  return 0;
}
