#include "core/replay/suggest.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/errors.h"

namespace stallscope::replay {

namespace {

std::string regionText(const InstructionStream& trace, const Region& r) {
    return "[" + trace.machine.spaces[r.space].name + ", " + std::to_string(r.address) + ", " +
           std::to_string(r.bytes) + "]";
}

uint64_t stallOf(const Simulation& sim, size_t dma) {
    return sim.dmas[dma].baseStall + sim.dmas[dma].transferStall;
}

// First instruction in [from, limit) whose issue cycle is at least `cycle` (limit when none).
uint32_t firstAtCycle(const Simulation& sim, uint32_t from, uint32_t limit, uint64_t cycle) {
    if (from >= limit) return limit;
    auto it = std::lower_bound(sim.cycle.begin() + from, sim.cycle.begin() + limit, cycle);
    return static_cast<uint32_t>(it - sim.cycle.begin());
}

class Suggester {
  public:
    Suggester(const InstructionStream& trace, const Simulation& sim, const DependencyAnalysis& deps,
              DcacheAnalysis& dcache, const SuggestOptions& options)
        : trace_(trace),
          sim_(sim),
          deps_(deps),
          dcache_(dcache),
          options_(options),
          state_{trace, sim, deps, dcache},
          resim_(trace, sim) {}

    std::vector<Suggestion> run() {
        hoists();
        groups();
        pins();
        std::stable_sort(out_.begin(), out_.end(), [](const Suggestion& a, const Suggestion& b) {
            return a.savingCycles > b.savingCycles;
        });
        // Free-space evidence scans the occupancy index: only for the suggestions shown first,
        // and as the trace is (without this round's relocations).
        std::vector<OccupiedRun> reserved = std::move(dcache_.reserved);
        dcache_.reserved.clear();
        for (size_t k = 0; k < out_.size() && k < options_.evidenceLimit; ++k) {
            Suggestion& s = out_[k];
            if (s.kind != "hoist" || !dcache_.present) continue;
            const Dma& d = trace_.dmas[s.dmaIndices[0]];
            if (d.dst.space != dcache_.space) continue;
            const uint64_t freeBytes =
                dcache_.largestFree(sim_.cycle[s.toInstr], sim_.dmas[s.dmaIndices[0]].issueCycle);
            s.evidence.emplace_back("free_contiguous_bytes", static_cast<int64_t>(freeBytes));
        }
        dcache_.reserved = std::move(reserved);
        return std::move(out_);
    }

  private:
    // Re-simulates the plan; keeps the suggestion when it saves cycles.
    bool keep(Suggestion& s) {
        const ResimResult after = resimulatePlan(resim_, s.plan);
        s.savingCycles =
            static_cast<int64_t>(sim_.totalCycles) - static_cast<int64_t>(after.totalCycles);
        if (s.savingCycles <= 0) return false;
        s.evidence.emplace_back("saving_cycles", s.savingCycles);
        s.evidence.emplace_back("stall_cycles_after", static_cast<int64_t>(after.stallCycles));
        out_.push_back(std::move(s));
        return true;
    }

    void hoists() {
        for (size_t d = 0; d < trace_.dmas.size(); ++d) {
            const Dma& dma = trace_.dmas[d];
            const uint64_t stall = stallOf(sim_, d);
            if (stall == 0 || dma.waitInstr == kNone) continue;
            const DmaDependencies& dep = deps_.dmas[d];
            const uint64_t issueCycle = sim_.dmas[d].issueCycle;
            const uint64_t wanted = issueCycle > stall ? issueCycle - stall : 0;
            auto targetFor = [&](uint32_t backtail, uint64_t backtailCycle) {
                return firstAtCycle(sim_, backtail, dma.issueInstr,
                                    std::max(wanted, backtailCycle));
            };
            Suggestion s;
            uint64_t pushLimit = 0;
            uint32_t target = targetFor(dep.backtailInstr, dep.backtailCycle);
            bool planned = false;
            // When the destination's live data is what binds, a relocated destination may go
            // further; so may one whose pages share live data with other regions.
            const bool destinationBinds = dep.backtailInstrRelocated < dep.backtailInstr;
            const uint32_t relocatedTarget =
                targetFor(dep.backtailInstrRelocated, dep.backtailCycleRelocated);
            bool memoryAvailable = true;
            if (target < dma.issueInstr && dcache_.present && dma.dst.space == dcache_.space)
                memoryAvailable =
                    dcache_.isFree(dma.dst.address, dma.dst.bytes, sim_.cycle[target], issueCycle);
            if ((destinationBinds || !memoryAvailable) && relocatedTarget < dma.issueInstr) {
                try {
                    EditPlan plan = planHoist(state_, d, relocatedTarget, true);
                    // Pages shared with other live data and no relocation: not available.
                    if (plan.relocations.empty() && !memoryAvailable) continue;
                    s.plan = std::move(plan);
                    target = relocatedTarget;
                    pushLimit = issueCycle > dep.backtailCycleRelocated
                                    ? issueCycle - dep.backtailCycleRelocated
                                    : 0;
                    planned = true;
                } catch (const InputError&) {
                    planned = false;
                }
            }
            if (!planned) {
                if (target >= dma.issueInstr || !memoryAvailable) continue;
                try {
                    s.plan = planHoist(state_, d, target, false);
                } catch (const InputError&) {
                    continue;
                }
                pushLimit = issueCycle > dep.backtailCycle ? issueCycle - dep.backtailCycle : 0;
            }
            if (pushLimit == 0) continue;
            s.kind = "hoist";
            s.dmas = {dma.id};
            s.dmaIndices = {d};
            s.toInstr = target;
            s.partial = pushLimit < stall;
            const DmaTiming& t = sim_.dmas[d];
            s.evidence = {
                {"stall_cycles", static_cast<int64_t>(stall)},
                {"base_stall", static_cast<int64_t>(t.baseStall)},
                {"transfer_stall", static_cast<int64_t>(t.transferStall)},
                {"backtail_instrs", int64_t(dma.issueInstr) - int64_t(dep.backtailInstr)},
                {"backtail_cycles", static_cast<int64_t>(issueCycle > dep.backtailCycle
                                                             ? issueCycle - dep.backtailCycle
                                                             : 0)},
                {"push_limit", static_cast<int64_t>(pushLimit)},
                {"bytes", static_cast<int64_t>(dma.bytes())},
                {"moved_instrs", static_cast<int64_t>(s.plan.moves[0].instrs.size())}};
            std::string text =
                "Hoist DMA " + std::to_string(dma.id) + " (" + std::to_string(dma.bytes()) +
                " B, " + trace_.machine.linkName(dma.link) + ") from instruction " +
                std::to_string(dma.issueInstr) + " to before instruction " +
                std::to_string(target) + ": its WAIT stalls " + std::to_string(stall) +
                " cycles (" + std::to_string(t.baseStall) + " base latency, " +
                std::to_string(t.transferStall) + " transfer) and its dependencies allow " +
                std::to_string(pushLimit) + " cycles earlier";
            if (s.partial) text += " (partial: the backtail is shorter than the stall)";
            if (!s.plan.relocations.empty()) {
                const Relocation& r = s.plan.relocations[0];
                const Region moved{dma.dst.space, r.newAddress, dma.dst.bytes};
                text += "; its destination " + regionText(trace_, dma.dst) +
                        " is still live there, so it writes " + regionText(trace_, moved) +
                        " instead";
                s.evidence.emplace_back("relocated_to", static_cast<int64_t>(r.newAddress));
            }
            s.text = std::move(text);
            const auto relocations = s.plan.relocations;
            if (keep(s)) {
                // Later suggestions must not pick the same free region.
                for (const Relocation& r : relocations)
                    dcache_.reserve(r.newAddress, trace_.dmas[r.dma].dst.bytes, r.freeFrom,
                                    r.freeTo);
                out_.back().text +=
                    "; re-simulated saving " + std::to_string(out_.back().savingCycles) + " cycles";
            }
        }
    }

    uint32_t hloOf(size_t dma) const { return trace_.instrs[trace_.dmas[dma].issueInstr].hlo; }

    void groups() {
        std::vector<uint8_t> assigned(trace_.dmas.size(), 0);
        for (size_t j = 0; j < trace_.dmas.size(); ++j) {
            if (assigned[j] || stallOf(sim_, j) == 0) continue;
            const uint32_t firstIssue = trace_.dmas[j].issueInstr;
            std::vector<size_t> members{j};
            uint32_t target = deps_.dmas[j].backtailInstr;
            // Later DMAs of the same HLO op (what a compiler pass can reorder) that stall too, so
            // were waited before going on, and could already be issued where the first is.
            for (size_t k = j + 1; k < trace_.dmas.size() && k <= j + 4 * options_.maxGroup; ++k) {
                if (members.size() >= options_.maxGroup || hloOf(k) != hloOf(j)) break;
                if (assigned[k] || stallOf(sim_, k) == 0) continue;
                if (deps_.dmas[k].backtailInstr > firstIssue) continue;
                // One link: DMAs of one kind, like the paper's setup fetches.
                if (trace_.dmas[k].link != trace_.dmas[j].link) continue;
                members.push_back(k);
                target = std::max(target, deps_.dmas[k].backtailInstr);
            }
            if (members.size() < 2) continue;
            Suggestion s;
            try {
                s.plan = planGroup(state_, members, target);
            } catch (const InputError&) {
                continue;
            }
            uint64_t stall = 0, base = 0, transfer = 0, bytes = 0;
            for (size_t m : members) {
                assigned[m] = 1;
                s.dmas.push_back(trace_.dmas[m].id);
                s.dmaIndices.push_back(m);
                stall += stallOf(sim_, m);
                base += sim_.dmas[m].baseStall;
                transfer += sim_.dmas[m].transferStall;
                bytes += trace_.dmas[m].bytes();
            }
            s.kind = "group";
            s.toInstr = target;
            s.evidence = {{"dma_count", static_cast<int64_t>(members.size())},
                          {"stall_cycles", static_cast<int64_t>(stall)},
                          {"base_stall", static_cast<int64_t>(base)},
                          {"transfer_stall", static_cast<int64_t>(transfer)},
                          {"bytes", static_cast<int64_t>(bytes)},
                          {"backtail_instrs", int64_t(firstIssue) - int64_t(target)}};
            std::string ids;
            for (int64_t id : s.dmas) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
            s.text = "Issue DMAs " + ids + " together before instruction " +
                     std::to_string(target) +
                     ": they are issued one after another, each waited "
                     "before the next, but none depends on another; their base latencies (" +
                     std::to_string(base) + " stall cycles of " + std::to_string(stall) +
                     ") would overlap";
            if (keep(s))
                out_.back().text +=
                    "; re-simulated saving " + std::to_string(out_.back().savingCycles) + " cycles";
        }
    }

    void pins() {
        // Small DMAs fetching the same unchanged source into the same destination again and
        // again, with nothing else writing that destination in between.
        std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, uint64_t>, size_t> lastFetch;
        std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, uint64_t>, size_t> firstFetch;
        std::vector<size_t> repeats;
        std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, uint64_t>, uint64_t> keyBytes;
        for (size_t d = 0; d < trace_.dmas.size(); ++d) {
            const Dma& dma = trace_.dmas[d];
            if (dma.bytes() > options_.pinMaxBytes || dma.waitInstr == kNone) continue;
            if (!dcache_.present || dma.dst.space != dcache_.space) continue;
            const auto key = std::make_tuple(dma.src.space, dma.src.address, dma.src.bytes,
                                             dma.dst.space, dma.dst.address);
            auto it = lastFetch.find(key);
            if (it != lastFetch.end()) {
                const size_t prev = it->second;
                const bool sourceUnchanged =
                    deps_.dmas[d].sourceWriter == deps_.dmas[prev].sourceWriter;
                const bool destinationKept =
                    deps_.dmas[d].destinationWriter == trace_.dmas[prev].issueInstr;
                if (sourceUnchanged && destinationKept) {
                    repeats.push_back(d);
                    keyBytes[key] = dma.bytes();
                } else {
                    firstFetch[key] = d;
                }
            }
            lastFetch[key] = d;
        }
        if (repeats.empty()) return;
        uint64_t pinnedBytes = 0;
        for (const auto& [key, bytes] : keyBytes) pinnedBytes += bytes;
        if (pinnedBytes > options_.pinBudgetBytes) return;
        Suggestion s;
        uint64_t stall = 0, base = 0;
        for (size_t d : repeats) {
            EditPlan p = planRemoveDma(state_, d);
            s.plan.merge(p);
            s.dmas.push_back(trace_.dmas[d].id);
            s.dmaIndices.push_back(d);
            stall += stallOf(sim_, d);
            base += sim_.dmas[d].baseStall;
        }
        std::sort(s.plan.removed.begin(), s.plan.removed.end());
        s.kind = "pin";
        s.evidence = {{"removed_dmas", static_cast<int64_t>(repeats.size())},
                      {"pinned_regions", static_cast<int64_t>(keyBytes.size())},
                      {"pinned_bytes", static_cast<int64_t>(pinnedBytes)},
                      {"stall_cycles", static_cast<int64_t>(stall)},
                      {"base_stall", static_cast<int64_t>(base)}};
        s.text = "Pin " + std::to_string(keyBytes.size()) + " small read-only region(s) (" +
                 std::to_string(pinnedBytes) +
                 " B) in the data-cache: the same unchanged source is fetched again into the "
                 "same place " +
                 std::to_string(repeats.size()) + " more time(s); removing the repeats removes " +
                 std::to_string(stall) + " stall cycles (" + std::to_string(base) +
                 " base latency)";
        if (keep(s))
            out_.back().text +=
                "; re-simulated saving " + std::to_string(out_.back().savingCycles) + " cycles";
    }

    const InstructionStream& trace_;
    const Simulation& sim_;
    const DependencyAnalysis& deps_;
    DcacheAnalysis& dcache_;
    SuggestOptions options_;
    TraceState state_;
    IncrementalSimulator resim_;
    std::vector<Suggestion> out_;
};

}  // namespace

std::vector<Suggestion> suggest(const InstructionStream& trace, const Simulation& sim,
                                const DependencyAnalysis& deps, DcacheAnalysis& dcache,
                                const SuggestOptions& options) {
    return Suggester(trace, sim, deps, dcache, options).run();
}

Analysis analyze(const InstructionStream& trace, const AnalysisOptions& options) {
    Analysis a;
    a.sim = simulate(trace);
    a.deps = analyzeDependencies(trace, a.sim, options.dependencies);
    a.dcache = analyzeDcache(trace, a.sim, options.dcache);
    a.utilization = unitUtilization(trace, a.sim, options.utilizationBins);
    if (options.withSuggestions)
        a.suggestions = suggest(trace, a.sim, a.deps, a.dcache, options.suggest);
    return a;
}

WhatifResult applyAllSuggestions(const InstructionStream& trace, const AnalysisOptions& options,
                                 uint32_t maxRounds) {
    WhatifResult result;
    EditedTrace current{trace, {}};
    current.origIndex.resize(trace.instrs.size());
    std::iota(current.origIndex.begin(), current.origIndex.end(), 0u);
    AnalysisOptions roundOptions = options;
    roundOptions.suggest.evidenceLimit = 0;
    for (uint32_t round = 0; round < maxRounds; ++round) {
        const Analysis a = analyze(current.trace, roundOptions);
        if (round == 0) {
            result.beforeTotal = a.sim.totalCycles;
            result.beforeStall = a.sim.stallCycles;
        }
        // A relocated destination is memory the plan changes up to the last read of that data,
        // so its window reaches that far: another edit moving a write across those reads in the
        // same round would be judged against the unedited trace and could clobber the data.
        std::vector<uint32_t> slotInstr(current.trace.memRefs.size(), kNone);
        for (uint32_t i = 0; i < current.trace.instrs.size(); ++i) {
            const Instr& in = current.trace.instrs[i];
            for (uint32_t k = 0; k < uint32_t(in.memReads) + in.memWrites; ++k)
                slotInstr[in.memBegin + k] = i;
        }
        const auto windowOf = [&](const EditPlan& plan) {
            uint32_t end = plan.windowEnd();
            for (const Relocation& r : plan.relocations) {
                for (uint32_t slot : r.readerSlots) end = std::max(end, slotInstr[slot]);
                for (uint32_t reader : r.sourceReaders)
                    end = std::max(end, current.trace.dmas[reader].issueInstr);
            }
            return std::pair<uint32_t, uint32_t>(plan.windowBegin(), end);
        };
        std::vector<std::pair<uint32_t, uint32_t>> windows;
        std::vector<const Suggestion*> accepted;
        // In program order: an earlier edit changes what later ones see, never the reverse.
        std::vector<const Suggestion*> ordered;
        for (const Suggestion& s : a.suggestions) ordered.push_back(&s);
        std::stable_sort(ordered.begin(), ordered.end(),
                         [](const Suggestion* x, const Suggestion* y) {
                             return x->plan.windowBegin() < y->plan.windowBegin();
                         });
        for (const Suggestion* sp : ordered) {
            // A pair, not a structured binding: lambdas may capture bindings only from C++20
            // compilers on (clang 16), and the fuzz build uses clang 14.
            const auto window = windowOf(sp->plan);
            const auto begin = window.first, end = window.second;
            const bool overlaps = std::any_of(windows.begin(), windows.end(), [&](const auto& w) {
                return begin <= w.second && w.first <= end;
            });
            if (overlaps) {
                result.skipped.push_back(sp->kind + " of DMA " + std::to_string(sp->dmas[0]) +
                                         " overlaps an edit applied in the same round");
                continue;
            }
            windows.emplace_back(begin, end);
            accepted.push_back(sp);
        }
        // Every round's result is checked against the trace it edits; when the combination
        // breaks a dependency, the later half waits for the next round (re-planned on the edited
        // trace), and a single edit that breaks one is dropped with the reason.
        std::optional<EditedTrace> verified;
        while (!accepted.empty()) {
            EditPlan merged;
            for (const Suggestion* sp : accepted) merged.merge(sp->plan);
            EditedTrace next = applyPlan(current.trace, merged);
            const std::string broken =
                verifyDependencies(current.trace, next.trace, next.origIndex);
            if (broken.empty()) {
                verified = std::move(next);
                break;
            }
            if (accepted.size() == 1) {
                result.skipped.push_back(accepted[0]->kind + " of DMA " +
                                         std::to_string(accepted[0]->dmas[0]) +
                                         " would break a dependency: " + broken);
                accepted.clear();
                break;
            }
            accepted.resize(accepted.size() / 2);
        }
        if (!verified) break;
        const EditedTrace& next = *verified;
        const Simulation check = simulate(next.trace);
        if (check.totalCycles >= a.sim.totalCycles) break;  // the combination does not pay off
        for (const Suggestion* sp : accepted) {
            AppliedEdit applied;
            applied.kind = sp->kind;
            applied.dmas = sp->dmas;
            applied.toInstr = sp->toInstr == kNone ? kNone : current.origIndex[sp->toInstr];
            applied.predictedSaving = sp->savingCycles;
            applied.relocated = !sp->plan.relocations.empty();
            result.applied.push_back(applied);
        }
        EditedTrace advanced = std::move(*verified);
        for (uint32_t& o : advanced.origIndex) o = current.origIndex[o];
        current = std::move(advanced);
    }
    const Simulation last = simulate(current.trace);
    result.afterTotal = last.totalCycles;
    result.afterStall = last.stallCycles;
    result.edited = std::move(current);
    return result;
}

}  // namespace stallscope::replay
