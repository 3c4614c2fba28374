#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stallscope::replay {

// A replayed instruction stream (DOMAIN.md §1, CONTRACT.md §1), held compactly: strings are
// interned, registers and memory regions live in shared pools that instructions index into.

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct Space {
    std::string name;
    uint64_t bytes = 0;
};

struct Link {
    uint32_t src = 0;  // index into Machine::spaces
    uint32_t dst = 0;
    uint32_t baseLatency = 0;  // cycles
    double bytesPerCycle = 1;
};

struct DcacheGeometry {
    uint32_t space = 0;
    uint32_t pageBytes = 512;
    uint32_t bucketPages = 256;
};

struct Machine {
    std::string name;
    double clockGhz = 1.0;
    std::vector<Space> spaces;
    std::vector<Link> links;
    std::optional<DcacheGeometry> dcache;
    std::vector<std::string> lightweight;

    uint32_t findSpace(std::string_view name) const;      // kNone when absent
    uint32_t findLink(uint32_t src, uint32_t dst) const;  // kNone when absent
    std::string linkName(uint32_t link) const;            // "hbm->dcache"
};

struct Region {
    uint32_t space = 0;
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint64_t end() const { return address + bytes; }
    bool overlaps(const Region& o) const {
        return space == o.space && address < o.end() && o.address < end();
    }
};

struct Hlo {
    int64_t id = 0;
    std::string name;
    std::string category;
};

enum class InstrKind : uint8_t { Plain, DmaIssue, DmaWait };

struct Instr {
    uint32_t op = 0;        // InstructionStream::strings index
    uint32_t unit = 0;      // InstructionStream::strings index
    uint32_t cost = 1;      // issue cycles
    uint32_t busy = 1;      // cycles the unit stays busy
    uint32_t hlo = kNone;   // InstructionStream::hlos index
    uint32_t regBegin = 0;  // InstructionStream::regRefs: reads then writes
    uint32_t memBegin = 0;  // InstructionStream::memRefs: reads then writes
    uint16_t regReads = 0, regWrites = 0;
    uint16_t memReads = 0, memWrites = 0;
    uint32_t dma = kNone;  // InstructionStream::dmas index, for DmaIssue and DmaWait
    InstrKind kind = InstrKind::Plain;
};

struct Dma {
    int64_t id = 0;
    Region src, dst;
    uint32_t link = 0;
    uint32_t issueInstr = kNone;
    uint32_t waitInstr = kNone;  // kNone: never waited
    uint64_t bytes() const { return dst.bytes; }
};

struct InstructionStream {
    Machine machine;
    std::vector<std::string> strings;  // opcodes, units and register names
    std::vector<Hlo> hlos;
    std::vector<Instr> instrs;
    std::vector<uint32_t> regRefs;  // string indices of register names
    std::vector<Region> memRefs;
    std::vector<Dma> dmas;
    // Optional measured values (CONTRACT §1 `cycle`/`stall`), -1 where absent; empty when the
    // trace carries none at all.
    std::vector<int64_t> measuredCycle;
    std::vector<int64_t> measuredStall;

    std::span<const uint32_t> regsRead(const Instr& in) const {
        return {regRefs.data() + in.regBegin, in.regReads};
    }
    std::span<const uint32_t> regsWritten(const Instr& in) const {
        return {regRefs.data() + in.regBegin + in.regReads, in.regWrites};
    }
    std::span<const Region> memRead(const Instr& in) const {
        return {memRefs.data() + in.memBegin, in.memReads};
    }
    std::span<const Region> memWritten(const Instr& in) const {
        return {memRefs.data() + in.memBegin + in.memReads, in.memWrites};
    }
    const std::string& opName(const Instr& in) const { return strings[in.op]; }
    const std::string& unitName(const Instr& in) const { return strings[in.unit]; }
    bool hasMeasurements() const { return !measuredCycle.empty(); }
    // True for opcodes listed in machine.lightweight (indexed by string id).
    bool isLightweight(uint32_t op) const {
        return op < lightweightOps.size() && lightweightOps[op];
    }
    size_t dmaIndexById(int64_t id) const;  // kNone when absent

    std::vector<bool> lightweightOps;  // filled by InstructionStreamBuilder::finish()
};

// One instruction as read from a file, before interning and validation.
struct InstrRecord {
    int64_t index = -1;
    std::string_view op, unit;
    std::optional<int64_t> cost, busy, hlo, cycle, stall, wait;
    std::vector<std::string_view> rd, wr;
    struct RegionRecord {
        std::string_view space;
        int64_t address = 0, bytes = 0;
    };
    std::vector<RegionRecord> mrd, mwr;
    bool hasDma = false;
    int64_t dmaId = 0;
    RegionRecord dmaSrc, dmaDst;
    void clear();
};

// Builds a Trace record by record and enforces CONTRACT §1; a violation throws TraceError
// (message without location: the reader adds file and line).
class InstructionStreamError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class InstructionStreamBuilder {
  public:
    InstructionStreamBuilder();
    void setMachine(Machine machine);
    bool hasMachine() const { return hasMachine_; }
    void addHlo(Hlo hlo);
    void addInstr(const InstrRecord& rec);
    uint32_t intern(std::string_view s);
    // Validates the end state and hands the trace over.
    InstructionStream finish();
    size_t instrCount() const { return trace_.instrs.size(); }

  private:
    uint32_t internRegion(const InstrRecord::RegionRecord& r, const char* what);
    Region toRegion(const InstrRecord::RegionRecord& r, const char* what);

    InstructionStream trace_;
    bool hasMachine_ = false;
    // Transparent hashing: lookups by string_view allocate nothing (the import hot path).
    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> stringIds_;
    std::unordered_map<int64_t, uint32_t> hloIndex_;
    std::unordered_map<int64_t, uint32_t> dmaIndex_;
    std::unordered_map<int64_t, uint32_t> openDmas_;  // issued, not yet waited
    bool anyMeasured_ = false;
};

}  // namespace stallscope::replay
