#include "app/terminal.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

namespace stallscope {

namespace {

std::atomic<Progress*> interruptTarget{nullptr};

extern "C" void cancelOnSignal(int signal) {
    Progress* progress = interruptTarget.load();
    if (progress && !progress->isCancelled()) {
        progress->cancel();  // a lock-free atomic store: safe in a signal handler
        return;
    }
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

}  // namespace

Progress::Listener terminalProgressBar() {
    if (!::isatty(STDERR_FILENO)) return {};
    auto last = std::make_shared<std::chrono::steady_clock::time_point>();
    return [last](double fraction, const std::string& stage) {
        const auto now = std::chrono::steady_clock::now();
        if (fraction < 1.0 && now - *last < std::chrono::milliseconds(100)) return;
        *last = now;
        const int width = 30;
        const int filled = static_cast<int>(fraction * width);
        std::fprintf(stderr, "\r[%s%s] %3d%% %-40.40s", std::string(filled, '#').c_str(),
                     std::string(width - filled, ' ').c_str(), static_cast<int>(fraction * 100),
                     stage.c_str());
        if (fraction >= 1.0) std::fprintf(stderr, "\r%-80s\r", "");
        std::fflush(stderr);
    };
}

void clearTerminalProgressBar() {
    if (::isatty(STDERR_FILENO)) std::fprintf(stderr, "\r%-80s\r", "");
}

CancelOnInterrupt::CancelOnInterrupt(Progress& progress) {
    interruptTarget.store(&progress);
    std::signal(SIGINT, cancelOnSignal);
    std::signal(SIGTERM, cancelOnSignal);
}

CancelOnInterrupt::~CancelOnInterrupt() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    interruptTarget.store(nullptr);
}

}  // namespace stallscope
