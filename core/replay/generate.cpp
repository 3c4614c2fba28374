#include "core/replay/generate.h"

#include <algorithm>
#include <initializer_list>

#include "core/errors.h"

namespace stallscope::replay {

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

struct Mem {
    const char* space;
    uint64_t address, bytes;
};

// Emits instruction records through InstructionStreamBuilder (which validates and interns them).
class Emitter {
  public:
    explicit Emitter(Machine machine) {
        builder_.setMachine(std::move(machine));
        for (int i = 0; i < 64; ++i) scalar_.push_back("s" + std::to_string(i));
        for (int i = 0; i < 32; ++i) vector_.push_back("v" + std::to_string(i));
    }
    const std::string& s(uint64_t i) const { return scalar_[i % scalar_.size()]; }
    const std::string& v(uint64_t i) const { return vector_[i % vector_.size()]; }

    int64_t hlo(std::string name, std::string category) {
        const int64_t id = nextHlo_++;
        builder_.addHlo(Hlo{id, std::move(name), std::move(category)});
        return id;
    }
    void setHlo(int64_t id) { hlo_ = id; }

    void op(std::string_view opcode, std::string_view unit, uint32_t cost, uint32_t busy,
            std::initializer_list<std::string_view> rd, std::initializer_list<std::string_view> wr,
            std::initializer_list<Mem> mrd = {}, std::initializer_list<Mem> mwr = {}) {
        start(opcode, unit);
        rec_.cost = cost;
        if (busy != cost) rec_.busy = busy;
        rec_.rd.assign(rd.begin(), rd.end());
        rec_.wr.assign(wr.begin(), wr.end());
        for (const Mem& m : mrd) rec_.mrd.push_back(region(m));
        for (const Mem& m : mwr) rec_.mwr.push_back(region(m));
        builder_.addInstr(rec_);
    }
    void issue(int64_t id, Mem src, Mem dst, std::initializer_list<std::string_view> rd) {
        start("dma.issue", "dma");
        rec_.rd.assign(rd.begin(), rd.end());
        rec_.hasDma = true;
        rec_.dmaId = id;
        rec_.dmaSrc = region(src);
        rec_.dmaDst = region(dst);
        builder_.addInstr(rec_);
    }
    void wait(int64_t id) {
        start("dma.wait", "dma");
        rec_.wait = id;
        builder_.addInstr(rec_);
    }
    uint64_t count() const { return builder_.instrCount(); }
    InstructionStream finish() { return builder_.finish(); }

  private:
    static InstrRecord::RegionRecord region(const Mem& m) {
        return {m.space, static_cast<int64_t>(m.address), static_cast<int64_t>(m.bytes)};
    }
    void start(std::string_view opcode, std::string_view unit) {
        rec_.clear();
        rec_.index = static_cast<int64_t>(builder_.instrCount());
        rec_.op = opcode;
        rec_.unit = unit;
        if (hlo_ >= 0) rec_.hlo = hlo_;
    }
    InstructionStreamBuilder builder_;
    InstrRecord rec_;
    std::vector<std::string> scalar_, vector_;
    int64_t nextHlo_ = 1;
    int64_t hlo_ = -1;
};

constexpr const char* kHbm = "hbm";
constexpr const char* kDcache = "dcache";
constexpr const char* kRemote = "remote_hbm";

// All-gather: per invocation a setup phase of 3 groups (one DMA fetching a node table, then two
// DMAs whose source addresses come from that table via sld + add), all serial, then a data phase
// sending local data to 6 peers whose addresses come from the setup data.
InstructionStream allGather(const GenerateOptions& options, bool pinned) {
    Emitter e(referenceMachine(true));
    SplitMix64 rng(options.seed);
    const uint64_t tableBase = 1 * MiB, routeBase = 2 * MiB, localBase = 64 * MiB;
    const uint64_t setupBase = 15 * MiB;  // dcache scratch only the setup phase uses
    const uint64_t remoteBase = 256 * MiB;
    const uint64_t workBase = 1 * MiB;  // dcache working set of the surrounding compute
    const int64_t compute = e.hlo("fusion.compute", "fusion");
    for (uint32_t inv = 0; inv < std::max<uint32_t>(1, options.invocations); ++inv) {
        const int64_t gather = e.hlo("all-gather." + std::to_string(inv), "collective");
        e.setHlo(gather);
        const int64_t idBase = int64_t(inv) * 100;
        for (uint32_t g = 0; g < 3; ++g) {
            const uint32_t r = 10 + g * 8;  // each group keeps to its own registers
            const uint64_t scratch = setupBase + g * 2 * KiB;
            if (!pinned) {
                e.op("mov", "scalar", 1, 1, {}, {e.s(r)});
                e.issue(idBase + 1 + g * 3, {kHbm, tableBase + g * 4 * KiB, 256},
                        {kDcache, scratch, 256}, {e.s(r)});
                e.wait(idBase + 1 + g * 3);
            }
            for (uint32_t j = 0; j < 2; ++j) {
                e.op("sld", "scalar", 1, 1, {}, {e.s(r + 1 + j * 3)},
                     {{kDcache, scratch + 8 * j, 8}});
                e.op("add", "scalar", 1, 1, {e.s(r + 1 + j * 3)}, {e.s(r + 2 + j * 3)});
                if (!pinned) {
                    const int64_t id = idBase + 2 + g * 3 + j;
                    e.issue(id, {kHbm, routeBase + g * 8 * KiB + j * 4 * KiB, 512},
                            {kDcache, scratch + 512 + j * 512, 512}, {e.s(r + 2 + j * 3)});
                    e.wait(id);
                }
            }
        }
        // Data phase: peer p's address sits in the routing data of group p/2.
        for (uint32_t p = 0; p < 6; ++p) {
            const uint64_t route = setupBase + (p / 2) * 2 * KiB + 512 + (p % 2) * 512;
            e.op("sld", "scalar", 1, 1, {}, {e.s(40 + p)}, {{kDcache, route + 16, 8}});
            e.op("add", "scalar", 1, 1, {e.s(40 + p)}, {e.s(50 + p)});
            const int64_t id = idBase + 50 + p;
            e.issue(id, {kHbm, localBase, 32 * KiB}, {kRemote, remoteBase + p * 32 * KiB, 32 * KiB},
                    {e.s(50 + p)});
            const uint32_t work = 24 + static_cast<uint32_t>(rng.below(8));
            for (uint32_t k = 0; k < work; ++k)
                e.op(k % 3 ? "vadd" : "vmul", "vpu", 4, 4, {e.v(k % 8)}, {e.v(8 + k % 8)});
            e.wait(id);
        }
        // The model's other work between collectives (does not touch the setup scratch).
        e.setHlo(compute);
        for (uint32_t k = 0; k < 64; ++k) {
            const uint64_t a = workBase + (k % 16) * 64 * KiB;
            e.op("vld", "vpu", 1, 1, {}, {e.v(k % 16)}, {{kDcache, a, 4 * KiB}});
            e.op("matmul", "mxu", 8, 16, {e.v(k % 16)}, {e.v(16 + k % 16)});
            e.op("vst", "vpu", 1, 1, {e.v(16 + k % 16)}, {}, {},
                 {{kDcache, a + 32 * KiB, 4 * KiB}});
        }
    }
    return e.finish();
}

// A matmul chain: each weight tile is DMA'd right before the matmuls using it, into one of four
// buffers, so every tile waits the full DMA latency although the buffer was free long before.
InstructionStream matmulStarved(const GenerateOptions& options) {
    Emitter e(referenceMachine(false));
    SplitMix64 rng(options.seed);
    const int64_t hlo = e.hlo("fusion.matmul-chain", "convolution");
    e.setHlo(hlo);
    const uint64_t weights = 128 * MiB, tile = 32 * KiB;
    const uint64_t weightBuf = 4 * MiB, activations = 1 * MiB, outputs = 8 * MiB;
    const uint32_t tiles = 48;
    for (uint32_t m = 0; m < tiles; ++m) {
        const uint32_t r = 1 + m % 8;
        const uint64_t slot = weightBuf + (m % 4) * tile;
        e.op("mov", "scalar", 1, 1, {}, {e.s(r)});
        e.op("add", "scalar", 1, 1, {e.s(r)}, {e.s(r + 10)});
        e.issue(m + 1, {kHbm, weights + m * tile, tile}, {kDcache, slot, tile}, {e.s(r + 10)});
        e.wait(m + 1);
        for (uint32_t k = 0; k < 8; ++k) {
            e.op("matmul", "mxu", 80, 80, {e.v(k % 4)}, {e.v(4 + k % 4)},
                 {{kDcache, slot + k * (tile / 8), tile / 8},
                  {kDcache, activations + k * 4 * KiB, 4 * KiB}});
        }
        const uint32_t tail = 2 + static_cast<uint32_t>(rng.below(3));
        for (uint32_t k = 0; k < tail; ++k) e.op("vadd", "vpu", 2, 2, {e.v(4 + k)}, {e.v(12 + k)});
        e.op("vst", "vpu", 1, 1, {e.v(12)}, {}, {},
             {{kDcache, outputs + (m % 16) * 4 * KiB, 4 * KiB}});
    }
    return e.finish();
}

// Allocations of varied sizes and lifetimes placed at random in fitting holes: the free space
// ends up scattered, so the largest contiguous free region stays well below the total free.
InstructionStream fragmentation(const GenerateOptions& options) {
    Emitter e(referenceMachine(false));
    SplitMix64 rng(options.seed);
    const int64_t hlo = e.hlo("fusion.allocator-churn", "fusion");
    e.setHlo(hlo);
    const uint64_t page = 512, pages = 16 * MiB / page;
    std::vector<uint32_t> owner(pages, 0);  // 0 free, else allocation id
    struct Allocation {
        uint64_t firstPage, pageCount, endStep;
        uint32_t id;
    };
    std::vector<Allocation> live;
    const uint64_t sizes[] = {8 * KiB, 32 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB};
    const uint32_t steps = 1500;
    uint32_t nextId = 1;
    int64_t nextDma = 1;
    for (uint32_t step = 0; step < steps; ++step) {
        // Last reads of allocations that end now, then they are free.
        for (size_t k = 0; k < live.size();) {
            if (live[k].endStep != step) {
                ++k;
                continue;
            }
            const Allocation& a = live[k];
            e.op("vld", "vpu", 2, 2, {}, {e.v(step % 16)},
                 {{kDcache, a.firstPage * page, a.pageCount * page}});
            for (uint64_t p = a.firstPage; p < a.firstPage + a.pageCount; ++p) owner[p] = 0;
            live[k] = live.back();
            live.pop_back();
        }
        // A new allocation in a random hole that fits, at a random page inside it.
        const uint64_t bytes = sizes[rng.below(6)];
        const uint64_t need = bytes / page;
        std::vector<std::pair<uint64_t, uint64_t>> holes;
        for (uint64_t p = 0; p < pages;) {
            if (owner[p]) {
                ++p;
                continue;
            }
            uint64_t q = p;
            while (q < pages && !owner[q]) ++q;
            if (q - p >= need) holes.emplace_back(p, q - p);
            p = q;
        }
        if (!holes.empty()) {
            const auto [start, length] = holes[rng.below(holes.size())];
            const uint64_t first = start + rng.below(length - need + 1);
            const uint32_t id = nextId++;
            for (uint64_t p = first; p < first + need; ++p) owner[p] = id;
            live.push_back({first, need, step + 20 + rng.below(100), id});
            const Mem dst{kDcache, first * page, bytes};
            if (bytes <= 32 * KiB) {
                e.op("mov", "scalar", 1, 1, {}, {e.s(1 + id % 8)});
                e.issue(nextDma, {kHbm, 512 * MiB + (id % 64) * MiB, bytes}, dst,
                        {e.s(1 + id % 8)});
                e.wait(nextDma++);
            } else {
                e.op("vst", "vpu", 4, 4, {e.v(id % 16)}, {}, {}, {dst});
            }
        }
        for (uint32_t k = 0; k < 6; ++k) e.op("vmul", "vpu", 8, 8, {e.v(k)}, {e.v(k + 8)});
    }
    // Everything still allocated is read once more at the end.
    for (const Allocation& a : live)
        e.op("vld", "vpu", 2, 2, {}, {e.v(0)}, {{kDcache, a.firstPage * page, a.pageCount * page}});
    return e.finish();
}

// A large, realistic mix: address arithmetic, prefetch DMAs into a ring of buffers waited a few
// blocks later, vector and matrix work on the arrived data, stores and write-backs.
InstructionStream scale(const GenerateOptions& options) {
    Emitter e(referenceMachine(false));
    SplitMix64 rng(options.seed);
    const int64_t hlos[] = {e.hlo("fusion.0", "fusion"), e.hlo("convolution.1", "convolution"),
                            e.hlo("fusion.2", "fusion"), e.hlo("reduce.3", "reduce")};
    const uint64_t ring = 2 * MiB, slot = 16 * KiB, slots = 64;
    const uint64_t outBase = 8 * MiB;
    const uint64_t target = std::max<uint64_t>(options.instructions, 16);
    struct InFlight {
        int64_t id;
        uint64_t slotIndex;
        uint64_t bytes;
    };
    std::vector<InFlight> inFlight;
    int64_t nextId = 1;
    uint64_t block = 0;
    while (e.count() + 40 < target) {
        e.setHlo(hlos[(block / 256) % 4]);
        const uint32_t r = 1 + block % 12;
        // Prefetch the block `depth` ahead.
        const uint64_t bytes = (1 + rng.below(8)) * 2 * KiB;
        const uint64_t slotIndex = block % slots;
        e.op("mov", "scalar", 1, 1, {}, {e.s(r)});
        e.op("shl", "scalar", 1, 1, {e.s(r)}, {e.s(r + 16)});
        e.op("add", "scalar", 1, 1, {e.s(r + 16)}, {e.s(r + 32)});
        e.issue(nextId, {kHbm, 1024 * MiB + (block % 4096) * slot, bytes},
                {kDcache, ring + slotIndex * slot, bytes}, {e.s(r + 32)});
        inFlight.push_back({nextId++, slotIndex, bytes});
        // Consume the oldest prefetch once a few are in flight.
        const uint64_t depth = 1 + rng.below(3);
        while (inFlight.size() > depth) {
            const InFlight f = inFlight.front();
            inFlight.erase(inFlight.begin());
            e.wait(f.id);
            const Mem data{kDcache, ring + f.slotIndex * slot, f.bytes};
            e.op("vld", "vpu", 1, 1, {}, {e.v(block % 8)}, {data});
            const uint32_t work = 4 + static_cast<uint32_t>(rng.below(10));
            for (uint32_t k = 0; k < work; ++k) {
                switch (rng.below(4)) {
                    case 0:
                        e.op("matmul", "mxu", 4, 16, {e.v(k % 8)}, {e.v(8 + k % 8)});
                        break;
                    case 1:
                        e.op("vadd", "vpu", 2, 2, {e.v(k % 8)}, {e.v(16 + k % 8)});
                        break;
                    case 2:
                        e.op("vmul", "vpu", 2, 4, {e.v(k % 8)}, {e.v(16 + k % 8)});
                        break;
                    default:
                        e.op("sadd", "scalar", 1, 1, {e.s(48 + k % 8)}, {e.s(56 + k % 8)});
                }
            }
            const Mem out{kDcache, outBase + (block % 128) * 4 * KiB, 4 * KiB};
            e.op("vst", "vpu", 1, 1, {e.v(16)}, {}, {}, {out});
            if (rng.below(8) == 0) {
                // Write the result back.
                e.issue(nextId, out, {kHbm, 2048 * MiB + (block % 1024) * 4 * KiB, 4 * KiB}, {});
                e.wait(nextId++);
            }
        }
        ++block;
    }
    for (const InFlight& f : inFlight) e.wait(f.id);
    while (e.count() < target) e.op("nop", "scalar", 1, 1, {}, {});
    return e.finish();
}

}  // namespace

const std::vector<std::string>& workloadNames() {
    static const std::vector<std::string> names{"allgather", "allgather-pinned", "matmul-starved",
                                                "fragmentation", "scale"};
    return names;
}

Machine referenceMachine(bool withRemote) {
    Machine m;
    m.name = "toy-tpu";
    m.clockGhz = 1.0;
    m.spaces = {{"hbm", 16ull * 1024 * MiB}, {"dcache", 16 * MiB}};
    m.links = {{0, 1, 400, 64}, {1, 0, 400, 64}};
    if (withRemote) {
        m.spaces.push_back({"remote_hbm", 16ull * 1024 * MiB});
        m.links.push_back({0, 2, 600, 32});
        m.links.push_back({2, 0, 600, 32});
    }
    m.dcache = DcacheGeometry{1, 512, 256};
    m.lightweight = {"mov", "add", "sub", "shl", "shr", "and", "or", "lea"};
    return m;
}

InstructionStream generateWorkload(std::string_view scenario, const GenerateOptions& options) {
    if (scenario == "allgather") return allGather(options, false);
    if (scenario == "allgather-pinned") return allGather(options, true);
    if (scenario == "matmul-starved") return matmulStarved(options);
    if (scenario == "fragmentation") return fragmentation(options);
    if (scenario == "scale") return scale(options);
    std::string known;
    for (const auto& n : workloadNames()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown workload '" + std::string(scenario) + "' (known: " + known + ")");
}

}  // namespace stallscope::replay
