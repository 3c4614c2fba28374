#pragma once

// Run-time x86-64 code generation for `noise-probe`: a reference kernel's loop with k noise
// instructions injected into its body as real machine instructions (the paper injects them with
// an LLVM pass; we emit the loop ourselves, so the body size is known exactly).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stallscope::noise::probe {

enum class Kernel {
    StreamTriad,   // a[i] = b[i] + s * c[i], scalar, streaming from memory (bandwidth)
    PointerChase,  // p = *p over a random cycle larger than the caches (latency)
    FpChains,      // 8 interleaved dependent FP add chains: keeps both FP adders busy (compute)
};

enum class NoiseMode { FpAdd64, Int64Add, L1Ld64, MemoryLd64 };

const char* kernelName(Kernel kernel);  // region names in the CSV: stream_triad, ...
const char* modeName(NoiseMode mode);   // fp_add64, int64_add, l1_ld64, memory_ld64

// What the generated function reads and updates: `void f(uint64_t end, KernelArgs* args)`
// runs the loop for index = args->start .. end-1. Offsets are fixed by the emitted code.
struct KernelArgs {
    double* a = nullptr;         // 0: triad destination
    const double* b = nullptr;   // 8
    const double* c = nullptr;   // 16
    double scalar = 1.0;         // 24: triad factor, FP chain increment, FP noise operand
    uint64_t start = 0;          // 32: first loop index
    void* chase = nullptr;       // 40: pointer-chase cursor, stored back on return
    const char* hot = nullptr;   // 48: 4 KiB buffer that stays in L1 (l1_ld64 noise)
    const char* cold = nullptr;  // 56: large buffer read chaotically (memory_ld64 noise)
    uint64_t coldOffset = 0;     // 64: position in `cold`, stored back on return
    uint64_t coldMask = 0;       // 72: cold buffer size - 1 (a power of two)
};

// The stride between the memory_ld64 loads of one iteration and the per-iteration step of
// their base: different pages each time, too far apart for the prefetchers to follow.
constexpr uint64_t kColdLoadStride = 4096 + 64;
constexpr uint64_t kColdStep = 64 * 40503;

struct EmittedLoop {
    std::vector<uint8_t> code;  // the whole function
    size_t loopBegin = 0;       // offset of the loop's first instruction
    size_t loopEnd = 0;         // offset just past the loop's backward branch
    int bodyInstr = 0;          // kernel instructions per iteration, loop control included
    int payloadInstr = 0;       // noise instructions per iteration (= k)
    int overheadInstr = 0;      // per-iteration instructions the noise needs besides payload
};

// Emits the function for `kernel` with k patterns of `mode` in its loop body. Portable (it only
// writes bytes); running the code needs an x86-64 CPU with AVX.
EmittedLoop emitLoop(Kernel kernel, NoiseMode mode, int k);

// Emitted code made executable (mmap'd, then write-protected). Throws Failure when the system
// refuses executable memory.
class ExecutableCode {
  public:
    using Function = void (*)(uint64_t end, KernelArgs* args);
    explicit ExecutableCode(const std::vector<uint8_t>& code);
    ~ExecutableCode();
    ExecutableCode(const ExecutableCode&) = delete;
    ExecutableCode& operator=(const ExecutableCode&) = delete;
    ExecutableCode(ExecutableCode&& other) noexcept;
    void run(uint64_t end, KernelArgs& args) const { function_(end, &args); }

  private:
    void* memory_ = nullptr;
    size_t size_ = 0;
    Function function_ = nullptr;
};

// Empty when this CPU can run the emitted code, else why not (architecture, missing AVX).
std::string unsupportedReason();

}  // namespace stallscope::noise::probe
