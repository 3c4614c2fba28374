// Transfers of an XProf profile: async HLO pairs (copy-start/copy-done, collective
// *-start/*-done, send/send-done, recv/recv-done) matched per module run by the HLO names their
// XLA Ops events carry, with bytes and memory spaces from the HLO shapes.
#include <QJsonArray>
#include <QJsonObject>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/trace/hosts.h"
#include "core/trace/trace_args.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"
#include "core/transfers/hlo_text.h"

namespace stallscope::transfers::detail {

namespace {

using trace::SliceItem;
using trace::TraceStore;
using trace::TrackRow;

bool mayBeAsync(std::string_view name) {
    return name.find("-start") != std::string_view::npos ||
           name.find("-done") != std::string_view::npos || name.starts_with("send") ||
           name.starts_with("recv");
}
bool isStart(const std::string& opcode) {
    return opcode.ends_with("-start") || opcode == "send" || opcode == "recv";
}
bool isDone(const std::string& opcode) {
    return opcode.ends_with("-done");
}

// The lanes of one XProf line under a plane: the track named `line` and its "line (n)" lanes.
std::vector<const TrackRow*> lineTracks(const TraceStore& store, int64_t plane,
                                        const std::string& line) {
    std::vector<const TrackRow*> out;
    for (const TrackRow* t : store.children(plane))
        if (t->name == line || (t->name.starts_with(line + " (") && t->name.ends_with(")")))
            out.push_back(t);
    return out;
}

using TrackSlices = std::vector<std::pair<SliceItem, int64_t>>;

// The store planes are derived from on several threads: reading slices and args goes through
// the mutex (the store caches what it read); its track list and strings are only read.
struct SharedStore {
    const TraceStore& store;
    std::mutex reading;
};

// The slices of `tracks` into `out` (its memory reused: planes are read one after the other).
void slicesOf(SharedStore& shared, const std::vector<const TrackRow*>& tracks, TrackSlices& out) {
    out.clear();
    uint64_t count = 0;
    for (const TrackRow* t : tracks) count += t->slices;
    out.reserve(count);
    // Program order: by start, and at one start the shorter first. XProf sometimes stamps a
    // zero-length copy-start with its copy-done's start; the start came first. Then by lane,
    // depth and storage order. A lane's chunks are stored nearly in that order already: each
    // lane is sorted on its own (when it is not) and the lanes merged, which is the stable
    // sort of them all without sorting millions of slices again.
    auto sameLane = [](const auto& a, const auto& b) {
        if (a.first.preciseStart() != b.first.preciseStart())
            return a.first.preciseStart() < b.first.preciseStart();
        if (a.first.preciseEnd() != b.first.preciseEnd())
            return a.first.preciseEnd() < b.first.preciseEnd();
        return a.first.depth < b.first.depth;
    };
    std::vector<size_t> laneEnds;
    for (const TrackRow* t : tracks) {
        const size_t from = out.size();
        shared.store.forEachChunk(t->id, shared.reading, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk)
                if (s.kind == trace::ItemKind::Slice) out.emplace_back(s, t->id);
        });
        const auto lane = out.begin() + std::ptrdiff_t(from);
        if (!std::is_sorted(lane, out.end(), sameLane)) std::stable_sort(lane, out.end(), sameLane);
        laneEnds.push_back(out.size());
    }
    // Lanes in their order in `tracks`: at one start and end the earlier lane first.
    for (size_t lane = 1; lane < laneEnds.size(); ++lane)
        std::inplace_merge(out.begin(), out.begin() + std::ptrdiff_t(laneEnds[lane - 1]),
                           out.begin() + std::ptrdiff_t(laneEnds[lane]),
                           [&sameLane](const auto& a, const auto& b) {
                               if (a.first.preciseStart() != b.first.preciseStart() ||
                                   a.first.preciseEnd() != b.first.preciseEnd())
                                   return sameLane(a, b);
                               return false;  // equal: the earlier lane stays first
                           });
}

// What an instruction does in a pair.
enum class AsyncKind : uint8_t { Other, Start, Done };

// HLO instructions of ops, parsed once per (program, op name): instruction names are unique
// within an HLO module, so every run of a program shares them; only a program's first run
// reads its ops' args. Instruction names are interned too, so that matching a run's pairs and
// finding its in-flight events compare numbers, not strings.
class InstructionCache {
  public:
    // An op's instruction and its operands' names (viewing the instruction's), for steps.
    struct Parsed {
        std::optional<hlo::Instruction> instruction;
        std::vector<std::string_view> operandNames;
        AsyncKind kind = AsyncKind::Other;
        uint32_t nameId = 0;   // the instruction's name
        uint32_t startId = 0;  // a done's first operand (its start), "" when it has none
    };
    explicit InstructionCache(SharedStore& store) : store_(store) {}
    const Parsed* of(uint32_t program, const SliceItem& s) {
        const uint64_t key = (uint64_t(program) << 32) | s.name;
        // Asked once per op: a direct-mapped cache in front of the map answers most.
        Recent& recent = recent_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kRecentBits)];
        if (recent.filled && recent.key == key) return recent.parsed;
        auto found = byName_.find(key);
        if (found == byName_.end()) found = byName_.emplace(key, byArgs(s)).first;
        recent = {key, found->second, true};
        return found->second;
    }
    // From the slice's own args (names shared by different instructions: "async-copy").
    const Parsed* byArgs(const SliceItem& s) {
        uint64_t holder = 0;
        std::optional<std::string> member;
        {
            const std::lock_guard lock(store_.reading);
            member = store_.store.argsMember(s.args, "long_name", &holder);
        }
        if (!member) return nullptr;
        // Keyed by the args entry holding the text: XProf shares it per op metadata.
        auto it = parsed_.find(holder);
        if (it == parsed_.end()) {
            const auto text = trace::memberValue(*member);
            it = parsed_.emplace(holder, Parsed{}).first;
            Parsed& parsed = it->second;
            if (text) parsed.instruction = hlo::parseInstruction(*text);
            if (parsed.instruction) {
                const hlo::Instruction& hlo = *parsed.instruction;
                for (const hlo::Operand& operand : hlo.operands)
                    parsed.operandNames.emplace_back(operand.name);
                parsed.kind = isStart(hlo.opcode)  ? AsyncKind::Start
                              : isDone(hlo.opcode) ? AsyncKind::Done
                                                   : AsyncKind::Other;
                parsed.nameId = nameId(hlo.name);
                parsed.startId =
                    nameId(hlo.operands.empty() ? std::string_view()
                                                : std::string_view(hlo.operands[0].name));
            }
        }
        return it->second.instruction ? &it->second : nullptr;
    }
    uint32_t names() const { return uint32_t(nameIds_.size()); }

  private:
    uint32_t nameId(std::string_view name) {
        return nameIds_.try_emplace(std::string(name), uint32_t(nameIds_.size())).first->second;
    }
    static constexpr int kRecentBits = 12;
    struct Recent {
        uint64_t key = 0;
        const Parsed* parsed = nullptr;
        bool filled = false;
    };
    SharedStore& store_;
    std::vector<Recent> recent_ = std::vector<Recent>(size_t(1) << kRecentBits);
    // Node-based: the instructions (and the names viewing them) stay where they are while
    // the map grows.
    std::unordered_map<uint64_t, Parsed> parsed_;
    std::unordered_map<uint64_t, const Parsed*> byName_;
    std::unordered_map<std::string, uint32_t> nameIds_;
};
using Parsed = InstructionCache::Parsed;

// Peak bandwidth (bytes/ns = GB/s) of memory space `space` of a TPU/GPU plane, read (`read`)
// or written; 0 with no source when the plane states none.
std::pair<double, std::string> spacePeak(const QJsonObject& stats, int space, bool read) {
    auto stat = [&](const char* key) { return std::make_pair(stats.value(key).toDouble(), key); };
    if (space == 0) {
        if (stats.contains("peak_hbm_bw_gigabytes_per_second"))
            return stat("peak_hbm_bw_gigabytes_per_second");
        if (stats.contains("memory_bandwidth"))  // GPU planes: bytes/s
            return {stats.value("memory_bandwidth").toDouble() / 1e9, "memory_bandwidth"};
    }
    if (space == 1)
        return stat(read ? "peak_vmem_rd_bw_gigabytes_per_second"
                         : "peak_vmem_wr_bw_gigabytes_per_second");
    return {0.0, std::string()};
}

std::string spaceName(int space) {
    return "S(" + std::to_string(space) + ")";
}

// The family of a start opcode: "copy", "all-gather", ..., the wrapped op of an async-start.
std::string familyOf(const hlo::Instruction& start) {
    std::string family = start.opcode;
    if (family.ends_with("-start")) family.resize(family.size() - 6);
    if (family == "async") {
        std::string calls = start.attribute("calls");
        if (!calls.empty() && calls[0] == '%') calls.erase(0, 1);
        if (calls.starts_with("wrapped_")) calls.erase(0, 8);
        const auto dot = calls.find('.');
        return calls.empty() ? family : calls.substr(0, dot);
    }
    return family;
}

struct PlaneContext {
    std::string device;
    QJsonObject stats;
};

// What a transfer of a (start, done) pair takes from their HLO: names, opcode, link, bytes,
// element type and source. Worked out once per pair of instructions on a plane.
Transfer pairShape(const hlo::Instruction& s, const hlo::Instruction& d, const PlaneContext& ctx,
                   LinkTable& links, std::vector<Link>& linkList) {
    Transfer t;
    t.name = s.name;
    t.waitName = d.name;
    t.opcode = s.opcode;
    const std::string family = familyOf(s);
    std::string linkName, source, destination;
    std::optional<hlo::Shape> data;
    if (family == "copy") {
        // copy-start: (destination, source, context); the operand is the source.
        data = s.operands.empty() || !s.operands[0].shape ? std::optional(s.shape)
                                                          : s.operands[0].shape;
        const int src = s.operands.empty() || !s.operands[0].shape
                            ? s.shape.elementSpace(1).value_or(0)
                            : s.operands[0].shape->elementSpace(0).value_or(0);
        const int dst = s.shape.tuple ? s.shape.elementSpace(0).value_or(0)
                                      : d.shape.elementSpace(0).value_or(0);
        source = spaceName(src);
        destination = spaceName(dst);
        linkName = source + "->" + destination;
        t.bytes = s.shape.tuple ? s.shape.elementBytes(0) : d.shape.bytes();
        const auto [srcPeak, srcKey] = spacePeak(ctx.stats, src, true);
        const auto [dstPeak, dstKey] = spacePeak(ctx.stats, dst, false);
        const uint32_t l = links.get(ctx.device, linkName, source, destination);
        Link& link = linkList[l];
        if (srcPeak > 0 && (dstPeak <= 0 || srcPeak <= dstPeak)) {
            link.peakBytesPerNs = srcPeak;
            link.peakSource = srcKey + (dstPeak > 0 ? "" : " (" + destination + " states no peak)");
        } else if (dstPeak > 0) {
            link.peakBytesPerNs = dstPeak;
            link.peakSource = dstKey + (srcPeak > 0 ? "" : " (" + source + " states no peak)");
        }
        t.link = l;
    } else {
        // Collectives move their result; send its operand; recv its received data.
        std::string group = s.attribute("replica_groups");
        if (group.empty()) group = s.attribute("source_target_pairs");
        if (family == "send" || family == "recv")
            group = s.attribute("is_host_transfer") == "true" ? "host" : "";
        linkName = group.empty() ? family : family + " " + group;
        source = family;
        destination = group;
        if (family == "send") {
            t.bytes = s.operands.empty() || !s.operands[0].shape ? s.shape.elementBytes(0)
                                                                 : s.operands[0].shape->bytes();
            data = s.operands.empty() ? std::nullopt : s.operands[0].shape;
        } else {
            t.bytes = d.shape.tuple ? d.shape.elementBytes(0) : d.shape.bytes();
            data = d.shape;
        }
        t.link = links.get(ctx.device, linkName, source, destination);
    }
    if (data && !data->arrays.empty()) t.elementType = data->arrays[0].elementType;
    if (!s.operands.empty() && family != "recv") t.sourceOperand = s.operands[0].name;
    return t;
}

struct PairHash {
    size_t operator()(const std::pair<const Parsed*, const Parsed*>& p) const {
        return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
};

// Pieces that made no transfer, over all planes.
struct Unmatched {
    uint64_t doneWithoutStart = 0, startWithoutDone = 0, nestedModules = 0, outside = 0,
             unendedRuns = 0;
};

// Matches each done of a run to the earliest pending start of its name (FIFO: a loop issues
// one name again), by interned name: per-name queues threaded through the run's ops, kept
// between runs so that a run allocates nothing.
class PairMatcher {
  public:
    // doneOfStart[i]: the op that waited for op i's transfer, SIZE_MAX when none.
    void match(std::span<const Parsed* const> parsed, uint32_t names,
               std::vector<size_t>& doneOfStart, Unmatched& unmatched) {
        head_.resize(names, kNone);
        tail_.resize(names, kNone);
        next_.assign(parsed.size(), kNone);
        doneOfStart.assign(parsed.size(), SIZE_MAX);
        for (uint32_t i = 0; i < uint32_t(parsed.size()); ++i) {
            const Parsed* op = parsed[i];
            if (!op) continue;
            if (op->kind == AsyncKind::Start) {
                const uint32_t id = op->nameId;
                if (head_[id] == kNone) {
                    head_[id] = i;
                    touched_.push_back(id);
                } else {
                    next_[tail_[id]] = i;
                }
                tail_[id] = i;
            } else if (op->kind == AsyncKind::Done) {
                const uint32_t id = op->startId;
                if (id >= head_.size() || head_[id] == kNone) {
                    ++unmatched.doneWithoutStart;
                    continue;
                }
                const uint32_t start = head_[id];
                doneOfStart[start] = i;
                head_[id] = next_[start];
            }
        }
        // Starts nobody waited for; the queues start empty for the next run.
        for (uint32_t id : touched_) {
            for (uint32_t i = head_[id]; i != kNone; i = next_[i]) ++unmatched.startWithoutDone;
            head_[id] = kNone;
        }
        touched_.clear();
    }

  private:
    static constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> head_, tail_, next_, touched_;
};

// Threads deriving planes at once, at most: each holds a plane's ops (56 bytes each).
constexpr size_t kMaxThreads = 4;

// Buffers a plane's derivation reuses for the next plane.
struct PlaneBuffers {
    TrackSlices modules, ops, inFlight;
    std::vector<const Parsed*> parsed;  // per op of a run with transfers (else unset)
    std::vector<size_t> doneOfStart;
    PairMatcher matcher;
    RunProgram program;
};

// The second pass: each run's program built from its ops again, then modelled and dropped.
void modelRuns(Analysis& a, const TraceStore& store, const TrackSlices& ops,
               const std::vector<const Parsed*>& parsed, const std::vector<size_t>& firstOp,
               const std::vector<size_t>& endOp, RunProgram& program) {
    detail::Modeller modeller(a);
    for (uint32_t m = 0; m < a.modules.size(); ++m) {
        const size_t first = firstOp[m], count = endOp[m] - first;
        program.module = m;
        program.steps.resize(count);
        for (size_t i = 0; i < count; ++i) {
            const SliceItem& op = ops[first + i].first;
            Step& step = program.steps[i];
            step.role = Role::Compute;
            step.start = op.start;
            step.end = op.end();
            step.transfers.clear();
            if (const Parsed* instruction = parsed[first + i]) {
                step.name = instruction->instruction->name;
                step.operands = instruction->operandNames;
            } else {
                step.name = store.text(op.name);
                step.operands = {};
            }
        }
        for (uint32_t id : a.modules[m].transfers) {
            const Transfer& t = a.transfers[id];
            program.steps[size_t(t.issueStep)].role = Role::Issue;
            program.steps[size_t(t.issueStep)].transfers.push_back(id);
            program.steps[size_t(t.waitStep)].role = Role::Wait;
            program.steps[size_t(t.waitStep)].transfers.push_back(id);
        }
        modeller.backtails(program);
        modeller.run(program);
    }
    // The merged analysis is summarized once, over all planes.
    modeller.finish(false);
}

// The transfers of one plane, modelled. Two passes over its runs: the transfers first (the link
// model is fitted to all of them), then each run's program on its own, built from its ops
// again and dropped once simulated: a plane has millions of ops.
Analysis derivePlane(SharedStore& shared, const TrackRow& plane, const PlaneContext& ctx,
                     InstructionCache& instructions, const std::vector<bool>& asyncName,
                     Unmatched& unmatched, PlaneBuffers& buffers) {
    auto mayBeAsyncOp = [&asyncName](const SliceItem& s) {
        return s.name < asyncName.size() && asyncName[s.name];
    };
    const TraceStore& store = shared.store;
    Analysis a;
    LinkTable links(a.links);
    std::unordered_map<std::pair<const Parsed*, const Parsed*>, Transfer, PairHash> shapes;
    const auto opTracks = lineTracks(store, plane.id, "XLA Ops");
    // Module runs: top-level module events; nested ones belong to the run around them.
    TrackSlices& windows = buffers.modules;
    slicesOf(shared, lineTracks(store, plane.id, "XLA Modules"), windows);
    std::erase_if(windows, [&unmatched](const auto& window) {
        if (window.first.depth == 0) return false;
        ++unmatched.nestedModules;
        return true;
    });
    if (windows.empty()) {
        // No module line: the whole XLA Ops line is one run.
        SliceItem whole;
        whole.start = opTracks.front()->start;
        whole.dur = opTracks.front()->end - opTracks.front()->start;
        whole.name = 0;
        windows.emplace_back(whole, opTracks.front()->id);
    }
    const TrackSlices& ops = buffers.ops;
    slicesOf(shared, opTracks, buffers.ops);
    const TrackSlices& inFlight = buffers.inFlight;
    slicesOf(shared, lineTracks(store, plane.id, "Async XLA Ops"), buffers.inFlight);
    std::vector<const Parsed*>& parsed = buffers.parsed;
    parsed.resize(ops.size());
    std::vector<size_t>& doneOfStart = buffers.doneOfStart;
    std::vector<size_t> firstOp, endOp;  // per module run: its ops
    // A transfer is a start and a done: reserved at that, not grown (and copied) by doubling.
    a.transfers.reserve(
        size_t(std::count_if(ops.begin(), ops.end(),
                             [&](const auto& op) { return mayBeAsyncOp(op.first); })) /
        2);
    size_t nextOp = 0, nextFlight = 0;
    for (const auto& [window, windowTrack] : windows) {
        const int64_t from = window.start, to = window.end();
        // Ops before this run (and after the previous one): outside any module.
        while (nextOp < ops.size() && ops[nextOp].first.start < from) {
            if (mayBeAsyncOp(ops[nextOp].first)) ++unmatched.outside;
            ++nextOp;
        }
        // The run's ops: ops[first, nextOp).
        const size_t first = nextOp;
        bool anyAsync = false;
        while (nextOp < ops.size() && ops[nextOp].first.start < to) {
            anyAsync = anyAsync || mayBeAsyncOp(ops[nextOp].first);
            ++nextOp;
        }
        if (!anyAsync) continue;
        const size_t count = nextOp - first;
        // The HLO text of every op of a run with transfers: operands give dependencies.
        const std::span<const Parsed*> runParsed(parsed.data() + first, count);
        for (size_t i = 0; i < count; ++i)
            runParsed[i] = instructions.of(window.name, ops[first + i].first);

        ModuleRun run;
        run.name = window.name ? store.text(window.name) : plane.name;
        run.device = ctx.device;
        run.track = windowTrack;
        run.start = from;
        run.end = to;
        if (window.unended) ++unmatched.unendedRuns;
        const uint32_t moduleIndex = uint32_t(a.modules.size());
        buffers.matcher.match(runParsed, instructions.names(), doneOfStart, unmatched);
        for (size_t i = 0; i < count; ++i) {
            if (doneOfStart[i] == SIZE_MAX) continue;
            const auto& [start, startTrack] = ops[first + i];
            const auto& [done, doneTrack] = ops[first + doneOfStart[i]];
            const auto pair = std::make_pair(runParsed[i], runParsed[doneOfStart[i]]);
            auto shape = shapes.find(pair);
            if (shape == shapes.end())
                shape =
                    shapes
                        .emplace(pair, pairShape(*pair.first->instruction,
                                                 *pair.second->instruction, ctx, links, a.links))
                        .first;
            Transfer t = shape->second;
            t.id = uint32_t(a.transfers.size());
            t.module = moduleIndex;
            t.issueStep = int32_t(i);
            t.waitStep = int32_t(doneOfStart[i]);
            t.issue = start.start;
            t.wait = done.start;
            t.waitEnd = done.end();
            t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs;
            // A wait that blocked ended when the data arrived.
            t.completeMeasured = t.blocked;
            if (t.blocked) t.complete = t.waitEnd;
            t.issueTrack = startTrack;
            t.waitTrack = doneTrack;
            run.transfers.push_back(t.id);
            a.transfers.push_back(std::move(t));
        }
        // In flight: the Async XLA Ops events of this run, named by their start's HLO.
        while (nextFlight < inFlight.size() && inFlight[nextFlight].first.start < from)
            ++nextFlight;
        for (size_t f = nextFlight; f < inFlight.size() && inFlight[f].first.start < to; ++f) {
            const Parsed* flight = instructions.byArgs(inFlight[f].first);
            if (!flight) continue;
            for (uint32_t id : run.transfers) {
                Transfer& t = a.transfers[id];
                if (runParsed[size_t(t.issueStep)]->nameId != flight->nameId ||
                    t.inFlightTrack >= 0)
                    continue;
                t.inFlightTrack = inFlight[f].second;
                t.inFlightStart = inFlight[f].first.start;
                t.inFlightEnd = inFlight[f].first.end();
                break;
            }
        }
        if (run.transfers.empty()) continue;
        a.modules.push_back(std::move(run));
        firstOp.push_back(first);
        endOp.push_back(nextOp);
    }
    for (; nextOp < ops.size(); ++nextOp)
        if (mayBeAsyncOp(ops[nextOp].first)) ++unmatched.outside;
    if (a.transfers.empty()) return a;

    modelRuns(a, store, ops, parsed, firstOp, endOp, buffers.program);
    return a;
}

}  // namespace

bool anyAsyncName(const TraceStore& store) {
    for (uint32_t id = 0; id < store.textCount(); ++id)
        if (mayBeAsync(store.text(id))) return true;
    return false;
}

uint64_t xprofXlaSlices(const TraceStore& store) {
    uint64_t slices = 0;
    if (anyAsyncName(store))
        for (const TrackRow& track : store.tracks())
            for (const char* line : {"XLA Ops", "Async XLA Ops", "XLA Modules"})
                if (track.name == line || track.name.starts_with(std::string(line) + " ("))
                    slices += track.slices;
    return slices;
}

uint64_t xprofDerivationSlices(const TraceStore& store) {
    uint64_t slices = xprofXlaSlices(store);
    for (const TrackRow* plane : xprofRuntimePlanes(store))
        for (const TrackRow* line : store.children(plane->id)) slices += line->slices;
    return slices;
}

Analysis deriveXprof(const TraceStore& store) {
    return join(deriveXprofParts(store));
}

MergedParts deriveXprofParts(const TraceStore& store) {
    std::map<std::string, QJsonObject> planeStats;
    for (const QJsonValue v : store.metadata().value("plane_details").toArray()) {
        const QJsonObject plane = v.toObject();
        planeStats[plane.value("name").toString().toStdString()] = plane.value("stats").toObject();
    }
    // Whether a name may be an async op's, decided once per string, not once per op.
    std::vector<bool> asyncName(store.textCount());
    for (uint32_t id = 0; id < store.textCount(); ++id) asyncName[id] = mayBeAsync(store.text(id));
    // Links are per device: a plane is modelled on its own, then merged. Planes are derived on
    // several threads (each with its own instruction cache and buffers), merged in order.
    struct PlaneJob {
        const TrackRow* plane;
        PlaneContext ctx;
        Analysis result;
        Unmatched unmatched;
    };
    std::vector<PlaneJob> jobs;
    // GPU memcpys on their own stream lines ("Stream #9(MemcpyH2D)") of a plane whose copies
    // are XLA's async pairs: counted, since no async op issues or waits for them. (A GPU plane
    // without XLA Ops lines has its copies read from the runtime calls: deriveXprofRuntime.)
    uint64_t streamCopies = 0;
    for (const TrackRow* plane : trace::processTracks(store)) {
        if (lineTracks(store, plane->id, "XLA Ops").empty()) continue;
        for (const TrackRow* line : store.children(plane->id))
            if (line->name.starts_with("Stream #") &&
                line->name.find("(Memcpy") != std::string::npos)
                streamCopies += line->slices;
    }
    // Hosts of a run each have a "/device:TPU:0": a device is named with its host there.
    const TrackHosts hosts(store);
    // No op named like an async one: no XLA Ops line needs reading.
    const bool asyncOps = std::find(asyncName.begin(), asyncName.end(), true) != asyncName.end();
    for (const TrackRow* plane : trace::processTracks(store)) {
        if (!asyncOps || lineTracks(store, plane->id, "XLA Ops").empty()) continue;
        jobs.push_back(
            {plane,
             PlaneContext{hosts.prefix(hosts.of(plane->id)) + plane->name, planeStats[plane->name]},
             {},
             {}});
    }
    SharedStore shared{store, {}};
    std::atomic<size_t> nextJob = 0;
    std::mutex failing;
    std::exception_ptr failure;
    auto work = [&] {
        try {
            InstructionCache instructions(shared);
            PlaneBuffers buffers;
            for (size_t j = nextJob++; j < jobs.size(); j = nextJob++) {
                PlaneJob& job = jobs[j];
                job.result = derivePlane(shared, *job.plane, job.ctx, instructions, asyncName,
                                         job.unmatched, buffers);
            }
        } catch (...) {
            const std::lock_guard lock(failing);
            if (!failure) failure = std::current_exception();
            nextJob = jobs.size();
        }
    };
    const size_t threads = std::min<size_t>(
        {size_t(std::max(1u, std::thread::hardware_concurrency())), jobs.size(), kMaxThreads});
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
    for (std::thread& helper : helpers) helper.join();
    if (failure) std::rethrow_exception(failure);
    Unmatched unmatched;
    std::vector<Analysis> planes;
    for (PlaneJob& job : jobs) {
        unmatched.doneWithoutStart += job.unmatched.doneWithoutStart;
        unmatched.startWithoutDone += job.unmatched.startWithoutDone;
        unmatched.nestedModules += job.unmatched.nestedModules;
        unmatched.outside += job.unmatched.outside;
        unmatched.unendedRuns += job.unmatched.unendedRuns;
        if (!job.result.transfers.empty()) planes.push_back(std::move(job.result));
    }
    // Copies issued through the runtime (GPU planes without XLA Ops), modelled as Kineto's.
    if (Analysis runtime = deriveXprofRuntime(store);
        !runtime.transfers.empty() || !runtime.unmatched.empty())
        planes.push_back(std::move(runtime));
    MergedParts merged = mergeKeepingTransfers(std::move(planes));
    Analysis& all = merged.shell;
    if (unmatched.doneWithoutStart)
        all.unmatched["done_without_start"] = unmatched.doneWithoutStart;
    if (unmatched.startWithoutDone)
        all.unmatched["start_without_done"] = unmatched.startWithoutDone;
    if (unmatched.nestedModules) all.unmatched["nested_modules"] = unmatched.nestedModules;
    if (unmatched.outside) all.unmatched["async_ops_outside_modules"] = unmatched.outside;
    if (unmatched.unendedRuns) all.unmatched["runs_cut_by_profile_end"] = unmatched.unendedRuns;
    if (streamCopies) all.unmatched["stream_memcpys_without_async_op"] = streamCopies;
    const bool anyTransfer =
        std::any_of(merged.transfers.begin(), merged.transfers.end(),
                    [](const TransferPart& p) { return !p.transfers.empty(); });
    if (anyTransfer || !all.unmatched.empty()) all.source = "xprof";
    return merged;
}

}  // namespace stallscope::transfers::detail
