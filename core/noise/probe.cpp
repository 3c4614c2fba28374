#include "core/noise/probe.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "core/errors.h"

namespace stallscope::noise::probe {

namespace {

// Anonymous memory, huge pages when the kernel offers them (fewer TLB misses blur less of what
// the memory kernels measure). Filled with non-zero bytes so every page is really backed.
class LargeBuffer {
  public:
    explicit LargeBuffer(size_t bytes) : size_(bytes) {
        data_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (data_ == MAP_FAILED)
            throw Failure("noise-probe: cannot allocate " + std::to_string(bytes >> 20) + " MiB");
#ifdef MADV_HUGEPAGE
        ::madvise(data_, size_, MADV_HUGEPAGE);
#endif
        std::memset(data_, 1, size_);
    }
    ~LargeBuffer() {
        ::munmap(data_, size_);
    }
    LargeBuffer(const LargeBuffer&) = delete;
    LargeBuffer& operator=(const LargeBuffer&) = delete;
    template <typename T>
    T* as() const {
        return static_cast<T*>(data_);
    }
    size_t size() const {
        return size_;
    }

  private:
    void* data_;
    size_t size_;
};

// The largest CPU cache (bytes) as sysfs reports it for cpu0; 0 when unknown.
size_t lastLevelCacheBytes() {
    size_t largest = 0;
    for (int index = 0; index < 8; ++index) {
        std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                         "/size");
        std::string text;
        if (!(in >> text) || text.empty()) continue;
        size_t value = 0;
        size_t i = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9')
            value = value * 10 + size_t(text[i++] - '0');
        const char unit = i < text.size() ? text[i] : 'B';
        value <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
        largest = std::max(largest, value);
    }
    return largest;
}

// A buffer in DRAM: a server may have hundreds of MiB of last-level cache, and a 64 MiB pointer
// chase inside a 480 MiB L3 measured cache latency and absorbed no memory loads.
size_t beyondCache(size_t minimum) {
    return beyondCacheBytes(minimum, lastLevelCacheBytes());
}

// Sizes read once, when a probe first needs them (not at every program start).
size_t triadElements() {  // per array and thread
    static const size_t n = beyondCache(size_t(96) << 20) / 3 / sizeof(double);
    return n;
}
size_t chaseNodes() {  // 64-byte nodes
    static const size_t n = beyondCache(size_t(64) << 20) / 64;
    return n;
}
size_t coldBytes() {  // the memory_ld64 target; a power of two (the loads' offsets are masked)
    static const size_t n = beyondCache(size_t(128) << 20);
    return n;
}
constexpr size_t kBytesPerTriadIteration = 3 * sizeof(double);
constexpr int kFlopsPerChainIteration = 8;

struct TriadArrays {
    LargeBuffer a{triadElements() * sizeof(double)};
    LargeBuffer b{triadElements() * sizeof(double)};
    LargeBuffer c{triadElements() * sizeof(double)};
    uint64_t position = 0;
};

struct Measurement {
    double nsPerIteration = 0;
    double perf = 0;
};

class Probe {
  public:
    Probe(const ProbeOptions& options, int maxK)
        : options_(options),
          hot_(4096),
          cold_(coldBytes() + size_t(maxK + 1) * kColdLoadStride),
          chase_(chaseNodes() * 64) {
        for (int t = 0; t < std::max(1, options.threads); ++t)
            triad_.push_back(std::make_unique<TriadArrays>());
        // One random cycle through all nodes (Sattolo), so the chase visits every node and the
        // prefetchers cannot guess the next address.
        std::vector<uint32_t> order(chaseNodes());
        std::iota(order.begin(), order.end(), 0u);
        std::mt19937_64 random(20250605);
        for (size_t i = chaseNodes() - 1; i > 0; --i)
            std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(random)]);
        char* base = chase_.as<char>();
        for (size_t i = 0; i < chaseNodes(); ++i) {
            void* next = base + size_t(order[(i + 1) % chaseNodes()]) * 64;
            std::memcpy(base + size_t(order[i]) * 64, &next, sizeof next);
        }
        chaseCursor_ = base + size_t(order[0]) * 64;
    }

    Measurement run(Kernel kernel, const ExecutableCode& code, uint64_t iterations) {
        if (kernel == Kernel::StreamTriad) return runTriad(code, iterations);
        KernelArgs args = baseArgs();
        args.chase = chaseCursor_;
        args.coldOffset = coldOffset_;
        const double start = threadCpuNs();
        code.run(iterations, args);
        const double ns = threadCpuNs() - start;
        chaseCursor_ = args.chase;
        coldOffset_ = args.coldOffset;
        const double perIteration = ns / double(iterations);
        if (kernel == Kernel::PointerChase) return {perIteration, perIteration};
        return {perIteration, kFlopsPerChainIteration / perIteration};
    }

    uint64_t maxIterations(Kernel kernel) const {
        return kernel == Kernel::StreamTriad ? triadElements() : uint64_t(1) << 32;
    }

  private:
    // CPU time of the calling thread: time slices other processes take on a shared machine do
    // not count (wall time on a loaded 2-core box was bimodal, 1x or 2.6x).
    static double threadCpuNs() {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
    }

    KernelArgs baseArgs() const {
        KernelArgs args;
        args.scalar = 1.0;
        args.hot = hot_.as<char>();
        args.cold = cold_.as<char>();
        args.coldMask = coldBytes() - 1;
        return args;
    }

    // Every thread streams its own arrays; the CPU time of the slowest counts.
    Measurement runTriad(const ExecutableCode& code, uint64_t iterations) {
        std::vector<KernelArgs> args;
        for (auto& arrays : triad_) {
            KernelArgs a = baseArgs();
            a.a = arrays->a.as<double>();
            a.b = arrays->b.as<double>();
            a.c = arrays->c.as<double>();
            a.scalar = 3.0;
            if (arrays->position + iterations > triadElements()) arrays->position = 0;
            a.start = arrays->position;
            a.coldOffset = (coldOffset_ + args.size() * (coldBytes() / 8)) & (coldBytes() - 1);
            arrays->position += iterations;
            args.push_back(a);
        }
        std::atomic<bool> go{false};
        std::atomic<int> ready{0};
        std::vector<double> cpuNs(args.size());
        auto timedRun = [&](size_t t) {
            const double start = threadCpuNs();
            code.run(args[t].start + iterations, args[t]);
            cpuNs[t] = threadCpuNs() - start;
        };
        std::vector<std::thread> workers;
        for (size_t t = 1; t < args.size(); ++t) {
            workers.emplace_back([&, t] {
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
                timedRun(t);
            });
        }
        while (ready.load() < int(workers.size())) std::this_thread::yield();
        go.store(true, std::memory_order_release);
        timedRun(0);
        for (auto& w : workers) w.join();
        const double ns = *std::max_element(cpuNs.begin(), cpuNs.end());
        coldOffset_ = args[0].coldOffset;
        const double perIteration = ns / double(iterations);
        const double gbPerSecond = double(kBytesPerTriadIteration * iterations * args.size()) / ns;
        return {perIteration, gbPerSecond};
    }

    ProbeOptions options_;
    LargeBuffer hot_;
    LargeBuffer cold_;
    LargeBuffer chase_;
    std::vector<std::unique_ptr<TriadArrays>> triad_;
    void* chaseCursor_ = nullptr;
    uint64_t coldOffset_ = 0;
};

const char* perfUnit(Kernel kernel) {
    switch (kernel) {
        case Kernel::StreamTriad:
            return "GB/s";
        case Kernel::PointerChase:
            return "ns/load";
        case Kernel::FpChains:
            return "GFLOPS";
    }
    return "";
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

std::vector<int> noiseQuantities(Kernel kernel, NoiseMode mode, bool quick) {
    const bool memory = mode == NoiseMode::MemoryLd64;
    switch (kernel) {
        case Kernel::FpChains:
            if (quick) return {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48};
            return {0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48, 64};
        case Kernel::StreamTriad:
            if (memory) return {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
            if (quick) return {0, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96};
            return {0, 1, 2, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128};
        case Kernel::PointerChase:
            if (memory) return {0, 1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48};
            // The chase leaves a few hundred cycles per load to fill: k must reach past the
            // reorder buffer to see saturation.
            if (quick) return {0, 32, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024};
            return {0,   16,  32,  48,  64,  96,  128, 160, 192,  224,
                    256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280};
    }
    return {0};
}

size_t beyondCacheBytes(size_t minimum, size_t lastLevelCache) {
    const size_t want = std::max(minimum, 2 * lastLevelCache);
    size_t bytes = minimum;
    while (bytes < want && bytes < (size_t(1) << 30)) bytes <<= 1;
    return bytes;
}

std::string machineName() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.starts_with("model name") || line.starts_with("Model")) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                model = line.substr(line.find_first_not_of(' ', colon + 1));
            break;
        }
    }
    std::string name = host;
    if (!model.empty()) name += " (" + model + ")";
    return name;
}

void runProbe(const ProbeOptions& options, std::ostream& csv, Progress& progress) {
    if (const std::string why = unsupportedReason(); !why.empty()) throw Failure(why);
    if (options.threads < 1 || options.threads > 256)
        throw InputError("noise-probe: --threads must be in 1..256");
    const int reps = options.quick ? 9 : 15;
    const double targetNs = options.quick ? 2.5e6 : 12e6;

    struct Plan {
        Kernel kernel;
        NoiseMode mode;
        std::vector<int> ks;
    };
    std::vector<Plan> plans;
    int maxK = 0;
    size_t totalRuns = 0;
    for (Kernel kernel : options.kernels) {
        for (NoiseMode mode : options.modes) {
            Plan plan{kernel, mode, noiseQuantities(kernel, mode, options.quick)};
            if (mode == NoiseMode::MemoryLd64) maxK = std::max(maxK, plan.ks.back());
            totalRuns += plan.ks.size() * size_t(reps + 1);
            plans.push_back(std::move(plan));
        }
    }
    progress.report(0, "allocating buffers");
    Probe probe(options, maxK);
    const std::string machine = csvField(machineName());

    csv << "machine,region,mode,k,rep,time_ns,body_instr,payload_instr,overhead_instr,cores,perf,"
           "perf_unit,iterations\n";
    size_t done = 0;
    for (const Plan& plan : plans) {
        const std::string stage = std::string(kernelName(plan.kernel)) + " " + modeName(plan.mode);
        std::vector<EmittedLoop> loops;
        std::vector<ExecutableCode> codes;
        std::vector<uint64_t> iterations;
        for (int k : plan.ks) {
            loops.push_back(emitLoop(plan.kernel, plan.mode, k));
            codes.emplace_back(loops.back().code);
            // Calibrate (and warm up) so each timed run lasts about targetNs.
            const uint64_t trial = plan.kernel == Kernel::PointerChase ? 4000 : 40000;
            probe.run(plan.kernel, codes.back(), trial);
            const Measurement m = probe.run(plan.kernel, codes.back(), trial);
            const double wanted = targetNs / std::max(m.nsPerIteration, 0.01);
            iterations.push_back(
                std::clamp<uint64_t>(uint64_t(wanted), 1000, probe.maxIterations(plan.kernel)));
            progress.report(double(++done) / double(totalRuns), stage + " calibrating");
        }
        const int cores = plan.kernel == Kernel::StreamTriad ? options.threads : 1;
        for (int rep = 0; rep < reps; ++rep) {
            // Rotate the order each repeat: slow drift of the machine becomes spread, not slope.
            for (size_t n = 0; n < plan.ks.size(); ++n) {
                const size_t i = (n + size_t(rep) * 5) % plan.ks.size();
                const Measurement m = probe.run(plan.kernel, codes[i], iterations[i]);
                const EmittedLoop& loop = loops[i];
                csv << machine << ',' << kernelName(plan.kernel) << ',' << modeName(plan.mode)
                    << ',' << plan.ks[i] << ',' << rep << ',' << m.nsPerIteration << ','
                    << loop.bodyInstr << ',' << loop.payloadInstr << ',' << loop.overheadInstr
                    << ',' << cores << ',' << m.perf << ',' << perfUnit(plan.kernel) << ','
                    << iterations[i] << '\n';
                progress.report(double(++done) / double(totalRuns),
                                stage + " k=" + std::to_string(plan.ks[i]));
            }
        }
    }
    csv.flush();
    progress.report(1.0, "done");
}

}  // namespace stallscope::noise::probe
