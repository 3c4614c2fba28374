#pragma once

// What every benchmark reports besides its own figures: CPU time (steadier than wall time on a
// busy machine) and the peak resident memory of the process so far.

#include <sys/resource.h>

namespace stallscope::bench {

// User + system CPU time of this process so far, in seconds.
inline double cpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Peak resident set size so far, in MiB.
inline long peakRssMb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

}  // namespace stallscope::bench
