#include "parser/mindir/mindir_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "base/thread_pool.h"
#include "executor/executable.h"
#include "mindir.pb.h"
#include "parser/mindir/mindir_lower.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

using AT = mind_ir::AttributeProto;

// A MINDIR graph built the way MindSpore writes one: names qualified by the
// graph's, primitive calls as "REF::<primitive>", scalars as Constant nodes.
class ModelBuilder {
 public:
  ModelBuilder() {
    m_.set_ir_version("1.1");
    m_.set_producer_name("MindSpore");
    m_.mutable_graph()->set_name("g");
  }
  std::string Input(const std::string& name, std::vector<int64_t> dims) {
    auto* in = m_.mutable_graph()->add_input();
    in->set_name("g:" + name);
    auto* t = in->add_tensor();
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_type(mind_ir::ELEM_FLOAT);
    return in->name();
  }
  std::string Param(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& data) {
    auto* p = m_.mutable_graph()->add_parameter();
    p->set_name("g:" + name);
    p->set_ref_key(name);
    for (int64_t d : dims) p->add_dims(d);
    p->set_data_type(mind_ir::ELEM_FLOAT);
    p->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float)));
    return p->name();
  }
  std::string Const(AT value) {
    auto* n = m_.mutable_graph()->add_node();
    std::string name = "ValueNode_" + std::to_string(++count_);
    n->add_output(name);
    n->set_name(name);
    n->set_op_type("Constant");
    value.set_name("value");
    *n->add_attribute() = value;
    return name;
  }
  std::string Bool(bool b) {
    AT a;
    a.set_type(AT::BOOL);
    a.set_i(b);
    return Const(a);
  }
  std::string Int(int64_t i) {
    AT a;
    a.set_type(AT::INT64);
    a.set_i(i);
    return Const(a);
  }
  std::string IntTuple(std::vector<int64_t> v) {
    AT a;
    a.set_type(AT::TUPLE);
    for (int64_t x : v) {
      auto* item = a.add_values();
      item->set_type(AT::INT64);
      item->add_ints(x);
    }
    return Const(a);
  }
  // `dims`: the result's abstract (its "shape" attribute), as MindSpore records it.
  std::string Call(const std::string& op, std::vector<std::string> inputs, std::vector<int64_t> dims) {
    if (!prims_.count(op)) {
      auto* p = m_.add_primitives();
      p->set_name(op + ":1");
      p->set_op_type(op);
      p->set_prim_type(mind_ir::PrimitiveProto::PRIMITIVE_FUNCTION);
      prims_.insert(op);
    }
    auto* n = m_.mutable_graph()->add_node();
    std::string name = "g:CNode_" + std::to_string(++count_);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(name);
    n->set_name(name);
    n->set_op_type("REF::" + op + ":1");
    auto* shape = n->add_attribute();
    shape->set_name("shape");
    shape->set_type(AT::TENSORS);
    auto* t = shape->add_tensors();
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_type(mind_ir::ELEM_FLOAT);
    return name;
  }
  void Output(const std::string& name) { m_.mutable_graph()->add_output()->set_name(name); }
  std::string Bytes() const { return m_.SerializeAsString(); }
  mind_ir::ModelProto& model() { return m_; }

 private:
  mind_ir::ModelProto m_;
  std::set<std::string> prims_;
  int count_ = 0;
};

// x[2,3] @ w[4,3]^T + b, ReLU, Softmax over the last axis.
ModelBuilder DenseReluSoftmax() {
  ModelBuilder b;
  std::string x = b.Input("x", {2, 3});
  std::string w = b.Param("fc.weight", {4, 3}, std::vector<float>(12, 0.5f));
  std::string bias = b.Param("fc.bias", {4}, {0.f, 1.f, -1.f, 2.f});
  std::string mm = b.Call("MatMul", {x, w, b.Bool(false), b.Bool(true)}, {2, 4});
  std::string ba = b.Call("BiasAdd", {mm, bias, b.Int(0)}, {2, 4});
  std::string r = b.Call("ReLU", {ba}, {2, 4});
  b.Output(b.Call("Softmax", {r, b.IntTuple({-1})}, {2, 4}));
  return b;
}

TEST(MindirParser, LowersPrimitivesOntoTheIrWithNetworkNames) {
  std::string bytes = DenseReluSoftmax().Bytes();
  auto g = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->inputs.size(), 1u);
  EXPECT_EQ((*g)->inputs[0]->name, "x");
  EXPECT_NE((*g)->FindValue("fc.weight"), nullptr);
  std::vector<std::string> ops;
  for (const auto& n : (*g)->nodes()) ops.push_back(n->op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Gemm", "Add", "Relu", "Softmax"}));
  ASSERT_EQ((*g)->outputs.size(), 1u);
  EXPECT_EQ((*g)->outputs[0]->name, "output_0");
}

TEST(MindirParser, ComputesWhatTheGraphSays) {
  std::string bytes = DenseReluSoftmax().Bytes();
  auto parsed = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  std::shared_ptr<Graph> g(std::move(parsed).value());
  ASSERT_TRUE(RunPipeline(*g, CompileOptions{}).ok());
  auto exe = Executable::Create(g);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  // x = ones: every dot product is 1.5; + bias {0, 1, -1, 2} -> relu {1.5, 2.5, 0.5, 3.5}.
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());
  std::vector<float> x(6, 1.f), y(8, 0.f);
  const void* ins[] = {x.data()};
  void* outs[] = {y.data()};
  ASSERT_TRUE((*exe)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
  const float z[4] = {1.5f, 2.5f, 0.5f, 3.5f};
  float sum = 0;
  for (float v : z) sum += std::exp(v);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(y[k], std::exp(z[k]) / sum, 1e-6) << k;
}

TEST(MindirParser, ListsEveryUnsupportedPrimitiveWithItsNodes) {
  ModelBuilder b;
  std::string x = b.Input("x", {2, 3});
  std::string c = b.Call("CumSum", {x, b.Int(1), b.Bool(false), b.Bool(false)}, {2, 3});
  std::string t = b.Call("Atan", {c}, {2, 3});
  b.Output(b.Call("Atan", {t}, {2, 3}));
  std::string bytes = b.Bytes();
  auto g = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  const std::string& msg = g.status().message();
  EXPECT_NE(msg.find("2 unsupported MindSpore primitives"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Atan nodes [CNode_"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CumSum nodes [CNode_"), std::string::npos) << msg;
}

TEST(MindirParser, RefusesTruncatedAndInconsistentFiles) {
  std::string bytes = DenseReluSoftmax().Bytes();
  for (size_t cut : {size_t{1}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    auto g = ParseMindirBytes(bytes.data(), cut, {});
    EXPECT_FALSE(g.ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(ParseMindirBytes(bytes.data(), 0, {}).ok());

  ModelBuilder short_weight = DenseReluSoftmax();
  short_weight.model().mutable_graph()->mutable_parameter(0)->mutable_raw_data()->resize(8);
  bytes = short_weight.Bytes();
  auto g = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("parameter 'fc.weight': raw_data has 8 bytes"), std::string::npos)
      << g.status().message();

  ModelBuilder dangling = DenseReluSoftmax();
  dangling.model().mutable_graph()->mutable_node(2)->set_input(0, "g:nowhere");
  bytes = dangling.Bytes();
  g = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("'nowhere' is not a graph input"), std::string::npos) << g.status().message();

  ModelBuilder bad_arg = DenseReluSoftmax();
  // Softmax's axis given as a string.
  auto* axis = bad_arg.model().mutable_graph()->mutable_node(bad_arg.model().graph().node_size() - 2)
                   ->mutable_attribute(0);  // the Constant before the Softmax call: its axis
  axis->clear_values();
  axis->set_type(AT::STRING);
  axis->set_s("last");
  bytes = bad_arg.Bytes();
  g = ParseMindirBytes(bytes.data(), bytes.size(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("argument 1 ('axis') is string 'last', expected an int"), std::string::npos)
      << g.status().message();
}

TEST(MindirParser, AppliesInputShapesByInputName) {
  ModelBuilder b = DenseReluSoftmax();
  b.model().mutable_graph()->mutable_input(0)->mutable_tensor(0)->set_dims(0, -1);
  std::string bytes = b.Bytes();
  MindirParseOptions opts;
  opts.input_shapes["x"] = {5, 3};
  auto g = ParseMindirBytes(bytes.data(), bytes.size(), opts);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->inputs[0]->shape, (std::vector<int64_t>{5, 3}));
  opts.input_shapes = {{"input", {5, 3}}};
  g = ParseMindirBytes(bytes.data(), bytes.size(), opts);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("its inputs are: x"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

// docs/frontends.md's table of supported primitives is the lowering table, no more, no less.
TEST(MindirParser, DocsListExactlyTheSupportedPrimitives) {
  std::ifstream in(std::string(OC_SOURCE_DIR) + "/docs/frontends.md");
  ASSERT_TRUE(in) << "docs/frontends.md";
  std::string line;
  bool in_table = false;
  std::set<std::string> documented;
  while (std::getline(in, line)) {
    if (line.rfind("| MindSpore primitive |", 0) == 0) { in_table = true; continue; }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    if (line.rfind("| ---", 0) == 0) continue;
    std::string cell = line.substr(2, line.find('|', 1) - 2);
    size_t pos = 0;
    while (pos < cell.size()) {
      size_t end = cell.find(',', pos);
      if (end == std::string::npos) end = cell.size();
      std::string name = cell.substr(pos, end - pos);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (name.find(' ') != std::string::npos) name = name.substr(0, name.find(' '));  // "Round (decimals 0)"
      documented.insert(name);
      pos = end + 1;
    }
  }
  std::set<std::string> supported;
  for (const std::string& p : mindir::SupportedPrims()) supported.insert(p);
  for (const char* p : {"MakeTuple", "TupleGetItem", "MakeList", "ListGetItem", "Return"}) supported.insert(p);
  EXPECT_EQ(documented, supported);
  std::printf("%zu primitives (%zu with lowerings)\n", supported.size(), mindir::SupportedPrims().size());
}

}  // namespace
}  // namespace oc
