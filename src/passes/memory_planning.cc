// memory-planning: every activation (a node output that is neither a graph
// output nor a constant) gets an offset in one arena shared by all of them.
// A buffer is live from the step that writes it to the last step that reads it,
// inclusive, so a node's outputs never alias its inputs; an output nobody reads
// is live only during its own step. Graph inputs and outputs are caller memory.
//
// Two greedy strategies are run and the smaller arena wins (both are cheap):
//  - in order: walk the schedule, best-fit into freed (coalesced) holes;
//  - largest first: place buffers by decreasing size, each at the lowest-waste
//    gap among the already-placed buffers whose lifetimes overlap it.
// Largest-first usually wins on branchy graphs (ResNet's residual edges keep
// big buffers alive across a block); in-order can win on plain chains.
//
// Shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout's
// data output) write their output in the input's bytes when the input dies at
// that node: their kernels skip the copy when output == input, so this saves
// both the buffer and the memcpy.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "passes/passes.h"

namespace oc {
namespace {

constexpr int64_t kAlign = 64;

struct Buffer {
  Value* value;
  int64_t size;  // rounded up to kAlign
  int first;     // step that writes it
  int last;      // last step that reads it
  int64_t offset = -1;
};

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool Overlap(const Buffer& a, const Buffer& b) { return a.first <= b.last && b.first <= a.last; }

bool IsViewOp(const Node& node) {
  if (!node.domain.empty()) return false;
  const std::string& t = node.op_type;
  return t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == "Identity" ||
         t == "Dropout";
}

// Buffers in order of first write. Values that alias an earlier buffer (view
// outputs) are listed in `aliases` with that buffer's index.
struct BufferSet {
  std::vector<Buffer> buffers;
  std::vector<std::pair<Value*, size_t>> aliases;
};

Expected<BufferSet> CollectBuffers(const Graph& graph) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const Value*, int> last_read;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs)
      if (in) last_read[in] = static_cast<int>(i);
  BufferSet set;
  std::unordered_map<const Value*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    const int step = static_cast<int>(i);
    for (const Value* in : node.inputs) {
      if (!in) continue;
      auto it = index.find(in);
      if (it != index.end()) set.buffers[it->second].last = step;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      Value* out = node.outputs[k];
      if (!out || out->constant || graph.IsGraphOutput(out)) continue;
      if (out->ByteSize() < 0)
        return FailedPrecondition("cannot plan memory: value '", out->name, "' produced by ",
                                  node.Describe(), " has non-static shape ", out->ShapeString());
      const Value* in = node.input(0);
      auto src = in ? index.find(in) : index.end();
      if (k == 0 && IsViewOp(node) && src != index.end() && last_read[in] == step &&
          in->ByteSize() == out->ByteSize()) {
        index[out] = src->second;
        set.aliases.emplace_back(out, src->second);
        continue;
      }
      index[out] = set.buffers.size();
      set.buffers.push_back({out, AlignUp(out->ByteSize()), step, step});
    }
  }
  return set;
}

// Free holes keyed by offset, coalesced on release.
class FreeList {
 public:
  int64_t Allocate(int64_t size) {
    if (size == 0) return 0;
    auto best = holes_.end();
    for (auto it = holes_.begin(); it != holes_.end(); ++it)
      if (it->second >= size && (best == holes_.end() || it->second < best->second)) best = it;
    if (best != holes_.end()) {
      int64_t off = best->first, rest = best->second - size;
      holes_.erase(best);
      if (rest) holes_[off + size] = rest;
      return off;
    }
    // Grow the arena, reusing a hole that ends at the top.
    int64_t off = top_;
    if (!holes_.empty()) {
      auto last = std::prev(holes_.end());
      if (last->first + last->second == top_) {
        off = last->first;
        holes_.erase(last);
      }
    }
    top_ = off + size;
    return off;
  }
  void Release(int64_t off, int64_t size) {
    if (size == 0) return;
    auto next = holes_.lower_bound(off);
    if (next != holes_.end() && off + size == next->first) {
      size += next->second;
      next = holes_.erase(next);
    }
    if (next != holes_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += size;
        return;
      }
    }
    holes_[off] = size;
  }
  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> holes_;
  int64_t top_ = 0;
};

int64_t PlanInOrder(std::vector<Buffer>& buffers, size_t num_steps) {
  std::vector<std::vector<size_t>> born(num_steps), dies(num_steps);
  for (size_t b = 0; b < buffers.size(); ++b) {
    born[buffers[b].first].push_back(b);
    dies[buffers[b].last].push_back(b);
  }
  FreeList arena;
  for (size_t step = 0; step < num_steps; ++step) {
    for (size_t b : born[step]) buffers[b].offset = arena.Allocate(buffers[b].size);
    for (size_t b : dies[step]) arena.Release(buffers[b].offset, buffers[b].size);
  }
  return arena.top();
}

int64_t PlanLargestFirst(std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size) return buffers[a].size > buffers[b].size;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;  // kept sorted by offset
  int64_t arena = 0;
  for (size_t idx : order) {
    Buffer& buf = buffers[idx];
    if (buf.size == 0) {
      buf.offset = 0;
      continue;
    }
    int64_t prev_end = 0, best = -1, best_waste = std::numeric_limits<int64_t>::max();
    for (size_t p : placed) {
      const Buffer& other = buffers[p];
      if (!Overlap(buf, other)) continue;
      int64_t gap = other.offset - prev_end;
      if (gap >= buf.size && gap - buf.size < best_waste) {
        best = prev_end;
        best_waste = gap - buf.size;
      }
      prev_end = std::max(prev_end, other.offset + other.size);
    }
    buf.offset = best >= 0 ? best : prev_end;
    arena = std::max(arena, buf.offset + buf.size);
    auto pos = std::upper_bound(placed.begin(), placed.end(), idx, [&](size_t a, size_t b) {
      return buffers[a].offset < buffers[b].offset;
    });
    placed.insert(pos, idx);
  }
  return arena;
}

}  // namespace

Expected<MemoryPlanStats> PlanMemory(Graph& graph) {
  for (auto& v : graph.values()) v->arena_offset = -1;
  OC_ASSIGN_OR_RETURN(BufferSet set, CollectBuffers(graph));
  std::vector<Buffer>& in_order = set.buffers;
  std::vector<Buffer> largest = in_order;
  MemoryPlanStats stats;
  for (const Buffer& b : in_order) stats.no_reuse_bytes += b.size;
  stats.in_order_bytes = PlanInOrder(in_order, graph.nodes().size());
  stats.largest_first_bytes = PlanLargestFirst(largest);
  const bool use_largest = stats.largest_first_bytes < stats.in_order_bytes;
  stats.chosen = use_largest ? "largest-first best-fit" : "in-order best-fit";
  const std::vector<Buffer>& chosen = use_largest ? largest : in_order;
  for (const Buffer& b : chosen) b.value->arena_offset = b.offset;
  for (auto& [value, buffer] : set.aliases) {
    value->arena_offset = chosen[buffer].offset;
    stats.no_reuse_bytes += AlignUp(value->ByteSize());
  }
  stats.aliased = static_cast<int64_t>(set.aliases.size());
  graph.arena_size_no_reuse = stats.no_reuse_bytes;
  graph.arena_size = std::min(stats.in_order_bytes, stats.largest_first_bytes);
  return stats;
}

Status RunMemoryPlanning(Graph& graph, const CompileOptions& options) {
  if (options.allow_dynamic && IsDynamicGraph(graph)) {
    // Sizes are known per input-shape signature only: planned at run time.
    for (auto& v : graph.values()) v->arena_offset = -1;
    graph.arena_size = 0;
    graph.arena_size_no_reuse = -1;
    if (options.log) options.log("memory plan: deferred to run time (the graph has unknown dims)");
    return Status::Ok();
  }
  OC_ASSIGN_OR_RETURN(MemoryPlanStats stats, PlanMemory(graph));
  if (options.log)
    options.log(StrCat("memory plan: arena ", graph.arena_size, " bytes (", stats.chosen,
                       "; in-order ", stats.in_order_bytes, ", largest-first ",
                       stats.largest_first_bytes, ", without reuse ", stats.no_reuse_bytes, "; ",
                       stats.aliased, " shape-only outputs alias their input)"));
  return Status::Ok();
}

}  // namespace oc
