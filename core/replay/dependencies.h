#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <span>
#include <string_view>
#include <vector>

#include "core/replay/instruction_stream.h"
#include "core/replay/simulate.h"

namespace stallscope::replay {

// Dynamic dependency tracking (DOMAIN.md §1 "Dependencies and backtails", SnR §5.4): conservative
// read-after-write over registers and memory, and the relaxed tracking used to find how far each
// DMA ISSUE (with its lightweight address chain) could be hoisted.

// Last access per byte range of one memory space: a flat ordered map of disjoint segments.
class IntervalMap {
  public:
    explicit IntervalMap(std::pmr::memory_resource* resource) : segments_(resource) {}
    void assign(uint64_t begin, uint64_t end, uint32_t value);
    // Calls f(value) for each segment overlapping [begin, end).
    template <class F>
    void forEach(uint64_t begin, uint64_t end, F&& f) const {
        if (begin >= end) return;
        auto it = segments_.upper_bound(begin);
        if (it != segments_.begin()) {
            auto prev = std::prev(it);
            if (prev->second.end > begin) f(prev->second.value);
        }
        for (; it != segments_.end() && it->first < end; ++it) f(it->second.value);
    }
    void clear() { segments_.clear(); }

  private:
    struct Segment {
        uint64_t end;
        uint32_t value;
    };
    std::pmr::map<uint64_t, Segment> segments_;
};

enum class ConstraintKind : uint8_t {
    None,
    RegisterProducer,   // a non-lightweight, non-load instruction produced an input register
    StoreData,          // a frontier load reads memory a store wrote
    DmaData,            // a frontier load reads memory a DMA brought in
    SourceWriter,       // the last writer of the DMA's source region
    DestinationReader,  // the last read of the destination's previous contents
    DestinationWriter,  // the previous writer of the destination
    RegisterConflict,   // the chain writes a register an earlier instruction reads or writes
};
std::string_view constraintName(ConstraintKind kind);
// Constraints that disappear when the DMA writes somewhere else (relocation).
inline bool isDestinationConstraint(ConstraintKind kind) {
    return kind == ConstraintKind::DestinationReader || kind == ConstraintKind::DestinationWriter;
}

struct DmaDependencies {
    // Earliest instruction the ISSUE and its chain can be placed before, and the cycle from which
    // that is legal (a DMA's data is valid at its completion, a store's after it issues).
    uint32_t backtailInstr = 0;
    uint64_t backtailCycle = 0;
    ConstraintKind binding = ConstraintKind::None;
    uint32_t bindingInstr = kNone;  // the instruction imposing backtailInstr
    // The same without the destination constraints, for hoists that relocate the destination.
    uint32_t backtailInstrRelocated = 0;
    uint64_t backtailCycleRelocated = 0;
    ConstraintKind bindingRelocated = ConstraintKind::None;
    uint32_t bindingInstrRelocated = kNone;
    uint32_t chainBegin = 0, chainCount = 0;      // DependencyAnalysis::chainPool
    uint32_t dataDmaBegin = 0, dataDmaCount = 0;  // DependencyAnalysis::dataDmaPool
    bool chainTruncated = false;                  // the lightweight chain hit the length limit
    // Conservative tracking: the ISSUE stays after the last writers of everything it reads
    // itself (registers, its own `mrd`, its source), with nothing moving along.
    uint32_t conservativeInstr = 0;
    uint32_t conservativeProducer = kNone;  // the latest of those writers (kNone: none)
    uint32_t sourceWriter = kNone;  // latest writer of the source before the ISSUE (kNone: live-in)
    uint32_t destinationWriter = kNone;  // latest writer of the destination before the ISSUE
};

struct DependencyOptions {
    uint32_t maxChain = 64;  // longest lightweight chain followed before it counts as a constraint
};

struct DependencyAnalysis {
    std::vector<DmaDependencies> dmas;  // per InstructionStream::dmas index
    std::vector<uint32_t> chainPool;    // chain instruction indices, ascending per DMA
    std::vector<uint32_t> dataDmaPool;  // DMAs whose data the chain or the source reads
    std::span<const uint32_t> chain(size_t dma) const {
        return {chainPool.data() + dmas[dma].chainBegin, dmas[dma].chainCount};
    }
    std::span<const uint32_t> dataDmas(size_t dma) const {
        return {dataDmaPool.data() + dmas[dma].dataDmaBegin, dmas[dma].dataDmaCount};
    }
};

DependencyAnalysis analyzeDependencies(const InstructionStream& trace, const Simulation& sim,
                                       const DependencyOptions& options = {});

// The WAITs that must move with a hoist of `dma` to before instruction `target`: WAITs of DMAs
// whose data the chain or the source reads that lie between target and the ISSUE.
std::vector<uint32_t> waitsToMove(const InstructionStream& trace, const DependencyAnalysis& deps,
                                  size_t dma, uint32_t target);

// Dependency edges of one DMA, for drawing arrows: conservative edges are the direct producers of
// the ISSUE's inputs; relaxed edges are the chain links and the constraints of the backtail.
struct DependencyEdge {
    uint32_t from = 0;  // instruction index of the producer / constraining instruction
    uint32_t to = 0;    // instruction index of the consumer
    ConstraintKind kind = ConstraintKind::None;  // None for chain links
    bool relaxed = false;
};
std::vector<DependencyEdge> dmaDependencyEdges(const InstructionStream& trace,
                                               const Simulation& sim, size_t dma,
                                               const DependencyOptions& options = {});

}  // namespace stallscope::replay
