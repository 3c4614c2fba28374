// The link model on derived transfers: fit, lifetimes, backtails, re-simulation, suggestions.
#include <QJsonArray>
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <span>
#include <unordered_map>

#include "core/release_memory.h"
#include "core/transfers/derive_common.h"
#include "core/transfers/model_internal.h"
#include "core/transfers/transfers.h"

namespace stallscope::transfers {

const char* backtailName(Backtail kind) {
    switch (kind) {
        case Backtail::ModuleStart:
            return "module-start";
        case Backtail::Producer:
            return "producer";
        case Backtail::PreviousSync:
            return "previous-sync";
        case Backtail::Unknown:
            break;
    }
    return "unknown";
}
namespace {

// Where the data a transfer reads comes from: a parameter (the module's start), an op's
// output earlier in the run, or nothing the trace shows (it cannot move).
bool isParameterName(const std::string& name) {
    return name.starts_with("param") || name.starts_with("Arg_") || name.starts_with("arg");
}

void backtails(Analysis& a, const RunProgram& program) {
    {
        const ModuleRun& run = a.modules[program.module];
        for (uint32_t id : run.transfers) {
            Transfer& t = a.transfers[id];
            if (t.sourceOperand.empty()) {
                // Set by the derivation; a sync inside the run ends where the run says.
                if (t.backtailKind == Backtail::PreviousSync && t.backtailStep >= 0 &&
                    size_t(t.backtailStep) < program.steps.size() &&
                    program.steps[size_t(t.backtailStep)].role == Role::Wait)
                    t.backtail = program.steps[size_t(t.backtailStep)].end;
                else if (t.backtailKind == Backtail::Unknown)
                    t.backtail = t.issue;
                continue;
            }
            t.backtailKind = Backtail::Unknown;
            t.backtail = t.issue;
            t.backtailStep = t.issueStep;
            for (int32_t s = t.issueStep - 1; s >= 0; --s) {
                if (program.steps[size_t(s)].name != t.sourceOperand) continue;
                t.backtailKind = Backtail::Producer;
                t.backtailOp = t.sourceOperand;
                t.backtailStep = s;
                t.backtail = std::min(t.issue, program.steps[size_t(s)].end);
                break;
            }
            if (t.backtailKind == Backtail::Unknown && isParameterName(t.sourceOperand)) {
                t.backtailKind = Backtail::ModuleStart;
                t.backtailStep = -1;
                t.backtail = run.start;
            }
        }
    }
}

}  // namespace

namespace linkmodel {

void timingOf(const ModuleRun& run, const RunProgram& program, Timing& t) {
    t.gap.clear();
    t.own.clear();
    int64_t cursor = run.start;
    for (const Step& s : program.steps) {
        t.gap.push_back(std::max<int64_t>(0, s.start - cursor));
        t.own.push_back(std::max<int64_t>(0, s.end - std::max(s.start, cursor)));
        cursor = std::max(cursor, s.end);
    }
    t.trailing = std::max<int64_t>(0, run.end - cursor);
}

int64_t simulateTimed(const Analysis& a, const RunProgram& program, const Timing& timing,
                      const SimEdit& edit) {
    const ModuleRun& run = a.modules[program.module];
    const bool identity = edit.order.empty();
    const size_t steps = identity ? program.steps.size() : edit.order.size();
    // Few links and transfers per run: flat lists beat hash maps here. Kept between calls (a
    // run is re-simulated once per edit tried, and runs are many).
    thread_local std::vector<std::pair<uint32_t, int64_t>> linkFree, complete;
    linkFree.clear();
    complete.clear();
    auto freeOf = [&](uint32_t link) -> int64_t& {
        for (auto& entry : linkFree)
            if (entry.first == link) return entry.second;
        return linkFree.emplace_back(link, run.start).second;
    };
    int64_t t = run.start;
    for (size_t k = 0; k < steps; ++k) {
        const uint32_t index = identity ? uint32_t(k) : edit.order[k];
        const Step& step = program.steps[index];
        t += timing.gap[index];
        if (step.role == Role::Issue) {
            for (uint32_t id : step.transfers) {
                const Transfer& x = a.transfers[id];
                const Link& link = a.links[x.link];
                const auto scale = edit.bytesScale.find(id);
                const double bytes =
                    double(x.bytes) * (scale == edit.bytesScale.end() ? 1.0 : scale->second);
                int64_t& free = freeOf(x.link);
                const int64_t start = std::max(t + link.baseLatencyNs, free);
                free = start + transferNs(link, bytes);
                complete.emplace_back(id, free);
            }
            t += timing.own[index];
        } else if (step.role == Role::Wait) {
            bool blocked = step.otherWorkEnd != INT64_MIN;
            for (uint32_t id : step.transfers) blocked = blocked || a.transfers[id].blocked;
            // A wait that did not block keeps its own (few ns) length.
            int64_t end = t + (blocked ? 0 : timing.own[index]);
            for (uint32_t id : step.transfers) {
                int64_t done = a.transfers[id].complete;  // issued before the run: as measured
                for (const auto& [issued, at] : complete)
                    if (issued == id) done = at;
                end = std::max(end, done + step.returnNs);
            }
            end = std::max(end, step.otherWorkEnd);
            t = end;
        } else {
            t += timing.own[index];
        }
    }
    return t + timing.trailing - run.start;
}

}  // namespace linkmodel

int64_t simulate(const Analysis& a, const RunProgram& program, const SimEdit& edit) {
    linkmodel::Timing timing;
    linkmodel::timingOf(a.modules[program.module], program, timing);
    return linkmodel::simulateTimed(a, program, timing, edit);
}

namespace detail {

struct Modeller::State {
    explicit State(Analysis& a) : byLink(a), passes(a) {}
    linkmodel::LinkLists byLink;
    linkmodel::SuggestionPasses passes;
    linkmodel::Timing timing;
};

Modeller::Modeller(Analysis& a) : a_(a) {
    for (Link& link : a.links) link.transfers = link.bytes = 0;
    for (const Transfer& t : a.transfers) {
        ++a.links[t.link].transfers;
        a.links[t.link].bytes += t.bytes;
    }
    state_ = std::make_unique<State>(a);
    linkmodel::fitLinks(a, state_->byLink);
    linkmodel::lifetimes(a, state_->byLink);
    a.suggestions.clear();
}

Modeller::~Modeller() = default;

void Modeller::backtails(const RunProgram& program) {
    transfers::backtails(a_, program);
}

void Modeller::run(const RunProgram& p) {
    ModuleRun& run = a_.modules[p.module];
    int64_t compute = 0;
    for (const Step& s : p.steps)
        if (s.role == Role::Compute) compute += s.end - s.start;
    run.computeNs = compute;
    // Re-simulated as measured, then with each edit tried on it: the timing computed once.
    linkmodel::Timing& timing = state_->timing;
    linkmodel::timingOf(run, p, timing);
    const int64_t simulated = run.simulatedNs = linkmodel::simulateTimed(a_, p, timing, SimEdit{});
    state_->passes.tryOn(p, state_->byLink.of(p.module), timing, simulated);
}

void Modeller::finish(bool summarizeRuns) {
    if (summarizeRuns) summarize(a_);
    state_->passes.finish();
}

}  // namespace detail

void model(Analysis& a, const std::vector<RunProgram>& programs) {
    detail::Modeller modeller(a);
    for (const RunProgram& p : programs) modeller.backtails(p);
    for (const RunProgram& p : programs) modeller.run(p);
    modeller.finish();
}

namespace detail {

// Each run's stall sums from its transfers.
void sumRuns(Analysis& a) {
    for (ModuleRun& run : a.modules) {
        run.stallNs = run.baseStallNs = run.transferStallNs = 0;
        for (uint32_t id : run.transfers) {
            const Transfer& t = a.transfers[id];
            run.stallNs += t.stall();
            run.baseStallNs += t.baseStall;
            run.transferStallNs += t.transferStall;
        }
    }
}

// The analysis' totals and model errors from its runs' sums.
void totalsFromRuns(Analysis& a) {
    a.totalNs = a.stallNs = a.baseStallNs = a.transferStallNs = 0;
    int64_t simTotal = 0;
    std::vector<double> errors;
    for (const ModuleRun& run : a.modules) {
        a.totalNs += run.measuredNs();
        a.stallNs += run.stallNs;
        a.baseStallNs += run.baseStallNs;
        a.transferStallNs += run.transferStallNs;
        simTotal += run.simulatedNs;
        errors.push_back(std::abs(run.errorPct()));
    }
    a.modelErrorPct =
        a.totalNs > 0 ? 100.0 * std::abs(double(simTotal - a.totalNs)) / double(a.totalNs) : 0;
    a.medianRunErrorPct = linkmodel::median(errors);
}

void summarize(Analysis& a) {
    sumRuns(a);
    totalsFromRuns(a);
}

MergedParts mergeKeepingTransfers(std::vector<Analysis>&& parts) {
    MergedParts out;
    Analysis& into = out.shell;
    size_t links = 0, modules = 0, suggestions = 0;
    for (Analysis& part : parts) {
        sumRuns(part);
        links += part.links.size();
        modules += part.modules.size();
        suggestions += part.suggestions.size();
    }
    into.links.reserve(links);
    into.modules.reserve(modules);
    into.suggestions.reserve(suggestions);
    uint32_t transferBase = 0;
    for (Analysis& part : parts) {
        TransferPart kept;
        kept.linkBase = uint32_t(into.links.size());
        kept.moduleBase = uint32_t(into.modules.size());
        kept.transferBase = transferBase;
        for (Link& link : part.links) into.links.push_back(std::move(link));
        for (ModuleRun& run : part.modules) {
            for (uint32_t& id : run.transfers) id += transferBase;
            into.modules.push_back(std::move(run));
        }
        for (Suggestion& s : part.suggestions) {
            for (uint32_t& id : s.transfers) id += transferBase;
            into.suggestions.push_back(std::move(s));
        }
        for (const auto& [what, count] : part.unmatched) into.unmatched[what] += count;
        transferBase += uint32_t(part.transfers.size());
        kept.transfers = std::move(part.transfers);
        part = Analysis();
        out.transfers.push_back(std::move(kept));
    }
    // Stable: at equal savings the parts' order, then each part's own.
    std::stable_sort(
        into.suggestions.begin(), into.suggestions.end(),
        [](const Suggestion& x, const Suggestion& y) { return x.savingNs > y.savingNs; });
    totalsFromRuns(into);
    return out;
}

Analysis merge(std::vector<Analysis>&& parts) {
    return join(mergeKeepingTransfers(std::move(parts)));
}

Analysis join(MergedParts&& merged) {
    Analysis into = std::move(merged.shell);
    size_t transfers = 0;
    for (const TransferPart& part : merged.transfers) transfers += part.transfers.size();
    into.transfers.reserve(transfers);
    for (TransferPart& part : merged.transfers) {
        for (Transfer& t : part.transfers) {
            t.id += part.transferBase;
            t.link += part.linkBase;
            t.module += part.moduleBase;
            into.transfers.push_back(t);
        }
        releaseMemory(part.transfers);  // its memory back before the next part moves
    }
    return into;
}

}  // namespace detail

}  // namespace stallscope::transfers
