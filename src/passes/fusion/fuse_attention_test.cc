#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Tensor;

constexpr int64_t B = 1, H = 2, S = 4, D = 8;

struct Built {
  Value *q, *k, *v, *y;
};

// Q, K [B,H,S,D] inputs; Kt = Transpose(K); scores -> [mid] -> Softmax -> MatMul(V).
// `mid` appends nodes between the QK MatMul output and the Softmax input.
template <typename Mid>
Built Build(Graph& g, Mid mid, int64_t softmax_axis = -1) {
  g.opset_imports[""] = 14;
  Built b;
  b.q = Tensor(g, "q", {B, H, S, D});
  b.k = Tensor(g, "k", {B, H, S, D});
  b.v = Tensor(g, "v", {B, H, S, D});
  Value* kt = Tensor(g, "kt", {B, H, D, S});
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  g.inputs = {b.q, b.k, b.v};
  g.AddNode("Transpose", "kt", {b.k}, {kt})->SetInts("perm", {0, 1, 3, 2});
  g.AddNode("MatMul", "qk", {b.q, kt}, {scores});
  Value* pre = mid(scores);
  Value* p = Tensor(g, "p", {B, H, S, S});
  b.y = Tensor(g, "y", {B, H, S, D});
  g.AddNode("Softmax", "softmax", {pre}, {p})->SetInt("axis", softmax_axis);
  g.AddNode("MatMul", "pv", {p, b.v}, {b.y});
  g.outputs = {b.y};
  return b;
}

Status RunPass(Graph& g) { return RunFuseAttention(g, CompileOptions{}); }

TEST(PassFuseAttention, BertScaleAndAdditiveMaskBecomeAttention) {
  Graph g;
  Value* mask = nullptr;
  Built b = Build(g, [&](Value* s) {
    Value* scaled = Tensor(g, "scaled", {B, H, S, S});
    Value* masked = Tensor(g, "masked", {B, H, S, S});
    mask = Tensor(g, "mask", {B, 1, 1, S});
    g.inputs.push_back(mask);
    g.AddNode("Div", "div", {s, Const<float>(g, "c", {}, {std::sqrt(8.f)})}, {scaled});
    g.AddNode("Add", "add", {mask, scaled}, {masked});
    return masked;
  });
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Attention"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->opset, 23);
  // Kt = Transpose(K, [0,1,3,2]) undoes to K itself.
  EXPECT_EQ(n->inputs, (std::vector<Value*>{b.q, b.k, b.v, mask}));
  EXPECT_EQ(n->outputs[0], b.y);
  EXPECT_NEAR(n->GetFloat("scale", 0), 1 / std::sqrt(8.f), 1e-6);
  EXPECT_EQ(n->GetInt("is_causal", 0), 0);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, Gpt2CausalWhereBecomesIsCausal) {
  Graph g;
  Built b = Build(g, [&](Value* s) {
    std::vector<uint8_t> tri(S * S);
    for (int i = 0; i < S; ++i)
      for (int j = 0; j < S; ++j) tri[i * S + j] = j <= i;
    Value* cond = Const<uint8_t>(g, "causal", {1, 1, S, S}, tri);
    cond->dtype = DataType::kBool;
    Value* scaled = Tensor(g, "scaled", {B, H, S, S});
    Value* masked = Tensor(g, "masked", {B, H, S, S});
    g.AddNode("Mul", "mul", {Const<float>(g, "c", {}, {0.5f}), s}, {scaled});
    g.AddNode("Where", "where",
              {cond, scaled, Const<float>(g, "fill", {}, {std::numeric_limits<float>::lowest()})}, {masked});
    return masked;
  });
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Attention"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->inputs.size(), 3u);
  EXPECT_EQ(n->GetInt("is_causal", 0), 1);
  EXPECT_FLOAT_EQ(n->GetFloat("scale", 0), 0.5f);
  EXPECT_EQ(n->outputs[0], b.y);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, KeyTransposeFromHeadSplitIsRetargeted) {
  // BERT exports K^T as one Transpose(perm [0,2,3,1]) of the [B,S,H,D] projection.
  Graph g;
  g.opset_imports[""] = 14;
  Value* q = Tensor(g, "q", {B, H, S, D});
  Value* kx = Tensor(g, "kx", {B, S, H, D});
  Value* v = Tensor(g, "v", {B, H, S, D});
  Value* kt = Tensor(g, "kt", {B, H, D, S});
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  Value* p = Tensor(g, "p", {B, H, S, S});
  Value* y = Tensor(g, "y", {B, H, S, D});
  g.inputs = {q, kx, v};
  g.AddNode("Transpose", "kt", {kx}, {kt})->SetInts("perm", {0, 2, 3, 1});
  g.AddNode("MatMul", "qk", {q, kt}, {scores});
  g.AddNode("Softmax", "softmax", {scores}, {p})->SetInt("axis", 3);
  g.AddNode("MatMul", "pv", {p, v}, {y});
  g.outputs = {y};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "Attention"}));
  EXPECT_EQ(g.nodes()[0]->GetInts("perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(kt->shape, (std::vector<int64_t>{B, H, S, D}));
  EXPECT_FLOAT_EQ(g.nodes()[1]->GetFloat("scale", 0), 1.f);  // no scale in the graph
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, SdpaExportWithPrescaledOperandsAndNanGuard) {
  // torch SDPA at opset 17: MatMul(Q * c, Kt * c) + mask -> Softmax ->
  // Where(IsNaN(P), 0, P) -> MatMul(V).
  Graph g;
  g.opset_imports[""] = 17;
  Value* q = Tensor(g, "q", {B, H, S, D});
  Value* k = Tensor(g, "k", {B, H, S, D});
  Value* v = Tensor(g, "v", {B, H, S, D});
  Value* mask = Tensor(g, "mask", {B, 1, S, S});
  g.inputs = {q, k, v, mask};
  Value* kt = Tensor(g, "kt", {B, H, D, S});
  Value* qs = Tensor(g, "qs", {B, H, S, D});
  Value* kts = Tensor(g, "kts", {B, H, D, S});
  g.AddNode("Transpose", "kt", {k}, {kt})->SetInts("perm", {0, 1, 3, 2});
  g.AddNode("Mul", "qs", {q, Const<float>(g, "cq", {}, {0.5f})}, {qs});
  g.AddNode("Mul", "kts", {kt, Const<float>(g, "ck", {}, {0.25f})}, {kts});
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  Value* masked = Tensor(g, "masked", {B, H, S, S});
  Value* p = Tensor(g, "p", {B, H, S, S});
  Value* nan = Tensor(g, "nan", {B, H, S, S}, DataType::kBool);
  Value* p0 = Tensor(g, "p0", {B, H, S, S});
  Value* y = Tensor(g, "y", {B, H, S, D});
  g.AddNode("MatMul", "qk", {qs, kts}, {scores});
  g.AddNode("Add", "add", {scores, mask}, {masked});
  g.AddNode("Softmax", "softmax", {masked}, {p})->SetInt("axis", -1);
  g.AddNode("IsNaN", "isnan", {p}, {nan});
  g.AddNode("Where", "guard", {nan, Const<float>(g, "zero", {}, {0.f}), p}, {p0});
  g.AddNode("MatMul", "pv", {p0, v}, {y});
  g.outputs = {y};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Attention"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->inputs, (std::vector<Value*>{q, k, v, mask}));
  EXPECT_FLOAT_EQ(n->GetFloat("scale", 0), 0.125f);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, ConstantCausalAdditiveMaskBecomesIsCausal) {
  Graph g;
  Build(g, [&](Value* s) {
    std::vector<float> m(S * S, 0.f);
    for (int i = 0; i < S; ++i)
      for (int j = i + 1; j < S; ++j) m[i * S + j] = -std::numeric_limits<float>::infinity();
    Value* masked = Tensor(g, "masked", {B, H, S, S});
    g.AddNode("Add", "add", {s, Const<float>(g, "causal", {S, S}, m)}, {masked});
    return masked;
  });
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Attention"}));
  EXPECT_EQ(g.nodes()[0]->inputs.size(), 3u);
  EXPECT_EQ(g.nodes()[0]->GetInt("is_causal", 0), 1);
}

// transformers' eager GPT-2 export: scores * c + constant causal mask, Softmax,
// then Cast(to float) of the already float probabilities before MatMul(V).
void BuildCastAfterSoftmax(Graph& g, DataType cast_to) {
  g.opset_imports[""] = 17;
  Value* q = Tensor(g, "q", {B, H, S, D});
  Value* k = Tensor(g, "k", {B, H, S, D});
  Value* v = Tensor(g, "v", {B, H, S, D});
  g.inputs = {q, k, v};
  Value* kt = Tensor(g, "kt", {B, H, D, S});
  g.AddNode("Transpose", "kt", {k}, {kt})->SetInts("perm", {0, 1, 3, 2});
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  g.AddNode("MatMul", "qk", {q, kt}, {scores});
  Value* scaled = Tensor(g, "scaled", {B, H, S, S});
  g.AddNode("Mul", "mul", {scores, Const<float>(g, "c", {}, {0.125f})}, {scaled});
  std::vector<float> m(S * S, 0.f);
  for (int i = 0; i < S; ++i)
    for (int j = i + 1; j < S; ++j) m[i * S + j] = std::numeric_limits<float>::lowest();
  Value* masked = Tensor(g, "masked", {B, H, S, S});
  g.AddNode("Add", "add", {scaled, Const<float>(g, "causal", {1, 1, S, S}, m)}, {masked});
  Value* p = Tensor(g, "p", {B, H, S, S});
  g.AddNode("Softmax", "softmax", {masked}, {p})->SetInt("axis", -1);
  Value* pc = Tensor(g, "pc", {B, H, S, S}, cast_to);
  g.AddNode("Cast", "cast", {p}, {pc})->SetInt("to", static_cast<int64_t>(cast_to));
  Value* y = Tensor(g, "y", {B, H, S, D}, cast_to);
  g.AddNode("MatMul", "pv", {pc, cast_to == DataType::kFloat32 ? v : Tensor(g, "v16", {B, H, S, D}, cast_to)},
            {y});
  g.outputs = {y};
}

TEST(PassFuseAttention, NoOpCastOfTheProbabilitiesIsAbsorbed) {
  Graph g;
  BuildCastAfterSoftmax(g, DataType::kFloat32);
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Attention"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->inputs.size(), 3u);
  EXPECT_EQ(n->GetInt("is_causal", 0), 1);
  EXPECT_FLOAT_EQ(n->GetFloat("scale", 0), 0.125f);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, CastToAnotherTypeIsLeftAlone) {
  Graph g;
  BuildCastAfterSoftmax(g, DataType::kFloat16);
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 7u);
}

TEST(PassFuseAttention, ScaleAfterTheMaskIsLeftAlone) {
  Graph g;
  Build(g, [&](Value* s) {
    Value* mask = Tensor(g, "mask", {S});
    g.inputs.push_back(mask);
    Value* masked = Tensor(g, "masked", {B, H, S, S});
    Value* scaled = Tensor(g, "scaled", {B, H, S, S});
    g.AddNode("Add", "add", {s, mask}, {masked});
    g.AddNode("Mul", "mul", {masked, Const<float>(g, "c", {}, {0.5f})}, {scaled});
    return scaled;
  });
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 6u);
}

TEST(PassFuseAttention, HeadSplitProjectionsTakeThe3dForm) {
  // BERT: p [B,S,H*D] -> Reshape [B,S,H,D] -> Transpose (K: [0,2,3,1]) ... and
  // the context Transpose [0,2,1,3] + Reshape [B,S,H*D] after.
  Graph g;
  g.opset_imports[""] = 14;
  std::vector<Value*> proj, heads;
  Value* split = Const<int64_t>(g, "split", {4}, {B, S, H, D});
  for (const char* n : {"q", "k", "v"}) {
    Value* p = Tensor(g, std::string(n) + "_proj", {B, S, H * D});
    Value* r = Tensor(g, std::string(n) + "_split", {B, S, H, D});
    const bool is_k = std::string(n) == "k";
    Value* t = Tensor(g, n, is_k ? std::vector<int64_t>{B, H, D, S} : std::vector<int64_t>{B, H, S, D});
    g.AddNode("Reshape", r->name, {p, split}, {r});
    g.AddNode("Transpose", t->name, {r}, {t})->SetInts("perm", is_k ? std::vector<int64_t>{0, 2, 3, 1}
                                                                       : std::vector<int64_t>{0, 2, 1, 3});
    proj.push_back(p);
    heads.push_back(t);
  }
  g.inputs = proj;
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  Value* p = Tensor(g, "p", {B, H, S, S});
  Value* ctx = Tensor(g, "ctx", {B, H, S, D});
  Value* ctx_t = Tensor(g, "ctx_t", {B, S, H, D});
  Value* y = Tensor(g, "y", {B, S, H * D});
  g.AddNode("MatMul", "qk", {heads[0], heads[1]}, {scores});
  g.AddNode("Softmax", "softmax", {scores}, {p})->SetInt("axis", -1);
  g.AddNode("MatMul", "pv", {p, heads[2]}, {ctx});
  g.AddNode("Transpose", "ctx_t", {ctx}, {ctx_t})->SetInts("perm", {0, 2, 1, 3});
  g.AddNode("Reshape", "y", {ctx_t, Const<int64_t>(g, "merge", {3}, {B, S, H * D})}, {y});
  g.outputs = {y};
  ASSERT_TRUE(RunPass(g).ok());
  Node* att = nullptr;
  for (auto& n : g.nodes())
    if (n->op_type == "Attention") att = n.get();
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->inputs, proj);
  EXPECT_EQ(att->outputs[0], y);
  EXPECT_EQ(att->GetInt("q_num_heads", 0), H);
  EXPECT_EQ(att->GetInt("kv_num_heads", 0), H);
  EXPECT_EQ(CountUses(g, heads[0]), 0);  // the head splits are dead now
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

// GPT-2: one [B,S,3*H*D] projection, Split into Q | K | V (sizes `parts`),
// then the head splits of HeadSplitProjectionsTakeThe3dForm.
Node* BuildSplitQkv(Graph& g, std::vector<int64_t> parts, Value** qkv) {
  g.opset_imports[""] = 14;
  const int64_t total = parts[0] + parts[1] + parts[2];
  *qkv = Tensor(g, "qkv", {B, S, total});
  g.inputs = {*qkv};
  std::vector<Value*> proj, heads;
  for (int i = 0; i < 3; ++i) proj.push_back(Tensor(g, "proj" + std::to_string(i), {B, S, parts[i]}));
  Node* split = g.AddNode("Split", "split", {*qkv, Const<int64_t>(g, "sizes", {3}, parts)}, proj);
  split->SetInt("axis", 2);
  Value* shape = Const<int64_t>(g, "shape", {4}, {B, S, H, D});
  for (int i = 0; i < 3; ++i) {
    Value* r = Tensor(g, "r" + std::to_string(i), {B, S, H, D});
    const bool is_k = i == 1;
    Value* t = Tensor(g, "t" + std::to_string(i), is_k ? std::vector<int64_t>{B, H, D, S} : std::vector<int64_t>{B, H, S, D});
    g.AddNode("Reshape", r->name, {proj[i], shape}, {r});
    g.AddNode("Transpose", t->name, {r}, {t})->SetInts("perm", is_k ? std::vector<int64_t>{0, 2, 3, 1}
                                                                       : std::vector<int64_t>{0, 2, 1, 3});
    heads.push_back(t);
  }
  Value* scores = Tensor(g, "scores", {B, H, S, S});
  Value* p = Tensor(g, "p", {B, H, S, S});
  Value* ctx = Tensor(g, "ctx", {B, H, S, D});
  Value* ctx_t = Tensor(g, "ctx_t", {B, S, H, D});
  Value* y = Tensor(g, "y", {B, S, H * D});
  g.AddNode("MatMul", "qk", {heads[0], heads[1]}, {scores});
  g.AddNode("Softmax", "softmax", {scores}, {p})->SetInt("axis", -1);
  g.AddNode("MatMul", "pv", {p, heads[2]}, {ctx});
  g.AddNode("Transpose", "ctx_t", {ctx}, {ctx_t})->SetInts("perm", {0, 2, 1, 3});
  g.AddNode("Reshape", "y", {ctx_t, Const<int64_t>(g, "merge", {3}, {B, S, H * D})}, {y});
  g.outputs = {y};
  return split;
}

Node* FindAttention(Graph& g) {
  for (auto& n : g.nodes())
    if (n->op_type == "Attention") return n.get();
  return nullptr;
}

TEST(PassFuseAttention, SplitQkvIsReadPacked) {
  Graph g;
  Value* qkv = nullptr;
  BuildSplitQkv(g, {H * D, H * D, H * D}, &qkv);
  ASSERT_TRUE(RunPass(g).ok());
  Node* att = FindAttention(g);
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->inputs, (std::vector<Value*>{qkv, qkv, qkv}));
  EXPECT_EQ(att->GetInt("packed_qkv", 0), 1);
  EXPECT_EQ(att->GetInt("q_num_heads", 0), H);
  EXPECT_EQ(CountUses(g, qkv), 4);  // the Attention three times; the Split is dead now
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseAttention, SplitIntoUnequalPartsIsNotPacked) {
  // Q, K, V are outputs 0, 1, 2 of one Split along the last axis, each a head
  // split of [B, S, H*D], and the Split's input is a multiple of 3 wide, but
  // its thirds are not those parts: the Split is kept. (A graph whose shapes
  // agree cannot get here: three [B, S, H*D] parts are the thirds of their
  // [B, S, 3HD] input. The pass reads the declared shapes, so it checks.)
  Graph g;
  Value* qkv = nullptr;
  BuildSplitQkv(g, {H * D, H * D, H * D}, &qkv);
  qkv->shape[2] += 3;  // [B, S, 3HD + 3]: thirds of HD + 1
  ASSERT_TRUE(RunPass(g).ok());
  Node* att = FindAttention(g);
  ASSERT_NE(att, nullptr);  // the 4-D form
  EXPECT_EQ(att->GetInt("packed_qkv", 0), 0);
  EXPECT_NE(att->inputs[0], qkv);
}

TEST(PassFuseAttention, SoftmaxOverAnotherAxisIsLeftAlone) {
  Graph g;
  Build(g, [](Value* s) { return s; }, /*softmax_axis=*/2);
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "MatMul", "Softmax", "MatMul"}));
}

TEST(PassFuseAttention, NonConstantScaleIsLeftAlone) {
  Graph g;
  Build(g, [&](Value* s) {
    Value* c = Tensor(g, "c", {});
    g.inputs.push_back(c);
    Value* scaled = Tensor(g, "scaled", {B, H, S, S});
    g.AddNode("Div", "div", {s, c}, {scaled});
    return scaled;
  });
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "MatMul", "Div", "Softmax", "MatMul"}));
}

TEST(PassFuseAttention, ScoresReadElsewhereAreLeftAlone) {
  Graph g;
  Value* scores = nullptr;
  Build(g, [&](Value* s) {
    scores = s;
    return s;
  });
  g.outputs.push_back(scores);
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "MatMul", "Softmax", "MatMul"}));
}

TEST(PassFuseAttention, NonCausalWhereIsLeftAlone) {
  Graph g;
  Build(g, [&](Value* s) {
    std::vector<uint8_t> cond_data(S * S, 1);
    cond_data[1] = 0;  // not triangular
    Value* cond = Const<uint8_t>(g, "cond", {S, S}, cond_data);
    cond->dtype = DataType::kBool;
    Value* masked = Tensor(g, "masked", {B, H, S, S});
    g.AddNode("Where", "where", {cond, s, Const<float>(g, "fill", {}, {-1e9f})}, {masked});
    return masked;
  });
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "MatMul", "Where", "Softmax", "MatMul"}));
}

}  // namespace
}  // namespace oc
