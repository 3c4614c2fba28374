#pragma once

#include <QIcon>
#include <QString>
#include <QStringList>
#include <functional>

class QMenu;

namespace stallscope::appinfo {

// The application icon, rendered with QSvgRenderer so it shows even where Qt's SVG plugins are
// missing.
QIcon applicationIcon();
// The About box text: versions of Stallscope and the libraries it runs on.
QString aboutText();

// Recently opened workspaces, most recent first, at most kMaxRecent, kept in QSettings.
constexpr int kMaxRecent = 8;
QStringList recentWorkspaces();
void addRecentWorkspace(const QString& path);
void clearRecentWorkspaces();
// Fills `menu` with the recent workspaces (`current` checked, vanished files disabled) and a
// Clear Menu entry; choosing one calls `open` with its path.
void fillRecentMenu(QMenu* menu, const QString& current,
                    const std::function<void(const QString&)>& open);

}  // namespace stallscope::appinfo
