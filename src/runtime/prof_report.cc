#include "runtime/prof_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace oc::trace {

namespace {

std::string Clean(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> f;
  size_t b = 0;
  for (;;) {
    size_t e = line.find('\t', b);
    f.push_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return f;
    b = e + 1;
  }
}

bool ParseI64(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end) return false;
  *v = x;
  return true;
}

// CSV field: quoted when it holds a comma, quote or newline.
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

std::string Us(int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e3);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string JsonStr(const std::string& s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': q += "\\\""; break;
      case '\\': q += "\\\\"; break;
      case '\n': q += "\\n"; break;
      case '\t': q += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          q += buf;
        } else {
          q += static_cast<char>(c);
        }
    }
  }
  return q + '"';
}

std::string Html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return IoError("cannot open '", path.string(), "' for writing");
  f << text;
  f.close();
  if (!f) return IoError("cannot write '", path.string(), "'");
  return Status::Ok();
}

struct Stat {
  int64_t count = 0, total = 0, min = INT64_MAX, max = 0;
  uint64_t bytes = 0;
  void Add(int64_t ns) {
    ++count;
    total += ns;
    min = std::min(min, ns);
    max = std::max(max, ns);
  }
};

std::string ModelName(const OpRow& r) { return r.graph ? r.graph->name : ""; }

}  // namespace

Status WriteRaw(const std::string& path, const ProfData& d) {
  std::ostringstream o;
  o << "OCPROF\t1\n";
  o << "process\t" << d.pid << '\t' << Clean(d.process) << '\n';
  o << "dropped\t" << d.dropped << '\n';
  for (const ThreadInfo& t : d.threads) o << "thread\t" << t.pid << '\t' << t.os_tid << '\t' << t.stream << '\n';
  for (const GraphInfo& g : d.graphs) {
    o << "graph\t" << Clean(g.name) << '\t' << g.nodes.size() << '\n';
    for (const NodeInfo& n : g.nodes)
      o << "node\t" << Clean(n.name) << '\t' << Clean(n.op_type) << '\t' << n.input_shapes << '\t' << n.input_dtypes
        << '\t' << n.input_formats << '\t' << n.output_shapes << '\t' << n.output_dtypes << '\t'
        << n.output_formats << '\t' << n.flops << '\t' << n.block_dim << '\n';
  }
  for (const Event& e : d.events)
    o << "event\t" << static_cast<int>(e.kind) << '\t' << e.start_ns << '\t' << e.end_ns << '\t' << e.thread << '\t'
      << e.stream << '\t' << e.model << '\t' << e.graph << '\t' << e.node << '\t' << e.bytes << '\t'
      << Clean(e.name) << '\n';
  return WriteFile(path, o.str());
}

Expected<ProfData> ReadRaw(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot open profiling data '", path, "'");
  ProfData d;
  std::string line;
  size_t lineno = 0;
  auto bad = [&](const std::string& why) {
    return InvalidFile("profiling data '", path, "' line ", lineno, ": ", why);
  };
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<std::string> x = SplitTabs(line);
    const std::string& tag = x[0];
    if (lineno == 1) {
      if (tag != "OCPROF" || x.size() < 2 || x[1] != "1") return bad("not an OpenCANN profiling file (version 1)");
      continue;
    }
    if (tag == "process" && x.size() >= 3) {
      if (!ParseI64(x[1], &d.pid)) return bad("bad pid");
      d.process = x[2];
    } else if (tag == "dropped" && x.size() >= 2) {
      int64_t v;
      if (!ParseI64(x[1], &v)) return bad("bad count");
      d.dropped = static_cast<uint64_t>(v);
    } else if (tag == "thread" && x.size() >= 4) {
      ThreadInfo t;
      int64_t s;
      if (!ParseI64(x[1], &t.pid) || !ParseI64(x[2], &t.os_tid) || !ParseI64(x[3], &s)) return bad("bad thread");
      t.stream = static_cast<uint32_t>(s);
      d.threads.push_back(t);
    } else if (tag == "graph" && x.size() >= 3) {
      GraphInfo g;
      g.name = x[1];
      g.id = static_cast<uint32_t>(d.graphs.size() + 1);
      d.graphs.push_back(std::move(g));
    } else if (tag == "node" && x.size() >= 10) {
      if (d.graphs.empty()) return bad("node before any graph");
      NodeInfo n{x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], 0, 0};
      if (!ParseI64(x[9], &n.flops)) return bad("bad flops");
      int64_t blocks = 0;
      if (x.size() >= 11 && (!ParseI64(x[10], &blocks) || blocks < 0 || blocks > 65535)) return bad("bad block dim");
      n.block_dim = static_cast<uint32_t>(blocks);
      d.graphs.back().nodes.push_back(std::move(n));
    } else if (tag == "event" && x.size() >= 11) {
      Event e;
      int64_t v[9];
      for (int i = 0; i < 9; ++i)
        if (!ParseI64(x[1 + i], &v[i])) return bad("bad event field");
      if (v[0] < 0 || v[0] > static_cast<int>(Kind::kModelRun)) return bad("unknown event kind");
      e.kind = static_cast<Kind>(v[0]);
      e.start_ns = v[1];
      e.end_ns = v[2];
      e.thread = static_cast<uint32_t>(v[3]);
      e.stream = static_cast<uint32_t>(v[4]);
      e.model = static_cast<uint32_t>(v[5]);
      e.graph = static_cast<int32_t>(v[6]);
      e.node = static_cast<uint32_t>(v[7]);
      e.bytes = static_cast<uint64_t>(v[8]);
      e.name = x[10];
      if (e.thread >= d.threads.size()) return bad("event of an unknown thread");
      if (e.kind == Kind::kNode &&
          (e.graph < 0 || static_cast<size_t>(e.graph) >= d.graphs.size() ||
           e.node >= d.graphs[static_cast<size_t>(e.graph)].nodes.size()))
        return bad("node event of an unknown graph node");
      d.events.push_back(std::move(e));
    } else {
      return bad("unknown or short record '" + tag + "'");
    }
  }
  if (lineno == 0) return bad("empty file");
  return d;
}

ProfData Merge(std::vector<ProfData> parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  ProfData out;
  for (ProfData& p : parts) {
    if (out.process.empty()) {
      out.process = p.process;
      out.pid = p.pid;
    }
    const uint32_t thread_base = static_cast<uint32_t>(out.threads.size());
    const int32_t graph_base = static_cast<int32_t>(out.graphs.size());
    out.threads.insert(out.threads.end(), p.threads.begin(), p.threads.end());
    for (GraphInfo& g : p.graphs) out.graphs.push_back(std::move(g));
    for (Event& e : p.events) {
      e.thread += thread_base;
      if (e.graph >= 0) e.graph += graph_base;
      out.events.push_back(std::move(e));
    }
    out.dropped += p.dropped;
  }
  return out;
}

std::string ProfTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

std::vector<OpRow> OpRows(const ProfData& d) {
  // Events are in emission order per thread: a run's node records come
  // before its kModelRun record (emitted when the run ends).
  std::vector<OpRow> rows;
  std::vector<std::vector<size_t>> pending(d.threads.size());  // row indices per thread
  std::map<std::pair<int64_t, uint32_t>, int64_t> runs;          // (pid, model) -> runs seen
  for (const Event& e : d.events) {
    if (e.thread >= d.threads.size()) continue;
    if (e.kind == Kind::kNode) {
      if (e.graph < 0 || static_cast<size_t>(e.graph) >= d.graphs.size()) continue;
      const GraphInfo& g = d.graphs[static_cast<size_t>(e.graph)];
      if (e.node >= g.nodes.size()) continue;
      pending[e.thread].push_back(rows.size());
      rows.push_back({&e, &g, &g.nodes[e.node], -1, 0});
    } else if (e.kind == Kind::kModelRun) {
      auto& p = pending[e.thread];
      const int64_t run = ++runs[{d.threads[e.thread].pid, e.model}];
      int64_t prev_end = e.start_ns;
      for (size_t idx : p) {
        OpRow& r = rows[idx];
        if (r.ev->start_ns < e.start_ns) continue;  // before this run (a run without a record)
        r.run = run;
        r.wait_ns = std::max<int64_t>(0, r.ev->start_ns - prev_end);
        prev_end = r.ev->end_ns;
      }
      p.clear();
    }
  }
  // Nodes outside any model run (executables driven directly): wait since
  // the previous node on the same thread.
  for (auto& p : pending) {
    for (size_t i = 1; i < p.size(); ++i)
      rows[p[i]].wait_ns = std::max<int64_t>(0, rows[p[i]].ev->start_ns - rows[p[i - 1]].ev->end_ns);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpRow& a, const OpRow& b) { return a.ev->start_ns < b.ev->start_ns; });
  return rows;
}

namespace {

std::string OpSummary(const ProfData& d, const std::vector<OpRow>& rows) {
  std::ostringstream o;
  o << "Model ID,Model Name,Run,Op Name,OP Type,Stream ID,Thread ID,Task Start Time(us),Task Duration(us),"
       "Task Wait Time(us),Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
       "Output Formats,FLOPs,GFLOP/s,Block Dim\n";
  for (const OpRow& r : rows) {
    const Event& e = *r.ev;
    const int64_t dur = e.end_ns - e.start_ns;
    const double gflops = dur > 0 ? static_cast<double>(r.node->flops) / static_cast<double>(dur) : 0.0;
    o << e.model << ',' << Csv(ModelName(r)) << ',' << (r.run >= 0 ? std::to_string(r.run) : "") << ','
      << Csv(r.node->name) << ',' << Csv(r.node->op_type) << ',' << e.stream << ','
      << d.threads[e.thread].os_tid << ',' << Us(e.start_ns) << ',' << Us(dur) << ',' << Us(r.wait_ns) << ','
      << Csv(r.node->input_shapes) << ',' << Csv(r.node->input_dtypes) << ',' << Csv(r.node->input_formats) << ','
      << Csv(r.node->output_shapes) << ',' << Csv(r.node->output_dtypes) << ','
      << Csv(r.node->output_formats) << ',' << r.node->flops << ',' << Fixed(gflops, 3) << ',' << r.node->block_dim
      << '\n';
  }
  return o.str();
}

std::vector<std::pair<std::string, Stat>> ByType(const std::vector<OpRow>& rows, int64_t* total) {
  std::map<std::string, Stat> m;
  *total = 0;
  for (const OpRow& r : rows) {
    const int64_t dur = r.ev->end_ns - r.ev->start_ns;
    m[r.node->op_type].Add(dur);
    *total += dur;
  }
  std::vector<std::pair<std::string, Stat>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.total > b.second.total; });
  return v;
}

std::string OpStatistic(const std::vector<OpRow>& rows) {
  int64_t total = 0;
  auto types = ByType(rows, &total);
  std::ostringstream o;
  o << "OP Type,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%)\n";
  for (auto& [type, s] : types)
    o << Csv(type) << ',' << s.count << ',' << Us(s.total) << ',' << Us(s.total / std::max<int64_t>(s.count, 1))
      << ',' << Us(s.min) << ',' << Us(s.max) << ','
      << Fixed(total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0, 2) << '\n';
  return o.str();
}

std::string ApiStatistic(const ProfData& d) {
  // Level: AscendCL (API calls), Memcpy (the copies themselves, by kind) and
  // Model (loads and executions).
  std::map<std::pair<std::string, std::string>, Stat> m;
  std::map<std::string, int64_t> level_total;
  for (const Event& e : d.events) {
    std::string level, name;
    switch (e.kind) {
      case Kind::kApi: level = "AscendCL"; name = e.name; break;
      case Kind::kMemcpy: level = "Memcpy"; name = e.name; break;
      case Kind::kModelLoad: level = "Model"; name = "model load"; break;
      case Kind::kModelRun: level = "Model"; name = "model execution"; break;
      default: continue;
    }
    Stat& s = m[{level, name}];
    s.Add(e.end_ns - e.start_ns);
    s.bytes += e.bytes;
    level_total[level] += e.end_ns - e.start_ns;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Stat>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) {
    return a.first.first != b.first.first ? a.first.first < b.first.first : a.second.total > b.second.total;
  });
  std::ostringstream o;
  o << "Level,API Name,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%),Bytes\n";
  for (auto& [key, s] : v) {
    const int64_t lt = level_total[key.first];
    o << key.first << ',' << Csv(key.second) << ',' << s.count << ',' << Us(s.total) << ','
      << Us(s.total / std::max<int64_t>(s.count, 1)) << ',' << Us(s.min) << ',' << Us(s.max) << ','
      << Fixed(lt ? 100.0 * static_cast<double>(s.total) / static_cast<double>(lt) : 0.0, 2) << ',' << s.bytes
      << '\n';
  }
  return o.str();
}

std::string Timeline(const ProfData& d, const std::vector<OpRow>& rows) {
  int64_t t0 = INT64_MAX;
  for (const Event& e : d.events) t0 = std::min(t0, e.start_ns);
  if (t0 == INT64_MAX) t0 = 0;
  auto ts = [&](int64_t ns) { return Fixed(static_cast<double>(ns - t0) / 1e3, 3); };
  std::ostringstream o;
  o << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"OpenCANN msprof\",\"dropped_records\":"
    << d.dropped << "},\n\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) o << ",\n";
    first = false;
  };
  std::map<int64_t, std::string> processes;
  for (const ThreadInfo& t : d.threads) processes.emplace(t.pid, d.process);
  for (auto& [pid, name] : processes) {
    sep();
    o << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"tid\":0,\"args\":{\"name\":"
      << JsonStr(StrCat(name, " (pid ", pid, ")")) << "}}";
  }
  for (const ThreadInfo& t : d.threads) {
    sep();
    o << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << t.pid << ",\"tid\":" << t.os_tid
      << ",\"args\":{\"name\":"
      << JsonStr(t.stream ? StrCat("stream ", t.stream, " (tid ", t.os_tid, ")") : StrCat("host thread ", t.os_tid))
      << "}}";
  }
  for (const OpRow& r : rows) {
    const Event& e = *r.ev;
    const ThreadInfo& t = d.threads[e.thread];
    sep();
    o << "{\"ph\":\"X\",\"name\":" << JsonStr(r.node->name) << ",\"cat\":" << JsonStr(r.node->op_type)
      << ",\"pid\":" << t.pid << ",\"tid\":" << t.os_tid << ",\"ts\":" << ts(e.start_ns)
      << ",\"dur\":" << Fixed(static_cast<double>(e.end_ns - e.start_ns) / 1e3, 3) << ",\"args\":{\"op_type\":"
      << JsonStr(r.node->op_type) << ",\"model_id\":" << e.model << ",\"model\":" << JsonStr(ModelName(r))
      << ",\"run\":" << r.run << ",\"stream\":" << e.stream << ",\"input_shapes\":" << JsonStr(r.node->input_shapes)
      << ",\"output_shapes\":" << JsonStr(r.node->output_shapes) << ",\"input_dtypes\":"
      << JsonStr(r.node->input_dtypes) << ",\"output_dtypes\":" << JsonStr(r.node->output_dtypes)
      << ",\"flops\":" << r.node->flops << ",\"block_dim\":" << r.node->block_dim << "}}";
  }
  for (const Event& e : d.events) {
    if (e.kind == Kind::kNode) continue;
    const ThreadInfo& t = d.threads[e.thread];
    std::string name, cat;
    switch (e.kind) {
      case Kind::kApi: name = e.name; cat = "AscendCL"; break;
      case Kind::kMemcpy: name = "memcpy " + e.name; cat = "Memcpy"; break;
      case Kind::kModelLoad: name = StrCat("load model ", e.model); cat = "Model"; break;
      case Kind::kModelRun: name = StrCat("execute model ", e.model); cat = "Model"; break;
      default: continue;
    }
    sep();
    o << "{\"ph\":\"X\",\"name\":" << JsonStr(name) << ",\"cat\":\"" << cat << "\",\"pid\":" << t.pid
      << ",\"tid\":" << t.os_tid << ",\"ts\":" << ts(e.start_ns)
      << ",\"dur\":" << Fixed(static_cast<double>(e.end_ns - e.start_ns) / 1e3, 3) << ",\"args\":{\"model_id\":"
      << e.model << ",\"stream\":" << e.stream << ",\"bytes\":" << e.bytes << "}}";
  }
  o << "\n]}\n";
  return o.str();
}

std::string Report(const ProfData& d, const std::vector<OpRow>& rows, const std::string& ts) {
  int64_t total = 0;
  auto types = ByType(rows, &total);
  // Slowest ops: per node (model + op name), mean over its executions.
  struct NodeStat {
    const OpRow* row;
    Stat s;
  };
  std::map<std::pair<const GraphInfo*, const NodeInfo*>, NodeStat> per_node;
  int64_t runs = 0;
  for (const OpRow& r : rows) {
    auto [it, added] = per_node.try_emplace({r.graph, r.node}, NodeStat{&r, {}});
    it->second.s.Add(r.ev->end_ns - r.ev->start_ns);
    runs = std::max(runs, r.run);
  }
  std::vector<const NodeStat*> slow;
  for (auto& [k, v] : per_node) slow.push_back(&v);
  std::stable_sort(slow.begin(), slow.end(), [](const NodeStat* a, const NodeStat* b) {
    return a->s.total / a->s.count > b->s.total / b->s.count;
  });
  if (slow.size() > 20) slow.resize(20);

  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>OpenCANN profile " << Html(ts)
    << "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
       "table{border-collapse:collapse;margin-top:8px}td,th{border:1px solid #bbb;padding:3px 8px;"
       "font-size:13px}th{background:#e8eef7}td.n{text-align:right}h1{font-size:22px}h2{font-size:18px;"
       "margin-top:28px}</style></head><body>\n";
  o << "<h1>OpenCANN profile</h1>\n<p>Program <b>" << Html(d.process) << "</b>, " << rows.size()
    << " node executions in " << runs << " model run(s) (most runs of one model), " << Us(total)
    << " us of node time in total";
  if (d.dropped) o << ", <b>" << d.dropped << " records dropped</b> (rings full)";
  o << ".</p>\n";
  // Horizontal bar chart, one bar per op type (at most 25), inline SVG.
  const size_t nbars = std::min<size_t>(types.size(), 25);
  const int bar_h = 22, label_w = 170, chart_w = 520, top = 10;
  const int height = top * 2 + static_cast<int>(nbars) * bar_h;
  const int64_t max_total = nbars ? types[0].second.total : 1;
  o << "<h2>Time per op type</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
    << label_w + chart_w + 200 << "\" height=\"" << height << "\" role=\"img\">\n";
  for (size_t i = 0; i < nbars; ++i) {
    const auto& [type, s] = types[i];
    const int y = top + static_cast<int>(i) * bar_h;
    const double w = max_total > 0 ? chart_w * static_cast<double>(s.total) / static_cast<double>(max_total) : 0;
    const double share = total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0;
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\" font-size=\"13\">"
      << Html(type) << "</text><rect x=\"" << label_w << "\" y=\"" << y + 2 << "\" width=\""
      << Fixed(std::max(w, 1.0), 1) << "\" height=\"" << bar_h - 5 << "\" fill=\"#3b6fb6\"><title>" << Html(type)
      << ": " << Us(s.total) << " us</title></rect><text x=\"" << label_w + static_cast<int>(w) + 6 << "\" y=\""
      << y + 15 << "\" font-size=\"12\">" << Fixed(static_cast<double>(s.total) / 1e6, 3) << " ms ("
      << Fixed(share, 1) << "%)</text>\n";
  }
  o << "</svg>\n";
  o << "<h2>The " << slow.size() << " slowest ops (mean over their executions)</h2>\n<table><tr><th>#</th>"
       "<th>Model</th><th>Op name</th><th>Op type</th><th>Executions</th><th>Mean (us)</th><th>Max (us)</th>"
       "<th>Output shapes</th><th>FLOPs</th><th>GFLOP/s</th></tr>\n";
  for (size_t i = 0; i < slow.size(); ++i) {
    const NodeStat& n = *slow[i];
    const int64_t mean = n.s.total / n.s.count;
    o << "<tr><td class=n>" << i + 1 << "</td><td>" << Html(ModelName(*n.row)) << "</td><td>"
      << Html(n.row->node->name) << "</td><td>" << Html(n.row->node->op_type) << "</td><td class=n>" << n.s.count
      << "</td><td class=n>" << Us(mean) << "</td><td class=n>" << Us(n.s.max) << "</td><td>"
      << Html(n.row->node->output_shapes) << "</td><td class=n>" << n.row->node->flops << "</td><td class=n>"
      << Fixed(mean > 0 ? static_cast<double>(n.row->node->flops) / static_cast<double>(mean) : 0.0, 2)
      << "</td></tr>\n";
  }
  o << "</table>\n<h2>Per op type</h2>\n<table><tr><th>Op type</th><th>Count</th><th>Total (us)</th>"
       "<th>Mean (us)</th><th>Share</th></tr>\n";
  for (auto& [type, s] : types)
    o << "<tr><td>" << Html(type) << "</td><td class=n>" << s.count << "</td><td class=n>" << Us(s.total)
      << "</td><td class=n>" << Us(s.total / std::max<int64_t>(s.count, 1)) << "</td><td class=n>"
      << Fixed(total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0, 1)
      << "%</td></tr>\n";
  o << "</table>\n<p>Files: op_summary_" << ts << ".csv, op_statistic_" << ts << ".csv, api_statistic_" << ts
    << ".csv, msprof_" << ts << ".json (open in Perfetto or chrome://tracing).</p>\n</body></html>\n";
  return o.str();
}

}  // namespace

Status WriteReports(const ProfData& d, const std::string& dir, const std::string& ts) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create the profiling output directory '", dir, "': ", ec.message());
  const std::filesystem::path p(dir);
  const std::vector<OpRow> rows = OpRows(d);
  OC_RETURN_IF_ERROR(WriteFile(p / ("op_summary_" + ts + ".csv"), OpSummary(d, rows)));
  OC_RETURN_IF_ERROR(WriteFile(p / ("op_statistic_" + ts + ".csv"), OpStatistic(rows)));
  OC_RETURN_IF_ERROR(WriteFile(p / ("api_statistic_" + ts + ".csv"), ApiStatistic(d)));
  OC_RETURN_IF_ERROR(WriteFile(p / ("msprof_" + ts + ".json"), Timeline(d, rows)));
  OC_RETURN_IF_ERROR(WriteFile(p / "report.html", Report(d, rows, ts)));
  return Status::Ok();
}

}  // namespace oc::trace
