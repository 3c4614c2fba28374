#pragma once

#include <cstddef>

namespace stallscope {

// Sizes of the buffers imports start with, process-wide. The defaults suit files of gigabytes;
// fuzz targets and tests lower them, so that each run allocates little and the paths taken when
// the buffers overflow (spilled runs, a growing read window) are exercised on small inputs.
struct ImportBuffers {
    size_t traceRecords = size_t(1) << 20;  // slices TraceWriter holds (two buffers of half)
    size_t xprofTraceRecords = size_t(1) << 21;
    size_t jsonWindow = size_t(4) << 20;  // Chrome JSON read window, grown to fit one event
    size_t fileChunk = size_t(1) << 20;   // bytes read from disk at a time
    size_t lineWindow = size_t(4) << 20;  // LineReader's window, grown to fit one line
};

ImportBuffers& importBuffers();

}  // namespace stallscope
