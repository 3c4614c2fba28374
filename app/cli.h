#pragma once

#include <string>
#include <vector>

namespace stallscope {

// The headless command line (CONTRACT §5). Returns the exit status: 0 success, 2 bad input or
// usage, 1 other failure. Errors are printed to stderr as "stallscope: error: <what>".
int runCli(const std::vector<std::string>& args);

// True when args[1] names a subcommand (the GUI opens otherwise).
bool isCliCommand(const std::vector<std::string>& args);

// The workspace chosen by --store (or the default), removing the option from args.
std::string takeStoreOption(std::vector<std::string>& args);

}  // namespace stallscope
