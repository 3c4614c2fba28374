#include "core/replay/simulate.h"

#include <algorithm>
#include <cmath>

namespace stallscope::replay {

uint64_t transferCycles(const Link& link, uint64_t bytes) {
    const double bw = link.bytesPerCycle;
    const auto whole = static_cast<uint64_t>(bw);
    if (static_cast<double>(whole) == bw && whole > 0) return (bytes + whole - 1) / whole;
    // bytes / bw in floating point can land a hair above a whole number (69 / 2.3 gives
    // 30.000000000000004); such a transfer still takes 30 cycles, not 31.
    const double exact = static_cast<double>(bytes) / bw;
    const double nearest = std::round(exact);
    if (std::abs(exact - nearest) <= 1e-9 * std::max(1.0, exact))
        return static_cast<uint64_t>(nearest);
    return static_cast<uint64_t>(std::ceil(exact));
}

namespace {

// Per-link constants looked up once instead of per DMA.
struct LinkModel {
    uint64_t baseLatency = 0;
    std::vector<uint64_t> transfer;  // per InstructionStream::dmas index
};

std::vector<uint64_t> dmaTransferCycles(const InstructionStream& trace) {
    std::vector<uint64_t> out(trace.dmas.size());
    for (size_t d = 0; d < trace.dmas.size(); ++d) {
        const Dma& dma = trace.dmas[d];
        out[d] = transferCycles(trace.machine.links[dma.link], dma.bytes());
    }
    return out;
}

}  // namespace

Simulation simulate(const InstructionStream& trace) {
    Simulation sim;
    const size_t n = trace.instrs.size();
    sim.cycle.resize(n);
    sim.stall.assign(n, 0);
    sim.dmas.resize(trace.dmas.size());
    std::vector<uint64_t> linkFree(trace.machine.links.size(), 0);
    const std::vector<uint64_t> transfer = dmaTransferCycles(trace);

    uint64_t now = 0;
    for (size_t i = 0; i < n; ++i) {
        const Instr& in = trace.instrs[i];
        sim.cycle[i] = now;
        uint64_t stall = 0;
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& dma = trace.dmas[in.dma];
            DmaTiming& t = sim.dmas[in.dma];
            t.issueCycle = now;
            t.readyCycle = now + trace.machine.links[dma.link].baseLatency;
            // Base latencies overlap; the link moves one DMA at a time in arrival order, and
            // arrival order on one link is issue order because its base latency is constant.
            t.startCycle = std::max(t.readyCycle, linkFree[dma.link]);
            t.completeCycle = t.startCycle + transfer[in.dma];
            linkFree[dma.link] = t.completeCycle;
            sim.maxDmaLifetime = std::max(sim.maxDmaLifetime, t.completeCycle - now);
        } else if (in.kind == InstrKind::DmaWait) {
            DmaTiming& t = sim.dmas[in.dma];
            t.waitCycle = now;
            if (now < t.readyCycle) {
                t.baseStall = t.readyCycle - now;
                t.transferStall = t.completeCycle - t.readyCycle;
            } else if (now < t.completeCycle) {
                t.transferStall = t.completeCycle - now;
            } else {
                t.slack = now - t.completeCycle;
            }
            stall = t.baseStall + t.transferStall;
            sim.baseStallCycles += t.baseStall;
            sim.transferStallCycles += t.transferStall;
        }
        sim.stall[i] = stall;
        sim.stallCycles += stall;
        sim.costCycles += in.cost;
        now += in.cost + stall;
    }
    sim.totalCycles = now;

    if (trace.hasMeasurements()) {
        Divergence& dv = sim.divergence;
        dv.measured = true;
        for (size_t i = 0; i < n; ++i) {
            const int64_t mc = trace.measuredCycle[i];
            const int64_t ms = trace.measuredStall[i];
            if (mc < 0 && ms < 0) continue;
            ++dv.compared;
            uint64_t diff = 0;
            if (mc >= 0) {
                const auto m = static_cast<uint64_t>(mc);
                diff = std::max(diff, m > sim.cycle[i] ? m - sim.cycle[i] : sim.cycle[i] - m);
            }
            if (ms >= 0) {
                const auto m = static_cast<uint64_t>(ms);
                diff = std::max(diff, m > sim.stall[i] ? m - sim.stall[i] : sim.stall[i] - m);
            }
            if (diff == 0) continue;
            ++dv.differing;
            dv.maxAbsDiff = std::max(dv.maxAbsDiff, diff);
            if (dv.firstDiffering == kNone) dv.firstDiffering = static_cast<uint32_t>(i);
        }
    }
    return sim;
}

IncrementalSimulator::IncrementalSimulator(const InstructionStream& trace,
                                           const Simulation& baseline)
    : trace_(trace),
      base_(baseline),
      complete_(trace.dmas.size(), 0),
      stamp_(trace.dmas.size(), 0),
      removedStamp_(trace.instrs.size(), 0),
      outstandingPos_(trace.dmas.size(), kNone),
      linkFree_(trace.machine.links.size(), 0) {}

ResimResult IncrementalSimulator::run(uint32_t windowBegin, uint32_t windowEnd,
                                      std::span<const uint32_t> windowOrder,
                                      std::span<const uint32_t> removedAfterWindow) {
    ++epoch_;
    const auto& instrs = trace_.instrs;
    const auto& dmas = trace_.dmas;
    const uint32_t n = static_cast<uint32_t>(instrs.size());
    if (windowBegin >= n) return {base_.totalCycles, base_.stallCycles};
    windowEnd = std::min(windowEnd, n - 1);

    uint64_t costCycles = base_.costCycles;
    for (uint32_t i = windowBegin; i <= windowEnd; ++i) costCycles -= instrs[i].cost;
    for (uint32_t i : windowOrder) costCycles += instrs[i].cost;
    for (uint32_t i : removedAfterWindow) {
        removedStamp_[i] = epoch_;
        costCycles -= instrs[i].cost;
    }

    uint64_t now = base_.cycle[windowBegin];
    std::fill(linkFree_.begin(), linkFree_.end(), 0);
    outstanding_.clear();
    auto addOutstanding = [&](uint32_t d) {
        outstandingPos_[d] = static_cast<uint32_t>(outstanding_.size());
        outstanding_.push_back(d);
    };
    auto removeOutstanding = [&](uint32_t d) {
        const uint32_t pos = outstandingPos_[d];
        if (pos == kNone) return;
        const uint32_t last = outstanding_.back();
        outstanding_[pos] = last;
        outstandingPos_[last] = pos;
        outstanding_.pop_back();
        outstandingPos_[d] = kNone;
    };
    // DMAs issued before the window that may still be in flight there: only those whose issue is
    // within the longest DMA lifetime before the window start can complete after it.
    auto firstInWindow =
        std::lower_bound(dmas.begin(), dmas.end(), windowBegin,
                         [](const Dma& d, uint32_t i) { return d.issueInstr < i; });
    for (auto it = firstInWindow; it != dmas.begin();) {
        --it;
        const auto d = static_cast<uint32_t>(it - dmas.begin());
        const DmaTiming& t = base_.dmas[d];
        if (t.issueCycle + base_.maxDmaLifetime < now) break;
        linkFree_[it->link] = std::max(linkFree_[it->link], t.completeCycle);
        if (it->waitInstr == kNone || it->waitInstr >= windowBegin) addOutstanding(d);
    }

    uint64_t stallCycles = 0;  // only used when the run reaches the end
    auto step = [&](uint32_t i) {
        const Instr& in = instrs[i];
        uint64_t stall = 0;
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& dma = dmas[in.dma];
            const Link& link = trace_.machine.links[dma.link];
            const uint64_t ready = now + link.baseLatency;
            const uint64_t start = std::max(ready, linkFree_[dma.link]);
            complete_[in.dma] = start + transferCycles(link, dma.bytes());
            stamp_[in.dma] = epoch_;
            linkFree_[dma.link] = complete_[in.dma];
            addOutstanding(in.dma);
        } else if (in.kind == InstrKind::DmaWait) {
            const uint64_t complete =
                stamp_[in.dma] == epoch_ ? complete_[in.dma] : base_.dmas[in.dma].completeCycle;
            if (complete > now) stall = complete - now;
            removeOutstanding(in.dma);
        }
        stallCycles += stall;
        now += in.cost + stall;
    };
    // The machine state after an instruction is the cycle, the link queues and the completion of
    // every DMA not yet waited (completion is fixed at issue). Equal relative to the cycle means
    // the rest of the run is the baseline shifted in time.
    auto converged = [&](uint32_t i, int64_t& delta) {
        const uint64_t baseNow = base_.cycle[i];
        for (uint32_t d : outstanding_) {
            const uint64_t mine = stamp_[d] == epoch_ ? complete_[d] : base_.dmas[d].completeCycle;
            const uint64_t theirs = base_.dmas[d].completeCycle;
            const uint64_t relMine = mine > now ? mine - now : 0;
            const uint64_t relTheirs = theirs > baseNow ? theirs - baseNow : 0;
            if (relMine != relTheirs) return false;
        }
        delta = static_cast<int64_t>(now) - static_cast<int64_t>(baseNow);
        return true;
    };

    for (uint32_t i : windowOrder) step(i);
    ResimResult result;
    uint32_t sinceCheck = 0;
    for (uint32_t i = windowEnd + 1; i < n; ++i) {
        if (removedStamp_[i] == epoch_) continue;
        if (++sinceCheck >= 8) {
            sinceCheck = 0;
            int64_t delta = 0;
            if (converged(i, delta)) {
                result.totalCycles =
                    static_cast<uint64_t>(static_cast<int64_t>(base_.totalCycles) + delta);
                result.stallCycles = result.totalCycles - costCycles;
                for (uint32_t d : outstanding_) outstandingPos_[d] = kNone;
                return result;
            }
        }
        step(i);
    }
    for (uint32_t d : outstanding_) outstandingPos_[d] = kNone;
    result.totalCycles = now;
    result.stallCycles = now - costCycles;
    return result;
}

size_t UnitUtilization::unitIndex(const InstructionStream& trace, std::string_view name) const {
    for (size_t u = 0; u < units.size(); ++u)
        if (trace.strings[units[u]] == name) return u;
    return kNone;
}

UnitUtilization unitUtilization(const InstructionStream& trace, const Simulation& sim,
                                uint32_t bins) {
    UnitUtilization out;
    out.bins = std::max<uint32_t>(bins, 1);
    const uint64_t total = sim.totalCycles;
    out.binCycles = std::max<uint64_t>(1, (total + out.bins - 1) / out.bins);
    std::vector<uint32_t> slotOfUnit(trace.strings.size(), kNone);
    for (const Instr& in : trace.instrs) {
        if (slotOfUnit[in.unit] != kNone) continue;
        slotOfUnit[in.unit] = static_cast<uint32_t>(out.units.size());
        out.units.push_back(in.unit);
    }
    const size_t unitCount = out.units.size();
    std::vector<uint64_t> busyCycles(unitCount * out.bins, 0);
    std::vector<uint64_t> busyUntil(unitCount, 0);
    std::vector<uint64_t> busyTotal(unitCount, 0);
    for (size_t i = 0; i < trace.instrs.size(); ++i) {
        const Instr& in = trace.instrs[i];
        const uint32_t u = slotOfUnit[in.unit];
        const uint64_t end = std::min(total, sim.cycle[i] + in.busy);
        uint64_t from = std::max(sim.cycle[i], busyUntil[u]);
        if (end <= from) continue;
        busyUntil[u] = end;
        busyTotal[u] += end - from;
        while (from < end) {
            const uint64_t bin = from / out.binCycles;
            const uint64_t binEnd = std::min(end, (bin + 1) * out.binCycles);
            busyCycles[u * out.bins + bin] += binEnd - from;
            from = binEnd;
        }
    }
    out.busyFraction.assign(unitCount * out.bins, 0.0);
    for (size_t u = 0; u < unitCount; ++u) {
        for (uint32_t b = 0; b < out.bins; ++b) {
            const uint64_t begin = uint64_t(b) * out.binCycles;
            if (begin >= total) break;
            const uint64_t len = std::min(total, begin + out.binCycles) - begin;
            out.busyFraction[u * out.bins + b] =
                static_cast<double>(busyCycles[u * out.bins + b]) / static_cast<double>(len);
        }
        out.overall.push_back(total ? static_cast<double>(busyTotal[u]) / total : 0.0);
    }
    return out;
}

}  // namespace stallscope::replay
