#pragma once

#include <QWidget>

class QAction;

namespace stallscope {

// The central area while no tab is open, so it never looks broken: the logo, what can be
// imported (the PyTorch profiler's and XProf's traces first: what most people bring), and
// buttons that trigger `importAction` and `importFolderAction`.
class WelcomePage : public QWidget {
    Q_OBJECT
  public:
    WelcomePage(const QIcon& logo, QAction* importAction, QAction* importFolderAction,
                QWidget* parent = nullptr);
};

}  // namespace stallscope
