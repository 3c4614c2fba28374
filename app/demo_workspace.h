#pragma once

#include <string>

namespace stallscope {

// Builds the demo workspace if it has no profiles yet: the generated reference workloads
// (allgather, allgather-pinned, matmul-starved, fragmentation) and the bundled examples of the
// other kinds (resources/: a noise-probe result, CPI stacks, estimates, a Chrome trace). Each
// profile names where it came from ("generated demo workload (allgather)", ":/demo/cpi-demo.csv"),
// not the temporary file it was imported from.
void ensureDemoWorkspace(const std::string& storePath);

}  // namespace stallscope
