#include "core/replay/dependencies.h"

#include <algorithm>

namespace stallscope::replay {

void IntervalMap::assign(uint64_t begin, uint64_t end, uint32_t value) {
    if (begin >= end) return;
    auto it = segments_.upper_bound(begin);
    if (it != segments_.begin()) {
        auto prev = std::prev(it);
        if (prev->second.end > begin) {
            const Segment old = prev->second;
            if (old.end > end) segments_.emplace_hint(it, end, Segment{old.end, old.value});
            if (prev->first == begin)
                segments_.erase(prev);
            else
                prev->second.end = begin;
        }
    }
    it = segments_.lower_bound(begin);
    while (it != segments_.end() && it->first < end) {
        const Segment old = it->second;
        it = segments_.erase(it);
        if (old.end > end) {
            it = segments_.emplace_hint(it, end, Segment{old.end, old.value});
            break;
        }
    }
    segments_.emplace_hint(it, begin, Segment{end, value});
}

std::string_view constraintName(ConstraintKind kind) {
    switch (kind) {
        case ConstraintKind::None:
            return "none";
        case ConstraintKind::RegisterProducer:
            return "register-producer";
        case ConstraintKind::StoreData:
            return "store-data";
        case ConstraintKind::DmaData:
            return "dma-data";
        case ConstraintKind::SourceWriter:
            return "source-writer";
        case ConstraintKind::DestinationReader:
            return "destination-reader";
        case ConstraintKind::DestinationWriter:
            return "destination-writer";
        case ConstraintKind::RegisterConflict:
            return "register-conflict";
    }
    return "none";
}

namespace {

bool isLoad(const Instr& in) {
    return in.kind == InstrKind::Plain && in.memReads > 0 && in.memWrites == 0 && in.regWrites > 0;
}

// One forward sweep over the trace keeping, per register and per memory byte, the last writer
// and last access; the per-slot arrays remember them at each instruction so the chain of any
// later DMA can be walked backwards without re-sweeping.
class Tracker {
  public:
    Tracker(const InstructionStream& trace, const Simulation& sim, const DependencyOptions& options)
        : trace_(trace), sim_(sim), options_(options) {
        const size_t regs = trace.strings.size();
        lastRegWriter_.assign(regs, kNone);
        lastRegAccess_.assign(regs, kNone);
        regProducer_.assign(trace.regRefs.size(), kNone);
        regPrevAccess_.assign(trace.regRefs.size(), kNone);
        memWriterAtRead_.assign(trace.memRefs.size(), kNone);
        for (size_t s = 0; s < trace.machine.spaces.size(); ++s) {
            writers_.emplace_back(&pool_);
            readers_.emplace_back(&pool_);
        }
        chainStamp_.assign(trace.instrs.size(), 0);
    }

    // Sweeps instructions [0, end); at each DMA ISSUE calls onDma(dma index).
    template <class OnDma>
    void sweep(uint32_t end, OnDma&& onDma) {
        for (uint32_t i = 0; i < end; ++i) {
            const Instr& in = trace_.instrs[i];
            const auto reads = trace_.regsRead(in);
            const auto writes = trace_.regsWritten(in);
            for (uint16_t k = 0; k < in.regReads; ++k) {
                regProducer_[in.regBegin + k] = lastRegWriter_[reads[k]];
                regPrevAccess_[in.regBegin + k] = lastRegAccess_[reads[k]];
            }
            for (uint16_t k = 0; k < in.regWrites; ++k)
                regPrevAccess_[in.regBegin + in.regReads + k] = lastRegAccess_[writes[k]];
            const auto memReads = trace_.memRead(in);
            for (uint16_t k = 0; k < in.memReads; ++k) {
                const Region& r = memReads[k];
                memWriterAtRead_[in.memBegin + k] = latestWriter(r);
                readers_[r.space].assign(r.address, r.end(), i);
            }
            if (in.kind == InstrKind::DmaIssue) {
                onDma(in.dma);
                const Dma& dma = trace_.dmas[in.dma];
                readers_[dma.src.space].assign(dma.src.address, dma.src.end(), i);
                writers_[dma.dst.space].assign(dma.dst.address, dma.dst.end(), i);
            }
            for (uint32_t r : reads) lastRegAccess_[r] = i;
            for (uint32_t r : writes) lastRegWriter_[r] = lastRegAccess_[r] = i;
            for (const Region& r : trace_.memWritten(in))
                writers_[r.space].assign(r.address, r.end(), i);
        }
    }

    // Computes chain and constraints of the DMA whose ISSUE is being swept; `edges` (optional)
    // receives the relaxed edges.
    DmaDependencies analyzeDma(uint32_t dmaIndex, std::vector<uint32_t>& chainOut,
                               std::vector<uint32_t>& dataDmasOut,
                               std::vector<DependencyEdge>* edges) {
        const Dma& dma = trace_.dmas[dmaIndex];
        const uint32_t issue = dma.issueInstr;
        ++epoch_;
        DmaDependencies result;
        chain_.clear();
        worklist_.clear();
        dataDmas_.clear();
        chainStamp_[issue] = epoch_;
        worklist_.push_back(issue);

        auto constrain = [&](ConstraintKind kind, uint32_t instr, uint32_t earliest, uint64_t cycle,
                             uint32_t consumer) {
            cycle = std::max(
                cycle, earliest < sim_.cycle.size() ? sim_.cycle[earliest] : sim_.totalCycles);
            if (edges) edges->push_back({instr, consumer, kind, true});
            if (earliest > result.backtailInstr ||
                (earliest == result.backtailInstr && result.binding == ConstraintKind::None)) {
                result.backtailInstr = earliest;
                result.binding = kind;
                result.bindingInstr = instr;
            }
            result.backtailCycle = std::max(result.backtailCycle, cycle);
            if (!isDestinationConstraint(kind)) {
                if (earliest > result.backtailInstrRelocated ||
                    (earliest == result.backtailInstrRelocated &&
                     result.bindingRelocated == ConstraintKind::None)) {
                    result.bindingRelocated = kind;
                    result.bindingInstrRelocated = instr;
                }
                result.backtailInstrRelocated = std::max(result.backtailInstrRelocated, earliest);
                result.backtailCycleRelocated = std::max(result.backtailCycleRelocated, cycle);
            }
        };
        auto afterInstr = [&](uint32_t w) {
            return sim_.cycle[w] + trace_.instrs[w].cost + sim_.stall[w];
        };
        // A writer of memory that something reads: a store is valid after it, a DMA at its
        // completion (its WAIT may move up, never above its ISSUE).
        auto constrainMemory = [&](uint32_t writer, ConstraintKind storeKind, uint32_t consumer) {
            if (writer == kNone) return;
            const Instr& w = trace_.instrs[writer];
            if (w.kind == InstrKind::DmaIssue) {
                if (storeKind != ConstraintKind::DestinationWriter &&
                    std::find(dataDmas_.begin(), dataDmas_.end(), w.dma) == dataDmas_.end())
                    dataDmas_.push_back(w.dma);
                constrain(
                    storeKind == ConstraintKind::StoreData ? ConstraintKind::DmaData : storeKind,
                    writer, writer + 1, sim_.dmas[w.dma].completeCycle, consumer);
            } else {
                constrain(storeKind, writer, writer + 1, afterInstr(writer), consumer);
            }
        };

        while (!worklist_.empty()) {
            const uint32_t m = worklist_.back();
            worklist_.pop_back();
            const Instr& in = trace_.instrs[m];
            for (uint16_t k = 0; k < in.regReads; ++k) {
                const uint32_t p = regProducer_[in.regBegin + k];
                if (p == kNone || chainStamp_[p] == epoch_) continue;
                const Instr& pin = trace_.instrs[p];
                const bool movable = pin.kind == InstrKind::Plain && pin.memWrites == 0 &&
                                     ((trace_.isLightweight(pin.op)) || isLoad(pin));
                if (movable && chain_.size() < options_.maxChain) {
                    chainStamp_[p] = epoch_;
                    chain_.push_back(p);
                    worklist_.push_back(p);
                    if (edges) edges->push_back({p, m, ConstraintKind::None, true});
                } else {
                    if (movable) result.chainTruncated = true;
                    constrain(ConstraintKind::RegisterProducer, p, p + 1, afterInstr(p), m);
                }
            }
            // Memory the chain (and the ISSUE itself, through its own `mrd`) reads must have
            // been written before the moved block.
            for (uint16_t k = 0; k < in.memReads; ++k)
                constrainMemory(memWriterAtRead_[in.memBegin + k], ConstraintKind::StoreData, m);
        }
        // The ISSUE itself: its source's writer, and the destination's previous reader/writer.
        result.sourceWriter = latestWriter(dma.src);
        result.destinationWriter = latestWriter(dma.dst);
        constrainMemory(result.sourceWriter, ConstraintKind::SourceWriter, issue);
        uint32_t lastReader = kNone;
        readers_[dma.dst.space].forEach(dma.dst.address, dma.dst.end(), [&](uint32_t r) {
            if (lastReader == kNone || r > lastReader) lastReader = r;
        });
        if (lastReader != kNone)
            constrain(ConstraintKind::DestinationReader, lastReader, lastReader + 1,
                      afterInstr(lastReader), issue);
        constrainMemory(result.destinationWriter, ConstraintKind::DestinationWriter, issue);

        // Registers the moved block writes must not be read or written by what it jumps over.
        chain_.push_back(issue);
        for (uint32_t m : chain_) {
            const Instr& in = trace_.instrs[m];
            const auto writes = trace_.regsWritten(in);
            for (uint16_t k = 0; k < in.regWrites; ++k) {
                uint32_t prev = regPrevAccess_[in.regBegin + in.regReads + k];
                while (prev != kNone && chainStamp_[prev] == epoch_)
                    prev = previousAccessOf(prev, writes[k]);
                if (prev != kNone)
                    constrain(ConstraintKind::RegisterConflict, prev, prev + 1, afterInstr(prev),
                              m);
            }
        }
        chain_.pop_back();
        std::sort(chain_.begin(), chain_.end());
        result.chainBegin = static_cast<uint32_t>(chainOut.size());
        result.chainCount = static_cast<uint32_t>(chain_.size());
        chainOut.insert(chainOut.end(), chain_.begin(), chain_.end());
        result.dataDmaBegin = static_cast<uint32_t>(dataDmasOut.size());
        result.dataDmaCount = static_cast<uint32_t>(dataDmas_.size());
        dataDmasOut.insert(dataDmasOut.end(), dataDmas_.begin(), dataDmas_.end());
        return result;
    }

    std::vector<uint32_t> directProducers(uint32_t issue) {
        std::vector<uint32_t> out;
        const Instr& in = trace_.instrs[issue];
        for (uint16_t k = 0; k < in.regReads; ++k)
            if (regProducer_[in.regBegin + k] != kNone)
                out.push_back(regProducer_[in.regBegin + k]);
        for (uint16_t k = 0; k < in.memReads; ++k)
            if (memWriterAtRead_[in.memBegin + k] != kNone)
                out.push_back(memWriterAtRead_[in.memBegin + k]);
        const uint32_t w = latestWriter(trace_.dmas[in.dma].src);
        if (w != kNone) out.push_back(w);
        return out;
    }

  private:
    // The writer that must stay before a reader of r: the latest in program order.
    uint32_t latestWriter(const Region& r) const {
        uint32_t latest = kNone;
        writers_[r.space].forEach(r.address, r.end(), [&](uint32_t w) {
            if (latest == kNone || w > latest) latest = w;
        });
        return latest;
    }

    // The access of `reg` before instruction `at` (which reads or writes it).
    uint32_t previousAccessOf(uint32_t at, uint32_t reg) const {
        const Instr& in = trace_.instrs[at];
        const uint32_t slots = in.regReads + in.regWrites;
        for (uint32_t k = 0; k < slots; ++k)
            if (trace_.regRefs[in.regBegin + k] == reg) return regPrevAccess_[in.regBegin + k];
        return kNone;
    }

    const InstructionStream& trace_;
    const Simulation& sim_;
    DependencyOptions options_;
    std::pmr::unsynchronized_pool_resource pool_;
    std::vector<uint32_t> lastRegWriter_, lastRegAccess_;
    std::vector<uint32_t> regProducer_, regPrevAccess_, memWriterAtRead_;
    std::vector<IntervalMap> writers_, readers_;
    std::vector<uint32_t> chainStamp_;
    std::vector<uint32_t> chain_, worklist_, dataDmas_;
    uint32_t epoch_ = 0;
};

}  // namespace

DependencyAnalysis analyzeDependencies(const InstructionStream& trace, const Simulation& sim,
                                       const DependencyOptions& options) {
    DependencyAnalysis out;
    out.dmas.resize(trace.dmas.size());
    Tracker tracker(trace, sim, options);
    tracker.sweep(static_cast<uint32_t>(trace.instrs.size()), [&](uint32_t dma) {
        DmaDependencies dep = tracker.analyzeDma(dma, out.chainPool, out.dataDmaPool, nullptr);
        for (uint32_t p : tracker.directProducers(trace.dmas[dma].issueInstr)) {
            if (dep.conservativeProducer == kNone || p > dep.conservativeProducer) {
                dep.conservativeProducer = p;
                dep.conservativeInstr = p + 1;
            }
        }
        out.dmas[dma] = dep;
    });
    return out;
}

std::vector<uint32_t> waitsToMove(const InstructionStream& trace, const DependencyAnalysis& deps,
                                  size_t dma, uint32_t target) {
    std::vector<uint32_t> out;
    const uint32_t issue = trace.dmas[dma].issueInstr;
    for (uint32_t d : deps.dataDmas(dma)) {
        const uint32_t wait = trace.dmas[d].waitInstr;
        if (wait != kNone && wait >= target && wait < issue) out.push_back(wait);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<DependencyEdge> dmaDependencyEdges(const InstructionStream& trace,
                                               const Simulation& sim, size_t dma,
                                               const DependencyOptions& options) {
    std::vector<DependencyEdge> edges;
    const uint32_t issue = trace.dmas.at(dma).issueInstr;
    Tracker tracker(trace, sim, options);
    std::vector<uint32_t> chain, dataDmas;
    tracker.sweep(issue + 1, [&](uint32_t d) {
        if (d != dma) return;
        for (uint32_t p : tracker.directProducers(issue))
            edges.push_back({p, issue, ConstraintKind::None, false});
        tracker.analyzeDma(d, chain, dataDmas, &edges);
    });
    return edges;
}

}  // namespace stallscope::replay
