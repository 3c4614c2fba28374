#include "core/noise/probe_emitter.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "core/errors.h"

namespace stallscope::noise::probe {

const char* kernelName(Kernel kernel) {
    switch (kernel) {
        case Kernel::StreamTriad:
            return "stream_triad";
        case Kernel::PointerChase:
            return "pointer_chase";
        case Kernel::FpChains:
            return "fp_chains";
    }
    return "";
}

const char* modeName(NoiseMode mode) {
    switch (mode) {
        case NoiseMode::FpAdd64:
            return "fp_add64";
        case NoiseMode::Int64Add:
            return "int64_add";
        case NoiseMode::L1Ld64:
            return "l1_ld64";
        case NoiseMode::MemoryLd64:
            return "memory_ld64";
    }
    return "";
}

namespace {

// x86-64 register numbers (the same numbering for general-purpose and xmm registers).
enum Reg : int {
    RAX = 0,
    RCX = 1,
    RDX = 2,
    RBX = 3,
    RSP = 4,
    RBP = 5,
    RSI = 6,
    RDI = 7,
    R8 = 8,
    R9 = 9,
    R10 = 10,
    R11 = 11,
    R12 = 12,
    R13 = 13,
    R14 = 14,
    R15 = 15
};

// A memory operand [base + index*scale + disp].
struct Mem {
    int base;
    int index = -1;
    int scale = 1;
    int32_t disp = 0;
};

// A tiny assembler for the handful of instruction forms the probe needs. Every emit counts one
// instruction, so the loop's instruction counts come from what was actually written.
class Assembler {
  public:
    std::vector<uint8_t> bytes;
    int instructions = 0;

    size_t offset() const { return bytes.size(); }

    // mov r64, [mem]
    void movLoad(int dst, const Mem& m) { rexOp(true, dst, m, {0x8B}); }
    // mov [mem], r64
    void movStore(const Mem& m, int src) { rexOp(true, src, m, {0x89}); }
    // add dst, src (64-bit)
    void addReg(int dst, int src) { rexRegReg(0x01, src, dst); }
    // and dst, src (64-bit)
    void andReg(int dst, int src) { rexRegReg(0x21, src, dst); }
    // cmp a, b (64-bit): flags of a - b
    void cmpReg(int a, int b) { rexRegReg(0x39, b, a); }
    // add r64, imm (imm8 when it fits, else imm32)
    void addImm(int dst, int32_t imm) {
        const bool small = imm >= -128 && imm <= 127;
        emit(uint8_t(0x48 | ((dst >> 3) & 1)));
        emit(small ? 0x83 : 0x81);
        emit(uint8_t(0xC0 | (dst & 7)));
        if (small)
            emit(uint8_t(imm));
        else
            emit32(uint32_t(imm));
        ++instructions;
    }
    void push(int r) {
        if (r >= 8) emit(0x41);
        emit(uint8_t(0x50 | (r & 7)));
        ++instructions;
    }
    void pop(int r) {
        if (r >= 8) emit(0x41);
        emit(uint8_t(0x58 | (r & 7)));
        ++instructions;
    }
    void ret() {
        emit(0xC3);
        ++instructions;
    }
    void vzeroupper() {
        emit(0xC5), emit(0xF8), emit(0x77);
        ++instructions;
    }
    // jb to an earlier offset (rel32).
    void jbBack(size_t target) {
        emit(0x0F), emit(0x82);
        const int64_t rel = int64_t(target) - int64_t(offset() + 4);
        emit32(uint32_t(int32_t(rel)));
        ++instructions;
    }
    // Single-byte NOPs up to an alignment boundary (run once, outside the loop).
    void alignTo(size_t boundary) {
        while (offset() % boundary) emit(0x90);
    }

    // Scalar double AVX forms, VEX.LIG.F2.0F: 10 = vmovsd load, 11 = store, 58 = add, 59 = mul.
    void vmovsdLoad(int dst, const Mem& m) { vexMem(0x10, dst, 0, m); }
    void vmovsdStore(const Mem& m, int src) { vexMem(0x11, src, 0, m); }
    void vaddsd(int dst, int a, int b) { vexReg(0x58, dst, a, b); }
    void vmulsdMem(int dst, int a, const Mem& m) { vexMem(0x59, dst, a, m); }

  private:
    void emit(uint8_t b) { bytes.push_back(b); }
    void emit32(uint32_t v) {
        for (int i = 0; i < 4; ++i) emit(uint8_t(v >> (8 * i)));
    }

    // ModRM (+ SIB + displacement) for a memory operand.
    void modrmMem(int reg, const Mem& m) {
        const bool needsSib = m.index >= 0 || (m.base & 7) == RSP;
        // [rbp]/[r13] without displacement would mean RIP-relative/disp32: use disp8 = 0.
        const bool noDisp = m.disp == 0 && (m.base & 7) != RBP;
        const bool disp8 = !noDisp && m.disp >= -128 && m.disp <= 127;
        const uint8_t mod = noDisp ? 0 : disp8 ? 1 : 2;
        emit(uint8_t((mod << 6) | ((reg & 7) << 3) | (needsSib ? 4 : (m.base & 7))));
        if (needsSib) {
            const int scaleBits = m.scale == 8 ? 3 : m.scale == 4 ? 2 : m.scale == 2 ? 1 : 0;
            const int index = m.index >= 0 ? (m.index & 7) : RSP;  // 100: no index
            emit(uint8_t((scaleBits << 6) | (index << 3) | (m.base & 7)));
        }
        if (mod == 1) emit(uint8_t(int8_t(m.disp)));
        if (mod == 2) emit32(uint32_t(m.disp));
    }

    void rexOp(bool w, int reg, const Mem& m, std::initializer_list<uint8_t> opcode) {
        const int x = m.index >= 0 ? (m.index >> 3) & 1 : 0;
        emit(
            uint8_t(0x40 | (w ? 8 : 0) | (((reg >> 3) & 1) << 2) | (x << 1) | ((m.base >> 3) & 1)));
        for (uint8_t b : opcode) emit(b);
        modrmMem(reg, m);
        ++instructions;
    }

    void rexRegReg(uint8_t opcode, int reg, int rm) {
        emit(uint8_t(0x48 | (((reg >> 3) & 1) << 2) | ((rm >> 3) & 1)));
        emit(opcode);
        emit(uint8_t(0xC0 | ((reg & 7) << 3) | (rm & 7)));
        ++instructions;
    }

    // VEX prefix for map 0F, pp = F2 (scalar double), L = 0, W = 0. Uses the 2-byte form when
    // the operand needs no X/B extension.
    void vexPrefix(int reg, int vvvv, int x, int b) {
        const int r = (reg >> 3) & 1;
        if (!x && !b) {
            emit(0xC5);
            emit(uint8_t(((r ^ 1) << 7) | ((~vvvv & 15) << 3) | 0x3));
        } else {
            emit(0xC4);
            emit(uint8_t(((r ^ 1) << 7) | ((x ^ 1) << 6) | ((b ^ 1) << 5) | 0x01));
            emit(uint8_t(((~vvvv & 15) << 3) | 0x3));
        }
    }
    void vexMem(uint8_t opcode, int reg, int vvvv, const Mem& m) {
        vexPrefix(reg, vvvv, m.index >= 0 ? (m.index >> 3) & 1 : 0, (m.base >> 3) & 1);
        emit(opcode);
        modrmMem(reg, m);
        ++instructions;
    }
    void vexReg(uint8_t opcode, int reg, int vvvv, int rm) {
        vexPrefix(reg, vvvv, 0, (rm >> 3) & 1);
        emit(opcode);
        emit(uint8_t(0xC0 | ((reg & 7) << 3) | (rm & 7)));
        ++instructions;
    }
};

// Registers of the generated function (System V: rdi = end, rsi = args).
constexpr int kIndex = RCX, kEnd = RDI, kArgs = RSI, kCursor = RAX;
constexpr int kA = R8, kB = R9, kC = R10, kHot = R11;
constexpr int kColdOffset = R12, kColdBase = R13, kColdMask = R14;
// Noise destinations are written, never read, so noise instructions do not wait on each other
// (integer adds read their own destination: four chains keep up with four ALUs).
constexpr int kNoiseGpr[] = {RDX, RBX, RBP, R15};
constexpr int kNoiseXmm[] = {8, 9, 10, 11, 12, 13};
constexpr int kNoiseXmmSource = 14;
constexpr int kScalarXmm = 15;
constexpr int kChains = 8;

void emitNoise(Assembler& as, NoiseMode mode, int k) {
    for (int j = 0; j < k; ++j) {
        const int gpr = kNoiseGpr[j % 4];
        switch (mode) {
            case NoiseMode::FpAdd64:
                as.vaddsd(kNoiseXmm[j % 6], kNoiseXmmSource, kNoiseXmmSource);
                break;
            case NoiseMode::Int64Add:
                as.addReg(gpr, kArgs);
                break;
            case NoiseMode::L1Ld64:
                // 64 distinct lines of the 4 KiB hot buffer.
                as.movLoad(gpr, Mem{kHot, -1, 1, (j % 64) * 64});
                break;
            case NoiseMode::MemoryLd64:
                as.movLoad(gpr, Mem{kColdBase, kColdOffset, 1, int32_t(j * kColdLoadStride)});
                break;
        }
    }
}

}  // namespace

EmittedLoop emitLoop(Kernel kernel, NoiseMode mode, int k) {
    if (k < 0 || k > 4096) throw InputError("noise quantity must be in 0..4096");
    Assembler as;
    constexpr int kSaved[] = {RBX, RBP, R12, R13, R14, R15};
    for (int r : kSaved) as.push(r);
    as.movLoad(kA, Mem{kArgs, -1, 1, 0});
    as.movLoad(kB, Mem{kArgs, -1, 1, 8});
    as.movLoad(kC, Mem{kArgs, -1, 1, 16});
    as.vmovsdLoad(kScalarXmm, Mem{kArgs, -1, 1, 24});
    as.vmovsdLoad(kNoiseXmmSource, Mem{kArgs, -1, 1, 24});
    as.movLoad(kIndex, Mem{kArgs, -1, 1, 32});
    as.movLoad(kCursor, Mem{kArgs, -1, 1, 40});
    as.movLoad(kHot, Mem{kArgs, -1, 1, 48});
    as.movLoad(kColdBase, Mem{kArgs, -1, 1, 56});
    as.movLoad(kColdOffset, Mem{kArgs, -1, 1, 64});
    as.movLoad(kColdMask, Mem{kArgs, -1, 1, 72});
    if (kernel == Kernel::FpChains)
        for (int chain = 0; chain < kChains; ++chain) as.vmovsdLoad(chain, Mem{kArgs, -1, 1, 24});
    as.alignTo(64);

    EmittedLoop loop;
    loop.loopBegin = as.offset();
    const int before = as.instructions;
    switch (kernel) {
        case Kernel::StreamTriad:
            as.vmovsdLoad(0, Mem{kB, kIndex, 8, 0});
            as.vmulsdMem(1, kScalarXmm, Mem{kC, kIndex, 8, 0});
            as.vaddsd(0, 0, 1);
            as.vmovsdStore(Mem{kA, kIndex, 8, 0}, 0);
            break;
        case Kernel::PointerChase:
            as.movLoad(kCursor, Mem{kCursor, -1, 1, 0});
            break;
        case Kernel::FpChains:
            for (int chain = 0; chain < kChains; ++chain) as.vaddsd(chain, chain, kScalarXmm);
            break;
    }
    const int kernelInstructions = as.instructions - before;
    const int beforeNoise = as.instructions;
    emitNoise(as, mode, k);
    loop.payloadInstr = as.instructions - beforeNoise;
    const int beforeOverhead = as.instructions;
    if (mode == NoiseMode::MemoryLd64 && k > 0) {
        // Move the loads' base somewhere unpredictable for the next iteration.
        as.addImm(kColdOffset, int32_t(kColdStep));
        as.andReg(kColdOffset, kColdMask);
    }
    loop.overheadInstr = as.instructions - beforeOverhead;
    const int beforeControl = as.instructions;
    as.addImm(kIndex, 1);
    as.cmpReg(kIndex, kEnd);
    as.jbBack(loop.loopBegin);
    loop.bodyInstr = kernelInstructions + (as.instructions - beforeControl);
    loop.loopEnd = as.offset();

    as.movStore(Mem{kArgs, -1, 1, 40}, kCursor);
    as.movStore(Mem{kArgs, -1, 1, 64}, kColdOffset);
    as.vzeroupper();
    for (auto it = std::rbegin(kSaved); it != std::rend(kSaved); ++it) as.pop(*it);
    as.ret();
    loop.code = std::move(as.bytes);
    return loop;
}

ExecutableCode::ExecutableCode(const std::vector<uint8_t>& code) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_ = (code.size() + page - 1) / page * page;
    memory_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory_ == MAP_FAILED) {
        memory_ = nullptr;
        throw Failure("cannot map memory for generated code");
    }
    std::memcpy(memory_, code.data(), code.size());
    if (::mprotect(memory_, size_, PROT_READ | PROT_EXEC) != 0) {
        ::munmap(memory_, size_);
        memory_ = nullptr;
        throw Failure("the system refuses executable memory (mprotect PROT_EXEC failed)");
    }
    // Object pointer to function pointer: copy the representation (POSIX guarantees it works).
    std::memcpy(&function_, &memory_, sizeof function_);
}

ExecutableCode::~ExecutableCode() {
    if (memory_) ::munmap(memory_, size_);
}

ExecutableCode::ExecutableCode(ExecutableCode&& other) noexcept
    : memory_(other.memory_), size_(other.size_), function_(other.function_) {
    other.memory_ = nullptr;
    other.function_ = nullptr;
}

std::string unsupportedReason() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx"))
        return "noise-probe needs an x86-64 CPU with AVX (this one has none)";
    return {};
#else
    return "noise-probe generates x86-64 machine code; this machine is not x86-64";
#endif
}

}  // namespace stallscope::noise::probe
