#pragma once

#include "core/progress.h"

namespace stallscope {

// A one-line progress bar on stderr, redrawn at most every 100 ms; empty when stderr is not a
// terminal, so scripts and CI logs stay clean.
Progress::Listener terminalProgressBar();
// Erases the bar's line (after the work, before printing results).
void clearTerminalProgressBar();

// While alive, Ctrl-C (SIGINT) and SIGTERM cancel `progress`: the work stops at its next progress
// point, its transaction rolls back and the command says so. A second Ctrl-C kills at once.
class CancelOnInterrupt {
  public:
    explicit CancelOnInterrupt(Progress& progress);
    ~CancelOnInterrupt();
    CancelOnInterrupt(const CancelOnInterrupt&) = delete;
    CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;
};

}  // namespace stallscope
