// Evaluates a chat template over JSON values with Python / Jinja2 semantics:
// Undefined for missing names and keys (empty when printed, an error when
// looked into), a fresh scope per loop iteration and per macro call,
// namespace() objects shared by reference.
#include "llm/chat/template_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <unordered_map>

#include "llm/chat/chat_template.h"
#include "llm/chat/template_parser.h"
#include "llm/chat/template_value.h"

namespace oc::llm::chat {
namespace {

struct Value {
  enum class K { kUndef, kData, kNs, kMacro, kFunc };
  K k = K::kUndef;
  Json j;
  std::shared_ptr<Json> ns;
  const Node* macro = nullptr;
  std::string name;  // kFunc: the global; kUndef: what was missing, for messages

  static Value Data(Json v) { Value x; x.k = K::kData; x.j = std::move(v); return x; }
  static Value Undef(std::string what) { Value x; x.name = std::move(what); return x; }
  bool undef() const { return k == K::kUndef; }
  Json json() const { return k == K::kData ? j : k == K::kNs ? *ns : Json(); }
};

using Frame = std::unordered_map<std::string, Value>;
enum class Flow { kNormal, kBreak, kContinue };

class Evaluator {
 public:
  explicit Evaluator(const Json& ctx) {
    frames_.emplace_back();
    if (ctx.is_object())
      for (auto it = ctx.begin(); it != ctx.end(); ++it) frames_[0][it.key()] = Value::Data(it.value());
  }

  Status Exec(const Body& body) {
    for (auto& n : body) {
      OC_RETURN_IF_ERROR(ExecNode(*n));
      if (flow_ != Flow::kNormal) return Status::Ok();
    }
    return Status::Ok();
  }
  std::string& out() { return out_; }

 private:
  Status Err(int line, const std::string& m) const { return InvalidArgument("chat template line ", line, ": ", m); }
  Status NotSup(int line, const std::string& what) const {
    return NotSupported("chat template line ", line, ": ", what, " is not supported");
  }
  Status Step(int line) {
    if (++steps_ > ChatTemplate::kMaxSteps)
      return ResourceExhausted("chat template line ", line, ": rendering ran past ", ChatTemplate::kMaxSteps,
                               " steps (a runaway loop?)");
    return Status::Ok();
  }
  Status Emit(int line, const std::string& s) {
    if (out_.size() + s.size() > ChatTemplate::kMaxOutputBytes)
      return ResourceExhausted("chat template line ", line, ": the output passes ", ChatTemplate::kMaxOutputBytes,
                               " bytes");
    out_ += s;
    return Status::Ok();
  }

  Value Lookup(const std::string& name) {
    for (size_t i = frames_.size(); i-- > base_;) {
      auto f = frames_[i].find(name);
      if (f != frames_[i].end()) return f->second;
    }
    auto f = frames_[0].find(name);
    if (f != frames_[0].end()) return f->second;
    static const char* kGlobals[] = {"range", "namespace", "raise_exception", "strftime_now", "dict"};
    for (const char* g : kGlobals)
      if (name == g) { Value v; v.k = Value::K::kFunc; v.name = name; return v; }
    return Value::Undef("'" + name + "' is undefined");
  }
  Value* Find(const std::string& name) {
    for (size_t i = frames_.size(); i-- > base_;) {
      auto f = frames_[i].find(name);
      if (f != frames_[i].end()) return &f->second;
    }
    auto f = frames_[0].find(name);
    return f != frames_[0].end() ? &f->second : nullptr;
  }

  Expected<std::string> ToStr(const Value& v) {
    if (v.undef()) return std::string();
    if (v.k == Value::K::kNs) return std::string("<Namespace ") + PyRepr(*v.ns) + ">";
    if (v.k != Value::K::kData) return std::string("<function ") + v.name + ">";
    return PyStr(v.j);
  }

  bool Truth(const Value& v) { return v.k == Value::K::kData ? PyTruth(v.j) : !v.undef(); }

  Status ExecNode(const Node& n) {
    DepthGuard guard(&recursion_);
    OC_RETURN_IF_ERROR(Deep(n.line));
    OC_RETURN_IF_ERROR(Step(n.line));
    switch (n.kind) {
      case Node::Kind::kText: return Emit(n.line, n.text);
      case Node::Kind::kOutput: {
        OC_ASSIGN_OR_RETURN(Value v, Eval(*n.expr));
        OC_ASSIGN_OR_RETURN(std::string s, ToStr(v));
        return Emit(n.line, s);
      }
      case Node::Kind::kIf:
        for (auto& [cond, body] : n.branches) {
          OC_ASSIGN_OR_RETURN(Value c, Eval(*cond));
          if (Truth(c)) return Exec(body);
        }
        return Exec(n.else_body);
      case Node::Kind::kFor: return ExecFor(n);
      case Node::Kind::kSet: {
        OC_ASSIGN_OR_RETURN(Value v, Eval(*n.expr));
        if (!n.attr.empty()) {
          Value* ns = Find(n.targets[0]);
          if (!ns || ns->k != Value::K::kNs)
            return Err(n.line, "'set " + n.targets[0] + "." + n.attr + "' needs '" + n.targets[0] + "' to be a namespace()");
          if (v.k == Value::K::kNs || v.k == Value::K::kMacro || v.k == Value::K::kFunc)
            return NotSup(n.line, "storing a namespace or a function in a namespace");
          (*ns->ns)[n.attr] = v.json();
          return Status::Ok();
        }
        if (n.targets.size() == 1) { frames_.back()[n.targets[0]] = v; return Status::Ok(); }
        Json j = v.json();
        if (!j.is_array() || j.size() != n.targets.size())
          return Err(n.line, "cannot unpack " + std::string(j.type_name()) + " into " + std::to_string(n.targets.size()) + " names");
        for (size_t i = 0; i < n.targets.size(); ++i) frames_.back()[n.targets[i]] = Value::Data(j[i]);
        return Status::Ok();
      }
      case Node::Kind::kSetBlock: {
        std::string saved;
        saved.swap(out_);
        Status s = Exec(n.body);
        std::string captured;
        captured.swap(out_);
        out_.swap(saved);
        OC_RETURN_IF_ERROR(s);
        frames_.back()[n.targets[0]] = Value::Data(captured);
        return Status::Ok();
      }
      case Node::Kind::kMacro: {
        Value m;
        m.k = Value::K::kMacro;
        m.macro = &n;
        m.name = n.targets[0];
        frames_.back()[n.targets[0]] = m;
        return Status::Ok();
      }
      case Node::Kind::kBreak: flow_ = Flow::kBreak; return Status::Ok();
      case Node::Kind::kContinue: flow_ = Flow::kContinue; return Status::Ok();
      case Node::Kind::kBlock: return Exec(n.body);
    }
    return Status::Ok();
  }

  Expected<Json> Iterable(const Value& v, int line) {
    if (v.undef()) return Json::array();
    if (v.k == Value::K::kData) {
      if (v.j.is_array()) return v.j;
      if (v.j.is_object()) {
        Json keys = Json::array();
        for (auto it = v.j.begin(); it != v.j.end(); ++it) keys.push_back(it.key());
        return keys;
      }
      if (v.j.is_string()) {
        Json chars = Json::array();
        for (char32_t c : ToU32(v.j.get_ref<const std::string&>())) chars.push_back(FromU32(std::u32string(1, c)));
        return chars;
      }
    }
    return Err(line, std::string("'") + (v.k == Value::K::kData ? v.j.type_name() : "namespace") + "' is not iterable");
  }

  Status Bind(const Node& n, const Json& item, Frame* f) {
    if (n.targets.size() == 1) { (*f)[n.targets[0]] = Value::Data(item); return Status::Ok(); }
    if (!item.is_array() || item.size() != n.targets.size())
      return Err(n.line, "cannot unpack a loop item into " + std::to_string(n.targets.size()) + " names");
    for (size_t i = 0; i < n.targets.size(); ++i) (*f)[n.targets[i]] = Value::Data(item[i]);
    return Status::Ok();
  }

  Status ExecFor(const Node& n) {
    OC_ASSIGN_OR_RETURN(Value it, Eval(*n.expr));
    OC_ASSIGN_OR_RETURN(Json items, Iterable(it, n.line));
    if (n.cond) {  // the filtering `if` runs before the loop: loop.length counts what passes
      Json kept = Json::array();
      for (auto& x : items) {
        OC_RETURN_IF_ERROR(Step(n.line));
        frames_.emplace_back();
        Status s = Bind(n, x, &frames_.back());
        Expected<Value> c = s.ok() ? Eval(*n.cond) : Expected<Value>(s);
        frames_.pop_back();
        if (!c.ok()) return c.status();
        if (Truth(*c)) kept.push_back(x);
      }
      items = std::move(kept);
    }
    const long long len = (long long)items.size();
    for (long long i = 0; i < len; ++i) {
      OC_RETURN_IF_ERROR(Step(n.line));
      frames_.emplace_back();
      Json loop = {{"index", i + 1}, {"index0", i}, {"revindex", len - i}, {"revindex0", len - i - 1},
                   {"first", i == 0}, {"last", i == len - 1}, {"length", len}, {"depth", 1}, {"depth0", 0}};
      if (i > 0) loop["previtem"] = items[i - 1];
      if (i + 1 < len) loop["nextitem"] = items[i + 1];
      frames_.back()["loop"] = Value::Data(std::move(loop));
      Status s = Bind(n, items[i], &frames_.back());
      if (s.ok()) s = Exec(n.body);
      frames_.pop_back();
      OC_RETURN_IF_ERROR(s);
      if (flow_ == Flow::kBreak) { flow_ = Flow::kNormal; break; }
      flow_ = Flow::kNormal;
    }
    if (len == 0) return Exec(n.else_body);
    return Status::Ok();
  }

  // ---- expressions ----

  // Bounds the C++ recursion of evaluation (expressions, blocks and macro
  // calls together), so that no template can exhaust the stack.
  struct DepthGuard {
    int* d;
    explicit DepthGuard(int* depth) : d(depth) { ++*d; }
    ~DepthGuard() { --*d; }
  };
#if defined(__SANITIZE_ADDRESS__)
  static constexpr int kMaxRecursion = 200;  // AddressSanitizer's frames are several times larger
#else
  static constexpr int kMaxRecursion = 1000;
#endif
  Status Deep(int line) const {
    if (recursion_ > kMaxRecursion)
      return ResourceExhausted("chat template line ", line, ": evaluation nested past ", kMaxRecursion,
                               " levels (runaway recursion?)");
    return Status::Ok();
  }

  Expected<Value> Eval(const Expr& e) {
    DepthGuard guard(&recursion_);
    OC_RETURN_IF_ERROR(Deep(e.line));
    OC_RETURN_IF_ERROR(Step(e.line));
    switch (e.kind) {
      case Expr::Kind::kLiteral: return Value::Data(e.literal);
      case Expr::Kind::kName: return Lookup(e.name);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        Json a = Json::array();
        for (auto& x : e.args) { OC_ASSIGN_OR_RETURN(Value v, Eval(*x)); a.push_back(v.json()); }
        return Value::Data(std::move(a));
      }
      case Expr::Kind::kDict: {
        Json d = Json::object();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          OC_ASSIGN_OR_RETURN(Value k, Eval(*e.args[i]));
          OC_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i + 1]));
          if (k.k != Value::K::kData || !k.j.is_string()) return NotSup(e.line, "a dict key that is not a string");
          d[k.j.get<std::string>()] = v.json();
        }
        return Value::Data(std::move(d));
      }
      case Expr::Kind::kAttr: {
        OC_ASSIGN_OR_RETURN(Value o, Eval(*e.args[0]));
        return Attr(o, e.name, e.line);
      }
      case Expr::Kind::kItem: {
        OC_ASSIGN_OR_RETURN(Value o, Eval(*e.args[0]));
        OC_ASSIGN_OR_RETURN(Value k, Eval(*e.args[1]));
        return Item(o, k, e.line);
      }
      case Expr::Kind::kSlice: return Slice(e);
      case Expr::Kind::kCall: return Call(e);
      case Expr::Kind::kFilter: {
        OC_ASSIGN_OR_RETURN(Value in, Eval(*e.args[0]));
        OC_ASSIGN_OR_RETURN(Args a, EvalArgs(e, 1));
        return Filter(e.name, in, a, e.line);
      }
      case Expr::Kind::kTest: {
        OC_ASSIGN_OR_RETURN(Value in, Eval(*e.args[0]));
        OC_ASSIGN_OR_RETURN(Args a, EvalArgs(e, 1));
        OC_ASSIGN_OR_RETURN(bool r, Test(e.name, in, a.pos, e.line));
        return Value::Data(r != e.negated);
      }
      case Expr::Kind::kUnary: {
        OC_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (e.name == "not") return Value::Data(!Truth(a));
        Json j = a.json();
        if (!(j.is_number() || j.is_boolean()) || a.k != Value::K::kData)
          return Err(e.line, "bad operand for unary " + e.name + ": " + TypeName(a));
        if (e.name == "+") return Value::Data(j.is_boolean() ? Json(j.get<bool>() ? 1 : 0) : j);
        if (j.is_number_float()) return Value::Data(-j.get<double>());
        return Value::Data(-(j.is_boolean() ? (j.get<bool>() ? 1LL : 0LL) : j.get<long long>()));
      }
      case Expr::Kind::kBinary: return Binary(e);
      case Expr::Kind::kCond: {
        OC_ASSIGN_OR_RETURN(Value c, Eval(*e.args[1]));
        if (Truth(c)) return Eval(*e.args[0]);
        if (!e.args[2]) return Value::Undef("the inline 'if' had no 'else'");
        return Eval(*e.args[2]);
      }
    }
    return Err(e.line, "bad expression");
  }

  static std::string TypeName(const Value& v) {
    switch (v.k) {
      case Value::K::kUndef: return "undefined";
      case Value::K::kNs: return "namespace";
      case Value::K::kMacro: case Value::K::kFunc: return "function";
      default: break;
    }
    switch (v.j.type()) {
      case Json::value_t::null: return "NoneType";
      case Json::value_t::boolean: return "bool";
      case Json::value_t::number_float: return "float";
      case Json::value_t::number_integer: case Json::value_t::number_unsigned: return "int";
      case Json::value_t::string: return "str";
      case Json::value_t::array: return "list";
      case Json::value_t::object: return "dict";
      default: return "value";
    }
  }

  Expected<Value> Attr(const Value& o, const std::string& name, int line) {
    if (o.undef()) return Err(line, o.name);
    if (o.k == Value::K::kNs) {
      auto f = o.ns->find(name);
      if (f == o.ns->end()) return Value::Undef("namespace has no attribute '" + name + "'");
      return Value::Data(*f);
    }
    if (o.k == Value::K::kData && o.j.is_object()) {
      auto f = o.j.find(name);
      if (f != o.j.end()) return Value::Data(*f);
    }
    return Value::Undef("'" + TypeName(o) + " object' has no attribute '" + name + "'");
  }

  Expected<Value> Item(const Value& o, const Value& k, int line) {
    if (o.undef()) return Err(line, o.name);
    if (k.k == Value::K::kData && k.j.is_string()) return Attr(o, k.j.get<std::string>(), line);
    if (o.k == Value::K::kData && k.k == Value::K::kData && (k.j.is_number_integer() || k.j.is_boolean())) {
      long long i = k.j.is_boolean() ? k.j.get<bool>() : k.j.get<long long>();
      if (o.j.is_array()) {
        long long n = (long long)o.j.size();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value::Data(o.j[size_t(i)]);
      } else if (o.j.is_string()) {
        std::u32string u = ToU32(o.j.get_ref<const std::string&>());
        long long n = (long long)u.size();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value::Data(FromU32(u.substr(size_t(i), 1)));
      }
    }
    return Value::Undef("'" + TypeName(o) + " object' has no item " + PyRepr(k.json()));
  }

  Expected<Value> Slice(const Expr& e) {
    OC_ASSIGN_OR_RETURN(Value o, Eval(*e.args[0]));
    long long part[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int p = 0; p < 3; ++p) {
      if (!e.args[p + 1]) continue;
      OC_ASSIGN_OR_RETURN(Value v, Eval(*e.args[p + 1]));
      if (v.k == Value::K::kData && v.j.is_null()) continue;
      if (v.k != Value::K::kData || !v.j.is_number_integer()) return Err(e.line, "slice indices must be integers");
      part[p] = v.j.get<long long>();
      given[p] = true;
    }
    if (part[2] == 0) return Err(e.line, "slice step cannot be zero");
    if (o.undef()) return Err(e.line, o.name);
    bool is_str = o.k == Value::K::kData && o.j.is_string();
    std::u32string u;
    long long n;
    if (is_str) { u = ToU32(o.j.get_ref<const std::string&>()); n = (long long)u.size(); }
    else if (o.k == Value::K::kData && o.j.is_array()) n = (long long)o.j.size();
    else return Err(e.line, "'" + TypeName(o) + "' cannot be sliced");
    long long step = part[2], start, stop;
    auto adjust = [&](long long v, bool g, long long def_pos, long long def_neg) {
      if (!g) return step > 0 ? def_pos : def_neg;
      if (v < 0) { v += n; if (v < 0) v = step < 0 ? -1 : 0; }
      else if (v >= n) v = step < 0 ? n - 1 : n;
      return v;
    };
    start = adjust(part[0], given[0], 0, n - 1);
    stop = adjust(part[1], given[1], n, -1);
    Json a = Json::array();
    std::u32string s;
    for (long long i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (is_str) s += u[size_t(i)];
      else a.push_back(o.j[size_t(i)]);
    }
    return is_str ? Value::Data(FromU32(s)) : Value::Data(std::move(a));
  }

  struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
    const Value* Kw(const char* name) const {
      for (auto& [k, v] : kw) if (k == name) return &v;
      return nullptr;
    }
    // Positional i, else keyword `name`, else null.
    const Value* Get(size_t i, const char* name) const { return i < pos.size() ? &pos[i] : Kw(name); }
  };

  Expected<Args> EvalArgs(const Expr& e, size_t first) {
    Args a;
    for (size_t i = first; i < e.args.size(); ++i) { OC_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i])); a.pos.push_back(std::move(v)); }
    for (auto& [k, x] : e.kwargs) { OC_ASSIGN_OR_RETURN(Value v, Eval(*x)); a.kw.emplace_back(k, std::move(v)); }
    return a;
  }

  Expected<Value> Call(const Expr& e) {
    const Expr& callee = *e.args[0];
    if (callee.kind == Expr::Kind::kAttr) {
      OC_ASSIGN_OR_RETURN(Value o, Eval(*callee.args[0]));
      if (o.k == Value::K::kData && (o.j.is_string() || o.j.is_object() || o.j.is_array())) {
        OC_ASSIGN_OR_RETURN(Args a, EvalArgs(e, 1));
        return Method(o.j, callee.name, a, e.line);
      }
      if (o.undef()) return Err(e.line, o.name);
    }
    OC_ASSIGN_OR_RETURN(Value f, Eval(callee));
    OC_ASSIGN_OR_RETURN(Args a, EvalArgs(e, 1));
    if (f.k == Value::K::kMacro) return CallMacro(*f.macro, a, e.line);
    if (f.k != Value::K::kFunc) {
      if (f.undef()) return Err(e.line, f.name);
      return Err(e.line, "'" + TypeName(f) + "' is not callable");
    }
    if (f.name == "raise_exception") {
      std::string msg;
      if (!a.pos.empty()) { OC_ASSIGN_OR_RETURN(msg, ToStr(a.pos[0])); }
      return InvalidArgument("chat template line ", e.line, ": raise_exception: ", msg);
    }
    if (f.name == "namespace" || f.name == "dict") {
      auto ns = std::make_shared<Json>(Json::object());
      for (auto& p : a.pos) {
        if (!p.json().is_object()) return Err(e.line, f.name + "() takes a dict or keyword arguments");
        for (auto it = p.j.begin(); it != p.j.end(); ++it) (*ns)[it.key()] = it.value();
      }
      for (auto& [k, v] : a.kw) (*ns)[k] = v.json();
      if (f.name == "dict") return Value::Data(*ns);
      Value v;
      v.k = Value::K::kNs;
      v.ns = ns;
      return v;
    }
    if (f.name == "strftime_now") {
      if (a.pos.empty() || !a.pos[0].json().is_string()) return Err(e.line, "strftime_now(format) needs a string");
      std::time_t t = std::time(nullptr);
      std::tm tm{};
      localtime_r(&t, &tm);
      char buf[512];
      size_t n = std::strftime(buf, sizeof buf, a.pos[0].j.get<std::string>().c_str(), &tm);
      return Value::Data(std::string(buf, n));
    }
    if (f.name == "range") {
      long long r[3] = {0, 0, 1};
      if (a.pos.empty() || a.pos.size() > 3) return Err(e.line, "range() takes 1 to 3 integers");
      for (size_t i = 0; i < a.pos.size(); ++i) {
        Json j = a.pos[i].json();
        if (!j.is_number_integer()) return Err(e.line, "range() takes integers, got " + TypeName(a.pos[i]));
        r[a.pos.size() == 1 ? 1 : i] = j.get<long long>();
      }
      if (r[2] == 0) return Err(e.line, "range() step must not be zero");
      Json out = Json::array();
      for (long long i = r[0]; r[2] > 0 ? i < r[1] : i > r[1]; i += r[2]) {
        if (out.size() >= 1'000'000) return ResourceExhausted("chat template line ", e.line, ": range() of more than 1000000 items");
        out.push_back(i);
      }
      return Value::Data(std::move(out));
    }
    return NotSup(e.line, "the function '" + f.name + "'");
  }

  Expected<Value> CallMacro(const Node& m, const Args& a, int line) {
    if (macro_depth_ >= ChatTemplate::kMaxMacroDepth)
      return ResourceExhausted("chat template line ", line, ": macro '", m.targets[0], "' nested past ",
                               ChatTemplate::kMaxMacroDepth, " calls (runaway recursion?)");
    if (a.pos.size() > m.params.size()) return Err(line, "macro '" + m.targets[0] + "' takes " + std::to_string(m.params.size()) + " arguments");
    Frame f;
    for (size_t i = 0; i < m.params.size(); ++i) {
      const auto& [name, def] = m.params[i];
      if (i < a.pos.size()) { f[name] = a.pos[i]; continue; }
      if (const Value* k = a.Kw(name.c_str())) { f[name] = *k; continue; }
      if (def) { OC_ASSIGN_OR_RETURN(Value d, Eval(*def)); f[name] = d; }
      else f[name] = Value::Undef("'" + name + "' is undefined");
    }
    for (auto& [k, v] : a.kw) {
      bool known = false;
      for (auto& p : m.params) known |= p.first == k;
      if (!known) return Err(line, "macro '" + m.targets[0] + "' has no argument '" + k + "'");
    }
    size_t saved_base = base_;
    base_ = frames_.size();
    frames_.push_back(std::move(f));
    std::string saved;
    saved.swap(out_);
    ++macro_depth_;
    Status s = Exec(m.body);
    --macro_depth_;
    flow_ = Flow::kNormal;
    std::string result;
    result.swap(out_);
    out_.swap(saved);
    frames_.pop_back();
    base_ = saved_base;
    OC_RETURN_IF_ERROR(s);
    return Value::Data(std::move(result));
  }

  Expected<Value> Method(const Json& o, const std::string& name, const Args& a, int line) {
    auto arg = [&](size_t i, const char* kw) -> Json { const Value* v = a.Get(i, kw); return v ? v->json() : Json(); };
    auto str_arg = [&](size_t i, const char* kw, std::string* out) -> Status {
      Json j = arg(i, kw);
      if (!j.is_string()) return Err(line, name + "() needs a string argument");
      *out = j.get<std::string>();
      return Status::Ok();
    };
    if (o.is_string()) {
      const std::string& s = o.get_ref<const std::string&>();
      if (name == "strip" || name == "lstrip" || name == "rstrip")
        return Value::Data(PyStrip(s, arg(0, "chars"), name != "rstrip", name != "lstrip"));
      if (name == "upper") return Value::Data(PyUpper(s));
      if (name == "lower") return Value::Data(PyLower(s));
      if (name == "title") return Value::Data(PyTitle(s));
      if (name == "capitalize") return Value::Data(PyCapitalize(s));
      if (name == "split") {
        Json sep = arg(0, "sep");
        if (sep.is_string() && sep.get_ref<const std::string&>().empty()) return Err(line, "split(): empty separator");
        Json ms = arg(1, "maxsplit");
        return Value::Data(Json(PySplit(s, sep, ms.is_number_integer() ? ms.get<long long>() : -1)));
      }
      if (name == "splitlines") return Value::Data(Json(PySplitLines(s)));
      if (name == "startswith" || name == "endswith") {
        Json p = arg(0, "prefix");
        std::vector<std::string> cands;
        if (p.is_string()) cands.push_back(p.get<std::string>());
        else if (p.is_array()) { for (auto& x : p) if (x.is_string()) cands.push_back(x.get<std::string>()); else return Err(line, name + "() takes strings"); }
        else return Err(line, name + "() takes a string or a tuple of strings");
        for (auto& c : cands) {
          bool hit = name == "startswith" ? s.compare(0, c.size(), c) == 0 && s.size() >= c.size()
                                          : s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0;
          if (hit) return Value::Data(true);
        }
        return Value::Data(false);
      }
      if (name == "replace") {
        std::string from, to;
        OC_RETURN_IF_ERROR(str_arg(0, "old", &from));
        OC_RETURN_IF_ERROR(str_arg(1, "new", &to));
        Json c = arg(2, "count");
        return Value::Data(PyReplace(s, from, to, c.is_number_integer() ? c.get<long long>() : -1));
      }
      if (name == "find") {
        std::string sub;
        OC_RETURN_IF_ERROR(str_arg(0, "sub", &sub));
        size_t f = s.find(sub);
        return Value::Data(f == std::string::npos ? -1LL : (long long)ToU32(s.substr(0, f)).size());
      }
      if (name == "join") {
        Json items = arg(0, "iterable");
        if (!items.is_array()) return Err(line, "join() takes a list");
        std::string r;
        for (size_t i = 0; i < items.size(); ++i) {
          if (!items[i].is_string()) return Err(line, "join(): item " + std::to_string(i) + " is not a string");
          r += (i ? s : "") + items[i].get<std::string>();
        }
        return Value::Data(r);
      }
      return NotSup(line, "the string method '" + name + "'");
    }
    if (o.is_object()) {
      if (name == "items") {
        Json r = Json::array();
        for (auto it = o.begin(); it != o.end(); ++it) r.push_back(Json::array({it.key(), it.value()}));
        return Value::Data(std::move(r));
      }
      if (name == "keys" || name == "values") {
        Json r = Json::array();
        for (auto it = o.begin(); it != o.end(); ++it) r.push_back(name == "keys" ? Json(it.key()) : it.value());
        return Value::Data(std::move(r));
      }
      if (name == "get") {
        Json k = arg(0, "key");
        if (k.is_string()) {
          auto f = o.find(k.get<std::string>());
          if (f != o.end()) return Value::Data(*f);
        }
        const Value* d = a.Get(1, "default");
        return d ? *d : Value::Data(nullptr);
      }
      return NotSup(line, "the dict method '" + name + "'");
    }
    return NotSup(line, "the list method '" + name + "'");
  }

  static bool IsIntLike(const Json& j) { return j.is_number_integer() || j.is_boolean(); }
  static long long AsInt(const Json& j) { return j.is_boolean() ? (j.get<bool>() ? 1 : 0) : j.get<long long>(); }
  static double AsNum(const Json& j) { return j.is_boolean() ? (j.get<bool>() ? 1 : 0) : j.get<double>(); }
  static bool IsNum(const Json& j) { return j.is_number() || j.is_boolean(); }

  Expected<Value> Chain(const Expr& e) {
    OC_ASSIGN_OR_RETURN(Value left, Eval(*e.args[0]));
    for (size_t i = 1; i < e.args.size(); ++i) {
      OC_ASSIGN_OR_RETURN(Value right, Eval(*e.args[i]));
      OC_ASSIGN_OR_RETURN(Value r, Compare(e.literal[i - 1].get<std::string>(), left, right, e.line));
      if (!Truth(r)) return r;
      left = std::move(right);
    }
    return Value::Data(true);
  }

  Expected<Value> Binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "chain") return Chain(e);
    OC_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
    if (op == "and") { if (!Truth(a)) return a; return Eval(*e.args[1]); }
    if (op == "or") { if (Truth(a)) return a; return Eval(*e.args[1]); }
    OC_ASSIGN_OR_RETURN(Value b, Eval(*e.args[1]));
    return Compare(op, a, b, e.line);
  }

  // Every binary operator but and / or (operands evaluated).
  Expected<Value> Compare(const std::string& op, const Value& a, const Value& b, int line) {
    Expr e;
    e.line = line;
    if (op == "~") {
      OC_ASSIGN_OR_RETURN(std::string x, ToStr(a));
      OC_ASSIGN_OR_RETURN(std::string y, ToStr(b));
      if (x.size() + y.size() > ChatTemplate::kMaxOutputBytes) return ResourceExhausted("chat template line ", e.line, ": a string passes the output limit");
      return Value::Data(x + y);
    }
    if (op == "==" || op == "!=") {
      bool eq;
      if (a.undef() || b.undef()) eq = a.undef() && b.undef();
      else if (a.k != Value::K::kData || b.k != Value::K::kData) eq = a.k == b.k && a.ns == b.ns && a.macro == b.macro && a.name == b.name;
      else eq = PyEqual(a.j, b.j);
      return Value::Data(eq == (op == "=="));
    }
    if (op == "in" || op == "not in") {
      OC_ASSIGN_OR_RETURN(bool r, Contains(b, a, e.line));
      return Value::Data(r == (op == "in"));
    }
    if (a.k != Value::K::kData || b.k != Value::K::kData) {
      if (a.undef()) return Err(e.line, a.name);
      if (b.undef()) return Err(e.line, b.name);
      return Err(e.line, "unsupported operand types for " + op + ": " + TypeName(a) + " and " + TypeName(b));
    }
    const Json &x = a.j, &y = b.j;
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      Expected<bool> r = op == "<" || op == ">=" ? PyLess(x, y) : PyLess(y, x);
      if (!r.ok()) return Err(e.line, "'" + op + "' is not supported between " + TypeName(a) + " and " + TypeName(b));
      return Value::Data(op == "<" || op == ">" ? *r : !*r);
    }
    if (IsNum(x) && IsNum(y)) {
      bool ints = IsIntLike(x) && IsIntLike(y);
      if (ints && op != "/" && op != "**") {
        long long p = AsInt(x), q = AsInt(y), r;
        if (op == "+") { if (__builtin_add_overflow(p, q, &r)) return Err(e.line, "integer overflow"); return Value::Data(r); }
        if (op == "-") { if (__builtin_sub_overflow(p, q, &r)) return Err(e.line, "integer overflow"); return Value::Data(r); }
        if (op == "*") { if (__builtin_mul_overflow(p, q, &r)) return Err(e.line, "integer overflow"); return Value::Data(r); }
        if (q == 0) return Err(e.line, "integer division or modulo by zero");
        if (op == "//") { long long d = p / q; if ((p % q != 0) && ((p < 0) != (q < 0))) --d; return Value::Data(d); }
        if (op == "%") { long long m = p % q; if (m != 0 && ((m < 0) != (q < 0))) m += q; return Value::Data(m); }
      }
      double p = AsNum(x), q = AsNum(y);
      if (op == "**") {
        if (ints && AsInt(y) >= 0) {
          double r = std::pow(p, q);
          if (std::fabs(r) > 9.2e18) return Err(e.line, "integer overflow");
          return Value::Data((long long)std::llround(r));
        }
        return Value::Data(std::pow(p, q));
      }
      if (op == "+") return Value::Data(p + q);
      if (op == "-") return Value::Data(p - q);
      if (op == "*") return Value::Data(p * q);
      if (q == 0) return Err(e.line, "float division by zero");
      if (op == "/") return Value::Data(p / q);
      if (op == "//") return Value::Data(std::floor(p / q));
      if (op == "%") { double m = std::fmod(p, q); if (m != 0 && ((m < 0) != (q < 0))) m += q; return Value::Data(m); }
    }
    if (op == "+" && x.is_string() && y.is_string()) {
      if (x.get_ref<const std::string&>().size() + y.get_ref<const std::string&>().size() > ChatTemplate::kMaxOutputBytes)
        return ResourceExhausted("chat template line ", e.line, ": a string passes the output limit");
      return Value::Data(x.get<std::string>() + y.get<std::string>());
    }
    if (op == "+" && x.is_array() && y.is_array()) {
      Json r = x;
      for (auto& v : y) r.push_back(v);
      return Value::Data(std::move(r));
    }
    if (op == "*" && ((x.is_string() && IsIntLike(y)) || (IsIntLike(x) && y.is_string()))) {
      const std::string& s = x.is_string() ? x.get_ref<const std::string&>() : y.get_ref<const std::string&>();
      long long n = x.is_string() ? AsInt(y) : AsInt(x);
      if (n > 0 && s.size() * (unsigned long long)n > ChatTemplate::kMaxOutputBytes)
        return ResourceExhausted("chat template line ", e.line, ": a repeated string passes the output limit");
      std::string r;
      for (long long i = 0; i < n; ++i) r += s;
      return Value::Data(r);
    }
    if (op == "%" && x.is_string()) return NotSup(e.line, "'%' string formatting");
    return Err(e.line, "unsupported operand types for " + op + ": " + TypeName(a) + " and " + TypeName(b));
  }

  Expected<bool> Contains(const Value& hay, const Value& needle, int line) {
    if (hay.undef()) return false;
    Json h = hay.json(), n = needle.json();
    if (h.is_string()) {
      if (!n.is_string()) return Err(line, "'in <string>' requires a string on the left, not " + TypeName(needle));
      return h.get_ref<const std::string&>().find(n.get_ref<const std::string&>()) != std::string::npos;
    }
    if (h.is_array()) {
      for (auto& x : h) if (PyEqual(x, n)) return true;
      return false;
    }
    if (h.is_object()) return n.is_string() && h.contains(n.get<std::string>());
    return Err(line, "argument of type '" + TypeName(hay) + "' is not iterable");
  }

  Expected<bool> Test(const std::string& name, const Value& v, const std::vector<Value>& args, int line) {
    const Json j = v.json();
    bool data = v.k == Value::K::kData;
    auto arg = [&](size_t i) -> Expected<Json> {
      if (i >= args.size()) return Err(line, "the test '" + name + "' needs an argument");
      return args[i].json();
    };
    if (name == "defined") return !v.undef();
    if (name == "undefined") return v.undef();
    if (name == "none") return data && j.is_null();
    if (name == "string") return data && j.is_string();
    if (name == "mapping") return data && j.is_object();
    if (name == "iterable") return v.undef() || (data && (j.is_string() || j.is_array() || j.is_object()));
    if (name == "sequence") return v.undef() || (data && (j.is_string() || j.is_array() || j.is_object()));
    if (name == "number") return data && (j.is_number() || j.is_boolean());
    if (name == "integer") return data && j.is_number_integer();
    if (name == "float") return data && j.is_number_float();
    if (name == "boolean") return data && j.is_boolean();
    if (name == "true") return data && j.is_boolean() && j.get<bool>();
    if (name == "false") return data && j.is_boolean() && !j.get<bool>();
    if (name == "lower" || name == "upper") {
      OC_ASSIGN_OR_RETURN(std::string s, ToStr(v));
      bool cased = PyUpper(s) != PyLower(s);
      return cased && (name == "lower" ? PyLower(s) == s : PyUpper(s) == s);
    }
    if (name == "odd" || name == "even" || name == "divisibleby") {
      if (!data || !IsIntLike(j)) return Err(line, "the test '" + name + "' needs an integer, got " + TypeName(v));
      long long x = AsInt(j), d = 2;
      if (name == "divisibleby") {
        OC_ASSIGN_OR_RETURN(Json a, arg(0));
        if (!IsIntLike(a) || AsInt(a) == 0) return Err(line, "divisibleby needs a non-zero integer");
        d = AsInt(a);
      }
      bool div = x % d == 0;
      return name == "odd" ? !div : div;
    }
    if (name == "sameas") {
      OC_ASSIGN_OR_RETURN(Json a, arg(0));
      return data && j.type() == a.type() && (j.is_null() || j.is_boolean()) && j == a;
    }
    if (name == "in") {
      if (args.empty()) return Err(line, "the test 'in' needs an argument");
      return Contains(args[0], v, line);
    }
    // comparisons
    OC_ASSIGN_OR_RETURN(Json a, arg(0));
    if (name == "eq" || name == "equalto" || name == "==") return !v.undef() && PyEqual(j, a);
    if (name == "ne" || name == "!=") return v.undef() || !PyEqual(j, a);
    if (v.undef()) return Err(line, v.name);
    Expected<bool> r = (name == "lt" || name == "<" || name == "lessthan" || name == "ge" || name == ">=") ? PyLess(j, a) : PyLess(a, j);
    if (!r.ok()) return Err(line, "the test '" + name + "' cannot compare " + TypeName(v) + " and " + TypeName(args[0]));
    if (name == "lt" || name == "<" || name == "lessthan" || name == "gt" || name == ">" || name == "greaterthan") return *r;
    return !*r;
  }

  Expected<Json> Dotted(const Json& item, const std::string& attr, int line) {
    Json cur = item;
    size_t b = 0;
    while (true) {
      size_t d = attr.find('.', b);
      std::string part = attr.substr(b, d == std::string::npos ? std::string::npos : d - b);
      OC_ASSIGN_OR_RETURN(Value v, Item(Value::Data(cur), Value::Data(part), line));
      if (v.undef()) return Json(Json::value_t::discarded);
      cur = v.j;
      if (d == std::string::npos) return cur;
      b = d + 1;
    }
  }

  Expected<Value> Filter(const std::string& name, const Value& in, const Args& a, int line) {
    auto arg = [&](size_t i, const char* kw) -> Json { const Value* v = a.Get(i, kw); return v ? v->json() : Json(); };
    auto need_data = [&]() -> Status {
      if (in.undef()) return Err(line, in.name);
      return Status::Ok();
    };
    const Json j = in.json();
    if (name == "safe") return in;
    if (name == "string") { OC_ASSIGN_OR_RETURN(std::string s, ToStr(in)); return Value::Data(s); }
    if (name == "trim" || name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
      OC_ASSIGN_OR_RETURN(std::string s, ToStr(in));
      if (name == "trim") return Value::Data(PyStrip(s, arg(0, "chars"), true, true));
      if (name == "upper") return Value::Data(PyUpper(s));
      if (name == "lower") return Value::Data(PyLower(s));
      if (name == "title") return Value::Data(JinjaTitle(s));
      return Value::Data(PyCapitalize(s));
    }
    if (name == "length" || name == "count") {
      if (in.undef()) return Value::Data(0);
      if (j.is_string()) return Value::Data((long long)ToU32(j.get_ref<const std::string&>()).size());
      if (j.is_array() || j.is_object()) return Value::Data((long long)j.size());
      return Err(line, "object of type '" + TypeName(in) + "' has no len()");
    }
    if (name == "default" || name == "d") {
      const Value* b = a.Get(1, "boolean");
      bool boolean = b && Truth(*b);
      if (in.undef() || (boolean && !Truth(in))) {
        const Value* d = a.Get(0, "default_value");
        return d ? *d : Value::Data("");
      }
      return in;
    }
    if (name == "replace") {
      OC_ASSIGN_OR_RETURN(std::string s, ToStr(in));
      Json from = arg(0, "old"), to = arg(1, "new"), c = arg(2, "count");
      if (!from.is_string() || !to.is_string()) return Err(line, "replace needs two strings");
      return Value::Data(PyReplace(s, from.get<std::string>(), to.get<std::string>(), c.is_number_integer() ? c.get<long long>() : -1));
    }
    if (name == "tojson") {
      OC_RETURN_IF_ERROR(need_data());
      Json ind = arg(0, "indent");
      if (const Value* ea = a.Kw("ensure_ascii"); ea && Truth(*ea)) return NotSup(line, "tojson(ensure_ascii=True)");
      if (a.Kw("separators")) return NotSup(line, "tojson(separators=...)");
      const Value* sk = a.Kw("sort_keys");
      if (!ind.is_null() && !ind.is_number_integer()) return NotSup(line, "a tojson indent that is not an integer");
      return Value::Data(PyJsonDumps(j, ind.is_null() ? -1 : (int)std::max<long long>(0, ind.get<long long>()), sk && Truth(*sk)));
    }
    if (name == "int" || name == "float") {
      Json def = arg(0, "default");
      if (def.is_null()) def = name == "int" ? Json(0) : Json(0.0);
      if (IsIntLike(j)) return Value::Data(name == "int" ? Json(AsInt(j)) : Json((double)AsInt(j)));
      if (j.is_number_float()) {
        double d = j.get<double>();
        if (name == "float") return Value::Data(d);
        if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return Value::Data(def);
        return Value::Data((long long)std::trunc(d));
      }
      if (j.is_string()) {
        std::string s = PyStrip(j.get<std::string>(), Json(), true, true);
        std::string t;
        for (char c : s) if (c != '_') t += c;
        char* end = nullptr;
        errno = 0;
        if (name == "int") {
          long long v = std::strtoll(t.c_str(), &end, 10);
          if (!t.empty() && *end == 0 && errno == 0) return Value::Data(v);
        }
        double d = std::strtod(t.c_str(), &end);
        if (!t.empty() && *end == 0 && t.find_first_of("xXpP") == std::string::npos) {
          if (name == "float") return Value::Data(d);
          if (std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::Data((long long)std::trunc(d));
        }
      }
      return Value::Data(def);
    }
    if (name == "abs") {
      if (!IsNum(j) || in.k != Value::K::kData) return Err(line, "abs needs a number, got " + TypeName(in));
      if (IsIntLike(j)) return Value::Data(std::llabs(AsInt(j)));
      return Value::Data(std::fabs(j.get<double>()));
    }
    // Filters over sequences.
    if (name == "join" || name == "first" || name == "last" || name == "list" || name == "items" ||
        name == "selectattr" || name == "rejectattr" || name == "map" || name == "reverse" || name == "unique" ||
        name == "sort" || name == "min" || name == "max" || name == "sum") {
      if (name == "items") {
        if (in.undef()) return Value::Data(Json::array());
        if (!j.is_object()) return Err(line, "the filter 'items' needs a dict, got " + TypeName(in));
        Json r = Json::array();
        for (auto it = j.begin(); it != j.end(); ++it) r.push_back(Json::array({it.key(), it.value()}));
        return Value::Data(std::move(r));
      }
      if (name == "reverse" && j.is_string()) {
        std::u32string u = ToU32(j.get_ref<const std::string&>());
        std::reverse(u.begin(), u.end());
        return Value::Data(FromU32(u));
      }
      if ((name == "first" || name == "last") && j.is_string()) {
        std::u32string u = ToU32(j.get_ref<const std::string&>());
        if (u.empty()) return Value::Undef("the string is empty");
        return Value::Data(FromU32(u.substr(name == "first" ? 0 : u.size() - 1, 1)));
      }
      OC_ASSIGN_OR_RETURN(Json items, Iterable(in, line));
      if (name == "list") return Value::Data(items);
      if (name == "first" || name == "last") {
        if (items.empty()) return Value::Undef("the sequence is empty");
        return Value::Data(name == "first" ? items.front() : items.back());
      }
      if (name == "reverse") { std::reverse(items.begin(), items.end()); return Value::Data(items); }
      if (name == "join") {
        Json sep = arg(0, "d");
        Json attr = arg(1, "attribute");
        std::string r, s = sep.is_null() ? "" : PyStr(sep);
        for (size_t i = 0; i < items.size(); ++i) {
          Json x = items[i];
          if (attr.is_string()) { OC_ASSIGN_OR_RETURN(x, Dotted(x, attr.get<std::string>(), line)); if (x.is_discarded()) x = ""; }
          r += (i ? s : "") + PyStr(x);
          if (r.size() > ChatTemplate::kMaxOutputBytes) return ResourceExhausted("chat template line ", line, ": join passes the output limit");
        }
        return Value::Data(r);
      }
      if (name == "selectattr" || name == "rejectattr") {
        Json attr = arg(0, "attribute");
        if (!attr.is_string()) return Err(line, name + " needs an attribute name");
        std::string test = a.pos.size() > 1 && a.pos[1].json().is_string() ? a.pos[1].j.get<std::string>() : "";
        if (!test.empty() && !IsKnownTest(test)) return NotSup(line, "the test '" + test + "'");
        std::vector<Value> targs(a.pos.size() > 2 ? a.pos.begin() + 2 : a.pos.end(), a.pos.end());
        Json r = Json::array();
        for (auto& x : items) {
          OC_RETURN_IF_ERROR(Step(line));
          OC_ASSIGN_OR_RETURN(Json v, Dotted(x, attr.get<std::string>(), line));
          Value val = v.is_discarded() ? Value::Undef("no attribute '" + attr.get<std::string>() + "'") : Value::Data(v);
          bool hit;
          if (test.empty()) hit = Truth(val);
          else { OC_ASSIGN_OR_RETURN(hit, Test(test, val, targs, line)); }
          if (hit == (name == "selectattr")) r.push_back(x);
        }
        return Value::Data(std::move(r));
      }
      if (name == "map") {
        Json attr = arg(99, "attribute");
        Json r = Json::array();
        if (attr.is_string()) {
          const Value* def = a.Kw("default");
          for (auto& x : items) {
            OC_ASSIGN_OR_RETURN(Json v, Dotted(x, attr.get<std::string>(), line));
            r.push_back(v.is_discarded() ? (def ? def->json() : Json()) : v);
          }
          return Value::Data(std::move(r));
        }
        if (a.pos.empty() || !a.pos[0].json().is_string()) return Err(line, "map needs a filter name or attribute=");
        std::string f = a.pos[0].j.get<std::string>();
        if (!IsKnownFilter(f) || f == "map") return NotSup(line, "the filter '" + f + "' in map");
        Args rest;
        rest.pos.assign(a.pos.begin() + 1, a.pos.end());
        rest.kw = a.kw;
        for (auto& x : items) { OC_ASSIGN_OR_RETURN(Value v, Filter(f, Value::Data(x), rest, line)); r.push_back(v.json()); }
        return Value::Data(std::move(r));
      }
      // unique, sort, min, max, sum: strings compare case-insensitively by default, as Jinja's do.
      const Value* cs = a.Kw("case_sensitive");
      bool case_sensitive = cs && Truth(*cs);
      Json attr = name == "sum" ? arg(99, "attribute") : arg(99, "attribute");
      auto key = [&](const Json& x) -> Expected<Json> {
        Json k = x;
        if (attr.is_string()) { OC_ASSIGN_OR_RETURN(k, Dotted(x, attr.get<std::string>(), line)); if (k.is_discarded()) return Err(line, "an item has no attribute '" + attr.get<std::string>() + "'"); }
        if (!case_sensitive && k.is_string()) k = PyLower(k.get<std::string>());
        return k;
      };
      if (name == "sum") {
        Json start = arg(99, "start");
        Json total = start.is_null() ? Json(0) : start;
        for (auto& x : items) {
          Json k = x;
          if (attr.is_string()) { OC_ASSIGN_OR_RETURN(k, Dotted(x, attr.get<std::string>(), line)); }
          if (!IsNum(k) || !IsNum(total)) return Err(line, "sum needs numbers");
          if (IsIntLike(k) && IsIntLike(total)) total = AsInt(total) + AsInt(k);
          else total = AsNum(total) + AsNum(k);
        }
        return Value::Data(total);
      }
      std::vector<std::pair<Json, Json>> keyed;
      for (auto& x : items) { OC_ASSIGN_OR_RETURN(Json k, key(x)); keyed.emplace_back(k, x); }
      if (name == "unique") {
        Json r = Json::array();
        std::vector<Json> seen;
        for (auto& [k, x] : keyed) {
          bool dup = false;
          for (auto& s : seen) if (PyEqual(s, k)) { dup = true; break; }
          if (!dup) { seen.push_back(k); r.push_back(x); }
        }
        return Value::Data(std::move(r));
      }
      Status bad;
      auto less = [&](const std::pair<Json, Json>& p, const std::pair<Json, Json>& q) {
        Expected<bool> r = PyLess(p.first, q.first);
        if (!r.ok()) { bad = r.status(); return false; }
        return *r;
      };
      if (name == "sort") {
        bool rev = false;
        if (const Value* rv = a.Get(0, "reverse")) rev = Truth(*rv);
        if (rev) std::stable_sort(keyed.begin(), keyed.end(), [&](auto& p, auto& q) { return less(q, p); });
        else std::stable_sort(keyed.begin(), keyed.end(), less);
        if (!bad.ok()) return Err(line, "sort: " + bad.message());
        Json r = Json::array();
        for (auto& kx : keyed) r.push_back(kx.second);
        return Value::Data(std::move(r));
      }
      if (keyed.empty()) return Value::Undef("the sequence is empty");
      size_t best = 0;
      for (size_t i = 1; i < keyed.size(); ++i)
        if (name == "min" ? less(keyed[i], keyed[best]) : less(keyed[best], keyed[i])) best = i;
      if (!bad.ok()) return Err(line, name + ": " + bad.message());
      return Value::Data(keyed[best].second);
    }
    if (name == "indent") {
      OC_ASSIGN_OR_RETURN(std::string s, ToStr(in));
      Json w = arg(0, "width");
      std::string ind = w.is_string() ? w.get<std::string>() : std::string(w.is_number_integer() ? std::max<long long>(0, w.get<long long>()) : 4, ' ');
      const Value* f = a.Get(1, "first");
      const Value* b = a.Get(2, "blank");
      bool first = f && Truth(*f), blank = b && Truth(*b);
      std::vector<std::string> lines = PySplitLines(s + "\n");
      std::string rv;
      if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
      } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : ind) + lines[i];
      }
      if (first) rv = ind + rv;
      return Value::Data(rv);
    }
    return NotSup(line, "the filter '" + name + "'");
  }

  std::vector<Frame> frames_;
  size_t base_ = 1;  // frames below base_ (except frame 0) are hidden: a macro call's caller
  std::string out_;
  Flow flow_ = Flow::kNormal;
  long long steps_ = 0;
  int macro_depth_ = 0;
  int recursion_ = 0;
};

}  // namespace

Expected<std::string> RenderTemplate(const Body& body, const Json& context) {
  Evaluator ev(context);
  try {
    OC_RETURN_IF_ERROR(ev.Exec(body));
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("chat template: ", e.what());
  }
  return std::move(ev.out());
}

}  // namespace oc::llm::chat
