#pragma once

// The command line: one table of commands (name, usage, options, what runs them) and one
// option parser. `stallscope help` and the parser read the table; adding a command is one
// entry in app/command_table.cpp and its run function.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::cli {

struct Option {
    std::string_view name;    // "--json"
    std::string_view value;   // what it takes ("N", "F.png"); empty for a flag
    bool writesFile = false;  // a path the command writes: never the open workspace
};

// One command line, parsed against its command's options.
class Options {
  public:
    std::string command;  // "import"
    std::string store;    // the workspace (--store, or the default)
    std::vector<std::string> positional;

    bool has(std::string_view flag) const;
    // The option's value (the last one given), or the fallback.
    std::string value(std::string_view option, const std::string& fallback = {}) const;
    // Every value of a repeated option, in order.
    std::vector<std::string> all(std::string_view option) const;
    // The one positional argument, else InputError("<command>: give exactly one <what>").
    const std::string& only(std::string_view what = "PROFILE") const;
    // Exactly n positional arguments, else InputError("<command>: <message>").
    void expect(size_t n, std::string_view message) const;

    std::multimap<std::string, std::string, std::less<>> values;
    std::vector<std::string> flags;
};

struct Command {
    std::string_view name;
    std::string_view synopsis;  // arguments and options, as usage prints them
    std::string_view help;      // what it does (usage wraps it)
    std::vector<Option> options;
    std::function<int(const Options&)> run;
};

// Every command, in the order usage lists them.
const std::vector<Command>& commands();
const Command* findCommand(std::string_view name);

// The one parser: options by the command's table (`--opt value`, `--opt=value`, flags),
// the rest positional. Throws InputError for an unknown option or a missing value, and for
// an output path that is the open workspace.
Options parse(const Command& command, const std::vector<std::string>& args, size_t from,
              const std::string& store);

// `stallscope help`: the table as text.
std::string usage();

}  // namespace stallscope::cli
