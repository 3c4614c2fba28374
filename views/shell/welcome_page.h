#pragma once

#include <QWidget>

class QAction;

namespace stallscope {

// The central area while no tab is open, so it never looks broken: the logo, how to open or
// import a profile, and an Import button that triggers `importAction`.
class WelcomePage : public QWidget {
    Q_OBJECT
  public:
    WelcomePage(const QIcon& logo, QAction* importAction, QWidget* parent = nullptr);
};

}  // namespace stallscope
