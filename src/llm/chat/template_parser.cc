// Lexer: splits the source into text and tag tokens, applying the whitespace
// control where Jinja's lexer does. Parser: recursive descent with Jinja's
// operator precedence (or < and < not < comparisons < + - < ~ < * / // % <
// ** < unary < postfix and filters).
#include "llm/chat/template_parser.h"

#include <cstdlib>
#include <set>

namespace oc::llm::chat {
namespace {

constexpr int kMaxDepth = 200;  // nesting of expressions and blocks

enum class Tok { kText, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof };

struct Token {
  Tok type;
  std::string text;
  int line;
};

bool IsSpaceAt(std::string_view s, size_t i, size_t* len) {
  unsigned char c = s[i];
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) { *len = 1; return true; }
  static const char* kWide[] = {"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\xa8", "\xe2\x80\xa9",
                                "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  for (const char* w : kWide) {
    std::string_view ws(w);
    if (s.substr(i, ws.size()) == ws) { *len = ws.size(); return true; }
  }
  if (s.substr(i, 2) == "\xe2\x80" && i + 2 < s.size() && (unsigned char)s[i + 2] >= 0x80 &&
      (unsigned char)s[i + 2] <= 0x8a) { *len = 3; return true; }
  return false;
}

size_t SkipSpace(std::string_view s, size_t i) {
  size_t len;
  while (i < s.size() && IsSpaceAt(s, i, &len)) i += len;
  return i;
}

void RStrip(std::string* s) {
  // Strips trailing whitespace: scan forward remembering the last non-space end.
  size_t i = 0, keep = 0, len;
  while (i < s->size()) {
    if (IsSpaceAt(*s, i, &len)) i += len;
    else { ++i; while (i < s->size() && ((unsigned char)(*s)[i] & 0xc0) == 0x80) ++i; keep = i; }
  }
  s->resize(keep);
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) {
    // Newlines become \n and one trailing newline goes (keep_trailing_newline=False).
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i] == '\r') { src_ += '\n'; if (i + 1 < src.size() && src[i + 1] == '\n') ++i; }
      else src_ += src[i];
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  Expected<std::vector<Token>> Run() {
    size_t pos = 0;
    bool lstrip_next = false, line_starting = true;
    while (pos <= src_.size()) {
      size_t tag = src_.find('{', pos);
      while (tag != std::string::npos && (tag + 1 >= src_.size() ||
             (src_[tag + 1] != '{' && src_[tag + 1] != '%' && src_[tag + 1] != '#')))
        tag = src_.find('{', tag + 1);
      std::string text = src_.substr(pos, tag == std::string::npos ? std::string::npos : tag - pos);
      if (lstrip_next) text = text.substr(SkipSpace(text, 0));
      char kind = tag == std::string::npos ? 0 : src_[tag + 1];
      char sign = tag != std::string::npos && tag + 2 < src_.size() ? src_[tag + 2] : 0;
      if (kind) {
        if (sign == '-') RStrip(&text);
        else if (sign != '+' && kind != '{') {
          size_t l = text.rfind('\n');
          size_t lpos = l == std::string::npos ? 0 : l + 1;
          if (lpos > 0 || line_starting) {
            bool ws = true;
            for (size_t i = lpos; i < text.size(); ++i)
              if (!(text[i] == ' ' || text[i] == '\t' || text[i] == '\f' || text[i] == '\v')) ws = false;
            if (ws) text.resize(lpos);
          }
        }
      }
      if (!text.empty()) out_.push_back({Tok::kText, text, line_});
      line_ += Lines(src_.substr(pos, tag == std::string::npos ? std::string::npos : tag - pos));
      if (!kind) break;
      pos = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') {
        size_t end = src_.find("#}", pos);
        if (end == std::string::npos) return Err("the comment is not closed (no '#}')");
        line_ += Lines(src_.substr(pos, end - pos));
        char before = end > pos ? src_[end - 1] : 0;
        pos = end + 2;
        lstrip_next = before == '-';
        if (before != '-' && before != '+' && pos < src_.size() && src_[pos] == '\n') { ++pos; ++line_; }
        line_starting = pos > 0 && src_[pos - 1] == '\n';
        continue;
      }
      bool block = kind == '%';
      out_.push_back({block ? Tok::kBlockBegin : Tok::kVarBegin, "", line_});
      OC_RETURN_IF_ERROR(Expression(&pos, block));
      // Expression stopped at the closing marker, with its sign.
      char close_sign = 0;
      if (src_[pos] == '-' || src_[pos] == '+') close_sign = src_[pos++];
      pos += 2;
      out_.push_back({block ? Tok::kBlockEnd : Tok::kVarEnd, "", line_});
      if (block && out_.size() >= 3 && out_[out_.size() - 2].type == Tok::kName &&
          out_[out_.size() - 2].text == "raw" && out_[out_.size() - 3].type == Tok::kBlockBegin)
        return Err("the tag 'raw' is not supported");
      lstrip_next = close_sign == '-';
      if (block && close_sign == 0 && pos < src_.size() && src_[pos] == '\n') { ++pos; ++line_; }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    out_.push_back({Tok::kEof, "", line_});
    return std::move(out_);
  }

 private:
  static int Lines(std::string_view s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }
  Status Err(const std::string& m) const { return InvalidArgument("chat template line ", line_, ": ", m); }

  Status Expression(size_t* p, bool block) {
    size_t& pos = *p;
    const std::string close = block ? "%}" : "}}";
    int depth = 0;
    while (true) {
      if (pos >= src_.size()) return Err(std::string("the tag is not closed (no '") + close + "')");
      char c = src_[pos];
      if (c == '\n') { ++line_; ++pos; continue; }
      if (c == ' ' || c == '\t' || c == '\r') { ++pos; continue; }
      if (depth == 0) {
        if (src_.compare(pos, 2, close) == 0) return Status::Ok();
        if ((c == '-' || c == '+') && src_.compare(pos + 1, 2, close) == 0) return Status::Ok();
      }
      if (std::isalpha((unsigned char)c) || c == '_') {
        size_t b = pos;
        while (pos < src_.size() && (std::isalnum((unsigned char)src_[pos]) || src_[pos] == '_')) ++pos;
        out_.push_back({Tok::kName, src_.substr(b, pos - b), line_});
      } else if (std::isdigit((unsigned char)c)) {
        size_t b = pos;
        bool is_float = false;
        while (pos < src_.size() && (std::isdigit((unsigned char)src_[pos]) || src_[pos] == '_')) ++pos;
        if (pos + 1 < src_.size() && src_[pos] == '.' && std::isdigit((unsigned char)src_[pos + 1])) {
          is_float = true;
          ++pos;
          while (pos < src_.size() && std::isdigit((unsigned char)src_[pos])) ++pos;
        }
        if (pos < src_.size() && (src_[pos] == 'e' || src_[pos] == 'E')) {
          size_t q = pos + 1;
          if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
          if (q < src_.size() && std::isdigit((unsigned char)src_[q])) {
            is_float = true;
            pos = q;
            while (pos < src_.size() && std::isdigit((unsigned char)src_[pos])) ++pos;
          }
        }
        std::string num;
        for (size_t i = b; i < pos; ++i) if (src_[i] != '_') num += src_[i];
        out_.push_back({is_float ? Tok::kFloat : Tok::kInt, num, line_});
      } else if (c == '\'' || c == '"') {
        std::string s;
        ++pos;
        while (true) {
          if (pos >= src_.size()) return Err("a string literal is not closed");
          char d = src_[pos];
          if (d == c) { ++pos; break; }
          if (d == '\n') ++line_;
          if (d == '\\' && pos + 1 < src_.size()) {
            char e = src_[pos + 1];
            pos += 2;
            switch (e) {
              case 'n': s += '\n'; break;
              case 't': s += '\t'; break;
              case 'r': s += '\r'; break;
              case '\\': s += '\\'; break;
              case '\'': s += '\''; break;
              case '"': s += '"'; break;
              case '0': s += '\0'; break;
              case 'a': s += '\a'; break;
              case 'b': s += '\b'; break;
              case 'f': s += '\f'; break;
              case 'v': s += '\v'; break;
              case '\n': ++line_; break;
              case 'x': case 'u': case 'U': {
                size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                if (pos + n > src_.size()) return Err("a truncated \\" + std::string(1, e) + " escape");
                std::string hex = src_.substr(pos, n);
                for (char h : hex) if (!std::isxdigit((unsigned char)h)) return Err("a bad \\" + std::string(1, e) + " escape");
                unsigned long cp = std::strtoul(hex.c_str(), nullptr, 16);
                pos += n;
                if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return Err("an escape outside Unicode scalar values");
                AppendUtf8(&s, cp);
                break;
              }
              default: s += '\\'; s += e;
            }
            continue;
          }
          s += d;
          ++pos;
        }
        out_.push_back({Tok::kString, s, line_});
      } else {
        static const char* kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                     "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", ";"};
        bool found = false;
        for (const char* op : kOps) {
          size_t n = std::string_view(op).size();
          if (src_.compare(pos, n, op) == 0) {
            if (*op == '(' || *op == '[' || *op == '{') ++depth;
            if (*op == ')' || *op == ']' || *op == '}') { if (depth == 0) return Err(std::string("unexpected '") + op + "'"); --depth; }
            out_.push_back({Tok::kOp, op, line_});
            pos += n;
            found = true;
            break;
          }
        }
        if (!found) return Err(std::string("unexpected character '") + c + "'");
      }
    }
  }

  static void AppendUtf8(std::string* s, unsigned long cp) {
    if (cp < 0x80) { *s += char(cp); }
    else if (cp < 0x800) { *s += char(0xc0 | (cp >> 6)); *s += char(0x80 | (cp & 0x3f)); }
    else if (cp < 0x10000) { *s += char(0xe0 | (cp >> 12)); *s += char(0x80 | ((cp >> 6) & 0x3f)); *s += char(0x80 | (cp & 0x3f)); }
    else { *s += char(0xf0 | (cp >> 18)); *s += char(0x80 | ((cp >> 12) & 0x3f)); *s += char(0x80 | ((cp >> 6) & 0x3f)); *s += char(0x80 | (cp & 0x3f)); }
  }

  std::string src_;
  std::vector<Token> out_;
  int line_ = 1;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Expected<Body> Top() {
    Body body;
    std::string end;
    OC_RETURN_IF_ERROR(ParseBody(&body, {}, &end));
    return body;
  }

 private:
  const Token& Cur() const { return t_[i_]; }
  const Token& Next() const { return t_[i_ + 1 < t_.size() ? i_ + 1 : i_]; }
  bool IsOp(const char* op) const { return Cur().type == Tok::kOp && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().type == Tok::kName && Cur().text == n; }
  Status Err(const std::string& m) const { return InvalidArgument("chat template line ", Cur().line, ": ", m); }
  std::string Describe() const {
    switch (Cur().type) {
      case Tok::kVarEnd: return "the end of the '{{ }}' tag";
      case Tok::kBlockEnd: return "the end of the '{% %}' tag";
      case Tok::kEof: return "the end of the template";
      case Tok::kString: return "a string";
      default: return "'" + Cur().text + "'";
    }
  }
  Status Expect(const char* op) {
    if (!IsOp(op)) return Err(std::string("expected '") + op + "', found " + Describe());
    ++i_;
    return Status::Ok();
  }
  Status ExpectBlockEnd() {
    if (Cur().type != Tok::kBlockEnd) return Err("expected the end of the '{% %}' tag, found " + Describe());
    ++i_;
    return Status::Ok();
  }
  Expected<std::string> Name() {
    if (Cur().type != Tok::kName) return Err("expected a name, found " + Describe());
    return t_[i_++].text;
  }

  // Parses nodes until a block tag whose keyword is in `ends` (left as *end,
  // the tag's keyword consumed) or the end of the template (only when ends is empty).
  Status ParseBody(Body* body, const std::set<std::string>& ends, std::string* end) {
    if (++depth_ > kMaxDepth) return Err("blocks nested too deeply");
    while (true) {
      const Token& tok = Cur();
      if (tok.type == Tok::kEof) {
        if (!ends.empty()) {
          std::string want;
          for (auto& e : ends) want += (want.empty() ? "'" : " or '") + e + "'";
          return Err("unexpected end of template, expected " + want);
        }
        break;
      }
      if (tok.type == Tok::kText) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::kText;
        n->line = tok.line;
        n->text = tok.text;
        body->push_back(std::move(n));
        ++i_;
      } else if (tok.type == Tok::kVarBegin) {
        ++i_;
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::kOutput;
        n->line = tok.line;
        OC_ASSIGN_OR_RETURN(n->expr, Expression());
        if (Cur().type != Tok::kVarEnd) return Err("expected the end of the '{{ }}' tag, found " + Describe());
        ++i_;
        body->push_back(std::move(n));
      } else if (tok.type == Tok::kBlockBegin) {
        ++i_;
        OC_ASSIGN_OR_RETURN(std::string kw, Name());
        if (ends.count(kw)) { *end = kw; --depth_; return Status::Ok(); }
        OC_RETURN_IF_ERROR(Statement(kw, body));
      } else {
        return Err("unexpected " + Describe());
      }
    }
    --depth_;
    return Status::Ok();
  }

  Status Statement(const std::string& kw, Body* body) {
    auto n = std::make_unique<Node>();
    n->line = t_[i_ - 1].line;
    std::string end;
    if (kw == "if") {
      n->kind = Node::Kind::kIf;
      std::string cur = "if";
      while (true) {
        OC_ASSIGN_OR_RETURN(ExprPtr c, Expression());
        OC_RETURN_IF_ERROR(ExpectBlockEnd());
        Body b;
        OC_RETURN_IF_ERROR(ParseBody(&b, {"elif", "else", "endif"}, &end));
        n->branches.emplace_back(std::move(c), std::move(b));
        if (end == "elif") continue;
        if (end == "else") {
          OC_RETURN_IF_ERROR(ExpectBlockEnd());
          OC_RETURN_IF_ERROR(ParseBody(&n->else_body, {"endif"}, &end));
        }
        break;
      }
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
    } else if (kw == "for") {
      n->kind = Node::Kind::kFor;
      do {
        OC_ASSIGN_OR_RETURN(std::string t, Name());
        n->targets.push_back(t);
      } while (IsOp(",") && (++i_, true));
      if (!IsName("in")) return Err("expected 'in' in the 'for' tag, found " + Describe());
      ++i_;
      OC_ASSIGN_OR_RETURN(n->expr, Expression(/*no_cond=*/true));
      if (IsName("if")) { ++i_; OC_ASSIGN_OR_RETURN(n->cond, Expression(true)); }
      if (IsName("recursive")) return Err("'for ... recursive' is not supported");
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
      ++loops_;
      OC_RETURN_IF_ERROR(ParseBody(&n->body, {"else", "endfor"}, &end));
      --loops_;
      if (end == "else") {
        OC_RETURN_IF_ERROR(ExpectBlockEnd());
        OC_RETURN_IF_ERROR(ParseBody(&n->else_body, {"endfor"}, &end));
      }
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
    } else if (kw == "set") {
      OC_ASSIGN_OR_RETURN(std::string t, Name());
      n->targets.push_back(t);
      if (IsOp(".")) { ++i_; OC_ASSIGN_OR_RETURN(n->attr, Name()); }
      else while (IsOp(",")) { ++i_; OC_ASSIGN_OR_RETURN(std::string u, Name()); n->targets.push_back(u); }
      if (IsOp("=")) {
        ++i_;
        n->kind = Node::Kind::kSet;
        OC_ASSIGN_OR_RETURN(n->expr, Expression());
        if (IsOp(",")) {  // a tuple
          auto tup = std::make_unique<Expr>();
          tup->kind = Expr::Kind::kTuple;
          tup->line = n->line;
          tup->args.push_back(std::move(n->expr));
          while (IsOp(",")) { ++i_; OC_ASSIGN_OR_RETURN(ExprPtr e, Expression()); tup->args.push_back(std::move(e)); }
          n->expr = std::move(tup);
        }
        OC_RETURN_IF_ERROR(ExpectBlockEnd());
      } else {
        if (!n->attr.empty() || n->targets.size() != 1) return Err("expected '=' in the 'set' tag");
        if (Cur().type == Tok::kOp && Cur().text == "|") return Err("a filtered block 'set' is not supported");
        n->kind = Node::Kind::kSetBlock;
        OC_RETURN_IF_ERROR(ExpectBlockEnd());
        OC_RETURN_IF_ERROR(ParseBody(&n->body, {"endset"}, &end));
        OC_RETURN_IF_ERROR(ExpectBlockEnd());
      }
    } else if (kw == "macro") {
      n->kind = Node::Kind::kMacro;
      OC_ASSIGN_OR_RETURN(std::string name, Name());
      n->targets.push_back(name);
      OC_RETURN_IF_ERROR(Expect("("));
      while (!IsOp(")")) {
        OC_ASSIGN_OR_RETURN(std::string p, Name());
        ExprPtr def;
        if (IsOp("=")) { ++i_; OC_ASSIGN_OR_RETURN(def, Expression()); }
        n->params.emplace_back(p, std::move(def));
        if (!IsOp(",")) break;
        ++i_;
      }
      OC_RETURN_IF_ERROR(Expect(")"));
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
      OC_RETURN_IF_ERROR(ParseBody(&n->body, {"endmacro"}, &end));
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
    } else if (kw == "break" || kw == "continue") {
      if (loops_ == 0) return Err("'" + kw + "' outside a 'for' loop");
      n->kind = kw == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
    } else if (kw == "generation") {  // transformers' assistant-mask tag: renders its body
      n->kind = Node::Kind::kBlock;
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
      OC_RETURN_IF_ERROR(ParseBody(&n->body, {"endgeneration"}, &end));
      OC_RETURN_IF_ERROR(ExpectBlockEnd());
    } else {
      static const std::set<std::string> kKnown = {"call", "filter", "block", "extends", "include", "import",
                                                   "from", "with", "autoescape", "do", "raw", "trans"};
      if (kKnown.count(kw)) { --i_; return Err("the tag '" + kw + "' is not supported"); }
      --i_;
      return Err("unknown tag '" + kw + "'");
    }
    body->push_back(std::move(n));
    return Status::Ok();
  }

  ExprPtr Make(Expr::Kind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  // Operator chains (a ~ b ~ c ...) build left-deep trees without nesting in
  // the source: the evaluator recurses over them, so their depth is bounded too.
  static bool TooDeep(const Expr& e, int budget) {
    if (budget == 0) return true;
    for (auto& a : e.args) if (a && TooDeep(*a, budget - 1)) return true;
    for (auto& kv : e.kwargs) if (kv.second && TooDeep(*kv.second, budget - 1)) return true;
    return false;
  }

  Expected<ExprPtr> Expression(bool no_cond = false) {
    bool top = !in_expr_;
    in_expr_ = true;
    OC_ASSIGN_OR_RETURN(ExprPtr e, ExpressionInner(no_cond));
    in_expr_ = !top;
    if (top && TooDeep(*e, 4 * kMaxDepth)) return Err("expression nested too deeply (a chain of operators, filters or attributes too long)");
    return e;
  }

  Expected<ExprPtr> ExpressionInner(bool no_cond) {
    if (++depth_ > kMaxDepth) return Err("expression nested too deeply");
    OC_ASSIGN_OR_RETURN(ExprPtr e, Or());
    if (!no_cond && IsName("if")) {
      int line = Cur().line;
      ++i_;
      auto c = Make(Expr::Kind::kCond, line);
      OC_ASSIGN_OR_RETURN(ExprPtr cond, Or());
      ExprPtr other;
      if (IsName("else")) { ++i_; OC_ASSIGN_OR_RETURN(other, Expression()); }
      c->args.push_back(std::move(e));
      c->args.push_back(std::move(cond));
      c->args.push_back(std::move(other));
      e = std::move(c);
    }
    --depth_;
    return e;
  }

  ExprPtr Bin(const std::string& op, ExprPtr a, ExprPtr b, int line) {
    auto e = Make(Expr::Kind::kBinary, line);
    e->name = op;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  Expected<ExprPtr> Or() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, And());
    while (IsName("or")) { int l = Cur().line; ++i_; OC_ASSIGN_OR_RETURN(ExprPtr r, And()); e = Bin("or", std::move(e), std::move(r), l); }
    return e;
  }
  Expected<ExprPtr> And() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, Not());
    while (IsName("and")) { int l = Cur().line; ++i_; OC_ASSIGN_OR_RETURN(ExprPtr r, Not()); e = Bin("and", std::move(e), std::move(r), l); }
    return e;
  }
  Expected<ExprPtr> Not() {
    if (IsName("not")) {
      if (++depth_ > kMaxDepth) return Err("expression nested too deeply");
      auto e = Make(Expr::Kind::kUnary, Cur().line);
      ++i_;
      e->name = "not";
      OC_ASSIGN_OR_RETURN(ExprPtr a, Not());
      e->args.push_back(std::move(a));
      --depth_;
      return e;
    }
    return Compare();
  }
  Expected<ExprPtr> Compare() {
    OC_ASSIGN_OR_RETURN(ExprPtr first, Math1());
    std::vector<ExprPtr> operands;
    operands.push_back(std::move(first));
    std::vector<std::string> ops;
    int line = 0;
    while (true) {
      int l = Cur().line;
      std::string op;
      if (Cur().type == Tok::kOp && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                     Cur().text == ">" || Cur().text == "<=" || Cur().text == ">=")) {
        op = Cur().text; ++i_;
      } else if (IsName("in")) { op = "in"; ++i_; }
      else if (IsName("not") && Next().type == Tok::kName && Next().text == "in") { op = "not in"; i_ += 2; }
      else break;
      OC_ASSIGN_OR_RETURN(ExprPtr r, Math1());
      ops.push_back(op);
      operands.push_back(std::move(r));
      line = l;
    }
    if (ops.empty()) return std::move(operands[0]);
    if (ops.size() == 1) return Bin(ops[0], std::move(operands[0]), std::move(operands[1]), line);
    // Python chains comparisons: a < b < c is (a < b) and (b < c), b evaluated once.
    auto chain = Make(Expr::Kind::kBinary, line);
    chain->name = "chain";
    chain->literal = ops;
    chain->args = std::move(operands);
    return chain;
  }
  Expected<ExprPtr> Math1() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, Concat());
    while (IsOp("+") || IsOp("-")) {
      std::string op = Cur().text; int l = Cur().line; ++i_;
      OC_ASSIGN_OR_RETURN(ExprPtr r, Concat());
      e = Bin(op, std::move(e), std::move(r), l);
    }
    return e;
  }
  Expected<ExprPtr> Concat() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, Math2());
    while (IsOp("~")) { int l = Cur().line; ++i_; OC_ASSIGN_OR_RETURN(ExprPtr r, Math2()); e = Bin("~", std::move(e), std::move(r), l); }
    return e;
  }
  Expected<ExprPtr> Math2() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, Pow());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Cur().text; int l = Cur().line; ++i_;
      OC_ASSIGN_OR_RETURN(ExprPtr r, Pow());
      e = Bin(op, std::move(e), std::move(r), l);
    }
    return e;
  }
  Expected<ExprPtr> Pow() {
    OC_ASSIGN_OR_RETURN(ExprPtr e, Unary(true));
    while (IsOp("**")) { int l = Cur().line; ++i_; OC_ASSIGN_OR_RETURN(ExprPtr r, Unary(true)); e = Bin("**", std::move(e), std::move(r), l); }
    return e;
  }
  Expected<ExprPtr> Unary(bool with_filter) {
    if (++depth_ > kMaxDepth) return Err("expression nested too deeply");
    ExprPtr e;
    if (IsOp("-") || IsOp("+")) {
      e = Make(Expr::Kind::kUnary, Cur().line);
      e->name = Cur().text;
      ++i_;
      OC_ASSIGN_OR_RETURN(ExprPtr a, Unary(false));
      e->args.push_back(std::move(a));
    } else {
      OC_ASSIGN_OR_RETURN(e, Primary());
    }
    OC_ASSIGN_OR_RETURN(e, Postfix(std::move(e)));
    if (with_filter) { OC_ASSIGN_OR_RETURN(e, FilterTest(std::move(e))); }
    --depth_;
    return e;
  }

  Expected<ExprPtr> Primary() {
    const Token tok = Cur();
    if (tok.type == Tok::kName) {
      ++i_;
      auto e = Make(Expr::Kind::kLiteral, tok.line);
      if (tok.text == "true" || tok.text == "True") e->literal = true;
      else if (tok.text == "false" || tok.text == "False") e->literal = false;
      else if (tok.text == "none" || tok.text == "None") e->literal = nullptr;
      else { e->kind = Expr::Kind::kName; e->name = tok.text; }
      return e;
    }
    if (tok.type == Tok::kString) {
      std::string s;
      while (Cur().type == Tok::kString) s += t_[i_++].text;
      auto e = Make(Expr::Kind::kLiteral, tok.line);
      e->literal = s;
      return e;
    }
    if (tok.type == Tok::kInt || tok.type == Tok::kFloat) {
      ++i_;
      auto e = Make(Expr::Kind::kLiteral, tok.line);
      if (tok.type == Tok::kFloat) e->literal = std::strtod(tok.text.c_str(), nullptr);
      else {
        errno = 0;
        long long v = std::strtoll(tok.text.c_str(), nullptr, 10);
        if (errno == ERANGE) return NotSupportedAt(tok.line, "the integer " + tok.text + " (past 64 bits)");
        e->literal = v;
      }
      return e;
    }
    if (IsOp("(")) {
      ++i_;
      if (IsOp(")")) { ++i_; return Make(Expr::Kind::kTuple, tok.line); }
      OC_ASSIGN_OR_RETURN(ExprPtr e, Expression());
      if (IsOp(",")) {
        auto tup = Make(Expr::Kind::kTuple, tok.line);
        tup->args.push_back(std::move(e));
        while (IsOp(",")) {
          ++i_;
          if (IsOp(")")) break;
          OC_ASSIGN_OR_RETURN(ExprPtr x, Expression());
          tup->args.push_back(std::move(x));
        }
        e = std::move(tup);
      }
      OC_RETURN_IF_ERROR(Expect(")"));
      return e;
    }
    if (IsOp("[")) {
      ++i_;
      auto e = Make(Expr::Kind::kList, tok.line);
      while (!IsOp("]")) {
        OC_ASSIGN_OR_RETURN(ExprPtr x, Expression());
        e->args.push_back(std::move(x));
        if (!IsOp(",")) break;
        ++i_;
      }
      OC_RETURN_IF_ERROR(Expect("]"));
      return e;
    }
    if (IsOp("{")) {
      ++i_;
      auto e = Make(Expr::Kind::kDict, tok.line);
      while (!IsOp("}")) {
        OC_ASSIGN_OR_RETURN(ExprPtr k, Expression());
        OC_RETURN_IF_ERROR(Expect(":"));
        OC_ASSIGN_OR_RETURN(ExprPtr v, Expression());
        e->args.push_back(std::move(k));
        e->args.push_back(std::move(v));
        if (!IsOp(",")) break;
        ++i_;
      }
      OC_RETURN_IF_ERROR(Expect("}"));
      return e;
    }
    return Err("unexpected " + Describe() + " in an expression");
  }

  Status Args(Expr* e) {
    OC_RETURN_IF_ERROR(Expect("("));
    while (!IsOp(")")) {
      if (Cur().type == Tok::kName && Next().type == Tok::kOp && Next().text == "=") {
        std::string k = Cur().text;
        i_ += 2;
        OC_ASSIGN_OR_RETURN(ExprPtr v, Expression());
        e->kwargs.emplace_back(k, std::move(v));
      } else {
        if (!e->kwargs.empty()) return Err("a positional argument after a keyword argument");
        OC_ASSIGN_OR_RETURN(ExprPtr v, Expression());
        e->args.push_back(std::move(v));
      }
      if (!IsOp(",")) break;
      ++i_;
    }
    return Expect(")");
  }

  Expected<ExprPtr> Postfix(ExprPtr e) {
    while (true) {
      int l = Cur().line;
      if (IsOp(".")) {
        ++i_;
        auto a = Make(Expr::Kind::kAttr, l);
        if (Cur().type == Tok::kInt) { a->kind = Expr::Kind::kItem; a->args.push_back(std::move(e));
          auto k = Make(Expr::Kind::kLiteral, l); k->literal = std::stoll(t_[i_++].text); a->args.push_back(std::move(k)); e = std::move(a); continue; }
        OC_ASSIGN_OR_RETURN(a->name, Name());
        a->args.push_back(std::move(e));
        e = std::move(a);
      } else if (IsOp("[")) {
        ++i_;
        ExprPtr parts[3];
        bool slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!IsOp(":") && !IsOp("]")) { OC_ASSIGN_OR_RETURN(parts[k], Expression()); }
          if (IsOp(":") && k < 2) { slice = true; ++i_; continue; }
          break;
        }
        OC_RETURN_IF_ERROR(Expect("]"));
        if (!slice && !parts[0]) return Err("an empty subscript '[]'");
        auto a = Make(slice ? Expr::Kind::kSlice : Expr::Kind::kItem, l);
        a->args.push_back(std::move(e));
        a->args.push_back(std::move(parts[0]));
        if (slice) { a->args.push_back(std::move(parts[1])); a->args.push_back(std::move(parts[2])); }
        e = std::move(a);
      } else if (IsOp("(")) {
        auto c = Make(Expr::Kind::kCall, l);
        c->args.push_back(std::move(e));
        OC_RETURN_IF_ERROR(Args(c.get()));
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  Expected<ExprPtr> FilterTest(ExprPtr e) {
    while (true) {
      int l = Cur().line;
      if (IsOp("|")) {
        ++i_;
        auto f = Make(Expr::Kind::kFilter, l);
        OC_ASSIGN_OR_RETURN(f->name, Name());
        while (IsOp(".")) { ++i_; OC_ASSIGN_OR_RETURN(std::string more, Name()); f->name += "." + more; }
        if (!IsKnownFilter(f->name)) return NotSupportedAt(l, "the filter '" + f->name + "'");
        f->args.push_back(std::move(e));
        if (IsOp("(")) OC_RETURN_IF_ERROR(Args(f.get()));
        e = std::move(f);
        OC_ASSIGN_OR_RETURN(e, Postfix(std::move(e)));
      } else if (IsName("is")) {
        ++i_;
        auto t = Make(Expr::Kind::kTest, l);
        if (IsName("not")) { t->negated = true; ++i_; }
        if (Cur().type == Tok::kOp && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                       Cur().text == ">" || Cur().text == "<=" || Cur().text == ">=")) {
          t->name = Cur().text; ++i_;
        } else {
          OC_ASSIGN_OR_RETURN(t->name, Name());
        }
        if (!IsKnownTest(t->name)) return NotSupportedAt(l, "the test '" + t->name + "'");
        t->args.push_back(std::move(e));
        if (IsOp("(")) {
          OC_RETURN_IF_ERROR(Args(t.get()));
        } else if (Cur().type == Tok::kString || Cur().type == Tok::kInt || Cur().type == Tok::kFloat ||
                   (Cur().type == Tok::kName && Cur().text != "and" && Cur().text != "or" && Cur().text != "else" &&
                    Cur().text != "if" && Cur().text != "is" && Cur().text != "in" && Cur().text != "not")) {
          OC_ASSIGN_OR_RETURN(ExprPtr a, Unary(false));  // `x is divisibleby 3`, `x is sameas none`
          t->args.push_back(std::move(a));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  static Status NotSupportedAt(int line, const std::string& what) {
    return NotSupported("chat template line ", line, ": ", what, " is not supported");
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  bool in_expr_ = false;  // inside an expression: only the outermost checks TooDeep
  int loops_ = 0;  // for bodies being parsed: break / continue need one
};

}  // namespace

bool IsKnownFilter(std::string_view n) {
  static const std::set<std::string_view> k = {
      "trim", "length", "count", "upper", "lower", "title", "capitalize", "replace", "default", "d", "join",
      "first", "last", "list", "tojson", "string", "int", "float", "items", "selectattr", "rejectattr", "map",
      "safe", "indent", "abs", "reverse", "unique", "sort", "min", "max", "sum", "e", "escape", "round", "wordcount",
      "batch", "dictsort", "center"};
  return k.count(n) && n != "batch" && n != "dictsort" && n != "center" && n != "wordcount" && n != "round" &&
         n != "e" && n != "escape";
}

bool IsKnownTest(std::string_view n) {
  static const std::set<std::string_view> k = {
      "defined", "undefined", "none", "string", "mapping", "iterable", "sequence", "number", "integer", "float",
      "boolean", "true", "false", "odd", "even", "divisibleby", "eq", "equalto", "==", "ne", "!=", "lt", "<",
      "lessthan", "gt", ">", "greaterthan", "le", "<=", "ge", ">=", "in", "lower", "upper", "sameas"};
  return k.count(n) > 0;
}

Expected<Body> ParseTemplate(std::string_view source) {
  Lexer lexer(source);
  OC_ASSIGN_OR_RETURN(std::vector<Token> toks, lexer.Run());
  Parser parser(std::move(toks));
  return parser.Top();
}

}  // namespace oc::llm::chat
