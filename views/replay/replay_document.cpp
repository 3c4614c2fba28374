#include "views/replay/replay_document.h"

#include <QtConcurrent>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "core/errors.h"
#include "core/lanes.h"
#include "core/replay/codec.h"
#include "core/replay/derived_profile.h"
#include "core/replay/simulate.h"
#include "core/replay/whatif.h"

namespace stallscope {
namespace {

using replay::InstrKind;
using replay::kNone;

constexpr size_t kUnitBins = size_t{1} << 18;
constexpr size_t kMinimapBins = 1024;
constexpr uint32_t kDcacheBins = 1024;

void packLanes(ReplayDocument& doc) {
    const replay::InstructionStream& trace = doc.trace;
    const auto& timing = doc.analysis.sim.dmas;
    std::vector<std::vector<uint32_t>> byLink(trace.machine.links.size());
    for (uint32_t d = 0; d < trace.dmas.size(); ++d) byLink[trace.dmas[d].link].push_back(d);
    doc.dmaLane.assign(trace.dmas.size(), kNone);
    doc.dmaRow.assign(trace.dmas.size(), kNone);
    const auto endOf = [&](uint32_t d) {
        const auto& t = timing[d];
        return static_cast<double>(t.waitCycle == replay::kNoCycle
                                       ? t.completeCycle
                                       : std::max(t.completeCycle, t.waitCycle));
    };
    for (uint32_t link = 0; link < byLink.size(); ++link) {
        auto& dmas = byLink[link];
        if (dmas.empty()) continue;
        std::stable_sort(dmas.begin(), dmas.end(), [&](uint32_t a, uint32_t b) {
            return timing[a].issueCycle < timing[b].issueCycle;
        });
        ReplayDocument::Lane lane;
        lane.link = link;
        lane.name = QString::fromStdString(trace.machine.linkName(link));
        lane.dmaCount = dmas.size();
        // The lowest free row, so rows fill from the top.
        lanes::LaneAssigner<double> rows(lanes::Touching::NextLane);
        for (uint32_t d : dmas) {
            const double start = static_cast<double>(timing[d].issueCycle);
            const double end = std::max(start, endOf(d));
            const auto row = static_cast<uint32_t>(rows.place(start, end));
            if (row == lane.rows.size()) {
                lane.rows.emplace_back();
                lane.rows.back().stallPrefix.push_back(0);
            }
            auto& r = lane.rows[row];
            r.dmas.push_back(d);
            r.starts.push_back(start);
            r.ends.push_back(end);
            r.stallPrefix.push_back(
                r.stallPrefix.back() +
                static_cast<double>(timing[d].baseStall + timing[d].transferStall));
            doc.dmaLane[d] = static_cast<uint32_t>(doc.lanes.size());
            doc.dmaRow[d] = row;
        }
        doc.lanes.push_back(std::move(lane));
    }
}

void buildOpRuns(ReplayDocument& doc) {
    const auto& trace = doc.trace;
    const auto& sim = doc.analysis.sim;
    auto& runs = doc.opRuns;
    uint32_t current = kNone;
    for (uint32_t i = 0; i < trace.instrs.size(); ++i) {
        const auto& in = trace.instrs[i];
        const double end = static_cast<double>(sim.cycle[i] + in.cost + sim.stall[i]);
        if (in.hlo != kNone && in.hlo == current) {
            runs.ends.back() = end;
            ++runs.instrCount.back();
            continue;
        }
        current = in.hlo;
        if (in.hlo == kNone) continue;
        runs.starts.push_back(static_cast<double>(sim.cycle[i]));
        runs.ends.push_back(end);
        runs.hlo.push_back(in.hlo);
        runs.firstInstr.push_back(i);
        runs.instrCount.push_back(1);
    }
}

void buildUnits(ReplayDocument& doc) {
    const auto& trace = doc.trace;
    const auto& sim = doc.analysis.sim;
    const double total = std::max(1.0, doc.totalCycles());
    const double binWidth = std::max(1.0, std::ceil(total / kUnitBins));
    const size_t bins = static_cast<size_t>(std::ceil(total / binWidth));
    std::vector<int> unitSlot(trace.strings.size(), -1);
    struct Open {
        double start = 0, end = -1;
    };
    std::vector<Open> open;
    std::vector<double> busyTotal;
    for (uint32_t i = 0; i < trace.instrs.size(); ++i) {
        const auto& in = trace.instrs[i];
        if (in.kind != InstrKind::Plain) continue;
        int& slot = unitSlot[in.unit];
        if (slot < 0) {
            slot = static_cast<int>(doc.units.size());
            ReplayDocument::Unit unit;
            unit.unit = in.unit;
            unit.name = QString::fromStdString(trace.strings[in.unit]);
            unit.busy = BusyPrefix(binWidth, bins);
            doc.units.push_back(std::move(unit));
            open.emplace_back();
            busyTotal.push_back(0);
        }
        doc.maxBusy = std::max(doc.maxBusy, in.busy);
        const double start = static_cast<double>(sim.cycle[i]);
        const double end = start + in.busy;
        Open& o = open[static_cast<size_t>(slot)];
        if (start > o.end) {
            if (o.end > o.start) {
                doc.units[static_cast<size_t>(slot)].busy.addBusy(o.start, o.end);
                busyTotal[static_cast<size_t>(slot)] += o.end - o.start;
            }
            o = {start, end};
        } else {
            o.end = std::max(o.end, end);
        }
    }
    for (size_t u = 0; u < doc.units.size(); ++u) {
        if (open[u].end > open[u].start) {
            doc.units[u].busy.addBusy(open[u].start, open[u].end);
            busyTotal[u] += std::min(open[u].end, total) - open[u].start;
        }
        doc.units[u].busy.finish();
        doc.units[u].overall = busyTotal[u] / total;
    }
    // Matrix, vector, scalar first (the order of the paper's figure), then the rest by name.
    const auto rank = [](const QString& name) {
        static const QStringList order{"mxu", "vpu", "scalar"};
        const int i = static_cast<int>(order.indexOf(name));
        return i < 0 ? 100 : i;
    };
    std::stable_sort(doc.units.begin(), doc.units.end(), [&](const auto& a, const auto& b) {
        return rank(a.name) != rank(b.name) ? rank(a.name) < rank(b.name) : a.name < b.name;
    });
}

void buildMinimap(ReplayDocument& doc) {
    const double total = std::max(1.0, doc.totalCycles());
    BusyPrefix stall(total / kMinimapBins, kMinimapBins);
    for (const auto& t : doc.analysis.sim.dmas) {
        const uint64_t s = t.baseStall + t.transferStall;
        if (s == 0 || t.waitCycle == replay::kNoCycle) continue;
        stall.addBusy(static_cast<double>(t.waitCycle), static_cast<double>(t.waitCycle + s));
    }
    stall.finish();
    doc.stallDensity.resize(kMinimapBins);
    for (size_t b = 0; b < kMinimapBins; ++b)
        doc.stallDensity[b] = stall.busyBetween(b * stall.binWidth(), (b + 1) * stall.binWidth());
    doc.completions.reserve(doc.analysis.sim.dmas.size());
    for (const auto& t : doc.analysis.sim.dmas)
        doc.completions.push_back(static_cast<double>(t.completeCycle));
    std::sort(doc.completions.begin(), doc.completions.end());
}

QString cacheKey(const QString& path, const ProfileInfo& profile) {
    return path + QLatin1Char('\n') + QString::number(profile.id) + QLatin1Char('\n') +
           QString::fromStdString(profile.importedAt);
}

}  // namespace

std::pair<uint32_t, uint32_t> ReplayDocument::instructionsIn(double from, double to) const {
    const auto& cycles = analysis.sim.cycle;
    const auto lo = std::lower_bound(cycles.begin(), cycles.end(),
                                     static_cast<uint64_t>(std::max(0.0, std::ceil(from))));
    const auto hi =
        std::lower_bound(lo, cycles.end(), static_cast<uint64_t>(std::max(0.0, std::ceil(to))));
    return {static_cast<uint32_t>(lo - cycles.begin()), static_cast<uint32_t>(hi - cycles.begin())};
}

size_t ReplayDocument::memoryBytes() const {
    size_t bytes = trace.instrs.capacity() * sizeof(replay::Instr) + trace.regRefs.capacity() * 4 +
                   trace.memRefs.capacity() * sizeof(replay::Region) +
                   trace.dmas.capacity() * sizeof(replay::Dma);
    bytes += analysis.sim.cycle.capacity() * 16 +
             analysis.sim.dmas.capacity() * sizeof(replay::DmaTiming);
    for (const auto& lane : lanes)
        for (const auto& row : lane.rows) bytes += row.dmas.capacity() * 28;
    bytes += (opRuns.starts.capacity() * 28);
    for (const auto& u : units) bytes += u.busy.memoryBytes();
    bytes += completions.capacity() * 8 + dmaLane.capacity() * 8;
    return bytes;
}

ReplayDocumentPtr buildReplayDocument(replay::InstructionStream trace,
                                      std::optional<ProfileInfo> profile, bool withSuggestions) {
    auto doc = std::make_shared<ReplayDocument>();
    doc->profile = std::move(profile);
    doc->trace = std::move(trace);
    replay::AnalysisOptions options;
    options.dcache.bins = kDcacheBins;
    options.withSuggestions = withSuggestions;
    doc->analysis = replay::analyze(doc->trace, options);
    packLanes(*doc);
    buildOpRuns(*doc);
    buildUnits(*doc);
    buildMinimap(*doc);
    doc->wastedPages = doc->analysis.dcache.bucketWasted;
    return doc;
}

ReplayDocumentPtr loadReplayDocument(const QString& workspacePath, const ProfileInfo& profile) {
    auto workspace = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
    return buildReplayDocument(replay::loadInstructionStream(*workspace, profile.id), profile);
}

ReplayDocumentCache& ReplayDocumentCache::instance() {
    static ReplayDocumentCache cache;
    return cache;
}

QFuture<ReplayDocumentPtr> ReplayDocumentCache::load(const QString& workspacePath,
                                                     const ProfileInfo& profile) {
    const QString key = cacheKey(workspacePath, profile);
    // A finished load keeps only a weak reference, so closing every user frees the document.
    for (Entry& e : entries_) {
        if (!e.loading.isValid() || !e.loading.isFinished()) continue;
        try {
            e.document = e.loading.result();
        } catch (...) {
            e.document.reset();  // failed: the next request retries
        }
        e.loading = {};
    }
    std::erase_if(entries_,
                  [](const Entry& e) { return !e.loading.isValid() && e.document.expired(); });
    for (Entry& e : entries_) {
        if (e.key != key) continue;
        if (auto doc = e.document.lock()) return QtFuture::makeReadyFuture(doc);
        return e.loading;
    }
    Entry entry;
    entry.key = key;
    entry.loading = QtConcurrent::run(
        [workspacePath, profile] { return loadReplayDocument(workspacePath, profile); });
    entries_.push_back(entry);
    return entry.loading;
}

SuggestionPreview previewSuggestion(const ReplayDocument& document, size_t suggestion,
                                    bool fullAnalysis) {
    const auto& s = document.analysis.suggestions.at(suggestion);
    replay::EditedTrace edited = replay::applyPlan(document.trace, s.plan);
    SuggestionPreview preview;
    preview.suggestion = suggestion;
    std::optional<ProfileInfo> profile;
    if (document.profile) {
        profile = *document.profile;
        profile->name += " (preview)";
    }
    if (fullAnalysis) {
        preview.edited = buildReplayDocument(std::move(edited.trace), profile, false);
    } else {
        auto doc = std::make_shared<ReplayDocument>();
        doc->trace = std::move(edited.trace);
        doc->analysis.sim = replay::simulate(doc->trace);
        preview.edited = doc;
    }
    const auto& trace = preview.edited->trace;
    const auto& sim = preview.edited->analysis.sim;
    for (size_t d : s.dmaIndices) {
        const size_t editedIndex = trace.dmaIndexById(document.trace.dmas[d].id);
        if (editedIndex == kNone) continue;  // pinned: the DMA is gone
        preview.ghosts.push_back({d, static_cast<double>(sim.dmas[editedIndex].issueCycle),
                                  static_cast<double>(sim.dmas[editedIndex].completeCycle)});
    }
    preview.savingCycles = document.totalCycles() - static_cast<double>(sim.totalCycles);
    return preview;
}

ProfileInfo applySuggestionAsProfile(const QString& workspacePath, const ReplayDocument& document,
                                     size_t suggestion) {
    if (!document.profile) throw InputError("the suggestion's trace is not a stored profile");
    auto workspace = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadWrite);
    return replay::writeDerivedProfile(*workspace, *document.profile, document.trace,
                                       document.analysis.suggestions.at(suggestion));
}

}  // namespace stallscope
