#include "core/replay/whatif.h"

#include <algorithm>
#include <map>
#include <memory_resource>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "core/errors.h"

namespace stallscope::replay {

namespace {

std::string regionText(const InstructionStream& trace, const Region& r) {
    return "[" + trace.machine.spaces[r.space].name + ", " + std::to_string(r.address) + ", " +
           std::to_string(r.bytes) + "]";
}

std::string dmaText(const InstructionStream& trace, size_t dma) {
    return "DMA " + std::to_string(trace.dmas[dma].id);
}

bool contains(const Region& outer, const Region& inner) {
    return outer.space == inner.space && inner.address >= outer.address &&
           inner.end() <= outer.end();
}

// Finds where the DMA's data is read until it is overwritten, and a free region for it.
Relocation planRelocation(const TraceState& state, size_t dma, uint32_t before) {
    const InstructionStream& trace = state.trace;
    const Dma& d = trace.dmas[dma];
    const std::string what = dmaText(trace, dma) + ": destination " + regionText(trace, d.dst);
    if (!state.dcache.present || d.dst.space != state.dcache.space)
        throw InputError(what + " still holds live data at instruction " + std::to_string(before) +
                         " and only data-cache destinations can be relocated");
    Relocation reloc;
    reloc.dma = static_cast<uint32_t>(dma);
    uint32_t lastRead = d.issueInstr;
    bool partiallyOverwritten = false;
    const uint32_t n = static_cast<uint32_t>(trace.instrs.size());
    auto checkRead = [&](uint32_t i, const Region& r) {
        if (!contains(d.dst, r))
            throw InputError(what + ": instruction " + std::to_string(i) + " reads " +
                             regionText(trace, r) + ", only part of it; cannot relocate");
        if (d.waitInstr == kNone || i < d.waitInstr || partiallyOverwritten)
            throw InputError(what + ": instruction " + std::to_string(i) +
                             " reads it while its contents are mixed; cannot relocate");
        lastRead = i;
    };
    for (uint32_t i = d.issueInstr + 1; i < n; ++i) {
        const Instr& in = trace.instrs[i];
        const auto reads = trace.memRead(in);
        for (uint16_t k = 0; k < in.memReads; ++k) {
            if (!reads[k].overlaps(d.dst)) continue;
            checkRead(i, reads[k]);
            reloc.readerSlots.push_back(in.memBegin + k);
        }
        bool fullyOverwritten = false;
        auto onWrite = [&](const Region& w) {
            if (!w.overlaps(d.dst)) return;
            if (contains(w, d.dst))
                fullyOverwritten = true;
            else
                partiallyOverwritten = true;
        };
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& other = trace.dmas[in.dma];
            if (other.src.overlaps(d.dst)) {
                checkRead(i, other.src);
                reloc.sourceReaders.push_back(in.dma);
            }
            onWrite(other.dst);
        }
        for (const Region& w : trace.memWritten(in)) onWrite(w);
        if (fullyOverwritten) break;
    }
    reloc.freeFrom = state.sim.cycle[before];
    reloc.freeTo = std::max(state.sim.cycle[lastRead], state.sim.dmas[dma].completeCycle);
    const auto address = state.dcache.findFree(d.dst.bytes, reloc.freeFrom, reloc.freeTo);
    if (!address)
        throw InputError(what +
                         " holds live data over the hoisted interval and no contiguous "
                         "free region of " +
                         std::to_string(d.dst.bytes) + " bytes is free over cycles [" +
                         std::to_string(reloc.freeFrom) + ", " + std::to_string(reloc.freeTo) +
                         "]");
    reloc.newAddress = *address;
    // The occupancy index is in cycles; also check program order over the moved interval.
    const Region target{d.dst.space, reloc.newAddress, d.dst.bytes};
    for (uint32_t i = before; i <= lastRead; ++i) {
        const Instr& in = trace.instrs[i];
        bool touches = false;
        for (const Region& r : trace.memRead(in)) touches |= r.overlaps(target);
        for (const Region& r : trace.memWritten(in)) touches |= r.overlaps(target);
        if (in.kind == InstrKind::DmaIssue && in.dma != dma)
            touches |=
                trace.dmas[in.dma].src.overlaps(target) || trace.dmas[in.dma].dst.overlaps(target);
        if (touches)
            throw InputError(what + ": the free region " + regionText(trace, target) +
                             " is used by instruction " + std::to_string(i) +
                             " inside the hoisted interval; cannot relocate");
    }
    return reloc;
}

std::string constraintText(const InstructionStream& trace, ConstraintKind kind, uint32_t instr) {
    std::string s = std::string(constraintName(kind)) + " at instruction " + std::to_string(instr);
    if (instr != kNone && instr < trace.instrs.size())
        s += " (" + trace.opName(trace.instrs[instr]) + ")";
    return s;
}

void appendBlock(const TraceState& state, size_t dma, uint32_t before, std::vector<uint32_t>& waits,
                 std::vector<uint32_t>& rest) {
    for (uint32_t w : waitsToMove(state.trace, state.deps, dma, before)) waits.push_back(w);
    for (uint32_t c : state.deps.chain(dma))
        if (c >= before) rest.push_back(c);
    rest.push_back(state.trace.dmas[dma].issueInstr);
}

Move makeMove(std::vector<uint32_t> waits, std::vector<uint32_t> rest, uint32_t before) {
    auto unique = [](std::vector<uint32_t>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    unique(waits);
    unique(rest);
    Move move;
    move.before = before;
    move.instrs = std::move(waits);  // the data the chain reads must have arrived first
    move.instrs.insert(move.instrs.end(), rest.begin(), rest.end());
    return move;
}

}  // namespace

uint32_t EditPlan::windowBegin() const {
    uint32_t b = kNone;
    for (const Move& m : moves) b = std::min(b, m.before);
    for (uint32_t r : removed) b = std::min(b, r);
    return b;
}

uint32_t EditPlan::windowEnd() const {
    uint32_t e = 0;
    for (const Move& m : moves)
        for (uint32_t i : m.instrs) e = std::max(e, i);
    for (uint32_t r : removed) e = std::max(e, r);
    return e;
}

std::vector<uint32_t> EditPlan::windowOrder() const {
    std::vector<uint32_t> order;
    if (empty()) return order;
    const uint32_t begin = windowBegin(), end = windowEnd();
    std::vector<uint8_t> skip(end - begin + 1, 0);
    for (const Move& m : moves)
        for (uint32_t i : m.instrs) skip[i - begin] = 1;
    for (uint32_t r : removed) skip[r - begin] = 1;
    std::vector<const Move*> byTarget;
    for (const Move& m : moves) byTarget.push_back(&m);
    std::stable_sort(byTarget.begin(), byTarget.end(),
                     [](const Move* a, const Move* b) { return a->before < b->before; });
    size_t next = 0;
    order.reserve(end - begin + 1);
    for (uint32_t i = begin; i <= end; ++i) {
        for (; next < byTarget.size() && byTarget[next]->before == i; ++next)
            order.insert(order.end(), byTarget[next]->instrs.begin(), byTarget[next]->instrs.end());
        if (!skip[i - begin]) order.push_back(i);
    }
    return order;
}

void EditPlan::merge(const EditPlan& other) {
    moves.insert(moves.end(), other.moves.begin(), other.moves.end());
    removed.insert(removed.end(), other.removed.begin(), other.removed.end());
    relocations.insert(relocations.end(), other.relocations.begin(), other.relocations.end());
}

EditPlan planHoist(const TraceState& state, size_t dma, uint32_t before, bool allowRelocation) {
    const InstructionStream& trace = state.trace;
    if (dma >= trace.dmas.size()) throw InputError("no such DMA");
    const Dma& d = trace.dmas[dma];
    const DmaDependencies& dep = state.deps.dmas[dma];
    const std::string who = dmaText(trace, dma);
    if (before > d.issueInstr)
        throw InputError("cannot hoist " + who + " to instruction " + std::to_string(before) +
                         ": its ISSUE is at instruction " + std::to_string(d.issueInstr) +
                         " (a hoist moves it earlier)");
    EditPlan plan;
    if (before == d.issueInstr) return plan;
    if (before < dep.backtailInstrRelocated)
        throw InputError("cannot hoist " + who + " above instruction " +
                         std::to_string(dep.backtailInstrRelocated) + ": it depends on " +
                         constraintText(trace, dep.bindingRelocated, dep.bindingInstrRelocated) +
                         "; earliest legal point is instruction " +
                         std::to_string(dep.backtailInstrRelocated));
    if (before < dep.backtailInstr) {
        if (!allowRelocation)
            throw InputError("cannot hoist " + who + " above instruction " +
                             std::to_string(dep.backtailInstr) + ": its destination " +
                             regionText(trace, d.dst) + " holds live data (" +
                             constraintText(trace, dep.binding, dep.bindingInstr) + ")");
        plan.relocations.push_back(planRelocation(state, dma, before));
    }
    std::vector<uint32_t> waits, rest;
    appendBlock(state, dma, before, waits, rest);
    plan.moves.push_back(makeMove(std::move(waits), std::move(rest), before));
    return plan;
}

EditPlan planGroup(const TraceState& state, const std::vector<size_t>& dmas, uint32_t before) {
    std::vector<uint32_t> waits, rest;
    for (size_t dma : dmas) {
        const Dma& d = state.trace.dmas.at(dma);
        const DmaDependencies& dep = state.deps.dmas[dma];
        if (before > d.issueInstr)
            throw InputError("cannot group " + dmaText(state.trace, dma) + " at instruction " +
                             std::to_string(before) + ": it is issued earlier");
        if (before < dep.backtailInstr)
            throw InputError("cannot group " + dmaText(state.trace, dma) + " at instruction " +
                             std::to_string(before) + ": it depends on " +
                             constraintText(state.trace, dep.binding, dep.bindingInstr));
        appendBlock(state, dma, before, waits, rest);
    }
    EditPlan plan;
    plan.moves.push_back(makeMove(std::move(waits), std::move(rest), before));
    return plan;
}

EditPlan planRemoveDma(const TraceState& state, size_t dma) {
    const Dma& d = state.trace.dmas.at(dma);
    if (d.waitInstr == kNone)
        throw InputError("cannot remove " + dmaText(state.trace, dma) + ": it is never waited");
    EditPlan plan;
    plan.removed = {d.issueInstr, d.waitInstr};
    return plan;
}

EditedTrace applyPlan(const InstructionStream& trace, const EditPlan& plan) {
    const uint32_t n = static_cast<uint32_t>(trace.instrs.size());
    EditedTrace out;
    std::vector<uint32_t>& order = out.origIndex;
    order.reserve(n);
    if (plan.empty()) {
        order.resize(n);
        std::iota(order.begin(), order.end(), 0u);
    } else {
        const uint32_t begin = plan.windowBegin(), end = plan.windowEnd();
        for (uint32_t i = 0; i < begin; ++i) order.push_back(i);
        const std::vector<uint32_t> window = plan.windowOrder();
        order.insert(order.end(), window.begin(), window.end());
        for (uint32_t i = end + 1; i < n; ++i) order.push_back(i);
    }

    std::unordered_map<uint32_t, int64_t> slotShift;
    std::vector<int64_t> dstShift(trace.dmas.size(), 0), srcShift(trace.dmas.size(), 0);
    for (const Relocation& r : plan.relocations) {
        const int64_t shift = static_cast<int64_t>(r.newAddress) -
                              static_cast<int64_t>(trace.dmas[r.dma].dst.address);
        dstShift[r.dma] = shift;
        for (uint32_t s : r.readerSlots) slotShift[s] = shift;
        for (uint32_t s : r.sourceReaders) srcShift[s] = shift;
    }
    auto shifted = [](Region r, int64_t shift) {
        r.address = static_cast<uint64_t>(static_cast<int64_t>(r.address) + shift);
        return r;
    };

    InstructionStream& t = out.trace;
    t.machine = trace.machine;
    t.strings = trace.strings;
    t.hlos = trace.hlos;
    t.lightweightOps = trace.lightweightOps;
    t.instrs.reserve(order.size());
    t.regRefs.reserve(trace.regRefs.size());
    t.memRefs.reserve(trace.memRefs.size());
    t.dmas.reserve(trace.dmas.size());
    std::vector<uint32_t> newDma(trace.dmas.size(), kNone);
    for (size_t k = 0; k < order.size(); ++k) {
        const uint32_t i = order[k];
        Instr in = trace.instrs[i];
        const uint32_t slots = in.regReads + in.regWrites;
        const uint32_t regBegin = static_cast<uint32_t>(t.regRefs.size());
        t.regRefs.insert(t.regRefs.end(), trace.regRefs.begin() + in.regBegin,
                         trace.regRefs.begin() + in.regBegin + slots);
        const uint32_t memBegin = static_cast<uint32_t>(t.memRefs.size());
        for (uint32_t s = in.memBegin; s < in.memBegin + in.memReads + in.memWrites; ++s) {
            Region r = trace.memRefs[s];
            if (!slotShift.empty()) {
                auto it = slotShift.find(s);
                if (it != slotShift.end()) r = shifted(r, it->second);
            }
            t.memRefs.push_back(r);
        }
        in.regBegin = regBegin;
        in.memBegin = memBegin;
        const auto self = static_cast<uint32_t>(k);
        if (in.kind == InstrKind::DmaIssue) {
            Dma d = trace.dmas[in.dma];
            d.dst = shifted(d.dst, dstShift[in.dma]);
            d.src = shifted(d.src, srcShift[in.dma]);
            d.issueInstr = self;
            d.waitInstr = kNone;
            newDma[in.dma] = static_cast<uint32_t>(t.dmas.size());
            in.dma = newDma[in.dma];
            t.dmas.push_back(d);
        } else if (in.kind == InstrKind::DmaWait) {
            if (newDma[in.dma] == kNone)
                throw InputError("edit would place the WAIT of DMA " +
                                 std::to_string(trace.dmas[in.dma].id) + " above its ISSUE");
            in.dma = newDma[in.dma];
            t.dmas[in.dma].waitInstr = self;
        }
        t.instrs.push_back(in);
    }
    return out;
}

ResimResult resimulatePlan(IncrementalSimulator& simulator, const EditPlan& plan) {
    const std::vector<uint32_t> order = plan.windowOrder();
    return simulator.run(plan.windowBegin(), plan.windowEnd(), order);
}

WhatifResult applyHoists(const InstructionStream& trace, const std::vector<HoistEdit>& edits,
                         bool allowRelocation) {
    WhatifResult result;
    const Simulation first = simulate(trace);
    result.beforeTotal = first.totalCycles;
    result.beforeStall = first.stallCycles;
    EditedTrace current{trace, {}};
    current.origIndex.resize(trace.instrs.size());
    std::iota(current.origIndex.begin(), current.origIndex.end(), 0u);
    for (const HoistEdit& edit : edits) {
        const Simulation sim = simulate(current.trace);
        const DependencyAnalysis deps = analyzeDependencies(current.trace, sim);
        const DcacheAnalysis dcache = analyzeDcache(current.trace, sim);
        const size_t dma = current.trace.dmaIndexById(edit.dmaId);
        if (dma == kNone) throw InputError("no DMA with id " + std::to_string(edit.dmaId));
        if (edit.beforeInstr >= trace.instrs.size())
            throw InputError("instruction " + std::to_string(edit.beforeInstr) +
                             " is outside the trace (" + std::to_string(trace.instrs.size()) +
                             " instructions)");
        const auto pos =
            std::find(current.origIndex.begin(), current.origIndex.end(), edit.beforeInstr);
        if (pos == current.origIndex.end())
            throw InputError("instruction " + std::to_string(edit.beforeInstr) +
                             " was removed by an earlier edit");
        const auto before = static_cast<uint32_t>(pos - current.origIndex.begin());
        const EditPlan plan =
            planHoist({current.trace, sim, deps, dcache}, dma, before, allowRelocation);
        IncrementalSimulator resim(current.trace, sim);
        const ResimResult totals = resimulatePlan(resim, plan);
        EditedTrace next = applyPlan(current.trace, plan);
        for (uint32_t& o : next.origIndex) o = current.origIndex[o];
        current = std::move(next);
        AppliedEdit applied;
        applied.kind = "hoist";
        applied.dmas = {edit.dmaId};
        applied.toInstr = edit.beforeInstr;
        applied.predictedSaving =
            static_cast<int64_t>(sim.totalCycles) - static_cast<int64_t>(totals.totalCycles);
        applied.relocated = !plan.relocations.empty();
        result.applied.push_back(applied);
    }
    const Simulation last = simulate(current.trace);
    result.afterTotal = last.totalCycles;
    result.afterStall = last.stallCycles;
    result.edited = std::move(current);
    return result;
}

namespace {

// What each read saw, per instruction (by original index): producers of registers and memory
// pieces, and which DMA producers had been waited for.
struct ReadFacts {
    std::vector<std::vector<uint32_t>> producers;
    std::vector<std::vector<uint32_t>> waited;
    std::vector<uint32_t> finalRegWriter;
};

ReadFacts collectFacts(const InstructionStream& trace, const std::vector<uint32_t>& toOrig,
                       std::vector<uint32_t>& representative, bool defineRepresentatives,
                       size_t origCount) {
    ReadFacts facts;
    facts.producers.resize(origCount);
    facts.waited.resize(origCount);
    facts.finalRegWriter.assign(trace.strings.size(), kNone);
    std::pmr::unsynchronized_pool_resource pool;
    std::vector<IntervalMap> writers;
    for (size_t s = 0; s < trace.machine.spaces.size(); ++s) writers.emplace_back(&pool);
    std::vector<uint8_t> waitedOrig(origCount, 0);  // by original ISSUE index
    std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, uint64_t, uint32_t>, uint32_t>
        firstWithContents;
    auto rep = [&](uint32_t w) { return w == kNone ? kNone : representative[w]; };
    auto readRegion = [&](const Region& r, std::vector<uint32_t>& prod, std::vector<uint32_t>& wt) {
        std::vector<uint32_t> pieces;
        writers[r.space].forEach(r.address, r.end(), [&](uint32_t w) { pieces.push_back(w); });
        std::vector<uint32_t> reps;
        for (uint32_t w : pieces) {
            reps.push_back(rep(w));
            if (waitedOrig[w]) wt.push_back(rep(w));
        }
        std::sort(reps.begin(), reps.end());
        reps.erase(std::unique(reps.begin(), reps.end()), reps.end());
        prod.push_back(static_cast<uint32_t>(reps.size()));
        prod.insert(prod.end(), reps.begin(), reps.end());
    };
    for (size_t k = 0; k < trace.instrs.size(); ++k) {
        const Instr& in = trace.instrs[k];
        const uint32_t o = toOrig[k];
        std::vector<uint32_t>& prod = facts.producers[o];
        std::vector<uint32_t>& wt = facts.waited[o];
        for (uint32_t r : trace.regsRead(in)) prod.push_back(facts.finalRegWriter[r]);
        for (const Region& r : trace.memRead(in)) readRegion(r, prod, wt);
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& d = trace.dmas[in.dma];
            readRegion(d.src, prod, wt);
            if (defineRepresentatives) {
                uint32_t srcWriter = kNone;
                writers[d.src.space].forEach(d.src.address, d.src.end(), [&](uint32_t w) {
                    srcWriter = srcWriter == kNone ? w : std::max(srcWriter, w);
                });
                const auto key = std::make_tuple(d.src.space, d.src.address, d.src.bytes,
                                                 d.dst.space, d.dst.address, srcWriter);
                representative[o] = firstWithContents.emplace(key, o).first->second;
            }
            writers[d.dst.space].assign(d.dst.address, d.dst.end(), o);
        } else if (in.kind == InstrKind::DmaWait) {
            waitedOrig[toOrig[trace.dmas[in.dma].issueInstr]] = 1;
        }
        for (uint32_t r : trace.regsWritten(in)) facts.finalRegWriter[r] = o;
        for (const Region& r : trace.memWritten(in)) writers[r.space].assign(r.address, r.end(), o);
        std::sort(wt.begin(), wt.end());
    }
    for (uint32_t& w : facts.finalRegWriter) w = rep(w);
    return facts;
}

}  // namespace

std::string verifyDependencies(const InstructionStream& original, const InstructionStream& edited,
                               const std::vector<uint32_t>& origIndex) {
    const size_t n = original.instrs.size();
    if (origIndex.size() != edited.instrs.size())
        return "origIndex has " + std::to_string(origIndex.size()) + " entries for " +
               std::to_string(edited.instrs.size()) + " instructions";
    std::vector<uint8_t> seen(n, 0);
    for (size_t k = 0; k < origIndex.size(); ++k) {
        const uint32_t o = origIndex[k];
        if (o >= n || seen[o]) return "origIndex is not a partial permutation";
        seen[o] = 1;
        if (original.opName(original.instrs[o]) != edited.opName(edited.instrs[k]))
            return "instruction " + std::to_string(o) + " changed its opcode";
    }
    std::vector<uint32_t> identity(n);
    std::iota(identity.begin(), identity.end(), 0u);
    std::vector<uint32_t> representative(n);
    std::iota(representative.begin(), representative.end(), 0u);
    const ReadFacts before = collectFacts(original, identity, representative, true, n);
    const ReadFacts after = collectFacts(edited, origIndex, representative, false, n);
    for (uint32_t o : origIndex) {
        if (before.producers[o] != after.producers[o])
            return "instruction " + std::to_string(o) + " (" + original.opName(original.instrs[o]) +
                   ") no longer reads the data it read in the original trace";
        if (!std::includes(after.waited[o].begin(), after.waited[o].end(), before.waited[o].begin(),
                           before.waited[o].end()))
            return "instruction " + std::to_string(o) + " (" + original.opName(original.instrs[o]) +
                   ") now reads DMA data before that DMA's WAIT";
    }
    if (before.finalRegWriter != after.finalRegWriter)
        return "the final register values come from different instructions";
    return {};
}

}  // namespace stallscope::replay
