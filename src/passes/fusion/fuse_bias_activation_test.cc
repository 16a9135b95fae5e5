#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Pattern;
using testing::Tensor;

// These check the rewrite itself, so they do not require the Fused* kernels.
Status Fuse(Graph& g) { return FuseBiasActivation(g, /*only_registered=*/false); }

TEST(PassFuseBiasActivation, MatMulPlusConstantBiasBecomesFusedMatMul) {
  Graph g;
  Value* a = Tensor(g, "a", {2, 4, 8});
  Value* b = Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1));
  Value* bias = Const<float>(g, "bias", {1, 16}, Pattern(16, -1, 1));
  Value* mm = Tensor(g, "mm", {2, 4, 16});
  Value* y = Tensor(g, "y", {2, 4, 16});
  g.inputs = {a};
  g.AddNode("MatMul", "matmul", {a, b}, {mm});
  g.AddNode("Add", "add", {bias, mm}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->opset, 1);
  EXPECT_EQ(g.opset_imports.at("com.opencann"), 1);
  ASSERT_EQ(n->inputs.size(), 3u);
  EXPECT_EQ(n->inputs[0], a);
  EXPECT_EQ(n->inputs[1], b);
  EXPECT_EQ(n->inputs[2]->shape, (std::vector<int64_t>{16}));
  EXPECT_TRUE(n->inputs[2]->IsConstant());
  EXPECT_EQ(n->outputs[0], y);
  EXPECT_FALSE(n->HasAttr("activation"));
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseBiasActivation, MatMulAddGeluFusesBothIntoOneNode) {
  Graph g;
  Value* a = Tensor(g, "a", {4, 8});
  Value* mm = Tensor(g, "mm", {4, 16});
  Value* s = Tensor(g, "s", {4, 16});
  Value* y = Tensor(g, "y", {4, 16});
  g.inputs = {a};
  g.AddNode("MatMul", "matmul", {a, Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1))}, {mm});
  g.AddNode("Add", "add", {mm, Const<float>(g, "bias", {16}, Pattern(16, -1, 1))}, {s});
  g.AddNode("Gelu", "gelu", {s}, {y})->SetString("approximate", "tanh");
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul"}));
  EXPECT_EQ(g.nodes()[0]->GetString("activation", ""), "GeluTanh");
  EXPECT_EQ(g.nodes()[0]->outputs[0], y);
}

// SiLU spelled y * Sigmoid(y), either operand order, fuses as Swish; when the
// Sigmoid's output is read elsewhere (or is a graph output) it stays.
TEST(PassFuseBiasActivation, SiluPatternFusesAsSwishOnlyWhenUnobserved) {
  for (int variant = 0; variant < 4; ++variant) {
    Graph g;
    Value* a = Tensor(g, "a", {4, 8});
    Value* mm = Tensor(g, "mm", {4, 16});
    Value* sg = Tensor(g, "sg", {4, 16});
    Value* y = Tensor(g, "y", {4, 16});
    g.inputs = {a};
    g.AddNode("MatMul", "matmul", {a, Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1))}, {mm});
    g.AddNode("Sigmoid", "sigmoid", {mm}, {sg});
    g.AddNode("Mul", "mul", variant == 1 ? std::vector<Value*>{sg, mm} : std::vector<Value*>{mm, sg}, {y});
    g.outputs = {y};
    if (variant == 2) g.outputs.push_back(sg);
    if (variant == 3) {
      Value* other = Tensor(g, "other", {4, 16});
      g.AddNode("Relu", "reads_sigmoid", {sg}, {other});
      g.outputs.push_back(other);
    }
    ASSERT_TRUE(Fuse(g).ok());
    if (variant < 2) {
      EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul"})) << variant;
      EXPECT_EQ(g.nodes()[0]->GetString("activation", ""), "Swish");
      EXPECT_EQ(g.nodes()[0]->outputs[0], y);
    } else {
      EXPECT_EQ(OpSequence(g).size(), variant == 2 ? 3u : 4u) << variant;
      EXPECT_EQ(OpSequence(g)[0], "MatMul") << variant;
    }
  }
}

// relu6(y + 3) / 6 spellings: y * c / 6 and y * (c / 6) (also * 1/6) fuse as
// HardSwish, c / 6 alone as HardSigmoid(1/6, 0.5); a 3.5 instead of 3 stays.
TEST(PassFuseBiasActivation, Relu6SpellingsFuseAsHardSwishOrHardSigmoid) {
  for (int variant = 0; variant < 5; ++variant) {
    Graph g;
    Value* a = Tensor(g, "a", {4, 8});
    Value* mm = Tensor(g, "mm", {4, 16});
    Value* p3 = Tensor(g, "p3", {4, 16});
    Value* c = Tensor(g, "c", {4, 16});
    Value* t = Tensor(g, "t", {4, 16});
    Value* y = Tensor(g, "y", {4, 16});
    g.inputs = {a};
    g.AddNode("MatMul", "matmul", {a, Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1))}, {mm});
    g.AddNode("Add", "add3", {mm, Const<float>(g, "three", {}, {variant == 4 ? 3.5f : 3.f})}, {p3});
    g.AddNode("Clip", "relu6", {p3, Const<float>(g, "lo", {}, {0.f}), Const<float>(g, "hi", {}, {6.f})}, {c});
    Value* six = Const<float>(g, "six", {}, {6.f});
    if (variant == 0 || variant == 4) {  // (y * c) / 6
      g.AddNode("Mul", "mul", {mm, c}, {t});
      g.AddNode("Div", "div", {t, six}, {y});
    } else if (variant == 1) {  // y * (c * 1/6)
      g.AddNode("Mul", "div", {c, Const<float>(g, "sixth", {}, {1.f / 6.f})}, {t});
      g.AddNode("Mul", "mul", {mm, t}, {y});
    } else if (variant == 2) {  // (c / 6) * y
      g.AddNode("Div", "div", {c, six}, {t});
      g.AddNode("Mul", "mul", {t, mm}, {y});
    } else {  // c / 6: hard-sigmoid
      g.AddNode("Div", "div", {c, six}, {y});
    }
    g.outputs = {y};
    ASSERT_TRUE(Fuse(g).ok());
    if (variant == 4) {
      EXPECT_EQ(OpSequence(g).size(), 5u);
      continue;
    }
    EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul"})) << variant;
    EXPECT_EQ(g.nodes()[0]->GetString("activation", ""), variant == 3 ? "HardSigmoid" : "HardSwish") << variant;
    EXPECT_EQ(g.nodes()[0]->outputs[0], y);
    if (variant == 3) EXPECT_FLOAT_EQ(g.nodes()[0]->GetFloat("activation_alpha", 0.f), 1.f / 6.f);
  }
}

TEST(PassFuseBiasActivation, MatMulPlusTensorIsNotABias) {
  Graph g;
  Value* a = Tensor(g, "a", {4, 8});
  Value* b = Tensor(g, "b", {8, 16});
  Value* t = Tensor(g, "t", {16});
  Value* mm = Tensor(g, "mm", {4, 16});
  Value* y = Tensor(g, "y", {4, 16});
  g.inputs = {a, b, t};
  g.AddNode("MatMul", "matmul", {a, b}, {mm});
  g.AddNode("Add", "add", {mm, t}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"MatMul", "Add"}));
  EXPECT_EQ(g.opset_imports.count("com.opencann"), 0u);
}

TEST(PassFuseBiasActivation, MatMulBiasResidualAddBecomesFusedMatMulWithZ) {
  // BERT's output projections: MatMul + bias, then + the residual stream.
  Graph g;
  Value* a = Tensor(g, "a", {2, 4, 8});
  Value* x = Tensor(g, "x", {2, 4, 16});
  Value* mm = Tensor(g, "mm", {2, 4, 16});
  Value* s = Tensor(g, "s", {2, 4, 16});
  Value* y = Tensor(g, "y", {2, 4, 16});
  g.inputs = {a, x};
  Value* b = Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1));
  g.AddNode("MatMul", "matmul", {a, b}, {mm});
  g.AddNode("Add", "bias", {mm, Const<float>(g, "bias", {16}, Pattern(16, -1, 1))}, {s});
  g.AddNode("Add", "residual", {x, s}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul"}));
  Node* n = g.nodes()[0].get();
  ASSERT_EQ(n->inputs.size(), 4u);
  EXPECT_EQ(n->inputs[0], a);
  EXPECT_EQ(n->inputs[1], b);
  EXPECT_EQ(n->inputs[3], x);
  EXPECT_EQ(n->outputs[0], y);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseBiasActivation, MatMulResidualWithoutBiasLeavesBiasSlotEmpty) {
  // The residual is computed after the MatMul: the fused node moves after it.
  Graph g;
  Value* a = Tensor(g, "a", {4, 8});
  Value* x0 = Tensor(g, "x0", {4, 16});
  Value* x = Tensor(g, "x", {4, 16});
  Value* mm = Tensor(g, "mm", {4, 16});
  Value* y = Tensor(g, "y", {4, 16});
  g.inputs = {a, x0};
  g.AddNode("MatMul", "matmul", {a, Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1))}, {mm});
  g.AddNode("Relu", "relu", {x0}, {x});
  g.AddNode("Add", "residual", {mm, x}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Relu", "com.opencann::FusedMatMul"}));
  Node* n = g.nodes()[1].get();
  ASSERT_EQ(n->inputs.size(), 4u);
  EXPECT_EQ(n->inputs[2], nullptr);
  EXPECT_EQ(n->inputs[3], x);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseBiasActivation, GemmReshapeResidualAddKeepsTheReshape) {
  // GPT-2's Conv1D: [S, D] Gemm, Reshape to [1, S, D], + the residual stream.
  Graph g;
  Value* a = Tensor(g, "a", {4, 8});
  Value* x = Tensor(g, "x", {1, 4, 16});
  Value* gy = Tensor(g, "gy", {4, 16});
  Value* r = Tensor(g, "r", {1, 4, 16});
  Value* y = Tensor(g, "y", {1, 4, 16});
  g.inputs = {a, x};
  g.AddNode("Gemm", "gemm",
            {a, Const<float>(g, "w", {8, 16}, Pattern(128, -1, 1)), Const<float>(g, "c", {16}, Pattern(16, -1, 1))},
            {gy});
  Value* shape = Const<int64_t>(g, "shape", {3}, {1, 4, 16});
  g.AddNode("Reshape", "reshape", {gy, shape}, {r});
  g.AddNode("Add", "residual", {x, r}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedGemm", "Reshape"}));
  Node* gemm = g.nodes()[0].get();
  ASSERT_EQ(gemm->inputs.size(), 4u);
  EXPECT_EQ(gemm->inputs[3], x);
  EXPECT_EQ(gemm->outputs[0], gy);
  EXPECT_EQ(g.nodes()[1]->inputs[0], gy);
  EXPECT_EQ(g.nodes()[1]->outputs[0], y);
  EXPECT_EQ(y->producer, g.nodes()[1].get());
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseBiasActivation, ResidualNotFusedAfterAnActivationOrWhenObserved) {
  {
    // act(MatMul) + x: the epilogue adds Z before the activation, so no.
    Graph g;
    Value* a = Tensor(g, "a", {4, 8});
    Value* x = Tensor(g, "x", {4, 16});
    Value* mm = Tensor(g, "mm", {4, 16});
    Value* h = Tensor(g, "h", {4, 16});
    Value* y = Tensor(g, "y", {4, 16});
    g.inputs = {a, x};
    g.AddNode("MatMul", "matmul", {a, Const<float>(g, "b", {8, 16}, Pattern(128, -1, 1))}, {mm});
    g.AddNode("Relu", "relu", {mm}, {h});
    g.AddNode("Add", "residual", {h, x}, {y});
    g.outputs = {y};
    ASSERT_TRUE(Fuse(g).ok());
    EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul", "Add"}));
    EXPECT_EQ(g.nodes()[0]->inputs.size(), 2u);
  }
  {
    // The Reshape output is a graph output: it must stay observable.
    Graph g;
    Value* a = Tensor(g, "a", {4, 8});
    Value* x = Tensor(g, "x", {1, 4, 16});
    Value* gy = Tensor(g, "gy", {4, 16});
    Value* r = Tensor(g, "r", {1, 4, 16});
    Value* y = Tensor(g, "y", {1, 4, 16});
    g.inputs = {a, x};
    g.AddNode("Gemm", "gemm", {a, Const<float>(g, "w", {8, 16}, Pattern(128, -1, 1))}, {gy});
    g.AddNode("Reshape", "reshape", {gy, Const<int64_t>(g, "shape", {3}, {1, 4, 16})}, {r});
    g.AddNode("Add", "residual", {x, r}, {y});
    g.outputs = {r, y};
    ASSERT_TRUE(Fuse(g).ok());
    EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Gemm", "Reshape", "Add"}));
  }
}

TEST(PassFuseBiasActivation, ConvReluBecomesFusedConvKeepingAttributes) {
  Graph g;
  Value* x = Tensor(g, "x", {1, 3, 8, 8});
  Value* c = Tensor(g, "c", {1, 4, 4, 4});
  Value* y = Tensor(g, "y", {1, 4, 4, 4});
  g.inputs = {x};
  Node* conv = g.AddNode("Conv", "conv",
                         {x, Const<float>(g, "W", {4, 3, 3, 3}, Pattern(108, -1, 1)),
                          Const<float>(g, "B", {4}, Pattern(4, -1, 1))},
                         {c});
  conv->SetInts("strides", {2, 2});
  conv->SetInts("pads", {1, 1, 1, 1});
  g.AddNode("Relu", "relu", {c}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedConv"}));
  EXPECT_EQ(conv->GetString("activation", ""), "Relu");
  EXPECT_EQ(conv->GetInts("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->outputs[0], y);
  EXPECT_EQ(g.FindValue("c")->producer, nullptr);
}

TEST(PassFuseBiasActivation, ActivationParametersBecomeAlphaBeta) {
  struct Case {
    const char* op;
    const char* expect;
    float alpha, beta;
    bool has_alpha, has_beta;
  };
  for (const Case& k : {Case{"LeakyRelu", "LeakyRelu", 0.2f, 0, true, false},
                        Case{"HardSigmoid", "HardSigmoid", 0.3f, 0.6f, true, true},
                        Case{"Clip", "Clip", -1.f, 6.f, true, true},
                        Case{"Sigmoid", "Sigmoid", 0, 0, false, false},
                        Case{"HardSwish", "HardSwish", 0, 0, false, false},
                        Case{"Tanh", "Tanh", 0, 0, false, false}}) {
    Graph g;
    g.opset_imports[""] = 17;
    Value* a = Tensor(g, "a", {2, 3});
    Value* c = Tensor(g, "c", {2, 4});
    Value* y = Tensor(g, "y", {2, 4});
    g.inputs = {a};
    g.AddNode("Gemm", "gemm", {a, Const<float>(g, "b", {3, 4}, Pattern(12, -1, 1))}, {c});
    std::vector<Value*> act_in = {c};
    if (std::string(k.op) == "Clip") {
      act_in.push_back(Const<float>(g, "lo", {}, {-1.f}));
      act_in.push_back(Const<float>(g, "hi", {}, {6.f}));
    }
    Node* act = g.AddNode(k.op, "act", act_in, {y});
    if (std::string(k.op) == "LeakyRelu") act->SetFloat("alpha", 0.2f);
    if (std::string(k.op) == "HardSigmoid") {
      act->SetFloat("alpha", 0.3f);
      act->SetFloat("beta", 0.6f);
    }
    g.outputs = {y};
    ASSERT_TRUE(Fuse(g).ok());
    ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedGemm"})) << k.op;
    Node* n = g.nodes()[0].get();
    EXPECT_EQ(n->GetString("activation", ""), k.expect);
    EXPECT_EQ(n->HasAttr("activation_alpha"), k.has_alpha) << k.op;
    EXPECT_EQ(n->HasAttr("activation_beta"), k.has_beta) << k.op;
    if (k.has_alpha) EXPECT_FLOAT_EQ(n->GetFloat("activation_alpha", 0), k.alpha) << k.op;
    if (k.has_beta) EXPECT_FLOAT_EQ(n->GetFloat("activation_beta", 0), k.beta) << k.op;
  }
}

TEST(PassFuseBiasActivation, ClipWithRuntimeBoundIsNotFused) {
  Graph g;
  Value* a = Tensor(g, "a", {2, 3});
  Value* hi = Tensor(g, "hi", {});
  Value* c = Tensor(g, "c", {2, 4});
  Value* y = Tensor(g, "y", {2, 4});
  g.inputs = {a, hi};
  g.AddNode("Gemm", "gemm", {a, Const<float>(g, "b", {3, 4}, Pattern(12, -1, 1))}, {c});
  g.AddNode("Clip", "clip", {c, nullptr, hi}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Gemm", "Clip"}));
}

// The residual branch is produced after the Conv in node order: the fused node
// must move after it.
TEST(PassFuseBiasActivation, ConvResidualAddReluBecomesFusedConvWithZ) {
  Graph g;
  Value* x = Tensor(g, "x", {1, 4, 6, 6});
  Value* c = Tensor(g, "c", {1, 4, 6, 6});
  Value* skip = Tensor(g, "skip", {1, 4, 6, 6});
  Value* s = Tensor(g, "s", {1, 4, 6, 6});
  Value* y = Tensor(g, "y", {1, 4, 6, 6});
  g.inputs = {x};
  Value* w = Const<float>(g, "W", {4, 4, 1, 1}, Pattern(16, -1, 1));
  Node* conv = g.AddNode("Conv", "conv", {x, w}, {c});
  g.AddNode("Sigmoid", "branch", {x}, {skip});
  g.AddNode("Add", "add", {skip, c}, {s});
  g.AddNode("Relu", "relu", {s}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Sigmoid", "com.opencann::FusedConv"}));
  ASSERT_EQ(conv->inputs.size(), 4u);
  EXPECT_EQ(conv->inputs[0], x);
  EXPECT_EQ(conv->inputs[1], w);
  EXPECT_EQ(conv->inputs[2], nullptr);
  EXPECT_EQ(conv->inputs[3], skip);
  EXPECT_EQ(conv->GetString("activation", ""), "Relu");
  EXPECT_EQ(conv->outputs[0], y);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseBiasActivation, NoFusionWhenIntermediateIsSharedOrAnOutput) {
  {
    Graph g;
    Value* x = Tensor(g, "x", {1, 2, 4, 4});
    Value* c = Tensor(g, "c", {1, 2, 4, 4});
    Value* y = Tensor(g, "y", {1, 2, 4, 4});
    Value* z = Tensor(g, "z", {1, 2, 4, 4});
    g.inputs = {x};
    g.AddNode("Conv", "conv", {x, Const<float>(g, "W", {2, 2, 1, 1}, Pattern(4, -1, 1))}, {c});
    g.AddNode("Relu", "relu", {c}, {y});
    g.AddNode("Sigmoid", "other_reader", {c}, {z});
    g.outputs = {y, z};
    ASSERT_TRUE(Fuse(g).ok());
    EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Conv", "Relu", "Sigmoid"}));
  }
  {
    Graph g;
    Value* x = Tensor(g, "x", {1, 2, 4, 4});
    Value* c = Tensor(g, "c", {1, 2, 4, 4});
    Value* y = Tensor(g, "y", {1, 2, 4, 4});
    g.inputs = {x};
    g.AddNode("Conv", "conv", {x, Const<float>(g, "W", {2, 2, 1, 1}, Pattern(4, -1, 1))}, {c});
    g.AddNode("Relu", "relu", {c}, {y});
    g.outputs = {y, c};
    ASSERT_TRUE(Fuse(g).ok());
    EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Conv", "Relu"}));
  }
}

TEST(PassFuseBiasActivation, DisabledByOptionAndWithoutKernels) {
  Graph g;
  Value* x = Tensor(g, "x", {1, 2, 4, 4});
  Value* c = Tensor(g, "c", {1, 2, 4, 4});
  Value* y = Tensor(g, "y", {1, 2, 4, 4});
  g.inputs = {x};
  g.AddNode("Conv", "conv", {x, Const<float>(g, "W", {2, 2, 1, 1}, Pattern(4, -1, 1))}, {c});
  g.AddNode("Relu", "relu", {c}, {y});
  g.outputs = {y};
  CompileOptions off;
  off.fuse = false;
  ASSERT_TRUE(RunFuseBiasActivation(g, off).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Conv", "Relu"}));
  ASSERT_TRUE(RunFuseBiasActivation(g, {}).ok());
  const bool have_kernel = OpRegistry::Global().Find(kOpenCannDomain, "FusedConv", 1) != nullptr;
  EXPECT_EQ(g.nodes().size(), have_kernel ? 1u : 2u);
}

// 0.5 * h * (1 + erf(h / sqrt2)) in the three association orders exporters use.
TEST(PassFuseBiasActivation, ErfGeluPatternsFuseAsGelu) {
  for (int order = 0; order < 3; ++order) {
    for (bool mul_form : {false, true}) {
      Graph g;
      g.opset_imports[""] = 17;
      Value* a = Tensor(g, "a", {4, 8});
      Value* h = Tensor(g, "h", {4, 16});
      auto t = [&](const char* n) { return Tensor(g, n, {4, 16}); };
      g.inputs = {a};
      g.AddNode("MatMul", "mm", {a, Const<float>(g, "w", {8, 16}, Pattern(128, -1, 1))}, {h});
      Value* scaled = t("scaled");
      if (mul_form)
        g.AddNode("Mul", "scale", {Const<float>(g, "inv_sqrt2", {}, {0.70710678f}), h}, {scaled});
      else
        g.AddNode("Div", "scale", {h, Const<float>(g, "sqrt2", {}, {1.4142135f})}, {scaled});
      Value* e = t("e");
      g.AddNode("Erf", "erf", {scaled}, {e});
      Value* t1 = t("t1");
      g.AddNode("Add", "plus1", {e, Const<float>(g, "one", {}, {1.f})}, {t1});
      Value* half = Const<float>(g, "half", {}, {0.5f});
      Value* m = t("m");
      Value* y = t("y");
      if (order == 0) {
        g.AddNode("Mul", "mul_h", {h, t1}, {m});
        g.AddNode("Mul", "mul_half", {m, half}, {y});
      } else if (order == 1) {
        g.AddNode("Mul", "mul_h", {half, h}, {m});
        g.AddNode("Mul", "mul_t", {t1, m}, {y});
      } else {
        g.AddNode("Mul", "mul_half", {t1, half}, {m});
        g.AddNode("Mul", "mul_h", {h, m}, {y});
      }
      Value* z = t("z");
      g.AddNode("Relu", "after", {y}, {z});
      g.outputs = {z};
      ASSERT_TRUE(Fuse(g).ok());
      EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"com.opencann::FusedMatMul", "Relu"}))
          << "order " << order << " mul_form " << mul_form;
      EXPECT_EQ(g.nodes()[0]->GetString("activation", ""), "Gelu");
      EXPECT_EQ(g.nodes()[0]->outputs[0], y);
      EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
    }
  }
}

TEST(PassFuseBiasActivation, ErfGeluWithWrongConstantIsLeftAlone) {
  Graph g;
  Value* a = Tensor(g, "a", {4, 8});
  Value* h = Tensor(g, "h", {4, 16});
  auto t = [&](const char* n) { return Tensor(g, n, {4, 16}); };
  g.inputs = {a};
  g.AddNode("MatMul", "mm", {a, Const<float>(g, "w", {8, 16}, Pattern(128, -1, 1))}, {h});
  Value* scaled = t("scaled");
  g.AddNode("Div", "scale", {h, Const<float>(g, "two", {}, {2.f})}, {scaled});
  Value* e = t("e");
  g.AddNode("Erf", "erf", {scaled}, {e});
  Value* t1 = t("t1");
  g.AddNode("Add", "plus1", {e, Const<float>(g, "one", {}, {1.f})}, {t1});
  Value* m = t("m");
  Value* y = t("y");
  g.AddNode("Mul", "mul_h", {h, t1}, {m});
  g.AddNode("Mul", "mul_half", {m, Const<float>(g, "half", {}, {0.5f})}, {y});
  g.outputs = {y};
  ASSERT_TRUE(Fuse(g).ok());
  EXPECT_EQ(g.nodes().size(), 6u);
}

}  // namespace
}  // namespace oc
