// Entry point: a subcommand runs headless (CONTRACT §5); otherwise the GUI opens, or, with no
// display to open it on, a plain summary of the workspace is printed.
#include <QApplication>
#include <QGuiApplication>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/demo_workspace.h"
#include "app/mainwindow.h"
#include "core/errors.h"
#include "core/kinds.h"

namespace {

bool displayAvailable() {
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (!platform.isEmpty()) return platform != "offscreen" && platform != "minimal";
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv, argv + argc);
    std::string store;
    try {
        std::vector<std::string> rest = args;
        store = stallscope::takeStoreOption(rest);
        const bool demo = rest.size() == 2 && rest[1] == "demo";
        if (!demo && stallscope::isCliCommand(args)) return stallscope::runCli(args);
        if (rest.size() > 1 && !demo) {
            std::cerr << "stallscope: error: unknown command '" << rest[1]
                      << "' (see stallscope help)\n";
            return 2;
        }
        if (demo) stallscope::ensureDemoWorkspace(store);
        if (!displayAvailable()) {
            std::cout << "No display found; headless summary of " << store << ":\n"
                      << stallscope::workspaceSummary(*stallscope::Workspace::openExisting(store));
            return 0;
        }
    } catch (const stallscope::InputError& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 1;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("Stallscope");
    QApplication::setApplicationName("Stallscope");
    QApplication::setApplicationVersion(STALLSCOPE_VERSION);
    QApplication::setDesktopFileName("stallscope");
    stallscope::MainWindow window(QString::fromStdString(store));
    window.show();
    return QApplication::exec();
}
