#include "app/cli.h"

#include <iostream>

#include "app/command_line.h"
#include "core/errors.h"
#include "core/workspace.h"

namespace stallscope {

std::string takeStoreOption(std::vector<std::string>& args) {
    std::string store;
    for (size_t i = 1; i < args.size();) {
        if (args[i] == "--store") {
            if (i + 1 >= args.size()) throw InputError("--store needs a PATH");
            store = args[i + 1];
            args.erase(args.begin() + static_cast<long>(i),
                       args.begin() + static_cast<long>(i) + 2);
        } else if (args[i].starts_with("--store=")) {
            store = args[i].substr(8);
            args.erase(args.begin() + static_cast<long>(i));
        } else {
            ++i;
        }
    }
    return store.empty() ? Workspace::defaultPath() : store;
}

bool isCliCommand(const std::vector<std::string>& args) {
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--store") {
            ++i;
            continue;
        }
        if (args[i].starts_with("--store=")) continue;
        const std::string& word = args[i];
        return cli::findCommand(word) || word == "help" || word == "--help" || word == "-h" ||
               word == "--version";
    }
    return false;
}

int runCli(const std::vector<std::string>& argsIn) {
    try {
        std::vector<std::string> args = argsIn;
        const std::string store = takeStoreOption(args);
        if (args.size() < 2) throw InputError("no command given\n" + cli::usage());
        const std::string& name = args[1];
        if (name == "help" || name == "--help" || name == "-h") {
            std::cout << cli::usage();
            return 0;
        }
        if (name == "--version") {
            std::cout << "stallscope " << STALLSCOPE_VERSION << '\n';
            return 0;
        }
        const cli::Command* command = cli::findCommand(name);
        if (!command) throw InputError("unknown command '" + name + "'\n" + cli::usage());
        return command->run(cli::parse(*command, args, 2, store));
    } catch (const InputError& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 2;
    } catch (const Cancelled&) {
        std::cerr << "stallscope: error: cancelled; the workspace is unchanged\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 1;
    }
}

}  // namespace stallscope
