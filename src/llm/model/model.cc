#include "llm/model/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "llm/model/checkpoint.h"
#include "llm/model/paged_attention.h"

namespace oc::llm {

namespace {

void FreeAligned(float* p) { std::free(p); }

float Activate(Act act, float x) {
  switch (act) {
    case Act::kGeluTanh: {
      const float c = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.f + std::tanh(c * (x + 0.044715f * x * x * x)));
    }
    case Act::kGeluErf:
      return 0.5f * x * (1.f + std::erf(x * 0.7071067811865476f));
    case Act::kSilu:
      return x / (1.f + std::exp(-x));
    case Act::kRelu:
      return x > 0.f ? x : 0.f;
  }
  return x;
}

// LayerNorm (bias non-null) or RMSNorm of one row of n.
void NormRow(const float* x, int64_t n, const float* w, const float* b, double eps, float* y) {
  if (b) {
    float mean = 0.f;
    for (int64_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<float>(n);
    float var = 0.f;
    for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<float>(n);
    const float r = 1.f / std::sqrt(var + static_cast<float>(eps));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * r * w[i] + b[i];
  } else {
    float ss = 0.f;
    for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
    const float r = 1.f / std::sqrt(ss / static_cast<float>(n) + static_cast<float>(eps));
    for (int64_t i = 0; i < n; ++i) y[i] = w[i] * (x[i] * r);
  }
}

// Rotates one head in place (rotate_half convention: pairs (i, i + d/2)).
void RopeHead(float* x, int64_t d, const float* cos, const float* sin) {
  const int64_t h = d / 2;
  for (int64_t i = 0; i < h; ++i) {
    const float a = x[i], b = x[i + h];
    x[i] = a * cos[i] - b * sin[i];
    x[i + h] = b * cos[i] + a * sin[i];
  }
}

}  // namespace

Expected<std::unique_ptr<Model>> Model::Load(const std::string& dir, ThreadPool* pool, const ModelOptions& options) {
  WeightFormat fmt;
  fmt.dtype = options.weight_dtype;
  OC_ASSIGN_OR_RETURN(fmt.group_size, ResolveGroupSize(options.weight_dtype, options.group_size));
  if (fmt.dtype == WeightDtype::kBfloat16) {
    fmt.bf16 = gemm::DefaultBf16Ukernel();
    if (!fmt.bf16) {
      static std::once_flag note;
      std::call_once(note, [] {
        std::fprintf(stderr,
                     "[opencann] note: bfloat16 weights asked for, but this CPU has neither AMX-BF16 nor "
                     "AVX512_BF16: the bf16-rounded weights run through the float32 GEMM (no memory saved)\n");
      });
    }
  }
  OC_ASSIGN_OR_RETURN(auto ck, Checkpoint::Open(dir));
  auto cfg = ParseModelConfig(ck->config());
  if (!cfg.ok()) return cfg.status().WithContext(dir);
  auto m = std::unique_ptr<Model>(new Model());
  m->cfg_ = std::move(cfg).value();
  m->pool_ = pool;
  m->uk_ = &gemm::DefaultUkernel();
  m->fmt_ = fmt;
  if (fmt.dtype == WeightDtype::kInt8 || fmt.dtype == WeightDtype::kInt4) m->qk_ = &DefaultQGemvKernel();
  OC_ASSIGN_OR_RETURN(m->w_, LoadWeights(*ck, m->cfg_, *m->uk_, fmt));
  if (!m->cfg_.is_gpt2()) m->inv_freq_ = m->cfg_.RopeInvFreq();
  m->EnsureCapacity(64);
  return m;
}

KvCacheShape Model::CacheShape(int32_t num_blocks, int64_t block_size) const {
  KvCacheShape s;
  s.layers = cfg_.layers;
  s.kv_heads = cfg_.kv_heads;
  s.head_dim = cfg_.head_dim;
  s.block_size = block_size;
  s.num_blocks = num_blocks;
  return s;
}

void Model::EnsureCapacity(int64_t tokens) {
  if (tokens <= plan_rows_) return;
  int64_t rows = std::max<int64_t>(plan_rows_, 64);
  while (rows < tokens) rows *= 2;
  int64_t max_n = cfg_.vocab, max_k = std::max(cfg_.hidden, cfg_.intermediate);
  for (const auto& l : w_.layers) {
    max_n = std::max({max_n, l.qkv.out, l.o.out, l.up.out, l.down.out});
    max_k = std::max({max_k, l.qkv.in, l.o.in, l.up.in, l.down.in});
  }
  plan_ = gemm::SgemmPlan(*uk_, rows, max_n, max_k, pool_->num_threads());
  size_t bytes = std::max<size_t>(plan_.ScratchBytes(), 64);
  if (fmt_.bf16) {
    bf16_plan_ = gemm::Bf16GemmPlan(*fmt_.bf16, rows, max_n, max_k, pool_->num_threads());
    bytes = std::max(bytes, bf16_plan_.ScratchBytes());
  }
  scratch_ = {static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), FreeAligned};
  plan_rows_ = rows;
}

std::string Model::WeightSummary() const {
  std::string s = WeightDtypeName(fmt_.dtype);
  switch (fmt_.dtype) {
    case WeightDtype::kFloat32:
      return s + " (" + uk_->name + ")";
    case WeightDtype::kBfloat16:
      return s + (fmt_.bf16 ? std::string(" (") + fmt_.bf16->name + ")"
                            : std::string(" (emulated on ") + uk_->name + ", no bf16 micro-kernel)");
    case WeightDtype::kInt8:
    case WeightDtype::kInt4:
      return s + " (" + (fmt_.group_size ? "group " + std::to_string(fmt_.group_size) : "per output channel") +
             ", " + qk_->name + ")";
  }
  return s;
}

void Model::Gemm(const Linear& w, const float* x, int64_t m, float* y, const float* residual) {
  if (w.dtype == WeightDtype::kInt8 || w.dtype == WeightDtype::kInt4) {
    QGemvArgs a;
    a.w = &w.q;
    a.x = x;
    a.ldx = w.in;
    a.m = m;
    a.y = y;
    a.ldy = w.out;
    a.bias = w.bias.empty() ? nullptr : w.bias.data();
    a.residual = residual;
    a.ldr = w.out;
    QuantGemm::Run(*qk_, a, pool_, plan_, scratch_.get(), qpad_, qdeq_);
    return;
  }
  if (w.bf16_emulated) {  // bf16 without a bf16 micro-kernel: the inputs rounded as the bf16 GEMM rounds them
    gemm_in_.resize(static_cast<size_t>(m * w.in));
    for (size_t i = 0; i < gemm_in_.size(); ++i) gemm_in_[i] = gemm::Bf16ToFloat(gemm::FloatToBf16(x[i]));
    x = gemm_in_.data();
  }
  gemm::SgemmArgs g;
  g.m = m;
  g.n = w.out;
  g.k = w.in;
  g.a = x;
  g.lda = w.in;
  g.packed_b = w.w.data();
  g.c = y;
  g.ldc = w.out;
  if (!w.bias.empty()) {
    g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerCol;
    g.epilogue.bias = w.bias.data();
  }
  if (residual) {
    g.epilogue.residual = residual;
    g.epilogue.ldr = w.out;
  }
  if (w.dtype == WeightDtype::kBfloat16 && !w.bf16_emulated) {
    g.packed_b = nullptr;
    bf16_plan_.Run(g, nullptr, w.w_bf16.data(), pool_, scratch_.get());
    return;
  }
  plan_.Run(g, pool_, scratch_.get());
}

Status Model::Check(std::span<const SeqStep> seqs, const KvCache& cache) const {
  const KvCacheShape& cs = cache.shape();
  if (cs.layers != cfg_.layers || cs.kv_heads != cfg_.kv_heads || cs.head_dim != cfg_.head_dim)
    return InvalidArgument("KV cache has ", cs.layers, " layers x ", cs.kv_heads, " kv heads x head_dim ", cs.head_dim,
                           ", the model needs ", cfg_.layers, " x ", cfg_.kv_heads, " x ", cfg_.head_dim);
  if (seqs.empty()) return InvalidArgument("Forward: no sequences");
  std::set<int32_t> written;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SeqStep& q = seqs[s];
    if (q.tokens.empty()) return InvalidArgument("Forward: sequence ", s, " has no new tokens");
    if (q.context < 0) return InvalidArgument("Forward: sequence ", s, " has context length ", q.context);
    const int64_t end = q.context + static_cast<int64_t>(q.tokens.size());
    if (cfg_.is_gpt2() && end > cfg_.max_positions)
      return OutOfRange("Forward: sequence ", s, " reaches position ", end - 1, " but gpt2 has n_positions ",
                        cfg_.max_positions, " learned positions");
    if (cfg_.rope_type == RopeType::kDynamic && end > cfg_.max_positions)
      return NotSupported("Forward: sequence ", s, " reaches ", end, " positions; dynamic RoPE scaling past ",
                          "max_position_embeddings (", cfg_.max_positions, ") is not supported");
    const int64_t need = (end + cs.block_size - 1) / cs.block_size;
    if (static_cast<int64_t>(q.block_table.size()) < need)
      return InvalidArgument("Forward: sequence ", s, " needs ", need, " blocks for ", end,
                             " positions, its block table has ", q.block_table.size());
    const int64_t first_written = q.context / cs.block_size;
    for (int64_t i = 0; i < need; ++i) {
      const int32_t b = q.block_table[static_cast<size_t>(i)];
      if (b < 0 || b >= cs.num_blocks)
        return InvalidArgument("Forward: sequence ", s, " block table entry ", i, " is ", b, ", expected 0..",
                               cs.num_blocks - 1);
      const int32_t refs = cache.allocator().ref_count(b);
      if (refs == 0)
        return InvalidArgument("Forward: sequence ", s, " block table entry ", i, " is block ", b,
                               ", which is not allocated");
      // Shared blocks (prefixes) are read-only: a sequence writes only blocks it alone owns.
      if (i >= first_written && refs != 1)
        return InvalidArgument("Forward: sequence ", s, " would write block ", b, " (block table entry ", i,
                               "), which is shared (reference count ", refs, "); copy it first");
      if (i >= first_written && !written.insert(b).second)
        return InvalidArgument("Forward: block ", b, " is written by two sequences of the step");
    }
    for (size_t i = 0; i < q.tokens.size(); ++i)
      if (q.tokens[i] < 0 || q.tokens[i] >= cfg_.vocab)
        return InvalidArgument("Forward: sequence ", s, " token ", i, " is ", q.tokens[i], ", expected 0..",
                               cfg_.vocab - 1);
  }
  return Status::Ok();
}

Status Model::Forward(std::span<const SeqStep> seqs, KvCache& cache, float* logits) {
  OC_RETURN_IF_ERROR(Check(seqs, cache));
  const ModelConfig& c = cfg_;
  const int64_t e = c.hidden, d = c.head_dim, qd = c.heads * d, kvd = c.kv_heads * d, inter = c.intermediate;
  const int64_t bs = cache.shape().block_size, bf = cache.block_floats();
  // Rows of the step: sequence by sequence, token by token.
  std::vector<PagedSeqView> views;
  std::vector<int32_t> tok;
  std::vector<int64_t> pos;
  std::vector<const int32_t*> row_blocks;
  for (const SeqStep& q : seqs) {
    views.push_back(
        {static_cast<int64_t>(tok.size()), static_cast<int64_t>(q.tokens.size()), q.context, q.block_table.data()});
    for (size_t i = 0; i < q.tokens.size(); ++i) {
      tok.push_back(q.tokens[i]);
      pos.push_back(q.context + static_cast<int64_t>(i));
      row_blocks.push_back(q.block_table.data());
    }
  }
  const int64_t T = static_cast<int64_t>(tok.size());
  EnsureCapacity(T);
  x_.resize(static_cast<size_t>(T * e));
  h_.resize(static_cast<size_t>(T * e));
  qkv_.resize(static_cast<size_t>(T * (qd + 2 * kvd)));
  attn_.resize(static_cast<size_t>(T * qd));
  mlp_.resize(static_cast<size_t>(T * w_.layers[0].up.out));
  act_.resize(static_cast<size_t>(T * inter));

  for (int64_t t = 0; t < T; ++t) {
    std::memcpy(&x_[static_cast<size_t>(t * e)], &w_.embed[static_cast<size_t>(tok[static_cast<size_t>(t)] * e)],
                static_cast<size_t>(e) * 4);
    if (c.is_gpt2()) {
      const float* p = &w_.positions[static_cast<size_t>(pos[static_cast<size_t>(t)] * e)];
      for (int64_t i = 0; i < e; ++i) x_[static_cast<size_t>(t * e + i)] += p[i];
    }
  }
  const int64_t half = d / 2;
  if (!c.is_gpt2()) {
    cos_.resize(static_cast<size_t>(T * half));
    sin_.resize(static_cast<size_t>(T * half));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < half; ++i) {
        // As transformers: the angle in float32, its cosine and sine rounded to float32.
        const float ang = static_cast<float>(pos[static_cast<size_t>(t)]) * inv_freq_[static_cast<size_t>(i)];
        cos_[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(static_cast<double>(ang)));
        sin_[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(static_cast<double>(ang)));
      }
  }
  const int64_t qkv_ld = qd + 2 * kvd;
  auto norm_rows = [&](const std::vector<float>& w, const std::vector<float>& b) {
    pool_->ParallelFor(T, 16, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t)
        NormRow(&x_[static_cast<size_t>(t * e)], e, w.data(), b.empty() ? nullptr : b.data(), c.norm_eps,
                &h_[static_cast<size_t>(t * e)]);
    });
  };

  for (int64_t l = 0; l < c.layers; ++l) {
    const LayerWeights& lw = w_.layers[static_cast<size_t>(l)];
    norm_rows(lw.norm1_w, lw.norm1_b);
    Gemm(lw.qkv, h_.data(), T, qkv_.data(), nullptr);
    float* kpool = cache.k(l);
    float* vpool = cache.v(l);
    pool_->ParallelFor(T, 8, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        float* row = &qkv_[static_cast<size_t>(t * qkv_ld)];
        if (!c.is_gpt2()) {
          const float* cs = &cos_[static_cast<size_t>(t * half)];
          const float* sn = &sin_[static_cast<size_t>(t * half)];
          for (int64_t h = 0; h < c.heads + c.kv_heads; ++h) RopeHead(row + h * d, d, cs, sn);
        }
        const int64_t p = pos[static_cast<size_t>(t)];
        const int64_t blk = row_blocks[static_cast<size_t>(t)][p / bs], slot = p % bs;
        for (int64_t g = 0; g < c.kv_heads; ++g) {
          const int64_t off = blk * bf + g * bs * d + slot * d;
          std::memcpy(kpool + off, row + qd + g * d, static_cast<size_t>(d) * 4);
          std::memcpy(vpool + off, row + qd + kvd + g * d, static_cast<size_t>(d) * 4);
        }
      }
    });
    PagedAttentionArgs pa;
    pa.seqs = views;
    pa.q = qkv_.data();
    pa.ldq = qkv_ld;
    pa.k_pool = kpool;
    pa.v_pool = vpool;
    pa.heads = c.heads;
    pa.kv_heads = c.kv_heads;
    pa.head_dim = d;
    pa.block_size = bs;
    pa.window = c.window[static_cast<size_t>(l)];
    double scale = c.is_gpt2() && !c.scale_attn_weights ? 1.0 : 1.0 / std::sqrt(static_cast<double>(d));
    if (c.is_gpt2() && c.scale_by_inverse_layer_idx) scale /= static_cast<double>(l + 1);
    pa.scale = static_cast<float>(scale);
    pa.out = attn_.data();
    PagedAttention(pa, pool_);
    Gemm(lw.o, attn_.data(), T, x_.data(), x_.data());

    norm_rows(lw.norm2_w, lw.norm2_b);
    Gemm(lw.up, h_.data(), T, mlp_.data(), nullptr);
    const int64_t up_ld = lw.up.out;
    pool_->ParallelFor(T, 4, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const float* u = &mlp_[static_cast<size_t>(t * up_ld)];
        float* a = &act_[static_cast<size_t>(t * inter)];
        if (c.is_gpt2())
          for (int64_t i = 0; i < inter; ++i) a[i] = Activate(c.act, u[i]);
        else
          for (int64_t i = 0; i < inter; ++i) a[i] = Activate(c.act, u[i]) * u[inter + i];
      }
    });
    Gemm(lw.down, act_.data(), T, x_.data(), x_.data());
  }
  // The final norm and the lm_head for each sequence's last token only.
  const int64_t S = static_cast<int64_t>(seqs.size());
  last_.resize(static_cast<size_t>(S * e));
  for (int64_t s = 0; s < S; ++s) {
    const PagedSeqView& v = views[static_cast<size_t>(s)];
    NormRow(&x_[static_cast<size_t>((v.row0 + v.n - 1) * e)], e, w_.final_w.data(),
            w_.final_b.empty() ? nullptr : w_.final_b.data(), c.norm_eps, &last_[static_cast<size_t>(s * e)]);
  }
  Gemm(w_.lm_head, last_.data(), S, logits, nullptr);
  return Status::Ok();
}

}  // namespace oc::llm
