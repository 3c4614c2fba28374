// `compare A B --json`: before/after deltas of two profiles of the same kind (CONTRACT §5).
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/workspace.h"

namespace stallscope {

bool runCompareCommand(const std::vector<std::string>& args, const std::string& store,
                       int& status) {
    if (args.at(0) != "compare") return false;
    std::vector<std::string> names;
    bool json = false;
    CompareOptions options;  // --op (traces), --align-op (replays): see core/kinds.h
    for (size_t i = 1; i < args.size(); ++i) {
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw InputError(args[i] + " needs a value");
            return args[++i];
        };
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--op")
            options.cdfOp = value();
        else if (args[i] == "--align-op")
            options.alignOp = value();
        else if (args[i].starts_with("--"))
            throw InputError("unknown option " + args[i] + " for 'compare'");
        else
            names.push_back(args[i]);
    }
    if (names.size() != 2) throw InputError("compare: give two profiles, A (before) and B (after)");
    auto workspace = Workspace::openExisting(store);
    const ProfileInfo a = workspace->resolveProfile(names[0]);
    const ProfileInfo b = workspace->resolveProfile(names[1]);
    const QJsonObject result = compareProfiles(*workspace, a, b, options);
    if (json)
        std::cout << QJsonDocument(result).toJson(QJsonDocument::Indented).toStdString();
    else
        std::cout << result.value("summary").toString().toStdString() << '\n';
    status = 0;
    return true;
}

}  // namespace stallscope
