// Transfers of an XProf profile: async HLO pairs (copy-start/copy-done, collective
// *-start/*-done, send/send-done, recv/recv-done) matched per module run by the HLO names their
// XLA Ops events carry, with bytes and memory spaces from the HLO shapes.
#include <QJsonArray>
#include <QJsonObject>
#include <algorithm>
#include <deque>
#include <unordered_map>

#include "core/trace/hosts.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"
#include "core/transfers/hlo_text.h"

namespace stallscope::transfers::detail {

namespace {

using trace::SliceItem;
using trace::TraceStore;
using trace::TrackRow;

// An op read from an XLA Ops line.
struct Op {
    SliceItem slice;
    int64_t track = 0;
    std::string_view name;                       // the event's display name (the store's string)
    const hlo::Instruction* hlo = nullptr;       // owned by the InstructionCache
    std::span<const std::string_view> operands;  // its operands' names (the cache's)
};

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

std::vector<std::pair<SliceItem, int64_t>> slicesOf(const TraceStore& store,
                                                    const std::vector<const TrackRow*>& tracks) {
    std::vector<std::pair<SliceItem, int64_t>> out;
    uint64_t count = 0;
    for (const TrackRow* t : tracks) count += t->slices;
    out.reserve(count);
    for (const TrackRow* t : tracks)
        store.forEachChunk(t->id, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk)
                if (s.kind == trace::ItemKind::Slice) out.emplace_back(s, t->id);
        });
    // Program order: by start, and at one start the shorter first. XProf sometimes stamps a
    // zero-length copy-start with its copy-done's start; the start came first. Then by lane,
    // depth and storage order. One sort of the chunks as stored: no sorted copy per lane.
    std::vector<std::pair<int64_t, size_t>> laneRank;
    for (size_t i = 0; i < tracks.size(); ++i) laneRank.emplace_back(tracks[i]->id, i);
    auto rank = [&laneRank](int64_t track) {
        for (const auto& [id, r] : laneRank)
            if (id == track) return r;
        return size_t(0);
    };
    std::stable_sort(out.begin(), out.end(), [&rank](const auto& a, const auto& b) {
        if (a.first.preciseStart() != b.first.preciseStart())
            return a.first.preciseStart() < b.first.preciseStart();
        if (a.first.preciseEnd() != b.first.preciseEnd())
            return a.first.preciseEnd() < b.first.preciseEnd();
        if (a.second != b.second) return rank(a.second) < rank(b.second);
        return a.first.depth < b.first.depth;
    });
    return out;
}

// HLO instructions of ops, parsed once per (program, op name): instruction names are unique
// within an HLO module, so every run of a program shares them; only a program's first run
// reads its ops' args.
class InstructionCache {
  public:
    // An op's instruction and its operands' names (viewing the instruction's), for steps.
    struct Parsed {
        std::optional<hlo::Instruction> instruction;
        std::vector<std::string_view> operandNames;
    };
    explicit InstructionCache(const TraceStore& store) : store_(store) {}
    const Parsed* of(uint32_t program, const SliceItem& s) {
        const uint64_t key = (uint64_t(program) << 32) | s.name;
        auto found = byName_.find(key);
        if (found != byName_.end()) return found->second;
        return byName_.emplace(key, byArgs(s)).first->second;
    }
    // From the slice's own args (names shared by different instructions: "async-copy").
    const Parsed* byArgs(const SliceItem& s) {
        uint64_t holder = 0;
        const auto member = store_.argsMember(s.args, "long_name", &holder);
        if (!member) return nullptr;
        // Keyed by the args entry holding the text: XProf shares it per op metadata.
        auto it = parsed_.find(holder);
        if (it == parsed_.end()) {
            const auto text = jsonMember(*member, "long_name");
            it = parsed_.emplace(holder, Parsed{}).first;
            Parsed& parsed = it->second;
            if (text) parsed.instruction = hlo::parseInstruction(*text);
            if (parsed.instruction)
                for (const hlo::Operand& operand : parsed.instruction->operands)
                    parsed.operandNames.emplace_back(operand.name);
        }
        return it->second.instruction ? &it->second : nullptr;
    }

  private:
    const TraceStore& store_;
    // Node-based: the instructions (and the names viewing them) stay where they are while
    // the map grows.
    std::unordered_map<uint64_t, Parsed> parsed_;
    std::unordered_map<uint64_t, const Parsed*> byName_;
};

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

}  // namespace

Analysis deriveXprof(const TraceStore& store) {
    Analysis all;
    std::map<std::string, QJsonObject> planeStats;
    for (const QJsonValue v : store.metadata().value("plane_details").toArray()) {
        const QJsonObject plane = v.toObject();
        planeStats[plane.value("name").toString().toStdString()] = plane.value("stats").toObject();
    }
    InstructionCache instructions(store);
    // Whether a name may be an async op's, decided once per string, not once per op.
    std::vector<bool> asyncName(store.textCount());
    for (uint32_t id = 0; id < store.textCount(); ++id) asyncName[id] = mayBeAsync(store.text(id));
    auto mayBeAsyncOp = [&asyncName](const SliceItem& s) {
        return s.name < asyncName.size() && asyncName[s.name];
    };
    uint64_t doneWithoutStart = 0, startWithoutDone = 0, nestedModules = 0, outside = 0,
             unendedRuns = 0;
    for (const TrackRow* plane : trace::processTracks(store)) {
        const auto opTracks = lineTracks(store, plane->id, "XLA Ops");
        if (opTracks.empty()) continue;
        PlaneContext ctx{plane->name, planeStats[plane->name]};
        // Links are per device: a plane is modelled on its own, then merged, so only one
        // plane's run programs are held at a time.
        Analysis a;
        LinkTable links(a.links);
        std::vector<RunProgram> programs;
        const auto moduleTracks = lineTracks(store, plane->id, "XLA Modules");
        // Module runs: top-level module events; nested ones belong to the run around them.
        struct RunWindow {
            SliceItem slice;
            int64_t track;
        };
        std::vector<RunWindow> windows;
        for (const auto& [slice, track] : slicesOf(store, moduleTracks)) {
            if (slice.depth > 0) {
                ++nestedModules;
                continue;
            }
            windows.push_back({slice, track});
        }
        if (windows.empty()) {
            // No module line: the whole XLA Ops line is one run.
            SliceItem all;
            all.start = opTracks.front()->start;
            all.dur = opTracks.front()->end - opTracks.front()->start;
            all.name = 0;
            windows.push_back({all, opTracks.front()->id});
        }
        const auto ops = slicesOf(store, opTracks);
        std::vector<std::pair<SliceItem, int64_t>> inFlight;
        for (const auto& entry : slicesOf(store, lineTracks(store, plane->id, "Async XLA Ops")))
            inFlight.push_back(entry);
        size_t nextOp = 0, nextFlight = 0;
        for (const RunWindow& window : windows) {
            const int64_t from = window.slice.start, to = window.slice.end();
            // Ops before this run (and after the previous one): outside any module.
            while (nextOp < ops.size() && ops[nextOp].first.start < from) {
                if (mayBeAsyncOp(ops[nextOp].first)) ++outside;
                ++nextOp;
            }
            std::vector<Op> runOps;
            bool anyAsync = false;
            while (nextOp < ops.size() && ops[nextOp].first.start < to) {
                Op op{ops[nextOp].first, ops[nextOp].second, store.text(ops[nextOp].first.name),
                      nullptr};
                anyAsync = anyAsync || mayBeAsyncOp(op.slice);
                runOps.push_back(std::move(op));
                ++nextOp;
            }
            if (!anyAsync) continue;
            // The HLO text of every op of a run with transfers: operands give dependencies.
            for (Op& op : runOps) {
                if (const auto* parsed = instructions.of(window.slice.name, op.slice)) {
                    op.hlo = &*parsed->instruction;
                    op.operands = parsed->operandNames;
                }
            }

            ModuleRun run;
            run.name = window.slice.name ? store.text(window.slice.name) : plane->name;
            run.device = plane->name;
            run.track = window.track;
            run.start = from;
            run.end = to;
            if (window.slice.unended) ++unendedRuns;
            const uint32_t moduleIndex = uint32_t(a.modules.size());
            RunProgram program;
            program.module = moduleIndex;
            // Starts waiting for their done, by name (FIFO: a loop issues one name again).
            std::unordered_map<std::string, std::deque<size_t>> pending;
            std::vector<int64_t> transferOfStep(runOps.size(), -1);
            std::vector<size_t> doneOfStart(runOps.size(), SIZE_MAX);
            for (size_t i = 0; i < runOps.size(); ++i) {
                const Op& op = runOps[i];
                if (!op.hlo) continue;
                if (isStart(op.hlo->opcode)) {
                    pending[op.hlo->name].push_back(i);
                } else if (isDone(op.hlo->opcode)) {
                    const std::string startName =
                        op.hlo->operands.empty() ? std::string() : op.hlo->operands[0].name;
                    auto it = pending.find(startName);
                    if (it == pending.end() || it->second.empty()) {
                        ++doneWithoutStart;
                        continue;
                    }
                    doneOfStart[it->second.front()] = i;
                    it->second.pop_front();
                }
            }
            for (const auto& entry : pending) startWithoutDone += entry.second.size();
            for (size_t i = 0; i < runOps.size(); ++i) {
                if (doneOfStart[i] == SIZE_MAX) continue;
                const Op& start = runOps[i];
                const Op& done = runOps[doneOfStart[i]];
                const hlo::Instruction& s = *start.hlo;
                const hlo::Instruction& d = *done.hlo;
                Transfer t;
                t.id = uint32_t(a.transfers.size());
                t.name = s.name;
                t.waitName = d.name;
                t.opcode = s.opcode;
                t.module = moduleIndex;
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
                    Link& link = a.links[l];
                    if (srcPeak > 0 && (dstPeak <= 0 || srcPeak <= dstPeak)) {
                        link.peakBytesPerNs = srcPeak;
                        link.peakSource =
                            srcKey + (dstPeak > 0 ? "" : " (" + destination + " states no peak)");
                    } else if (dstPeak > 0) {
                        link.peakBytesPerNs = dstPeak;
                        link.peakSource =
                            dstKey + (srcPeak > 0 ? "" : " (" + source + " states no peak)");
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
                        t.bytes = s.operands.empty() || !s.operands[0].shape
                                      ? s.shape.elementBytes(0)
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
                t.issueStep = int32_t(i);
                t.waitStep = int32_t(doneOfStart[i]);
                t.issue = start.slice.start;
                t.wait = done.slice.start;
                t.waitEnd = done.slice.end();
                t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs;
                // A wait that blocked ended when the data arrived.
                t.completeMeasured = t.blocked;
                if (t.blocked) t.complete = t.waitEnd;
                t.issueTrack = start.track;
                t.waitTrack = done.track;
                transferOfStep[i] = transferOfStep[doneOfStart[i]] = int64_t(t.id);
                run.transfers.push_back(t.id);
                a.transfers.push_back(std::move(t));
            }
            // In flight: the Async XLA Ops events of this run, named by their start's HLO.
            while (nextFlight < inFlight.size() && inFlight[nextFlight].first.start < from)
                ++nextFlight;
            for (size_t f = nextFlight; f < inFlight.size() && inFlight[f].first.start < to; ++f) {
                const auto* parsed = instructions.byArgs(inFlight[f].first);
                if (!parsed) continue;
                const hlo::Instruction* hloText = &*parsed->instruction;
                for (uint32_t id : run.transfers) {
                    Transfer& t = a.transfers[id];
                    if (t.name != hloText->name || t.inFlightTrack >= 0) continue;
                    t.inFlightTrack = inFlight[f].second;
                    t.inFlightStart = inFlight[f].first.start;
                    t.inFlightEnd = inFlight[f].first.end();
                    break;
                }
            }
            for (size_t i = 0; i < runOps.size(); ++i) {
                const Op& op = runOps[i];
                Step step;
                step.start = op.slice.start;
                step.end = op.slice.end();
                step.name = op.hlo ? std::string_view(op.hlo->name) : op.name;
                step.operands = op.operands;
                if (transferOfStep[i] >= 0) {
                    const Transfer& t = a.transfers[size_t(transferOfStep[i])];
                    step.role = t.issueStep == int32_t(i) ? Role::Issue : Role::Wait;
                    step.transfers = {t.id};
                }
                program.steps.push_back(std::move(step));
            }
            if (run.transfers.empty()) continue;
            a.modules.push_back(std::move(run));
            programs.push_back(std::move(program));
        }
        for (; nextOp < ops.size(); ++nextOp)
            if (mayBeAsyncOp(ops[nextOp].first)) ++outside;
        if (a.transfers.empty()) continue;
        model(a, programs);
        merge(all, std::move(a));
    }
    if (doneWithoutStart) all.unmatched["done_without_start"] = doneWithoutStart;
    if (startWithoutDone) all.unmatched["start_without_done"] = startWithoutDone;
    if (nestedModules) all.unmatched["nested_modules"] = nestedModules;
    if (outside) all.unmatched["async_ops_outside_modules"] = outside;
    if (unendedRuns) all.unmatched["runs_cut_by_profile_end"] = unendedRuns;
    if (all.transfers.empty() && all.unmatched.empty()) return all;
    all.source = "xprof";
    return all;
}

}  // namespace stallscope::transfers::detail
