#pragma once

#include <QDialog>
#include <QList>
#include <QString>

namespace stallscope {

// The keyboard and mouse sheet `?` opens (as Perfetto's does): every key the timelines, the
// trace view and the window answer, grouped by where they work.
class ShortcutSheet : public QDialog {
    Q_OBJECT
  public:
    struct Entry {
        QString keys, what;
    };
    struct Group {
        QString title;
        QList<Entry> entries;
    };
    explicit ShortcutSheet(QWidget* parent = nullptr);
    // What the sheet lists (tests check every key it names is one the code binds).
    static QList<Group> groups();
};

}  // namespace stallscope
