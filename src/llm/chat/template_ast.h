// The syntax tree of a chat template (the Jinja2 subset of docs/llm.md,
// "Chat templates"): expressions and statements, each with its template line.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace oc::llm::chat {

// Python dicts keep insertion order, and `tojson` shows it: values keep theirs.
using Json = nlohmann::ordered_json;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // args: items
    kTuple,    // args: items (evaluated as a list)
    kDict,     // args: key, value, key, value, ...
    kAttr,     // args[0].name
    kItem,     // args[0][args[1]]
    kSlice,    // args[0][args[1]:args[2]:args[3]] (null parts allowed)
    kCall,     // args[0](args[1:], kwargs)
    kFilter,   // args[0] | name(args[1:], kwargs)
    kTest,     // args[0] is [not] name(args[1:])
    kUnary,    // name ("-", "+", "not") args[0]
    kBinary,   // args[0] name args[1]; name also "and", "or", "in", "not in", "~"
    kCond,     // args[0] if args[1] else args[2] (args[2] may be null)
  };
  Kind kind;
  int line = 0;
  Json literal;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind { kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kBreak, kContinue, kBlock };
  Kind kind;
  int line = 0;
  std::string text;                  // kText
  ExprPtr expr;                      // kOutput, kSet (value), kFor (iterable)
  ExprPtr cond;                      // kFor's filtering `if`
  std::vector<std::pair<ExprPtr, Body>> branches;  // kIf: (condition, body)...
  Body body;                         // kFor, kSetBlock, kMacro, kBlock
  Body else_body;                    // kIf, kFor
  std::vector<std::string> targets;  // kFor, kSet, kSetBlock: names; kMacro: name
  std::string attr;                  // kSet of `ns.attr`: targets[0] is ns
  std::vector<std::pair<std::string, ExprPtr>> params;  // kMacro: (name, default or null)
};

// Parses a template; errors name the template line.
struct ParsedTemplate {
  Body body;
};
}  // namespace oc::llm::chat
