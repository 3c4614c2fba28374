// Chrome Trace Event JSON: the builder's tracks (process -> thread, counter and global tracks),
// slices, instants, counter samples and metadata events, and what the file left open at its end.
#include <algorithm>
#include <cmath>

#include "core/checked_number.h"
#include "core/errors.h"
#include "importers/chrome/chrome_builder.h"

namespace stallscope::chrome {

using trace::TrackKind;
using trace::TrackSpec;

bool parseInt(std::string_view text, int64_t& out) {
    if (text.empty()) return false;
    int64_t v = 0;
    size_t i = text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    for (; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9' || v > INT64_MAX / 10 - 10) return false;
        v = v * 10 + (text[i] - '0');
    }
    out = text[0] == '-' ? -v : v;
    return true;
}

namespace {

// Categories only the PyTorch profiler writes (Kineto: GPU activities, runtime calls, ops).
bool isKinetoCategory(std::string_view cat) {
    static constexpr std::string_view kCategories[] = {"kernel",
                                                       "gpu_memcpy",
                                                       "gpu_memset",
                                                       "cuda_runtime",
                                                       "cuda_driver",
                                                       "cpu_op",
                                                       "python_function",
                                                       "user_annotation",
                                                       "ac2g",
                                                       "cuda_sync",
                                                       "gpu_user_annotation",
                                                       "cuda_profiler_range",
                                                       "mtia_ccp_events",
                                                       "Kernel",
                                                       "Runtime",
                                                       "Memcpy"};
    for (std::string_view c : kCategories)
        if (cat == c) return true;
    return false;
}

}  // namespace

void ChromeTraceBuilder::add(const RawEvent& ev) {
    ++events_;
    if (!kineto_ && !ev.cat.empty()) kineto_ = isKinetoCategory(ev.cat);
    repairedValues_ += ev.repairs;
    const char phase = ev.ph.size() == 1 ? ev.ph[0] : '\0';
    if (ev.ph.size() == 1)
        ++onePhaseCounts_[uint8_t(phase)];
    else
        ++phases_[std::string(ev.ph)];
    if (ev.hasTs) {
        int64_t end = 0;
        if (__builtin_add_overflow(ev.tsNs, std::max<int64_t>(ev.durNs, 0), &end))
            end = INT64_MAX - 2;
        lastTs_ = std::max(lastTs_, end);
        if (!haveTs_ || ev.tsNs < firstTs_) firstTs_ = ev.tsNs;
        haveTs_ = true;
    }
    if (phase != 'M' && !ev.hasTs && phase != '\0' &&
        std::string_view("XBEiIbenSTFCstf").find(phase) != std::string_view::npos)
        throw InputError(atOffset(path_, static_cast<long long>(ev.offset),
                                  "event with ph \"" + std::string(ev.ph) + "\" has no \"ts\""));
    switch (phase) {
        case 'X':
            complete(ev);
            break;
        case 'B':
            begin(ev);
            break;
        case 'E':
            end(ev);
            break;
        case 'i':
        case 'I':
        case 'R':  // a mark (Chrome's navigation and paint timings): an instant, as catapult
            instant(ev);
            break;
        case 'C':
            counter(ev);
            break;
        case 'b':
        case 'e':
        case 'n':
        case 'S':
        case 'T':
        case 'p':
        case 'F':
            holdAsync(ev, phase);
            break;
        case 's':
        case 't':
        case 'f':
            flowV1(ev, phase);
            break;
        case 'M':
            metadata(ev);
            break;
        default:
            ++ignored_[std::string(ev.ph)];
    }
}

QJsonObject ChromeTraceBuilder::finish() {
    replayAsync();
    // Slices that never ended are kept, drawn to the end of the trace and marked: their
    // duration is unknown, so the statistics leave them out.
    for (auto& [track, stack] : open_) {
        for (const OpenSlice& o : stack) {
            writer_.addSlice(track, o.start, span(o.start, o.startPs, lastTs_, 0).first, o.name,
                             o.args, o.startPs, 0, false, o.order);
            ++unterminated_;
        }
    }
    for (auto& [key, stack] : async_) {
        for (const OpenSlice& o : stack) {
            writer_.addSlice(o.track, o.start, span(o.start, o.startPs, lastTs_, 0).first, o.name,
                             o.args, o.startPs, 0, false, o.order);
            ++unterminated_;
        }
    }
    pairFlows();
    // Lanes of concurrent async slices sort right after the first one of their name.
    for (auto& [key, group] : asyncGroups_) {
        for (size_t lane = 0; lane < group.lanes.size(); ++lane)
            writer_.track(group.lanes[lane]).sortIndex = kAsyncSortBase +
                                                         int64_t(group.ordinal) * kMaxLanes +
                                                         int64_t(std::min(lane, kMaxLanes - 1));
    }
    for (auto& [pid, p] : processes_) {
        TrackSpec& spec = writer_.track(p.track);
        spec.name = p.name.empty() ? "Process " + std::string(pid) : p.name;
        // A label repeating the name (Kineto's MTIA: "MTIA 17" labelled "MTIA 17") once.
        if (!p.labels.empty() && p.labels != spec.name) spec.name += " (" + p.labels + ")";
    }

    QJsonObject o;
    o.insert("events", qint64(events_));
    for (size_t c = 0; c < onePhaseCounts_.size(); ++c)
        if (onePhaseCounts_[c] > 0) phases_[std::string(1, char(c))] += onePhaseCounts_[c];
    onePhaseCounts_.fill(0);
    QJsonObject phases;
    for (const auto& [ph, n] : phases_) phases.insert(QString::fromStdString(ph), qint64(n));
    o.insert("phases", phases);
    QJsonObject ignored;
    for (const auto& [ph, n] : ignored_) ignored.insert(QString::fromStdString(ph), qint64(n));
    if (!ignored.isEmpty()) o.insert("ignored_events", ignored);
    o.insert("unmatched_end_events", qint64(unmatchedEnd_));
    o.insert("repaired_values", qint64(repairedValues_));
    o.insert("unterminated_slices", qint64(unterminated_));
    o.insert("async_closed_by_parent", qint64(closedByParent_));
    o.insert("async_lanes", qint64(extraLanes_));
    o.insert("unmatched_flow_events", qint64(unmatchedFlowStarts_ + unmatchedFlowEnds_));
    o.insert("unmatched_flow_starts", qint64(unmatchedFlowStarts_));
    o.insert("unmatched_flow_ends", qint64(unmatchedFlowEnds_));
    o.insert("flow_events", qint64(flowEvents_.size()));
    o.insert("flows_ending_before_start", qint64(backwardFlows_));
    return o;
}

uint64_t ChromeTraceBuilder::argsOf(const RawEvent& ev) {
    if (ev.args.empty() || ev.args == "{}") return 0;
    return writer_.addArgs(ev.args);
}

uint32_t ChromeTraceBuilder::process(std::string_view pid) {
    auto it = processes_.find(pid);
    if (it != processes_.end()) return it->second.track;
    TrackSpec spec;
    spec.kind = TrackKind::Process;
    spec.parent = parentTrack_;
    spec.pid = std::string(pid);
    int64_t numeric = 0;
    spec.sortIndex = parseInt(pid, numeric) ? numeric : INT32_MAX;
    const uint32_t id = writer_.addTrack(std::move(spec));
    processes_.emplace(std::string(pid), Process{id, {}, {}});
    return id;
}

uint32_t ChromeTraceBuilder::thread(std::string_view pid, std::string_view tid) {
    for (size_t i = 0; i < recentThreadsUsed_; ++i)
        if (recentThreads_[i].tid == tid && recentThreads_[i].pid == pid)
            return recentThreads_[i].track;
    const uint32_t track = lookUpThread(pid, tid);
    RecentThread& recent = recentThreads_[recentThreadNext_];
    recentThreadNext_ = (recentThreadNext_ + 1) % recentThreads_.size();
    recentThreadsUsed_ = std::min(recentThreadsUsed_ + 1, recentThreads_.size());
    recent.pid.assign(pid);
    recent.tid.assign(tid);
    recent.track = track;
    return track;
}

uint32_t ChromeTraceBuilder::lookUpThread(std::string_view pid, std::string_view tid) {
    key_.assign(pid);
    key_.push_back('\x1f');
    key_.append(tid);
    auto it = threads_.find(key_);
    if (it != threads_.end()) return it->second;
    TrackSpec spec;
    spec.kind = TrackKind::Thread;
    spec.parent = process(pid);
    spec.pid = std::string(pid);
    spec.tid = std::string(tid);
    spec.name = "Thread " + std::string(tid);
    int64_t numeric = 0;
    spec.sortIndex = parseInt(tid, numeric) ? numeric : INT32_MAX;
    const uint32_t id = writer_.addTrack(std::move(spec));
    threads_.emplace(key_, id);
    return id;
}

uint32_t ChromeTraceBuilder::namedTrack(std::string_view pid, TrackKind kind,
                                        const std::string& name) {
    key_.assign(pid);
    key_.push_back(char('0' + int(kind)));
    key_.append(name);
    auto it = named_.find(key_);
    if (it != named_.end()) return it->second;
    TrackSpec spec;
    spec.kind = kind;
    spec.parent = process(pid);
    spec.pid = std::string(pid);
    spec.name = name;
    // Counter tracks come after the process's threads and async tracks.
    spec.sortIndex = (int64_t(INT32_MAX) + int64_t(kind)) << 24;
    const uint32_t id = writer_.addTrack(std::move(spec));
    named_.emplace(key_, id);
    return id;
}

uint32_t ChromeTraceBuilder::globalTrack() {
    if (global_ == UINT32_MAX) {
        TrackSpec spec;
        spec.kind = TrackKind::Global;
        spec.parent = parentTrack_;
        spec.name = "Global";
        spec.sortIndex = INT64_MIN;
        global_ = writer_.addTrack(std::move(spec));
    }
    return global_;
}

void ChromeTraceBuilder::complete(const RawEvent& ev) {
    const uint32_t track = thread(ev.pid, ev.tid);
    const uint32_t name = writer_.intern(ev.name);
    writer_.addSlice(track, ev.tsNs, ev.hasDur ? ev.durNs : 0, name, argsOf(ev), ev.tsPs,
                     ev.hasDur ? ev.durPs : 0);
    flowV2(ev, track);
}

void ChromeTraceBuilder::begin(const RawEvent& ev) {
    const uint32_t track = thread(ev.pid, ev.tid);
    open_[track].push_back({ev.tsNs, writer_.intern(ev.name), argsOf(ev), track, ev.tsPs,
                            writer_.reserveSliceOrder()});
    flowV2(ev, track);
}

void ChromeTraceBuilder::addClosed(uint32_t track, const OpenSlice& o, const RawEvent& ev,
                                   uint64_t args) {
    const auto [dur, durPs] = span(o.start, o.startPs, ev.tsNs, ev.tsPs);
    writer_.addSlice(track, o.start, dur, o.name, args, o.startPs, durPs, true, o.order);
}

std::pair<int64_t, uint16_t> ChromeTraceBuilder::span(int64_t ns, uint16_t ps, int64_t endNs,
                                                      uint16_t endPs) {
    if (endNs < ns || (endNs == ns && endPs < ps)) return {0, 0};
    int64_t whole = 0;
    if (__builtin_sub_overflow(endNs, ns, &whole)) return {INT64_MAX / 2, 0};
    int remainder = int(endPs) - int(ps);
    if (remainder < 0) {
        remainder += 1000;
        --whole;
    }
    return {whole, uint16_t(remainder)};
}

void ChromeTraceBuilder::end(const RawEvent& ev) {
    const uint32_t track = thread(ev.pid, ev.tid);
    auto& stack = open_[track];
    if (stack.empty()) {
        ++unmatchedEnd_;
        return;
    }
    const OpenSlice o = stack.back();
    stack.pop_back();
    // Args given on the E event count when B had none.
    const uint64_t args = o.args ? o.args : argsOf(ev);
    addClosed(track, o, ev, args);
}

void ChromeTraceBuilder::instant(const RawEvent& ev) {
    uint32_t track;
    if (ev.scope == "g")
        track = globalTrack();
    else if (ev.scope == "p")
        track = process(ev.pid);
    else
        track = thread(ev.pid, ev.tid);
    writer_.addInstant(track, ev.tsNs, writer_.intern(ev.name), argsOf(ev));
}

void ChromeTraceBuilder::counter(const RawEvent& ev) {
    std::string base(ev.name);
    if (ev.hasId) base += " " + scalarValue(ev.id);
    const bool ok = forEachMember(ev.args, [&](std::string_view key, std::string_view raw) {
        double value = 0;
        if (!numberValue(raw, value)) return;
        const std::string name = key == "value" ? base : base + " " + std::string(key);
        writer_.addCounter(namedTrack(ev.pid, TrackKind::Counter, name), ev.tsNs, value);
    });
    if (!ok && !ev.args.empty())
        throw InputError(atOffset(path_, static_cast<long long>(ev.offset),
                                  "counter event \"" + base + "\" has malformed \"args\""));
}

void ChromeTraceBuilder::metadata(const RawEvent& ev) {
    std::string value;
    int64_t sortIndex = 0;
    bool haveSort = false;
    forEachMember(ev.args, [&](std::string_view key, std::string_view raw) {
        if (key == "name" || key == "labels") value = scalarValue(raw);
        if (key == "sort_index") {
            double v = 0;
            // Sort indexes beyond int32 (1e300, inf) are not an order anyone meant: ignored.
            const auto index =
                numberValue(raw, v) ? integralIfInRange<int32_t>(std::trunc(v)) : std::nullopt;
            haveSort = index.has_value();
            sortIndex = index.value_or(0);
        }
    });
    while (!value.empty() && value.back() == ' ') value.pop_back();
    if (ev.name == "process_name") {
        process(ev.pid);
        processes_.find(ev.pid)->second.name = value;
    } else if (ev.name == "process_labels") {
        process(ev.pid);
        processes_.find(ev.pid)->second.labels = value;
    } else if (ev.name == "process_sort_index" && haveSort) {
        writer_.track(process(ev.pid)).sortIndex = sortIndex;
    } else if (ev.name == "thread_name") {
        writer_.track(thread(ev.pid, ev.tid)).name = value;
    } else if (ev.name == "thread_sort_index" && haveSort) {
        writer_.track(thread(ev.pid, ev.tid)).sortIndex = sortIndex;
    } else {
        ++ignored_["M:" + std::string(ev.name)];
    }
}

}  // namespace stallscope::chrome
