#include "llm/tokenizer/bpe.h"

#include <cstdio>
#include <mutex>
#include <queue>

#include "llm/tokenizer/unicode.h"

namespace oc::llm {

Expected<std::unique_ptr<Bpe>> Bpe::FromJson(const Json& model, const JsonPath& at) {
  auto bpe = std::make_unique<Bpe>();
  if (const Json* d = OptionalField(model, "dropout")) {
    if (!d->is_number() || d->get<double>() != 0.0)
      return NotSupported(at.Key("dropout").Name(), ": BPE dropout ", d->dump(),
                          " is not supported (encoding would be random; expected null)");
  }
  OC_ASSIGN_OR_RETURN(auto prefix, OptionalString(model, "continuing_subword_prefix", at));
  OC_ASSIGN_OR_RETURN(auto suffix, OptionalString(model, "end_of_word_suffix", at));
  bpe->continuing_subword_prefix_ = prefix.value_or("");
  bpe->end_of_word_suffix_ = suffix.value_or("");
  OC_ASSIGN_OR_RETURN(bpe->fuse_unk_, OptionalBool(model, "fuse_unk", false, at));
  OC_ASSIGN_OR_RETURN(bpe->byte_fallback_, OptionalBool(model, "byte_fallback", false, at));
  OC_ASSIGN_OR_RETURN(bpe->ignore_merges_, OptionalBool(model, "ignore_merges", false, at));

  OC_ASSIGN_OR_RETURN(const Json* vocab, RequireField(model, "vocab", at));
  if (!vocab->is_object()) return InvalidFile(at.Key("vocab").Name(), ": expected an object of token: id");
  bpe->vocab_.reserve(vocab->size());
  // Ids are dense in real files; a bound keeps a hostile id from sizing the id -> token table.
  const int64_t max_id = 4 * static_cast<int64_t>(vocab->size()) + 1024;
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() >= max_id)
      return InvalidFile(at.Key("vocab").Name(), ": the id of '", it.key(), "' is ", it.value().dump(),
                         " (expected an integer in [0, ", max_id, ") for a vocabulary of ", vocab->size(), " tokens)");
    auto id = static_cast<int32_t>(it.value().get<int64_t>());
    bpe->vocab_[it.key()] = id;
    if (static_cast<size_t>(id) >= bpe->tokens_.size()) bpe->tokens_.resize(id + 1);
    bpe->tokens_[id] = it.key();
  }

  OC_ASSIGN_OR_RETURN(auto unk, OptionalString(model, "unk_token", at));
  if (unk) {
    auto it = bpe->vocab_.find(*unk);
    // Hugging Face only fails when the unknown token is needed; so do we (it is then skipped).
    if (it != bpe->vocab_.end()) bpe->unk_id_ = it->second;
  }

  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = bpe->vocab_.find(std::string_view(name));
    bpe->byte_ids_[b] = it == bpe->vocab_.end() ? -1 : it->second;
  }

  const Json* merges = OptionalField(model, "merges");
  if (merges && !merges->is_array()) return InvalidFile(at.Key("merges").Name(), ": expected an array");
  size_t prefix_len = bpe->continuing_subword_prefix_.size();
  for (size_t i = 0; merges && i < merges->size(); ++i) {
    const Json& m = (*merges)[i];
    std::string a, b;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos)
        return InvalidFile(at.Key("merges").Index(i).Name(), ": expected \"left right\", got \"", s, "\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return InvalidFile(at.Key("merges").Index(i).Name(), ": expected \"left right\" or [left, right], got ",
                         m.dump());
    }
    std::string merged =
        a + (prefix_len && b.compare(0, prefix_len, bpe->continuing_subword_prefix_) == 0 ? b.substr(prefix_len) : b);
    auto ia = bpe->vocab_.find(a), ib = bpe->vocab_.find(b), im = bpe->vocab_.find(merged);
    const std::string& missing = ia == bpe->vocab_.end() ? a : ib == bpe->vocab_.end() ? b : merged;
    if (ia == bpe->vocab_.end() || ib == bpe->vocab_.end() || im == bpe->vocab_.end())
      return InvalidFile(at.Key("merges").Index(i).Name(), ": the merge of '", a, "' and '", b, "' uses '", missing,
                         "', which is not in model.vocab");
    // A repeated pair keeps its last rank, as Hugging Face's map does.
    bpe->merges_[Key(ia->second, ib->second)] = {static_cast<int32_t>(i), im->second};
  }
  return bpe;
}

std::vector<int32_t> Bpe::MergeWord(std::string_view w) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(w.size());
  auto add = [&](int32_t id) {
    int32_t n = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, n - 1, n + 1, true});
  };
  int32_t pending_unk = -1;  // an unknown not yet added (fuse_unk grows it)
  std::string s;
  for (size_t i = 0; i < w.size();) {
    size_t begin = i;
    i += Utf8Length(static_cast<unsigned char>(w[i]));
    if (i > w.size()) i = w.size();
    std::string_view ch = w.substr(begin, i - begin);
    std::string_view key = ch;
    if ((begin > 0 && !continuing_subword_prefix_.empty()) || (i == w.size() && !end_of_word_suffix_.empty())) {
      s.assign(begin > 0 ? continuing_subword_prefix_ : "");
      s.append(ch);
      if (i == w.size()) s.append(end_of_word_suffix_);
      key = s;
    }
    auto it = vocab_.find(key);
    if (it != vocab_.end()) {
      if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
      add(it->second);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : key) all = all && byte_ids_[b] >= 0;
      if (all) {
        // As in Hugging Face, a pending unknown is not flushed before the bytes.
        for (unsigned char b : key) add(byte_ids_[b]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk >= 0 && !fuse_unk_) add(pending_unk);
      pending_unk = *unk_id_;
    }
  }
  if (pending_unk >= 0) add(pending_unk);
  if (symbols.empty()) return {};
  symbols.back().next = -1;

  struct Candidate {
    int32_t rank, pos, new_id;
    bool operator<(const Candidate& o) const {  // min-heap on (rank, pos)
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate> queue;
  auto push = [&](int32_t pos) {
    int32_t next = symbols[pos].next;
    if (next < 0) return;
    auto it = merges_.find(Key(symbols[pos].id, symbols[next].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.new_id});
  };
  for (int32_t p = 0; p + 1 < static_cast<int32_t>(symbols.size()); ++p) push(p);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    auto it = merges_.find(Key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;  // stale entry
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
  std::vector<int32_t> out;
  for (const Symbol& sym : symbols)
    if (sym.alive) out.push_back(sym.id);
  return out;
}

void Bpe::Tokenize(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    auto it = vocab_.find(word);
    if (it != vocab_.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  bool cacheable = word.size() <= kMaxCachedWord;
  if (cacheable) {
    std::shared_lock lock(cache_mu_);
    auto it = cache_.find(word);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> merged = MergeWord(word);
  ids.insert(ids.end(), merged.begin(), merged.end());
  if (cacheable) {
    std::unique_lock lock(cache_mu_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(merged));
  }
}

}  // namespace oc::llm
