#include "views/shell/shortcut_sheet.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace stallscope {

QList<ShortcutSheet::Group> ShortcutSheet::groups() {
    return {
        {tr("Timeline (anywhere in a profile's view)"),
         {{tr("W / S"), tr("Zoom in / out around the mouse (or the middle)")},
          {tr("A / D"), tr("Pan left / right")},
          {tr("Wheel"), tr("Zoom around the mouse; Shift+wheel pans; over the labels scrolls")},
          {tr("Drag"), tr("Pan")},
          {tr("Shift+drag, right-drag"),
           tr("Measure a time range; across tracks, sum their slices (Summary tab)")},
          {tr("F"), tr("Fit the measured range, else the selected slice")},
          {tr("Home"), tr("Show the whole trace")},
          {tr("Esc"), tr("Clear the selection and the measurement")}}},
        {tr("Trace view"),
         {{tr("[ / ]"), tr("Previous / next step")},
          {tr("Click a process's header"), tr("Its slices by name (Summary tab)")},
          {tr("C"), tr("Show or hide the critical path on the timeline")},
          {tr("Alt+Up / Alt+Down"), tr("Move the chosen track up / down (track tree)")}}},
        {tr("Window"),
         {{tr("Ctrl+O"), tr("Import files")},
          {tr("Ctrl+Shift+I"), tr("Import a folder (a multi-host run)")},
          {tr("F5"), tr("Reload the workspace")},
          {tr("Ctrl+Shift+E"), tr("Query the workspace in SQL")},
          {tr("Ctrl+W"), tr("Close the tab")},
          {tr("F2 / Del"), tr("Rename / delete the chosen profiles (workspace tree)")},
          {tr("F11"), tr("Full screen")},
          {tr("?"), tr("This sheet")}}},
    };
}

ShortcutSheet::ShortcutSheet(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Keyboard and Mouse"));
    auto* list = new QTreeWidget(this);
    list->setColumnCount(2);
    list->setHeaderLabels({tr("Keys"), tr("What they do")});
    list->setRootIsDecorated(false);
    list->setSelectionMode(QAbstractItemView::NoSelection);
    list->setFocusPolicy(Qt::NoFocus);
    for (const Group& group : groups()) {
        auto* heading = new QTreeWidgetItem(list, {group.title});
        QFont bold = heading->font(0);
        bold.setBold(true);
        heading->setFont(0, bold);
        heading->setFirstColumnSpanned(true);
        for (const Entry& e : group.entries) new QTreeWidgetItem(list, {e.keys, e.what});
    }
    list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    list->header()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(list);
    layout->addWidget(buttons);
    resize(620, 440);
}

}  // namespace stallscope
