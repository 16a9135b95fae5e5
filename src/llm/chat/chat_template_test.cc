// The C++ API of chat templates: statuses, the config forms, value order.
// (Rendering is compared with jinja2 / transformers in tests/python/test_llm_chat.py.)
#include "llm/chat/chat_template.h"

#include <gtest/gtest.h>

namespace oc::llm {
namespace {

std::string RenderOrDie(std::string_view src, const nlohmann::ordered_json& ctx) {
  auto t = ChatTemplate::Parse(src);
  EXPECT_TRUE(t.ok()) << t.status().message();
  auto out = t->Render(ctx);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : "";
}

TEST(ChatTemplate, RendersMessagesWithTrimBlocksAndKeepsDictOrder) {
  nlohmann::ordered_json ctx;
  ctx["messages"] = {{{"role", "user"}, {"content", "Hi"}}};
  ctx["tools"] = nlohmann::ordered_json::array({{{"z", 1}, {"a", 2}}});
  ctx["add_generation_prompt"] = true;
  EXPECT_EQ(RenderOrDie("{% for m in messages %}\n<{{ m.role }}>{{ m.content }}\n{% endfor %}"
                        "{% if add_generation_prompt %}<assistant>{% endif %}{{ tools | tojson }}\n", ctx),
            "<user>Hi\n<assistant>[{\"z\": 1, \"a\": 2}]");
}

TEST(ChatTemplate, PlainJsonContextRendersInItsSortedKeyOrder) {
  auto t = ChatTemplate::Parse("{{ d | tojson }}");
  ASSERT_TRUE(t.ok());
  nlohmann::json ctx = {{"d", {{"z", 1}, {"a", 2}}}};
  auto out = t->Render(ctx);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "{\"a\": 2, \"z\": 1}");
}

TEST(ChatTemplate, RaiseExceptionIsAnInvalidArgumentWithTheMessage) {
  auto t = ChatTemplate::Parse("a\n{{ raise_exception('roles must alternate') }}");
  ASSERT_TRUE(t.ok());
  auto out = t->Render(nlohmann::ordered_json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("line 2"), std::string::npos);
  EXPECT_NE(out.status().message().find("roles must alternate"), std::string::npos);
}

TEST(ChatTemplate, UnknownFilterIsNotSupportedAndNamed) {
  auto t = ChatTemplate::Parse("\n{{ x | wordcount }}");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(t.status().message().find("line 2: the filter 'wordcount' is not supported"), std::string::npos);
}

TEST(ChatTemplate, SyntaxErrorNamesTheLine) {
  auto t = ChatTemplate::Parse("x\ny\n{% for m in messages %}");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("line 3"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("endfor"), std::string::npos);
}

TEST(ChatTemplate, ContextMustBeAnObject) {
  auto t = ChatTemplate::Parse("x");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->Render(nlohmann::ordered_json::array()).ok());
}

TEST(ChatTemplateFromConfig, StringAndNamedListForms) {
  auto s = ChatTemplateFromConfig(R"({"chat_template": "T"})", "", "cfg");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "T");
  const char* listed = R"({"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "U"}]})";
  EXPECT_EQ(*ChatTemplateFromConfig(listed, "", "cfg"), "D");
  EXPECT_EQ(*ChatTemplateFromConfig(listed, "tool_use", "cfg"), "U");
  auto missing = ChatTemplateFromConfig(listed, "rag", "cfg");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'rag'"), std::string::npos);
  EXPECT_FALSE(ChatTemplateFromConfig("{}", "", "cfg").ok());
  EXPECT_FALSE(ChatTemplateFromConfig("not json", "", "cfg").ok());
  EXPECT_FALSE(ChatTemplateFromConfig(R"({"chat_template": [{"name": 1}]})", "", "cfg").ok());
}

}  // namespace
}  // namespace oc::llm
