#pragma once

// Window tests on the two screens the GUI issue names, side by side: 1280x800 ("small") and
// 1920x1080 ("large"), as offscreen platform screens.
#include <QApplication>
#include <QFile>
#include <QGuiApplication>
#include <QScreen>
#include <QTemporaryDir>
#include <QtTest>

namespace stallscope::testing {

inline QScreen* screenOfSize(QSize size) {
    for (QScreen* screen : QGuiApplication::screens())
        if (screen->geometry().size() == size) return screen;
    return nullptr;
}

// main() of such a test: the screens, the application, then `Test`'s slots.
template <class Test>
int runOnTwoScreens(int argc, char** argv) {
    QTemporaryDir configDir;
    const QString config = configDir.filePath("screens.json");
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly)) return 1;
    file.write(R"({"screens":[{"name":"small","x":0,"y":0,"width":1280,"height":800},)"
               R"({"name":"large","x":1280,"y":0,"width":1920,"height":1080}]})");
    file.close();
    qputenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + config).toUtf8());
    QApplication app(argc, argv);
    Test test;
    return QTest::qExec(&test, argc, argv);
}

}  // namespace stallscope::testing
