#include "parser/onnx/onnx_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "onnx.pb.h"

namespace oc {
namespace {

namespace fs = std::filesystem;

// Small builders for ModelProto, so each test states only what it is about.
onnx::ModelProto MakeModel(int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("oc-test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void SetTensorType(onnx::ValueInfoProto* vi, int elem, const std::vector<std::string>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d.empty()) continue;  // unknown, no name
    if (d[0] >= '0' && d[0] <= '9' || d[0] == '-') dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

void AddInput(onnx::ModelProto& m, const std::string& name, std::vector<std::string> dims,
              int elem = onnx::TensorProto::FLOAT) {
  SetTensorType(m.mutable_graph()->add_input(), elem, dims);
  m.mutable_graph()->mutable_input()->rbegin()->set_name(name);
}

void AddOutput(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name = "",
                         const std::string& domain = "") {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

onnx::TensorProto FloatTensor(const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  return t;
}

// x -> Identity -> y: the smallest valid model.
onnx::ModelProto IdentityModel() {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"1", "3"});
  AddNode(m, "Identity", {"x"}, {"y"}, "id");
  AddOutput(m, "y");
  return m;
}

Expected<std::unique_ptr<Graph>> Parse(const onnx::ModelProto& m, const OnnxParseOptions& opt = {},
                                       const std::string& base_dir = "") {
  std::string bytes = m.SerializeAsString();
  return ParseOnnxBytes(bytes.data(), bytes.size(), base_dir, opt);
}

std::string ErrorOf(const onnx::ModelProto& m, const OnnxParseOptions& opt = {}) {
  auto g = Parse(m, opt);
  EXPECT_FALSE(g.ok());
  return g.ok() ? std::string() : g.status().message();
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("oc_onnx_test_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { std::error_code ec; fs::remove_all(path_, ec); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(OnnxParser, ParsesIdentityModel) {
  auto g = Parse(IdentityModel());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Graph& graph = **g;
  ASSERT_EQ(graph.inputs.size(), 1u);
  EXPECT_EQ(graph.inputs[0]->name, "x");
  EXPECT_EQ(graph.inputs[0]->dtype, DataType::kFloat32);
  EXPECT_EQ(graph.inputs[0]->shape, (std::vector<int64_t>{1, 3}));
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_EQ(graph.nodes()[0]->op_type, "Identity");
  EXPECT_EQ(graph.nodes()[0]->opset, 13);
  EXPECT_EQ(graph.opset_imports.at(""), 13);
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_EQ(graph.outputs[0]->name, "y");
  EXPECT_EQ(graph.producer_name, "oc-test");
}

TEST(OnnxParser, DeclaredShapeTooLargeToCountIsAnError) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"1099511627776", "1099511627776"});  // 2^40 x 2^40
  AddNode(m, "Identity", {"x"}, {"y"}, "id");
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("'x'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("64 bits"), std::string::npos) << g.status().message();
}

TEST(OnnxParser, InitializerListedAsInputBecomesConstant) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddInput(m, "w", {"2"});
  *m.mutable_graph()->add_initializer() = FloatTensor("w", {2}, {1.5f, -2.f});
  AddNode(m, "Identity", {"w"}, {"y"});
  AddNode(m, "Identity", {"x"}, {"z"});
  AddOutput(m, "y");
  AddOutput(m, "z");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->inputs.size(), 1u);
  EXPECT_EQ((*g)->inputs[0]->name, "x");
  Value* w = (*g)->FindValue("w");
  ASSERT_TRUE(w && w->constant);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(w->constant->as<float>()[1], -2.f);
}

TEST(OnnxParser, ConstantNodesBecomeConstantValues) {
  onnx::ModelProto m = MakeModel();
  auto* c1 = AddNode(m, "Constant", {}, {"c_tensor"}, "c1");
  auto* a1 = c1->add_attribute();
  a1->set_name("value");
  a1->set_type(onnx::AttributeProto::TENSOR);
  *a1->mutable_t() = FloatTensor("", {2, 2}, {1, 2, 3, 4});
  auto* c2 = AddNode(m, "Constant", {}, {"c_ints"}, "c2");
  auto* a2 = c2->add_attribute();
  a2->set_name("value_ints");
  a2->set_type(onnx::AttributeProto::INTS);
  a2->add_ints(7);
  a2->add_ints(-8);
  auto* c3 = AddNode(m, "Constant", {}, {"c_float"}, "c3");
  auto* a3 = c3->add_attribute();
  a3->set_name("value_float");
  a3->set_type(onnx::AttributeProto::FLOAT);
  a3->set_f(0.25f);
  AddNode(m, "Identity", {"c_tensor"}, {"y1"});
  AddNode(m, "Identity", {"c_ints"}, {"y2"});
  AddNode(m, "Identity", {"c_float"}, {"y3"});
  AddOutput(m, "y1");
  AddOutput(m, "y2");
  AddOutput(m, "y3");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->nodes().size(), 3u);  // the Constant nodes are gone
  Value* t = (*g)->FindValue("c_tensor");
  ASSERT_TRUE(t && t->constant);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t->constant->as<float>()[3], 4.f);
  Value* ints = (*g)->FindValue("c_ints");
  ASSERT_TRUE(ints && ints->constant);
  EXPECT_EQ(ints->dtype, DataType::kInt64);
  EXPECT_EQ(ints->constant->as<int64_t>()[1], -8);
  Value* f = (*g)->FindValue("c_float");
  ASSERT_TRUE(f && f->constant);
  EXPECT_TRUE(f->shape.empty());
  EXPECT_EQ(f->constant->as<float>()[0], 0.25f);
}

TEST(OnnxParser, SparseConstantIsNotSupported) {
  onnx::ModelProto m = MakeModel();
  auto* c = AddNode(m, "Constant", {}, {"c"}, "sparse_c");
  auto* a = c->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  AddOutput(m, "c");
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(g.status().message().find("sparse_c"), std::string::npos);
}

TEST(OnnxParser, KeepsSymbolicDims) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"batch", "3", ""});
  AddNode(m, "Identity", {"x"}, {"y"});
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value* x = (*g)->inputs[0];
  EXPECT_EQ(x->shape, (std::vector<int64_t>{-1, 3, -1}));
  EXPECT_EQ(x->dim_params, (std::vector<std::string>{"batch", "", ""}));
}

TEST(OnnxParser, InputShapesOverrideSymbolicDims) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"batch", "3"});
  AddNode(m, "Identity", {"x"}, {"y"});
  AddOutput(m, "y");
  OnnxParseOptions opt;
  opt.input_shapes["x"] = {4, 3};
  auto g = Parse(m, opt);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->inputs[0]->shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ((*g)->inputs[0]->dim_params, (std::vector<std::string>{"", ""}));
}

TEST(OnnxParser, InputShapesErrorsNameTheProblem) {
  onnx::ModelProto m = IdentityModel();
  OnnxParseOptions unknown;
  unknown.input_shapes["nope"] = {1, 3};
  std::string e = ErrorOf(m, unknown);
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  EXPECT_NE(e.find("x"), std::string::npos) << e;  // lists the real inputs
  OnnxParseOptions rank;
  rank.input_shapes["x"] = {1, 3, 1};
  e = ErrorOf(m, rank);
  EXPECT_NE(e.find("rank 3"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 2"), std::string::npos) << e;
  OnnxParseOptions dynamic;
  dynamic.input_shapes["x"] = {-1, 3};
  EXPECT_FALSE(Parse(m, dynamic).ok());
}

TEST(OnnxParser, OutNodesSelectOutputsAndPruneTheRest) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Identity", {"x"}, {"a"}, "first");
  AddNode(m, "Identity", {"a"}, {"b"}, "second");
  AddNode(m, "NonZero", {"b"}, {"c"}, "unsupported_tail");
  AddOutput(m, "c");
  OnnxParseOptions opt;
  opt.out_nodes = {"first:0"};
  auto g = Parse(m, opt);
  ASSERT_TRUE(g.ok()) << g.status().ToString();  // NonZero was cut away before the op check
  ASSERT_EQ((*g)->outputs.size(), 1u);
  EXPECT_EQ((*g)->outputs[0]->name, "a");
  EXPECT_EQ((*g)->nodes().size(), 1u);

  opt.out_nodes = {"b"};  // a tensor name works too
  g = Parse(m, opt);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->outputs[0]->name, "b");

  opt.out_nodes = {"first:3"};
  EXPECT_NE(ErrorOf(m, opt).find("first"), std::string::npos);
  opt.out_nodes = {"ghost:0"};
  EXPECT_NE(ErrorOf(m, opt).find("ghost"), std::string::npos);
}

TEST(OnnxParser, UnnamedAndDuplicateNodesGetUniqueNames) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Identity", {"x"}, {"a"});
  AddNode(m, "Identity", {"a"}, {"b"});
  AddNode(m, "Identity", {"b"}, {"c"}, "same");
  AddNode(m, "Identity", {"c"}, {"d"}, "same");
  AddOutput(m, "d");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::set<std::string> names;
  for (const auto& n : (*g)->nodes()) {
    EXPECT_FALSE(n->name.empty());
    names.insert(n->name);
  }
  EXPECT_EQ(names.size(), 4u);
  EXPECT_TRUE(names.count("same"));
}

TEST(OnnxParser, OptionalInputsAndOutputsMayBeOmitted) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Dropout", {"x", "", ""}, {"y", ""}, "drop");
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Node& n = *(*g)->nodes()[0];
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(n.inputs[1], nullptr);
  ASSERT_EQ(n.outputs.size(), 2u);
  EXPECT_EQ(n.outputs[1], nullptr);
}

TEST(OnnxParser, AttributesOfAllKinds) {
  onnx::ModelProto m = IdentityModel();
  auto* n = m.mutable_graph()->mutable_node(0);
  auto add = [&](const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  };
  add("i", onnx::AttributeProto::INT)->set_i(-3);
  add("f", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  add("s", onnx::AttributeProto::STRING)->set_s("hi");
  auto* ints = add("ints", onnx::AttributeProto::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  add("floats", onnx::AttributeProto::FLOATS)->add_floats(2.5f);
  add("strings", onnx::AttributeProto::STRINGS)->add_strings("a");
  *add("t", onnx::AttributeProto::TENSOR)->mutable_t() = FloatTensor("", {1}, {9.f});
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Node& node = *(*g)->nodes()[0];
  EXPECT_EQ(node.GetInt("i", 0), -3);
  EXPECT_EQ(node.GetFloat("f", 0), 0.5f);
  EXPECT_EQ(node.GetString("s", ""), "hi");
  EXPECT_EQ(node.GetInts("ints"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(node.GetFloats("floats"), (std::vector<float>{2.5f}));
  EXPECT_EQ(node.FindAttr("strings")->strings, (std::vector<std::string>{"a"}));
  const Attribute* t = node.FindAttr("t");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, Attribute::Kind::kTensor);
  EXPECT_EQ(t->tensor.as<float>()[0], 9.f);
}

// If(cond) with then = x + c (c an outer initializer), else = Identity(x):
// x is read from the outer scope by both branches.
onnx::ModelProto IfModel() {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "cond", {}, onnx::TensorProto::BOOL);
  AddInput(m, "x", {"2"});
  *m.mutable_graph()->add_initializer() = FloatTensor("c", {2}, {1.f, 2.f});
  auto* n = AddNode(m, "If", {"cond"}, {"y"}, "if0");
  auto* then_a = n->add_attribute();
  then_a->set_name("then_branch");
  then_a->set_type(onnx::AttributeProto::GRAPH);
  auto* tg = then_a->mutable_g();
  tg->set_name("then");
  auto* add = tg->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("c");
  add->add_output("t_out");
  tg->add_output()->set_name("t_out");
  auto* else_a = n->add_attribute();
  else_a->set_name("else_branch");
  else_a->set_type(onnx::AttributeProto::GRAPH);
  auto* eg = else_a->mutable_g();
  eg->set_name("else");
  auto* id = eg->add_node();
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("e_out");
  eg->add_output()->set_name("e_out");
  AddOutput(m, "y");
  return m;
}

TEST(OnnxParser, SubgraphsCaptureOuterValuesAsImplicitInputs) {
  auto g = Parse(IfModel());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Node& node = *(*g)->nodes()[0];
  ASSERT_EQ(node.Subgraphs().size(), 2u);
  // Both branches capture x; the outer constant c is copied into the branch.
  EXPECT_EQ(node.NumImplicitInputs(), 2u);
  EXPECT_EQ(node.NumExplicitInputs(), 1u);
  ASSERT_EQ(node.inputs.size(), 3u);
  EXPECT_EQ(node.inputs[1]->name, "x");
  EXPECT_EQ(node.inputs[2]->name, "x");
  const Graph& then_g = *node.FindAttr("then_branch")->graph;
  ASSERT_EQ(then_g.captures.size(), 1u);
  EXPECT_EQ(then_g.captures[0]->name, "x");
  ASSERT_TRUE(then_g.FindValue("c"));
  EXPECT_TRUE(then_g.FindValue("c")->IsConstant());
  EXPECT_TRUE((*g)->Verify().ok());
  EXPECT_NE((*g)->Dump().find("capture %x"), std::string::npos);
}

TEST(OnnxParser, SubgraphReadingAnUnknownNameNamesIt) {
  onnx::ModelProto m = IfModel();
  auto* n = m.mutable_graph()->mutable_node(0);
  n->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_input(0, "nowhere");
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("'nowhere'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("enclosing graph"), std::string::npos) << g.status().message();
}

TEST(OnnxParser, SequenceAndOptionalTypesAreRead) {
  onnx::ModelProto m = MakeModel(18);
  auto* in = m.mutable_graph()->add_input();
  in->set_name("s");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  AddNode(m, "Optional", {"s"}, {"o"});
  AddNode(m, "OptionalGetElement", {"o"}, {"y"});
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->inputs[0]->kind, ValueKind::kSequence);
  EXPECT_EQ((*g)->inputs[0]->dtype, DataType::kInt64);
  EXPECT_TRUE((*g)->HasNonTensorValues());
}

TEST(OnnxParser, TypedDataFieldsFollowTheSpec) {
  onnx::ModelProto m = MakeModel();
  auto add_init = [&](const std::string& name, int type, int64_t n) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(n);
    AddNode(m, "Identity", {name}, {name + "_out"});
    AddOutput(m, name + "_out");
    return t;
  };
  auto* i8 = add_init("i8", onnx::TensorProto::INT8, 2);
  i8->add_int32_data(-5);
  i8->add_int32_data(7);
  auto* b = add_init("b", onnx::TensorProto::BOOL, 2);
  b->add_int32_data(0);
  b->add_int32_data(3);
  auto* h = add_init("h", onnx::TensorProto::FLOAT16, 1);
  h->add_int32_data(0x3c00);  // 1.0 in binary16
  auto* i64 = add_init("i64", onnx::TensorProto::INT64, 1);
  i64->add_int64_data(int64_t{1} << 40);
  auto* d = add_init("d", onnx::TensorProto::DOUBLE, 1);
  d->add_double_data(0.125);
  auto* u64 = add_init("u64", onnx::TensorProto::UINT64, 1);
  u64->add_uint64_data(~uint64_t{0});
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->FindValue("i8")->constant->as<int8_t>()[0], -5);
  EXPECT_EQ((*g)->FindValue("b")->constant->as<uint8_t>()[1], 1);
  EXPECT_EQ((*g)->FindValue("h")->constant->as<uint16_t>()[0], 0x3c00);
  EXPECT_EQ((*g)->FindValue("i64")->constant->as<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ((*g)->FindValue("d")->constant->as<double>()[0], 0.125);
  EXPECT_EQ((*g)->FindValue("u64")->constant->as<uint64_t>()[0], ~uint64_t{0});
}

TEST(OnnxParser, RejectsDataInTheWrongTypedField) {
  onnx::ModelProto m = MakeModel();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->add_int64_data(1);
  AddNode(m, "Identity", {"w"}, {"y"});
  AddOutput(m, "y");
  EXPECT_NE(ErrorOf(m).find("'w'"), std::string::npos);
}

TEST(OnnxParser, RejectsRawDataSizeMismatch) {
  onnx::ModelProto m = MakeModel();
  *m.mutable_graph()->add_initializer() = FloatTensor("w", {3}, {1.f, 2.f});
  AddNode(m, "Identity", {"w"}, {"y"});
  AddOutput(m, "y");
  std::string e = ErrorOf(m);
  EXPECT_NE(e.find("'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("8 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("12"), std::string::npos) << e;
}

TEST(OnnxParser, RejectsNegativeDims) {
  onnx::ModelProto m = MakeModel();
  *m.mutable_graph()->add_initializer() = FloatTensor("w", {-1}, {});
  AddNode(m, "Identity", {"w"}, {"y"});
  AddOutput(m, "y");
  EXPECT_NE(ErrorOf(m).find("negative"), std::string::npos);

  onnx::ModelProto m2 = MakeModel();
  AddInput(m2, "x", {"-4"});
  AddNode(m2, "Identity", {"x"}, {"y"});
  AddOutput(m2, "y");
  EXPECT_NE(ErrorOf(m2).find("negative"), std::string::npos);
}

TEST(OnnxParser, DimValueMinusOneIsAnUnknownDim) {
  // Paddle2ONNX writes a dynamic batch as dim_value -1 (onnxruntime reads it as unknown).
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"-1", "3"});
  AddNode(m, "Identity", {"x"}, {"y"});
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->inputs[0]->shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_FALSE((*g)->inputs[0]->IsStatic());
}

TEST(OnnxParser, RejectsHugeDimsWithoutAllocating) {
  onnx::ModelProto m = MakeModel();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 4; ++i) t->add_dims(int64_t{1} << 20);
  AddNode(m, "Identity", {"w"}, {"y"});
  AddOutput(m, "y");
  EXPECT_FALSE(Parse(m).ok());
}

TEST(OnnxParser, RejectsEmptyAndRandomBytes) {
  auto empty = ParseOnnxBytes("", 0, "", {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::string junk(1 + rng() % 512, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    auto g = ParseOnnxBytes(junk.data(), junk.size(), "", {});
    EXPECT_FALSE(g.ok()) << "trial " << trial;
  }
}

TEST(OnnxParser, RejectsEveryTruncationOfAValidModel) {
  onnx::ModelProto m = IdentityModel();
  *m.mutable_graph()->add_initializer() = FloatTensor("unused", {4}, {1, 2, 3, 4});
  std::string bytes = m.SerializeAsString();
  ASSERT_TRUE(ParseOnnxBytes(bytes.data(), bytes.size(), "", {}).ok());
  int failures = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto g = ParseOnnxBytes(bytes.data(), n, "", {});  // must never crash
    if (!g.ok()) ++failures;
  }
  // A cut between top-level fields can still be a well-formed (smaller) model;
  // every cut that loses the graph, an output or part of a field must fail.
  EXPECT_GT(failures, static_cast<int>(bytes.size()) * 9 / 10);
}

// A poor man's fuzzer: random byte edits of a model that uses most of the
// format (initializers, a Constant node, attributes, value_info, symbolic dims).
// Any result is fine except a crash or a hang.
TEST(OnnxParser, SurvivesRandomByteEdits) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"batch", "4"});
  *m.mutable_graph()->add_initializer() = FloatTensor("w", {4}, {1, 2, 3, 4});
  auto* c = AddNode(m, "Constant", {}, {"k"}, "konst");
  auto* a = c->add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(3);
  auto* d = AddNode(m, "Dropout", {"x"}, {"y", "mask"}, "drop");
  auto* ratio = d->add_attribute();
  ratio->set_name("seed");
  ratio->set_type(onnx::AttributeProto::INT);
  ratio->set_i(1);
  AddNode(m, "Identity", {"w"}, {"w_out"}, "wid");
  AddNode(m, "Identity", {"k"}, {"k_out"}, "kid");
  SetTensorType(m.mutable_graph()->add_value_info(), onnx::TensorProto::FLOAT, {"batch", "4"});
  m.mutable_graph()->mutable_value_info(0)->set_name("y");
  AddOutput(m, "y");
  AddOutput(m, "w_out");
  AddOutput(m, "k_out");
  const std::string bytes = m.SerializeAsString();
  ASSERT_TRUE(ParseOnnxBytes(bytes.data(), bytes.size(), "", {}).ok());
  std::mt19937 rng(7);
  int ok = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string mutated = bytes;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    auto g = ParseOnnxBytes(mutated.data(), mutated.size(), "", {});
    if (g.ok()) {
      ++ok;
      EXPECT_TRUE((*g)->Verify().ok());
    }
  }
  SUCCEED() << ok << " of 3000 mutated models still parsed";
}

TEST(OnnxParser, ParseOnnxFileReportsMissingAndEmptyFiles) {
  TempDir dir;
  auto missing = ParseOnnxFile((dir.path() / "nope.onnx").string(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.onnx"), std::string::npos);
  std::ofstream((dir.path() / "empty.onnx").string()).close();
  auto empty = ParseOnnxFile((dir.path() / "empty.onnx").string(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
}

TEST(OnnxParser, RejectsOpsetNewerThanKnown) {
  onnx::ModelProto m = IdentityModel();
  m.mutable_opset_import(0)->set_version(99);
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(g.status().message().find("99"), std::string::npos);
  EXPECT_NE(g.status().message().find("28"), std::string::npos);
}

TEST(OnnxParser, RejectsIrVersionNewerThanKnown) {
  onnx::ModelProto m = IdentityModel();
  m.set_ir_version(1000);
  EXPECT_NE(ErrorOf(m).find("1000"), std::string::npos);
}

TEST(OnnxParser, ListsAllUnsupportedOperatorsInOneError) {
  onnx::ModelProto m = MakeModel();
  auto* ms = m.add_opset_import();
  ms->set_domain("com.example");
  ms->set_version(1);
  AddInput(m, "x", {"4"});
  // An op name no ONNX opset has, so the test does not depend on what is implemented.
  AddNode(m, "NotAnOnnxOp", {"x"}, {"a"}, "nz1");
  AddNode(m, "NotAnOnnxOp", {"x"}, {"b"}, "nz2");
  AddNode(m, "Frobnicate", {"a", "b"}, {"c"}, "frob", "com.example");
  AddNode(m, "Identity", {"c"}, {"y"}, "ok");
  AddNode(m, "Dropout", {"x"}, {"z"});
  AddOutput(m, "y");
  AddOutput(m, "z");
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  const std::string& e = g.status().message();
  EXPECT_NE(e.find("2 unsupported operators"), std::string::npos) << e;
  EXPECT_NE(e.find("ai.onnx::NotAnOnnxOp(opset 13) nodes [nz1, nz2]"), std::string::npos) << e;
  EXPECT_NE(e.find("com.example::Frobnicate(opset 1) nodes [frob]"), std::string::npos) << e;
  EXPECT_EQ(e.find("Identity"), std::string::npos) << e;
}

TEST(OnnxParser, LocalFunctionCallsAreNotSupportedWithAHint) {
  onnx::ModelProto m = MakeModel();
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* fn = m.add_functions();
  fn->set_name("MyFn");
  fn->set_domain("local");
  AddInput(m, "x", {"2"});
  AddNode(m, "MyFn", {"x"}, {"y"}, "call", "local");
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(g.status().message().find("MyFn"), std::string::npos);
  EXPECT_NE(g.status().message().find("inline"), std::string::npos);
}

TEST(OnnxParser, RejectsUndefinedInputsAndDoubleDefinitions) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Identity", {"ghost"}, {"y"}, "reader");
  AddOutput(m, "y");
  std::string e = ErrorOf(m);
  EXPECT_NE(e.find("ghost"), std::string::npos) << e;
  EXPECT_NE(e.find("reader"), std::string::npos) << e;

  onnx::ModelProto m2 = MakeModel();
  AddInput(m2, "x", {"2"});
  AddNode(m2, "Identity", {"x"}, {"y"}, "a");
  AddNode(m2, "Identity", {"x"}, {"y"}, "b");
  AddOutput(m2, "y");
  EXPECT_NE(ErrorOf(m2).find("already defined"), std::string::npos);

  onnx::ModelProto m3 = IdentityModel();
  AddOutput(m3, "nowhere");
  EXPECT_NE(ErrorOf(m3).find("nowhere"), std::string::npos);
}

TEST(OnnxParser, RejectsMapInputs) {
  onnx::ModelProto m = IdentityModel();
  auto* in = m.mutable_graph()->mutable_input(0);
  auto* map = in->mutable_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(g.status().message().find("map"), std::string::npos);
}

TEST(OnnxParser, AcceptsNodesOutOfTopologicalOrder) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Identity", {"a"}, {"y"}, "second");
  AddNode(m, "Identity", {"x"}, {"a"}, "first");
  AddOutput(m, "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->nodes()[0]->name, "first");
}

TEST(OnnxParser, RejectsCycles) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", {"2"});
  AddNode(m, "Identity", {"b"}, {"a"}, "p");
  AddNode(m, "Identity", {"a"}, {"b"}, "q");
  AddOutput(m, "b");
  EXPECT_NE(ErrorOf(m).find("cycle"), std::string::npos);
}

// External data: weights in a side file, addressed relative to the model.
class OnnxExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<float> w = {0, 0, 1.f, 2.f, 3.f};  // 8 bytes of padding, then 3 floats
    std::ofstream f(dir_.path() / "weights.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
  }
  onnx::ModelProto Model(const std::string& location, const std::string& offset, const std::string& length) {
    onnx::ModelProto m = MakeModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(3);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const std::string& k, const std::string& v) {
      if (v.empty()) return;
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", location);
    kv("offset", offset);
    kv("length", length);
    AddNode(m, "Identity", {"w"}, {"y"});
    AddOutput(m, "y");
    return m;
  }
  Expected<std::unique_ptr<Graph>> ParseInDir(const onnx::ModelProto& m) {
    std::string path = (dir_.path() / "model.onnx").string();
    std::ofstream f(path, std::ios::binary);
    m.SerializeToOstream(&f);
    f.close();
    return ParseOnnxFile(path, {});
  }
  TempDir dir_;
};

TEST_F(OnnxExternalData, ReadsWeightsRelativeToTheModel) {
  auto g = ParseInDir(Model("weights.bin", "8", "12"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value* w = (*g)->FindValue("w");
  ASSERT_TRUE(w && w->constant);
  EXPECT_EQ(w->constant->size(), 12u);
  EXPECT_EQ(w->constant->as<float>()[0], 1.f);
  EXPECT_EQ(w->constant->as<float>()[2], 3.f);
  // Length may be omitted: it follows from dims and type.
  g = ParseInDir(Model("weights.bin", "8", ""));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->FindValue("w")->constant->as<float>()[1], 2.f);
}

TEST_F(OnnxExternalData, RejectsOutOfRangeOffsets) {
  auto g = ParseInDir(Model("weights.bin", "12", "12"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("outside"), std::string::npos) << g.status().message();
  g = ParseInDir(Model("weights.bin", "999999", ""));
  EXPECT_FALSE(g.ok());
  g = ParseInDir(Model("weights.bin", "0", "16"));  // length disagrees with dims
  EXPECT_FALSE(g.ok());
  g = ParseInDir(Model("weights.bin", "-4", ""));
  EXPECT_FALSE(g.ok());
}

TEST_F(OnnxExternalData, RejectsPathsOutsideTheModelFolder) {
  auto g = ParseInDir(Model((dir_.path() / "weights.bin").string(), "8", "12"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("absolute"), std::string::npos) << g.status().message();
  g = ParseInDir(Model("../weights.bin", "8", "12"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find(".."), std::string::npos) << g.status().message();
  g = ParseInDir(Model("sub/../../weights.bin", "8", "12"));
  EXPECT_FALSE(g.ok());
  g = ParseInDir(Model("missing.bin", "0", ""));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("missing.bin"), std::string::npos);
}

}  // namespace
}  // namespace oc
