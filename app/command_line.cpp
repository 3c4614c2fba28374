#include "app/command_line.h"

#include <algorithm>
#include <sstream>

#include "core/errors.h"
#include "core/open_workspaces.h"

namespace stallscope::cli {

bool Options::has(std::string_view flag) const {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::string Options::value(std::string_view option, const std::string& fallback) const {
    const auto [first, last] = values.equal_range(option);
    if (first == last) return fallback;
    return std::prev(last)->second;
}

std::vector<std::string> Options::all(std::string_view option) const {
    std::vector<std::string> out;
    for (auto [it, end] = values.equal_range(option); it != end; ++it) out.push_back(it->second);
    return out;
}

const std::string& Options::only(std::string_view what) const {
    if (positional.size() != 1)
        throw InputError(command + ": give exactly one " + std::string(what));
    return positional.front();
}

void Options::expect(size_t n, std::string_view message) const {
    if (positional.size() != n) throw InputError(command + ": " + std::string(message));
}

const Command* findCommand(std::string_view name) {
    for (const Command& c : commands())
        if (c.name == name) return &c;
    return nullptr;
}

Options parse(const Command& command, const std::vector<std::string>& args, size_t from,
              const std::string& store) {
    Options out;
    out.command = std::string(command.name);
    out.store = store;
    for (size_t i = from; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() <= 2 || !a.starts_with("--")) {
            out.positional.push_back(a);
            continue;
        }
        const auto eq = a.find('=');
        const std::string name = eq == std::string::npos ? a : a.substr(0, eq);
        const auto option = std::find_if(command.options.begin(), command.options.end(),
                                         [&](const Option& o) { return o.name == name; });
        if (option == command.options.end())
            throw InputError("unknown option " + a + " for '" + out.command + "'");
        if (option->value.empty()) {
            if (eq != std::string::npos) throw InputError(name + " takes no value");
            out.flags.push_back(name);
            continue;
        }
        std::string value;
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
        } else {
            if (i + 1 >= args.size())
                throw InputError(name + " needs a value (" + std::string(option->value) + ")");
            value = args[++i];
        }
        if (option->writesFile) {
            refuseOpenWorkspaceFile(value, "write");
            if (isWorkspaceFile(value, store))
                throw InputError(value + ": is the workspace (--store); will not write over it");
        }
        out.values.emplace(name, std::move(value));
    }
    return out;
}

namespace {

// The help text wrapped at `width` columns from column `indent`.
std::string wrapped(std::string_view text, size_t indent, size_t width) {
    std::istringstream words{std::string(text)};
    std::string word, line, out;
    while (words >> word) {
        if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
}

}  // namespace

std::string usage() {
    constexpr size_t kColumn = 43, kWidth = 96;
    std::string out =
        "usage: stallscope [--store PATH] <command> [options]\n\n"
        "Without a command, opens the GUI. Commands:\n";
    for (const Command& c : commands()) {
        std::string head = "  " + std::string(c.name);
        if (!c.synopsis.empty()) head += " " + std::string(c.synopsis);
        if (head.size() + 1 > kColumn) {
            out += head + "\n" + std::string(kColumn, ' ');
        } else {
            out += head + std::string(kColumn - head.size(), ' ');
        }
        out += wrapped(c.help, kColumn, kWidth) + "\n";
    }
    out +=
        "\nPROFILE is a profile id or its unique name. --store selects the SQLite workspace\n"
        "(default: $XDG_DATA_HOME/stallscope/workspace.sqlite).\n";
    return out;
}

}  // namespace stallscope::cli
