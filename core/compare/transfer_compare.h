#pragma once

// Transfers of two profiles of one program side by side (before a, after b). Module runs are
// matched by program and their order among that program's runs; transfers within matched runs
// by name and occurrence (the k-th cudaMemcpyAsync of a run with the k-th), so repeated names
// pair up in order instead of all with the first.

#include <QJsonObject>
#include <cstdint>
#include <string>
#include <vector>

#include "core/transfers/transfers.h"

namespace stallscope::compare {

struct RunPair {
    std::string program;
    uint32_t run = 0;       // its order among the program's runs
    uint32_t a = 0, b = 0;  // indices into each analysis's modules
};

struct TransferPair {
    std::string program;
    uint32_t run = 0;
    std::string name;
    uint32_t occurrence = 0;      // among the run's transfers of that name
    uint32_t a = 0, b = 0;        // indices into each analysis's transfers
    uint32_t aRun = 0, bRun = 0;  // the modules they ran in
};

struct TransferComparison {
    std::vector<RunPair> runs;
    std::vector<TransferPair> transfers;
    // Without a counterpart on the other side (runs beyond the other's count, and theirs).
    uint64_t unmatchedRunsA = 0, unmatchedRunsB = 0;
    uint64_t unmatchedTransfersA = 0, unmatchedTransfersB = 0;
};

TransferComparison compareTransfers(const transfers::Analysis& a, const transfers::Analysis& b);
// `dma-compare --json`.
QJsonObject transferComparisonJson(const TransferComparison& c, const transfers::Analysis& a,
                                   const transfers::Analysis& b);

}  // namespace stallscope::compare
