// Transfer derivation cost on an imported trace profile: derives its transfers RUNS times (no
// storing) and prints wall and CPU time per run, the peak memory growth of the process and
// what the derivation found, so it can be profiled (perf record) apart from the import.
//
//   bench_transfers WORKSPACE PROFILE_ID [RUNS]
#include <sys/resource.h>

#include <QElapsedTimer>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/trace/trace_store.h"
#include "core/transfers/transfers.h"
#include "core/workspace.h"
#include "tests/benchmarks/bench_usage.h"

using namespace stallscope;
using bench::cpuSeconds;
using bench::peakRssMb;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_transfers WORKSPACE PROFILE_ID [RUNS]\n");
        return 2;
    }
    const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
    const auto workspace = Workspace::open(argv[1], Workspace::Mode::ReadOnly);
    const trace::TraceStore store(*workspace, std::atoll(argv[2]));
    const long baseMb = peakRssMb();
    std::printf("slices read: %llu, derive at import: %s\n",
                static_cast<unsigned long long>(transfers::derivationSlices(store)),
                transfers::deriveAtImport(store) ? "yes" : "no");
    for (int r = 0; r < runs; ++r) {
        QElapsedTimer timer;
        timer.start();
        const double cpu = cpuSeconds();
        const transfers::Analysis analysis = transfers::derive(store);
        std::printf(
            "run %d: %.3f s wall, %.3f s cpu; %zu transfers, %zu runs, %zu suggestions, stall "
            "%lld ns, model error %.3f %%; peak RSS %ld MB (store open: %ld MB)\n",
            r + 1, double(timer.nsecsElapsed()) / 1e9, cpuSeconds() - cpu,
            analysis.transfers.size(), analysis.modules.size(), analysis.suggestions.size(),
            static_cast<long long>(analysis.stallNs), analysis.modelErrorPct, peakRssMb(), baseMb);
        // What storing it at import adds (encoding and compressing; the blob write aside).
        timer.restart();
        const double encodeCpu = cpuSeconds();
        const std::string bytes = transfers::encode(analysis);
        std::printf("  encode: %.3f s wall, %.3f s cpu, %zu bytes\n",
                    double(timer.nsecsElapsed()) / 1e9, cpuSeconds() - encodeCpu, bytes.size());
    }
    return 0;
}
