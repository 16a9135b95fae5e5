// TfIdfVectorizer (ai.onnx, opset 9+) over integer token ids: counts the
// n-grams of a pool in each row of token ids and writes one float per pool
// n-gram coordinate (term frequency, an IDF weight, or both multiplied).
//
// Which occurrences count: for every start position, every skip s in
// [0, max_skip_count] and every length n in [min_gram_length,
// max_gram_length], the tokens at start, start + (s + 1), ...,
// start + (n - 1)(s + 1). A unigram does not depend on the skip, so it is
// counted at s = 0 only (onnxruntime and the ONNX reference do the same).
//
// The pool is kept as a trie keyed by token id: walking from a start position
// with a fixed skip visits the n-grams of increasing length that begin there
// and stops at the first token no pool n-gram continues with. Built once in
// the factory; Run() only reads it. String pools need a string tensor type,
// which the IR does not have: they fail with "not supported".
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

struct TrieNode {
  std::unordered_map<int64_t, int32_t> next;  // token -> child node
  int64_t out = -1;                           // output coordinate of the n-gram ending here
  int32_t length = 0;                         // n of that n-gram
};

struct TfIdfSpec {
  std::string node;
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  std::vector<TrieNode> trie;  // trie[0] is the root
  std::vector<float> weights;  // per output coordinate (from the pool order); empty: all ones
  int64_t out_dim = 0;
  int64_t rows = 1, cols = 0;
  DataType dtype = DataType::kInt64;
};

Expected<TfIdfMode> ParseMode(const Node& node) {
  const std::string mode = node.GetString("mode", "");
  if (mode == "TF") return TfIdfMode::kTf;
  if (mode == "IDF") return TfIdfMode::kIdf;
  if (mode == "TFIDF") return TfIdfMode::kTfIdf;
  return InvalidArgument(node.Describe(), ": attribute mode must be TF, IDF or TFIDF, got '", mode, "'");
}

// Checks the attributes and gives the output width; builds the trie (and
// checks the pool for one n-gram listed with two coordinates) when asked: the
// kernel needs it, inference and canonicalisation do not.
Status BuildSpec(const Node& node, TfIdfSpec& s, bool build_trie) {
  s.node = node.Describe();
  OC_ASSIGN_OR_RETURN(s.mode, ParseMode(node));
  if (node.HasAttr("pool_strings"))
    return NotSupported(s.node, ": TfIdfVectorizer over strings (pool_strings) is not supported: the IR has no "
                        "string tensor type; integer token ids (pool_int64s) are");
  if (!node.HasAttr("pool_int64s"))
    return InvalidArgument(s.node, ": attribute pool_int64s is required");
  for (const char* a : {"min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"})
    if (!node.HasAttr(a)) return InvalidArgument(s.node, ": attribute ", a, " is required");
  s.min_gram = node.GetInt("min_gram_length", 1);
  s.max_gram = node.GetInt("max_gram_length", 1);
  s.max_skip = node.GetInt("max_skip_count", 0);
  if (s.min_gram < 1 || s.max_gram < s.min_gram)
    return InvalidArgument(s.node, ": need 1 <= min_gram_length <= max_gram_length, got ", s.min_gram, " and ",
                           s.max_gram);
  if (s.max_skip < 0) return InvalidArgument(s.node, ": max_skip_count must be >= 0, got ", s.max_skip);
  const std::vector<int64_t> pool = node.GetInts("pool_int64s");
  const std::vector<int64_t> counts = node.GetInts("ngram_counts");
  const std::vector<int64_t> indexes = node.GetInts("ngram_indexes");
  const int64_t pool_size = static_cast<int64_t>(pool.size());
  // ngram_counts[i]: where the (i+1)-grams start in the pool.
  int64_t ngrams = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    const int64_t n = static_cast<int64_t>(i) + 1;
    if (begin < 0 || begin > end || end > pool_size)
      return InvalidArgument(s.node, ": ngram_counts must be non-decreasing offsets within pool_int64s (",
                             pool_size, " ids), got ", begin, " then ", end);
    if ((end - begin) % n != 0)
      return InvalidArgument(s.node, ": the ", n, "-grams of the pool (ids ", begin, " to ", end,
                             ") are not a whole number of ", n, "-grams");
    ngrams += (end - begin) / n;
  }
  if (static_cast<int64_t>(indexes.size()) != ngrams)
    return InvalidArgument(s.node, ": ngram_indexes has ", indexes.size(), " entries, the pool holds ", ngrams,
                           " n-grams");
  s.out_dim = 0;
  for (int64_t idx : indexes) {
    if (idx < 0) return InvalidArgument(s.node, ": ngram_indexes must be >= 0, got ", idx);
    if (idx >= (int64_t{1} << 30))
      return InvalidArgument(s.node, ": ngram_indexes entry ", idx, " gives too wide an output");
    s.out_dim = std::max(s.out_dim, idx + 1);
  }
  if (node.HasAttr("weights")) {
    // One weight per pool n-gram, in pool order; it applies at that n-gram's
    // output coordinate.
    const std::vector<float> w = node.GetFloats("weights");
    if (w.size() != indexes.size())
      return InvalidArgument(s.node, ": weights has ", w.size(), " entries, the pool holds ", ngrams, " n-grams");
    s.weights.assign(static_cast<size_t>(s.out_dim), 1.f);
    std::vector<bool> set(static_cast<size_t>(s.out_dim), false);
    for (size_t k = 0; k < indexes.size(); ++k) {
      const size_t at = static_cast<size_t>(indexes[k]);
      // n-grams sharing a coordinate would need one weight each there.
      if (set[at] && s.weights[at] != w[k])
        return NotSupported(s.node, ": n-grams sharing output coordinate ", indexes[k],
                            " with different weights are not supported");
      s.weights[at] = w[k];
      set[at] = true;
    }
  }
  if (!build_trie) return Status::Ok();
  s.trie.assign(1, TrieNode{});
  int64_t k = 0;  // n-gram number in pool order
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    const int64_t n = static_cast<int64_t>(i) + 1;
    for (int64_t g = begin; g < end; g += n, ++k) {
      int32_t at = 0;
      for (int64_t j = 0; j < n; ++j) {
        auto it = s.trie[at].next.find(pool[g + j]);
        if (it == s.trie[at].next.end()) {
          const int32_t child = static_cast<int32_t>(s.trie.size());
          s.trie[at].next.emplace(pool[g + j], child);
          s.trie.emplace_back();
          at = child;
        } else {
          at = it->second;
        }
      }
      if (s.trie[at].out >= 0 && s.trie[at].out != indexes[k])
        return InvalidArgument(s.node, ": the pool lists one ", n, "-gram twice with different ngram_indexes (",
                               s.trie[at].out, " and ", indexes[k], ")");
      s.trie[at].out = indexes[k];
      s.trie[at].length = static_cast<int32_t>(n);
    }
  }
  return Status::Ok();
}

Status InferTfIdf(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  TfIdfSpec s;
  OC_RETURN_IF_ERROR(BuildSpec(node, s, false));
  if (x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64)
    return NotSupported(node.Describe(), ": input of type ", DataTypeName(x.dtype),
                        " is not supported (int32 or int64 token ids)");
  if (x.shape.size() != 1 && x.shape.size() != 2)
    return InvalidArgument(node.Describe(), ": input must be [C] or [N, C], got ", x.ShapeString());
  std::vector<int64_t> out = x.shape.size() == 1 ? std::vector<int64_t>{s.out_dim}
                                                 : std::vector<int64_t>{x.shape[0], s.out_dim};
  SetOutput(node, 0, DataType::kFloat32, std::move(out));
  return Status::Ok();
}

// Attribute errors (and string pools) do not depend on the input data: found
// here, at canonicalisation, they stop atc. Shape inference alone would not:
// with a non-constant integer input its failure reads like a data-dependent
// shape, which is left to run time.
Status CheckTfIdf(Node& node, Graph&) {
  TfIdfSpec s;
  return BuildSpec(node, s, false);
}

class TfIdfKernel final : public Kernel {
 public:
  explicit TfIdfKernel(TfIdfSpec s) : s_(std::move(s)) {}

  Status Run(const KernelIO& io) override {
    float* y = io.out<float>(0);
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s_.cols * (s_.max_skip + 1)));
    io.pool->ParallelFor(s_.rows, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* out = y + r * s_.out_dim;
        if (s_.dtype == DataType::kInt32) CountRow(io.in<int32_t>(0) + r * s_.cols, out);
        else CountRow(io.in<int64_t>(0) + r * s_.cols, out);
        Finish(out);
      }
    });
    return Status::Ok();
  }

 private:
  template <typename T>
  void CountRow(const T* x, float* out) const {
    std::fill(out, out + s_.out_dim, 0.f);
    const std::vector<TrieNode>& trie = s_.trie;
    for (int64_t skip = 0; skip <= s_.max_skip; ++skip) {
      const int64_t step = skip + 1;
      // Unigrams only at skip 0 (they do not depend on it).
      const int64_t shortest = skip == 0 ? s_.min_gram : std::max<int64_t>(s_.min_gram, 2);
      if (shortest > s_.max_gram) break;
      for (int64_t start = 0; start < s_.cols; ++start) {
        int32_t at = 0;
        for (int64_t n = 1, p = start; n <= s_.max_gram && p < s_.cols; ++n, p += step) {
          auto it = trie[at].next.find(static_cast<int64_t>(x[p]));
          if (it == trie[at].next.end()) break;
          at = it->second;
          if (n >= shortest && trie[at].out >= 0) out[trie[at].out] += 1.f;
        }
      }
    }
  }

  void Finish(float* out) const {
    if (s_.mode == TfIdfMode::kTf) return;
    for (int64_t i = 0; i < s_.out_dim; ++i) {
      const float w = s_.weights.empty() ? 1.f : s_.weights[i];
      out[i] = s_.mode == TfIdfMode::kIdf ? (out[i] > 0 ? w : 0.f) : out[i] * w;
    }
  }

  TfIdfSpec s_;
};

Expected<KernelPtr> MakeTfIdf(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  TfIdfSpec s;
  OC_RETURN_IF_ERROR(BuildSpec(init.node, s, true));
  const Value& x = *init.node.input(0);
  s.dtype = x.dtype;
  s.rows = x.shape.size() == 2 ? x.shape[0] : 1;
  s.cols = x.shape.back();
  // A skip of cols - 1 or more leaves no room for a second token.
  s.max_skip = std::min(s.max_skip, std::max<int64_t>(s.cols - 1, 0));
  return KernelPtr(new TfIdfKernel(std::move(s)));
}

}  // namespace

void RegisterTfIdfOps(OpRegistry& r) {
  r.Register({.domain = "", .op_type = "TfIdfVectorizer", .min_opset = 9, .infer = InferTfIdf, .kernels = CpuKernel(MakeTfIdf),
              .canonicalize = CheckTfIdf});
}

}  // namespace oc
