// Edits tried on every run of the link model, re-simulated: hoists, reorders, overlaps and
// transfer-bound runs, summed per program.

#include <QJsonArray>
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "core/transfers/model_internal.h"

namespace stallscope::transfers::linkmodel {

namespace {

// Moves step `from` to just before position `before` of the identity order.
std::vector<uint32_t> moved(size_t steps, uint32_t from, uint32_t before) {
    std::vector<uint32_t> order(steps);
    std::iota(order.begin(), order.end(), 0u);
    order.erase(order.begin() + from);
    const uint32_t at = before > from ? before - 1 : before;
    order.insert(order.begin() + at, from);
    return order;
}

// An edit as the run that first saved anything describes it.
struct Candidate {
    std::string kind;
    std::vector<uint32_t> transfers;
    std::string toOp;
    int64_t saving = 0;
    QJsonObject evidence;
    std::string text;
};

// Edits summed per (program, edit) as the runs yield them: the saving over the runs it applies
// to, the evidence and transfers of its first run. A program runs thousands of times, so an
// edit is described (evidence, text) once: formatting it per run cost more than re-simulating.
class Candidates {
  public:
    explicit Candidates(Analysis& a) : a_(a) {}
    // Counts one run's saving for the edit whose key is the concatenation of `key` (the same
    // across runs of one program); true when the edit is new, and the caller describe()s it
    // next. The key is only put together for a saving: most runs' edits save nothing.
    bool count(uint32_t module, std::initializer_list<std::string_view> key, int64_t saving) {
        if (saving <= 0) return false;
        const std::string& program = a_.modules[module].name;
        key_.clear();
        for (const std::string_view part : key) key_ += part;
        auto& edits = index_[program];
        auto it = edits.find(key_);
        const bool fresh = it == edits.end();
        if (fresh) {
            it = edits.emplace(key_, a_.suggestions.size()).first;
            Suggestion s;
            s.program = program;
            a_.suggestions.push_back(std::move(s));
        }
        Suggestion& s = a_.suggestions[it->second];
        ++s.runs;
        s.savingNs += saving;
        return fresh;
    }
    // Describes the edit count() just found new.
    void describe(Candidate c) {
        Suggestion& s = a_.suggestions.back();
        s.kind = std::move(c.kind);
        s.transfers = std::move(c.transfers);
        s.toOp = std::move(c.toOp);
        s.evidence = std::move(c.evidence);
        s.text = std::move(c.text);
    }

  private:
    Analysis& a_;
    // Program -> edit key -> index in a_.suggestions.
    std::unordered_map<std::string, std::unordered_map<std::string, size_t>> index_;
    std::string key_;
};

QString ms(int64_t ns) {
    return QString::number(double(ns) / 1e6, 'f', 3) + " ms";
}
QString gbps(double bytesPerNs) {
    return QString::number(bytesPerNs, 'f', 2) + " GB/s";
}
QString bytesText(uint64_t bytes) {
    if (bytes >= 1000000000ull) return QString::number(double(bytes) / 1e9, 'f', 2) + " GB";
    if (bytes >= 1000000ull) return QString::number(double(bytes) / 1e6, 'f', 2) + " MB";
    return QString::number(qulonglong(bytes)) + " bytes";
}

void hoists(const Analysis& a, const RunProgram& p, const Timing& timing, int64_t before,
            Candidates& out) {
    for (uint32_t id : a.modules[p.module].transfers) {
        const Transfer& t = a.transfers[id];
        if (t.stall() <= 0 || t.issueStep < 0) continue;
        const uint32_t earliest = uint32_t(t.backtailStep + 1);  // -1 (module start) -> 0
        if (t.backtailKind == Backtail::Unknown || earliest >= uint32_t(t.issueStep)) continue;
        // SnR: to issue - stall, or the backtail if that is nearer; both re-simulated.
        uint32_t byStall = uint32_t(t.issueStep);
        while (byStall > earliest && p.steps[byStall - 1].start >= t.issue - t.stall()) --byStall;
        // The two targets in ascending order, once each (the first one saving most wins).
        const std::array<uint32_t, 2> targets{std::min(earliest, byStall),
                                              std::max(earliest, byStall)};
        Candidate best;
        for (size_t k = 0; k < targets.size(); ++k) {
            const uint32_t to = targets[k];
            if (k > 0 && to == targets[0]) continue;
            if (to >= uint32_t(t.issueStep)) continue;
            SimEdit edit;
            edit.order = moved(p.steps.size(), uint32_t(t.issueStep), to);
            const int64_t saving = before - simulateTimed(a, p, timing, edit);
            if (saving <= best.saving) continue;
            best.saving = saving;
            best.toOp = to == 0 ? std::string() : std::string(p.steps[to - 1].name);
        }
        if (!out.count(p.module, {"hoist ", t.name.str()}, best.saving)) continue;
        best.kind = "hoist";
        best.transfers = {id};
        best.evidence = QJsonObject{{"stall_ns", qint64(t.stall())},
                                    {"push_limit_ns", qint64(t.issue - t.backtail)},
                                    {"backtail_kind", backtailName(t.backtailKind)},
                                    {"bytes", qint64(t.bytes)}};
        best.text = QString(
                        "Issue %1 earlier, after %2 (its data is ready %3 before the issue): "
                        "its wait stalls %4")
                        .arg(QString::fromStdString(t.name),
                             best.toOp.empty() ? QString("the module's start")
                                               : QString::fromStdString(best.toOp),
                             ms(t.issue - t.backtail), ms(t.stall()))
                        .toStdString();
        out.describe(std::move(best));
    }
}

// A transfer queued behind one issued before it on the same link, yet waited for first:
// issue it first (when its data allows).
void reorders(const Analysis& a, const RunProgram& p, std::span<const LinkLists::Group> byLink,
              const Timing& timing, int64_t before, Candidates& out) {
    for (const auto& [l, list] : byLink) {
        for (size_t j = 1; j < list.size(); ++j) {
            const Transfer& late = a.transfers[list[j]];
            if (late.queueNs <= 0 || late.stall() <= 0 || !late.waited) continue;
            for (size_t i = 0; i < j; ++i) {
                const Transfer& early = a.transfers[list[i]];
                if (!(late.wait < early.wait) || early.issueStep < 0) continue;
                if (late.backtailKind == Backtail::Unknown || late.backtailStep >= early.issueStep)
                    continue;
                SimEdit edit;
                edit.order =
                    moved(p.steps.size(), uint32_t(late.issueStep), uint32_t(early.issueStep));
                const int64_t saving = before - simulateTimed(a, p, timing, edit);
                if (!out.count(p.module,
                               {"reorder ", late.name.str(), " before ", early.name.str()}, saving))
                    break;
                Candidate c;
                c.saving = saving;
                c.kind = "reorder";
                c.transfers = {list[j], list[i]};
                c.toOp = early.name;
                c.evidence = QJsonObject{{"queue_ns", qint64(late.queueNs)},
                                         {"stall_ns", qint64(late.stall())},
                                         {"link", QString::fromStdString(a.links[l].name)}};
                c.text =
                    QString(
                        "Issue %1 before %2 on link %3: it is waited for first but "
                        "queues %4 behind it")
                        .arg(QString::fromStdString(late.name), QString::fromStdString(early.name),
                             QString::fromStdString(a.links[l].name), ms(late.queueNs))
                        .toStdString();
                out.describe(std::move(c));
                break;
            }
        }
    }
}

// Compute after a blocked wait that needs nothing the wait brings (nor anything after it):
// it can run while the transfer is still on its way.
// A run's step and operand names as run-local numbers: the overlap search asks of every
// operand of every op after each stalled wait whether it was produced before the wait or moved
// above it. Runs of one program usually view the very same names (the same parsed HLO), so
// their numbering is kept per program and reused when every view is the same.
struct RunNames {
    static constexpr uint32_t kAbsent = UINT32_MAX;  // no step of the run has the name
    std::vector<std::string_view> stepNames;
    std::vector<std::span<const std::string_view>> stepOperands;
    std::vector<uint32_t> stepId;        // per step
    std::vector<uint32_t> firstStep;     // per name: the first step with it
    std::vector<uint32_t> operandIds;    // every step's operands in turn
    std::vector<uint32_t> operandBegin;  // per step, and the end

    bool views(const RunProgram& p) const {
        if (p.steps.size() != stepNames.size()) return false;
        for (size_t s = 0; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            if (step.name.data() != stepNames[s].data() ||
                step.name.size() != stepNames[s].size() ||
                step.operands.data() != stepOperands[s].data() ||
                step.operands.size() != stepOperands[s].size())
                return false;
        }
        return true;
    }
    void number(const RunProgram& p, std::unordered_map<std::string_view, uint32_t>& ids) {
        ids.clear();
        stepNames.clear();
        stepOperands.clear();
        stepId.clear();
        firstStep.clear();
        operandIds.clear();
        operandBegin.clear();
        for (uint32_t s = 0; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            stepNames.push_back(step.name);
            stepOperands.push_back(step.operands);
            const auto [it, fresh] = ids.try_emplace(step.name, uint32_t(firstStep.size()));
            if (fresh) firstStep.push_back(s);
            stepId.push_back(it->second);
        }
        for (const Step& step : p.steps) {
            operandBegin.push_back(uint32_t(operandIds.size()));
            for (const std::string_view operand : step.operands) {
                const auto it = ids.find(operand);
                operandIds.push_back(it == ids.end() ? kAbsent : it->second);
            }
        }
        operandBegin.push_back(uint32_t(operandIds.size()));
    }
};

// What overlaps() keeps between runs: numberings per program and buffers.
struct OverlapScratch {
    std::unordered_map<std::string, RunNames> byProgram;
    std::unordered_map<std::string_view, uint32_t> ids;
    std::vector<uint32_t> movedAt;  // per name: 1 + the wait it was moved above
    std::vector<uint32_t> independent;
};

// Compute after a blocked wait that needs nothing the wait brings (nor anything after it):
// it can run while the transfer is still on its way.
void overlaps(const Analysis& a, const RunProgram& p, const Timing& timing, int64_t before,
              Candidates& out, OverlapScratch& scratch) {
    const RunNames* names = nullptr;
    for (uint32_t w = 0; w < p.steps.size(); ++w) {
        const Step& wait = p.steps[w];
        if (wait.role != Role::Wait) continue;
        int64_t stall = 0;
        for (uint32_t id : wait.transfers) stall = std::max(stall, a.transfers[id].stall());
        if (stall <= 0) continue;
        if (!names) {
            RunNames& program = scratch.byProgram[a.modules[p.module].name];
            if (!program.views(p)) program.number(p, scratch.ids);
            names = &program;
            scratch.movedAt.assign(names->firstStep.size(), 0);
        }
        // An operand holds the op back when a step of the run produces it, none before the
        // wait (firstStep), and it was not moved above the wait along with the independent ops.
        std::vector<uint32_t>& independent = scratch.independent;
        independent.clear();
        for (uint32_t s = w + 1; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            bool free = step.role == Role::Compute && !step.operands.empty();
            for (uint32_t k = names->operandBegin[s]; free && k < names->operandBegin[s + 1]; ++k) {
                const uint32_t id = names->operandIds[k];
                if (id != RunNames::kAbsent && names->firstStep[id] >= w &&
                    scratch.movedAt[id] != w + 1)
                    free = false;
            }
            if (!free) continue;
            independent.push_back(s);
            scratch.movedAt[names->stepId[s]] = w + 1;
        }
        if (independent.empty()) continue;
        std::vector<uint32_t> order;
        for (uint32_t s = 0; s < w; ++s) order.push_back(s);
        for (uint32_t s : independent) order.push_back(s);
        order.push_back(w);
        // The rest in order (independent is ascending).
        size_t next = 0;
        for (uint32_t s = w + 1; s < p.steps.size(); ++s) {
            if (next < independent.size() && independent[next] == s) {
                ++next;
                continue;
            }
            order.push_back(s);
        }
        SimEdit edit;
        edit.order = std::move(order);
        const int64_t saving = before - simulateTimed(a, p, timing, edit);
        if (!out.count(p.module, {"overlap ", wait.name}, saving)) continue;
        Candidate c;
        c.saving = saving;
        c.kind = "overlap";
        c.transfers = wait.transfers;
        c.toOp = std::string(wait.name);
        int64_t work = 0;
        for (uint32_t s : independent) work += p.steps[s].end - p.steps[s].start;
        c.evidence = QJsonObject{{"stall_ns", qint64(stall)},
                                 {"independent_ops", qint64(independent.size())},
                                 {"independent_work_ns", qint64(work)}};
        c.text =
            QString(
                "Run %1 independent op(s) (%2 of work) before %3, while its transfer "
                "is in flight: it stalls %4")
                .arg(qint64(independent.size()))
                .arg(ms(work), QString::fromUtf8(wait.name.data(), qsizetype(wait.name.size())),
                     ms(stall))
                .toStdString();
        out.describe(std::move(c));
    }
}

// A link busy the whole time its waits stall: only fewer bytes or another link help.
void transferBound(const Analysis& a, const RunProgram& p, std::span<const LinkLists::Group> byLink,
                   const Timing& timing, int64_t before, Candidates& out) {
    for (const auto& [l, list] : byLink) {
        const Link& link = a.links[l];
        int64_t stall = 0, transferStall = 0, from = INT64_MAX, to = INT64_MIN, busy = 0;
        uint64_t bytes = 0;
        bool halvable = true;
        for (uint32_t id : list) {
            const Transfer& t = a.transfers[id];
            stall += t.stall();
            transferStall += t.transferStall;
            from = std::min(from, t.ready);
            to = std::max(to, t.complete);
            busy += t.complete - t.transferStart;
            bytes += t.bytes;
            halvable = halvable && (t.elementType == "f32" || t.elementType == "f64");
        }
        if (stall <= 0 || to <= from || link.bandwidthLowerBound) continue;
        const double busyFraction = double(busy) / double(to - from);
        if (busyFraction < 0.9 || transferStall < stall * 9 / 10) continue;
        SimEdit edit;
        for (uint32_t id : list) edit.bytesScale[id] = 0.5;
        const int64_t saving = before - simulateTimed(a, p, timing, edit);
        if (!out.count(p.module, {"transfer-bound ", link.name}, saving)) continue;
        Candidate c;
        c.saving = saving;
        c.kind = "transfer-bound";
        c.transfers.assign(list.begin(), list.end());
        c.evidence = QJsonObject{
            {"bytes", qint64(bytes)},
            {"link", QString::fromStdString(link.name)},
            {"busy_pct", 100.0 * busyFraction},
            {"achieved_gbps", link.bytesPerNs},
            {"peak_gbps", link.peakBytesPerNs},
            {"peak_pct",
             link.peakBytesPerNs > 0 ? 100.0 * link.bytesPerNs / link.peakBytesPerNs : 0.0},
            {"stall_ns", qint64(stall)},
            {"transfer_ns_per_run", qint64(busy)},
            {"halved_bytes_saving_ns", qint64(c.saving)}};
        QString peak =
            link.peakBytesPerNs > 0
                ? QString(" (%1 % of the %2 peak, %3)")
                      .arg(100.0 * link.bytesPerNs / link.peakBytesPerNs, 0, 'f', 1)
                      .arg(gbps(link.peakBytesPerNs), QString::fromStdString(link.peakSource))
                : QString(" (the profile states no peak for this link)");
        c.text = QString(
                     "Transfer-bound: %1 over link %2 at %3%4 take %5 of link time per run, "
                     "busy %6 % of the span and stalling %7. Fewer bytes or another link: "
                     "%8 halves them (%9 → %10 at %3) and saves %11 in the first run")
                     .arg(bytesText(bytes), QString::fromStdString(link.name),
                          gbps(link.bytesPerNs), peak, ms(busy))
                     .arg(100.0 * busyFraction, 0, 'f', 1)
                     .arg(ms(stall),
                          halvable ? QString("storing them as bf16 (from f32)")
                                   : QString("half the bytes"),
                          ms(busy), ms(busy / 2), ms(c.saving))
                     .toStdString();
        out.describe(std::move(c));
    }
}

// Sums, describes and orders the suggestions the runs yielded.
void finishSuggestions(Analysis& a) {
    for (Suggestion& s : a.suggestions) {
        s.savingPerRunNs = s.runs ? s.savingNs / s.runs : 0;
        s.evidence.insert("runs", qint64(s.runs));
        s.evidence.insert("saving_per_run_ns", qint64(s.savingPerRunNs));
        s.text += QString(" (%1 run(s) of %2: %3 saved in all, re-simulated)")
                      .arg(qint64(s.runs))
                      .arg(QString::fromStdString(s.program), ms(s.savingNs))
                      .toStdString();
    }
    std::stable_sort(
        a.suggestions.begin(), a.suggestions.end(),
        [](const Suggestion& x, const Suggestion& y) { return x.savingNs > y.savingNs; });
}

}  // namespace

struct SuggestionPasses::State {
    explicit State(Analysis& a) : candidates(a) {}
    Candidates candidates;
    OverlapScratch overlaps;
};

SuggestionPasses::SuggestionPasses(Analysis& a) : a_(a), state_(std::make_unique<State>(a)) {}

SuggestionPasses::~SuggestionPasses() = default;

void SuggestionPasses::tryOn(const RunProgram& p, std::span<const LinkLists::Group> links,
                             const Timing& timing, int64_t simulated) {
    Candidates& candidates = state_->candidates;
    hoists(a_, p, timing, simulated, candidates);
    reorders(a_, p, links, timing, simulated, candidates);
    overlaps(a_, p, timing, simulated, candidates, state_->overlaps);
    transferBound(a_, p, links, timing, simulated, candidates);
}

void SuggestionPasses::finish() {
    finishSuggestions(a_);
}

}  // namespace stallscope::transfers::linkmodel
