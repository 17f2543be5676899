// include/pto_abi/pto_graph.h — the reference API's graph record/replay: rt_submit_graph,
// GraphTaskArgs, GRAPH_KEY (included by pto_orchestration_api.h; not a header of its own).
//
// rt_submit_graph(function, boundary, construction parameters...) runs `function(boundary, ...)`
// the first time an identity is seen in a run and records what it submitted: each task's
// kernels, launch, predicate and, for each argument, where it came from (a boundary tensor or a
// view of one, an output of an earlier task of the graph, a create-info output; a boundary
// scalar forwarded by reference, args.scalar(i) or copy_scalars_from, or a fixed value). A
// later call with the same identity and a boundary of the same signature does not run the
// function: it submits the recorded tasks again, bound to this call's tensors and scalars.
// The identity is the function (or an explicit GRAPH_KEY) plus the construction parameters'
// values.
//
// As in the reference: a scalar the function computed (args.scalar(0) + 1, or a copy in a local
// variable) is a fixed value of the recording, and the replay keeps it; the boundary's shapes,
// strides, dtypes, directions, buffer sizes and aliasing must match the recording (a call that
// differs runs the function, unrecorded, with a warning in the device log); at most 16
// recordings per run, later identities run their functions.
//
// Unlike the reference, a replay is not one GRAPH task: its tasks are ordinary tasks of the
// window, dependencies inferred as for any submit, so both runtimes replay. And what the
// reference refuses while recording (an allocation or a scope inside the graph, a tensor or a
// dependency from outside the boundary, reading tensor data) leaves the identity unrecorded:
// every call runs the function, which is always right.
#ifndef PTO_ABI_PTO_GRAPH_H
#define PTO_ABI_PTO_GRAPH_H

#include <string.h>

#include <tuple>
#include <type_traits>
#include <vector>

namespace pto_abi {

constexpr uint64_t kGraphFnvBasis = 0xcbf29ce484222325ULL;
constexpr uint64_t kGraphFnvPrime = 0x100000001b3ULL;
constexpr uint64_t graph_fnv(const char *s, uint64_t h = kGraphFnvBasis) {
  return *s == '\0' ? h : graph_fnv(s + 1, (h ^ static_cast<uint8_t>(*s)) * kGraphFnvPrime);
}
inline uint64_t graph_mix(uint64_t h, uint64_t word) {
  return (h ^ word) * kGraphFnvPrime;
}

// Where one tensor of a recorded task comes from.
enum class GraphSource : uint8_t { kBoundary, kNodeOutput, kCreate };

struct GraphTensor {
  GraphSource source = GraphSource::kBoundary;
  TensorArgType tag = TensorArgType::INPUT;
  int32_t index = 0;          // the boundary tensor (kBoundary) or the producing task (kNodeOutput)
  uint32_t slot = 0;          // which output of the producing task
  ChipTensor desc{};          // the view as recorded (kBoundary, kNodeOutput)
  TensorCreateInfo create{};  // kCreate
};

struct GraphScalar {
  int32_t boundary = -1;  // the boundary scalar it forwards, or -1: `value`
  uint64_t value = 0;
};

struct GraphDep {
  bool boundary_owner = false;  // the creator of boundary tensor `index`; else task `index`
  int32_t index = 0;
};

struct GraphNode {
  int core = 0;  // as pto_abi::submit's
  int32_t func_id = 0;
  bool mixed = false;
  int32_t kernels[3] = {};
  PTO2LaunchSpec launch;
  int32_t timing_slot = -1;  // set_task_timing_slot
  std::vector<GraphTensor> tensors;
  std::vector<GraphScalar> scalars;
  std::vector<GraphDep> deps;
  bool has_predicate = false;
  GraphTensor predicate_tensor;
  CoreTaskPredicate predicate;      // operand.tensor is rebound at replay
  std::vector<ChipTensor> outputs;  // as recorded
};

struct GraphDefinition {
  uint64_t key = 0;
  std::vector<ChipTensor> boundary;  // as recorded
  std::vector<TensorArgType> tags;
  int32_t scalar_count = 0;
  std::vector<GraphNode> nodes;
  bool replayable = true;
  const char *why_not = nullptr;  // what left it unrecorded
};

// A recording in progress: the definition, and what classifies the arguments of its tasks.
struct GraphRecording {
  GraphDefinition *def;
  const GraphTaskArgs *boundary;
  std::vector<PTO2TaskId> ids;  // each recorded task's id in this run
};

// The run's recordings (pto_device_orchestration_entry owns it; `recording` is set while a
// graph function is being recorded).
struct GraphState {
  static constexpr size_t kMaxDefinitions = 16;
  GraphState() { defs.reserve(kMaxDefinitions); }  // a recording holds a pointer into it
  std::vector<GraphDefinition> defs;
  GraphRecording *recording = nullptr;
  uint64_t replays = 0;
};

inline bool graph_recording_active() {
  return t_graph != nullptr && t_graph->recording != nullptr;
}

// Marks the graph being recorded (if any) as one that cannot be replayed.
inline void graph_taint(const char *why) {
  GraphState *g = t_graph;
  if (g == nullptr || g->recording == nullptr || !g->recording->def->replayable) return;
  g->recording->def->replayable = false;
  g->recording->def->why_not = why;
}

inline bool graph_classify(const GraphRecording &r, const ChipTensor &t, GraphTensor *out) {
  out->desc = t;
  const GraphTaskArgs &b = *r.boundary;
  for (int32_t i = 0; i < b.tensor_count(); ++i) {
    if (!b.is_create_info(i) && b.tensor_ref(i).buffer.addr == t.buffer.addr) {
      out->source = GraphSource::kBoundary;
      out->index = i;
      return true;
    }
  }
  const std::vector<GraphNode> &nodes = r.def->nodes;
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (size_t j = 0; j < nodes[k].outputs.size(); ++j) {
      if (nodes[k].outputs[j].buffer.addr == t.buffer.addr) {
        out->source = GraphSource::kNodeOutput;
        out->index = static_cast<int32_t>(k);
        out->slot = static_cast<uint32_t>(j);
        return true;
      }
    }
  }
  return false;
}

// Called by submit() for every task submitted while a graph is recorded.
inline void graph_note(int core, int32_t func_id, const CoreTaskArgs &args, const int32_t *mixed,
                       const TaskOutputTensors &out) {
  GraphRecording &r = *t_graph->recording;
  if (!r.def->replayable) return;
  if (core < 0 && core != kDummyTask) return graph_taint("alloc_tensors inside the graph");
  GraphNode n;
  n.core = core;
  n.func_id = func_id;
  if (mixed != nullptr) {
    n.mixed = true;
    for (int c = 0; c < 3; ++c) n.kernels[c] = mixed[c];
  }
  n.launch = args.launch_spec;
  n.timing_slot = args.task_timing_slot();
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    GraphTensor t;
    t.tag = args.tag(i);
    if (args.is_create_info(i)) {
      t.source = GraphSource::kCreate;
      t.create = args.create_info(i);
    } else if (!graph_classify(r, args.tensor_ref(i), &t)) {
      return graph_taint("a task argument that is neither a boundary tensor nor made inside the graph");
    }
    n.tensors.push_back(t);
  }
  const uint64_t *bs = r.boundary->scalar_data();
  for (int32_t i = 0; i < args.scalar_count(); ++i) {
    GraphScalar s;
    s.value = args.scalar(i);
    const auto *src = static_cast<const uint64_t *>(args.scalar_source(i));
    if (src != nullptr && src >= bs && src < bs + r.boundary->scalar_count())
      s.boundary = static_cast<int32_t>(src - bs);
    n.scalars.push_back(s);
  }
  for (uint32_t i = 0; i < args.explicit_dep_count(); ++i) {
    const PTO2TaskId d = args.explicit_dep(i);
    if (d.is_invalid()) continue;
    GraphDep dep;
    bool found = false;
    for (int32_t b = 0; b < r.boundary->tensor_count() && !found; ++b) {
      if (!r.boundary->is_create_info(b) && r.boundary->tensor_ref(b).owner_task_id == d) {
        dep = GraphDep{true, b};
        found = true;
      }
    }
    for (size_t k = 0; k < r.ids.size() && !found; ++k) {
      if (r.ids[k] == d) {
        dep = GraphDep{false, static_cast<int32_t>(k)};
        found = true;
      }
    }
    if (!found) return graph_taint("an explicit dependency on a task outside the graph");
    n.deps.push_back(dep);
  }
  if (args.predicate().op != PredicateOp::NONE) {
    n.has_predicate = true;
    n.predicate = args.predicate();
    n.predicate.operand.tensor = nullptr;
    if (!graph_classify(r, *args.predicate().operand.tensor, &n.predicate_tensor))
      return graph_taint("a predicate operand that is neither a boundary tensor nor made inside the graph");
  }
  for (uint32_t j = 0; j < out.size(); ++j) n.outputs.push_back(out.get_ref(j));
  r.ids.push_back(out.task_id());
  r.def->nodes.push_back(std::move(n));
}

inline bool graph_same_view(const ChipTensor &a, const ChipTensor &b) {
  if (a.ndims != b.ndims || a.dtype != b.dtype || a.buffer.size != b.buffer.size ||
      a.manual_dep != b.manual_dep)
    return false;
  for (uint32_t d = 0; d < a.ndims && d < static_cast<uint32_t>(MAX_TENSOR_DIMS); ++d)
    if (a.shapes[d] != b.shapes[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

// Whether `args` has the recorded boundary's signature: the same tensors (view, buffer size,
// direction), the same aliasing, as many scalars.
inline bool graph_signature_matches(const GraphDefinition &def, const GraphTaskArgs &args) {
  if (args.tensor_count() != static_cast<int32_t>(def.boundary.size()) ||
      args.scalar_count() != def.scalar_count)
    return false;
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    if (args.is_create_info(i) || args.tag(i) != def.tags[i]) return false;
    const ChipTensor &now = args.tensor_ref(i), &then = def.boundary[i];
    if (!graph_same_view(now, then)) return false;
    for (int32_t j = 0; j < i; ++j) {  // aliasing: the same buffers shared, at the same distance
      const ChipTensor &now_j = args.tensor_ref(j), &then_j = def.boundary[j];
      const bool shared_now = now.buffer.addr == now_j.buffer.addr;
      if (shared_now != (then.buffer.addr == then_j.buffer.addr)) return false;
      if (shared_now && now.start_offset - now_j.start_offset != then.start_offset - then_j.start_offset)
        return false;
    }
  }
  return true;
}

// The recorded view `t` moved from the buffer it was recorded on (`then`) to this call's (`now`):
// same shape and strides, the same distance from the source view's first element.
inline ChipTensor graph_rebind(const GraphTensor &t, const ChipTensor &then, const ChipTensor &now) {
  ChipTensor d = t.desc;
  d.buffer = now.buffer;
  d.start_offset = t.desc.start_offset - then.start_offset + now.start_offset;
  d.owner_task_id = now.owner_task_id;
  return d;
}

// Whether every view the recording made of a boundary tensor, moved to this call's tensor, stays
// inside its buffer (the boundary views match, but may sit elsewhere in their buffers).
inline bool graph_views_fit(const GraphDefinition &def, const GraphTaskArgs &args) {
  auto fits = [&](const GraphTensor &t) {
    if (t.source != GraphSource::kBoundary) return true;
    const ChipTensor d = graph_rebind(t, def.boundary[t.index], args.tensor_ref(t.index));
    const uint64_t esize = get_element_size(d.dtype);
    return d.start_offset <= d.buffer.size / esize &&
           d.extent_elem() <= d.buffer.size / esize - d.start_offset;
  };
  for (const GraphNode &n : def.nodes) {
    for (const GraphTensor &t : n.tensors)
      if (!fits(t)) return false;
    if (n.has_predicate && !fits(n.predicate_tensor)) return false;
  }
  return true;
}

// Submits the recorded tasks bound to `args`; the last task's id.
inline PTO2TaskId graph_replay(const GraphDefinition &def, const GraphTaskArgs &args) {
  std::vector<TaskOutputTensors> outs(def.nodes.size());
  PTO2TaskId last = PTO2TaskId::invalid();
  for (size_t k = 0; k < def.nodes.size(); ++k) {
    const GraphNode &n = def.nodes[k];
    auto bind = [&](const GraphTensor &t) {
      if (t.source == GraphSource::kBoundary)
        return graph_rebind(t, def.boundary[t.index], args.tensor_ref(t.index));
      return graph_rebind(t, def.nodes[t.index].outputs[t.slot], outs[t.index].get_ref(t.slot));
    };
    ChipTensor descs[MAX_TENSOR_ARGS];
    std::vector<PTO2TaskId> deps;
    CoreTaskArgs a;
    for (size_t i = 0; i < n.tensors.size(); ++i) {
      const GraphTensor &t = n.tensors[i];
      if (t.source == GraphSource::kCreate) {
        a.add_output(t.create);
        continue;
      }
      descs[i] = bind(t);
      switch (t.tag) {
        case TensorArgType::INPUT:
          a.add_input(descs[i]);
          break;
        case TensorArgType::INOUT:
          a.add_inout(descs[i]);
          break;
        case TensorArgType::NO_DEP:
          a.add_no_dep(descs[i]);
          break;
        default:
          a.add_output(descs[i]);
          break;  // OUTPUT_EXISTING
      }
    }
    for (const GraphScalar &s : n.scalars) {
      const uint64_t v = s.boundary >= 0 ? args.scalar(s.boundary) : s.value;
      a.add_scalars(&v, 1);
    }
    for (const GraphDep &d : n.deps)
      deps.push_back(d.boundary_owner ? args.tensor_ref(d.index).owner_task_id : outs[d.index].task_id());
    if (!deps.empty()) a.set_dependencies(deps.data(), static_cast<uint32_t>(deps.size()));
    a.launch_spec = n.launch;
    a.set_task_timing_slot(n.timing_slot);
    ChipTensor operand;
    if (n.has_predicate) {
      operand = bind(n.predicate_tensor);
      CoreTaskPredicate p = n.predicate;
      p.operand.tensor = &operand;
      a.set_predicate(p);
    }
    outs[k] = submit(n.core, n.func_id, a, n.mixed ? n.kernels : nullptr);
    if (!orchestrator().ok()) break;
    last = outs[k].task_id();
  }
  return last;
}

}  // namespace pto_abi

// An explicit graph identity: GRAPH_KEY("decoder_layer_v1").
constexpr uint64_t GRAPH_KEY(const char *name) {
  return pto_abi::graph_fnv(name);
}

// What rt_submit_graph did: ran the function (execute_block), recording it (recording), or
// replayed a recording (neither); task_id is the graph's last task.
struct GraphSubmitResult {
  bool execute_block = true;
  bool recording = false;
  PTO2TaskId task_id = PTO2TaskId::invalid();
};

using GraphFunction = void (*)(const GraphTaskArgs &);
template <typename... Config>
using GraphFunctionWithConfig = void (*)(const GraphTaskArgs &, Config...);

namespace pto_abi {

template <typename Invoke>
inline GraphSubmitResult submit_graph(uint64_t key, const GraphTaskArgs &args, Invoke invoke) {
  Bound bound;
  GraphSubmitResult result;
  GraphState *g = t_graph;
  pto::Orchestrator &o = *bound.get();
  if (!o.ok()) return result;
  if (args.has_error) {
    fail(o, PTO_INVALID_ARGUMENT, "rt_submit_graph: invalid graph arguments: %s",
         args.error_msg ? args.error_msg : "(no message)");
    return result;
  }
  bool recordable =
      g != nullptr && g->recording == nullptr && args.tensor_count() > 0 && args.explicit_dep_count() == 0;
  for (int32_t i = 0; i < args.tensor_count() && recordable; ++i) recordable = !args.is_create_info(i);
  GraphDefinition *def = nullptr;
  if (recordable) {
    for (GraphDefinition &d : g->defs) def = d.key == key ? &d : def;
    if (def != nullptr && def->replayable) {
      if (graph_signature_matches(*def, args) && graph_views_fit(*def, args)) {
        result.execute_block = false;
        result.task_id = graph_replay(*def, args);
        ++g->replays;
        return result;
      }
      PTO_DEV_LOG(o.log(), PTO_LOG_WARN,
                  "rt_submit_graph: the boundary differs from the recorded one (tensor views, directions, "
                  "buffer sizes, aliasing or scalar count); running the graph function for this call");
    }
    if (def == nullptr && g->defs.size() < GraphState::kMaxDefinitions) {
      g->defs.emplace_back();
      def = &g->defs.back();
      def->key = key;
      def->scalar_count = args.scalar_count();
      for (int32_t i = 0; i < args.tensor_count(); ++i) {
        def->boundary.push_back(args.tensor_ref(i));
        def->tags.push_back(args.tag(i));
      }
      GraphRecording rec{def, &args, {}};
      g->recording = &rec;
      result.recording = true;
      invoke(args);
      g = t_graph;  // the function may have waited and moved threads; Bound rebinds at the end
      g->recording = nullptr;
      if (!def->replayable)
        PTO_DEV_LOG(o.log(), PTO_LOG_INFO,
                    "rt_submit_graph: not replayable (%s); every call runs its function", def->why_not);
      result.task_id = rec.ids.empty() ? PTO2TaskId::invalid() : rec.ids.back();
      return result;
    }
  }
  invoke(args);
  return result;
}

template <typename T>
inline uint64_t graph_config_word(const T &v) {
  static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>,
                "graph construction parameters are integral, float, double, bool or enum values");
  uint64_t w = 0;
  memcpy(&w, &v, sizeof v < sizeof w ? sizeof v : sizeof w);
  return w;
}

template <typename Function>
inline uint64_t graph_function_id(Function f) {
  static_assert(std::is_pointer_v<Function> && sizeof(Function) <= sizeof(uint64_t),
                "a graph's identity is its function pointer");
  uint64_t id = 0;
  memcpy(&id, &f, sizeof f);
  return id;
}

}  // namespace pto_abi

template <typename... Config>
inline GraphSubmitResult rt_submit_graph(uint64_t graph_key, GraphFunctionWithConfig<Config...> function,
                                         const GraphTaskArgs &args, Config... config) {
  if (function == nullptr) {
    pto_abi::Bound bound;
    pto_abi::fail(*bound.get(), PTO_INVALID_ARGUMENT, "rt_submit_graph: the graph function is null");
    return GraphSubmitResult{};
  }
  uint64_t key = pto_abi::graph_mix(pto_abi::kGraphFnvBasis, graph_key);
  ((key = pto_abi::graph_mix(pto_abi::graph_mix(key, sizeof(Config)), pto_abi::graph_config_word(config))),
   ...);
  return pto_abi::submit_graph(key, args, [&](const GraphTaskArgs &a) { function(a, config...); });
}

template <typename... Config>
inline GraphSubmitResult rt_submit_graph(GraphFunctionWithConfig<Config...> function,
                                         const GraphTaskArgs &args, Config... config) {
  return rt_submit_graph(pto_abi::graph_function_id(function), function, args, config...);
}

#endif  // PTO_ABI_PTO_GRAPH_H
