#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/replay/instruction_stream.h"
#include "core/replay/simulate.h"

namespace stallscope::replay {

// Data-cache page liveness and fragmentation (DOMAIN.md §1, SnR §5.3.2, Fig. 8).
//
// A page holds live data from a write (a store at its issue cycle, a DMA at its completion cycle)
// through the cycle of the last read of that data before it is overwritten: live on cycles
// [write, lastRead] inclusive. Data read but never written inside the trace is live from cycle 0.
// A page-write never read is wasted; it is not live, but the page is still occupied at the write
// cycle for the free-region queries (anything placed there would be clobbered).

struct DcacheOptions {
    uint32_t bins = 512;  // time bins over [0, total cycles)
};

// Pages [pageBegin, pageEnd) occupied over cycles [begin, end).
struct OccupiedRun {
    uint32_t pageBegin = 0, pageEnd = 0;
    uint64_t begin = 0, end = 0;
};

struct DcacheAnalysis {
    bool present = false;  // the machine has a data-cache
    uint32_t space = kNone;
    uint32_t pages = 0, pageBytes = 0, bucketPages = 0, buckets = 0;
    uint32_t bins = 0;
    uint64_t binCycles = 0;
    uint64_t totalCycles = 0;
    // Time-averaged used pages per bucket per bin, bins x buckets row-major.
    std::vector<double> bucketUsed;
    std::vector<double> unusedPct;       // per bin, time-averaged
    std::vector<double> largestFreePct;  // per bin, time-averaged largest contiguous unused
    // Lower time-weighted medians over every cycle of [0, total): independent of binning.
    double medianUnusedPct = 100;
    double medianLargestFreePct = 100;
    uint64_t pageWrites = 0;
    uint64_t wastedPages = 0;  // page-writes never read
    // Page-writes never read per bucket per bin (the bin of the write), bins x buckets row-major.
    std::vector<double> bucketWasted;

    // Region queries (cycles inclusive). Addresses are byte addresses in the data-cache space.
    bool isFree(uint64_t address, uint64_t bytes, uint64_t from, uint64_t to) const;
    // Lowest page-aligned address of a contiguous region of `bytes` free over [from, to].
    std::optional<uint64_t> findFree(uint64_t bytes, uint64_t from, uint64_t to) const;
    // Largest contiguous free bytes over [from, to].
    uint64_t largestFree(uint64_t from, uint64_t to) const;
    // Marks a region occupied over [from, to] (a relocation another suggestion already uses).
    void reserve(uint64_t address, uint64_t bytes, uint64_t from, uint64_t to);

    // Occupancy index: runs sorted by begin, with a max-end tree for overlap queries.
    std::vector<OccupiedRun> runs;
    std::vector<uint64_t> maxEndTree;
    std::vector<OccupiedRun> reserved;

  private:
    // Calls f(run) for every run (and reservation) overlapping cycles [from, to]; stops when f
    // returns false.
    template <class F>
    void forEachOverlapping(uint64_t from, uint64_t to, F&& f) const;
    std::vector<uint8_t> occupiedPages(uint64_t from, uint64_t to) const;
};

DcacheAnalysis analyzeDcache(const InstructionStream& trace, const Simulation& sim,
                             const DcacheOptions& options = {});

}  // namespace stallscope::replay
