#include "app/app_info.h"

#include <google/protobuf/stubs/common.h>
#include <sqlite3.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QObject>
#include <QPainter>
#include <QPixmap>
#include <QSettings>
#include <QSvgRenderer>

#include "importers/import_service.h"

namespace stallscope::appinfo {
namespace {

constexpr char kRecentKey[] = "recentWorkspaces";

}  // namespace

QIcon applicationIcon() {
    QSvgRenderer renderer(QStringLiteral(":/stallscope.svg"));
    QIcon icon;
    for (int size : {16, 22, 24, 32, 48, 64, 96, 128, 256}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        renderer.render(&painter);
        painter.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

QString aboutText() {
    const auto row = [](const QString& name, const QString& version) {
        return QStringLiteral("<tr><td>%1</td><td style='padding-left:12px'>%2</td></tr>")
            .arg(name, version.toHtmlEscaped());
    };
    return QObject::tr(
               "<h3>Stallscope %1</h3>"
               "<p>Performance visualizer for ML accelerators and HPC kernels.</p>"
               "<table>%2</table>")
        .arg(QStringLiteral(STALLSCOPE_VERSION),
             row(QStringLiteral("Qt"), QString::fromLatin1(qVersion())) +
                 row(QStringLiteral("SQLite"), QString::fromLatin1(sqlite3_libversion())) +
                 row(QStringLiteral("zstd"), QString::fromLatin1(ZSTD_versionString())) +
                 row(QStringLiteral("zlib"), QString::fromLatin1(zlibVersion())) +
                 row(QStringLiteral("protobuf"),
                     QString::fromStdString(
                         google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION))) +
                 row(QStringLiteral("simdjson"), QString::fromStdString(jsonParserVersion())) +
                 row(QStringLiteral("xxHash"), QStringLiteral("%1.%2.%3")
                                                   .arg(XXH_versionNumber() / 10000)
                                                   .arg(XXH_versionNumber() / 100 % 100)
                                                   .arg(XXH_versionNumber() % 100)));
}

QStringList recentWorkspaces() {
    QStringList recent = QSettings().value(kRecentKey).toStringList();
    recent.removeAll(QString());
    recent.removeDuplicates();
    while (recent.size() > kMaxRecent) recent.removeLast();
    return recent;
}

void addRecentWorkspace(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList recent = recentWorkspaces();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent) recent.removeLast();
    QSettings().setValue(kRecentKey, recent);
}

void clearRecentWorkspaces() {
    QSettings().remove(kRecentKey);
}

void fillRecentMenu(QMenu* menu, const QString& current,
                    const std::function<void(const QString&)>& open) {
    menu->clear();
    const QStringList recent = recentWorkspaces();
    for (int i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        QString label = QDir::toNativeSeparators(path);
        label.replace(QLatin1Char('&'), QStringLiteral("&&"));
        QAction* action = menu->addAction(QStringLiteral("&%1  %2").arg(i + 1).arg(label));
        action->setStatusTip(path);
        action->setCheckable(true);
        action->setChecked(path == current);
        // A vanished file would silently become a new empty workspace.
        action->setEnabled(QFileInfo::exists(path));
        QObject::connect(action, &QAction::triggered, menu, [open, path] { open(path); });
    }
    if (recent.isEmpty()) menu->addAction(QObject::tr("No recent workspaces"))->setEnabled(false);
    menu->addSeparator();
    QAction* clear = menu->addAction(QObject::tr("&Clear Menu"));
    clear->setEnabled(!recent.isEmpty());
    QObject::connect(clear, &QAction::triggered, menu, [menu, current, open] {
        clearRecentWorkspaces();
        fillRecentMenu(menu, current, open);
    });
}

}  // namespace stallscope::appinfo
