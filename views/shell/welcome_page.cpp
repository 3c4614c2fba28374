#include "views/shell/welcome_page.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace stallscope {

WelcomePage::WelcomePage(const QIcon& logo, QAction* importAction, QAction* importFolderAction,
                         QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->addStretch(2);
    auto* picture = new QLabel(this);
    picture->setPixmap(logo.pixmap(96, 96));
    picture->setAlignment(Qt::AlignCenter);
    auto* heading = new QLabel(tr("Stallscope"), this);
    QFont headingFont = heading->font();
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.8);
    headingFont.setBold(true);
    heading->setFont(headingFont);
    heading->setAlignment(Qt::AlignCenter);
    auto* hint = new QLabel(
        tr("<p>Drop a trace here, or import one: <b>PyTorch profiler</b> traces "
           "(<tt>*.pt.trace.json</tt>, gzipped too) and <b>XProf / TensorBoard</b> profiles "
           "(<tt>*.xplane.pb</tt>); Chrome and Perfetto JSON, Chakra execution traces, a folder "
           "of rank files (one multi-host run); simulator replays, Nsight Compute CSV, Sniper "
           "and GPGPU-Sim results, noise runs and CPI stacks.</p>"
           "<p>Double-click a profile in the workspace to open it · press <b>?</b> for the "
           "keys</p>"),
        this);
    hint->setTextFormat(Qt::RichText);
    hint->setWordWrap(true);
    hint->setContentsMargins(48, 0, 48, 0);  // lines a reader can follow
    hint->setAlignment(Qt::AlignCenter);
    hint->setForegroundRole(QPalette::PlaceholderText);
    auto* importButton = new QPushButton(importAction->icon(), tr("Import Files…"), this);
    connect(importButton, &QPushButton::clicked, importAction, &QAction::trigger);
    auto* folderButton = new QPushButton(tr("Import Folder…"), this);
    connect(folderButton, &QPushButton::clicked, importFolderAction, &QAction::trigger);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(importButton);
    buttons->addWidget(folderButton);
    buttons->addStretch(1);
    layout->addWidget(picture);
    layout->addSpacing(8);
    layout->addWidget(heading);
    layout->addWidget(hint);
    layout->addSpacing(12);
    layout->addLayout(buttons);
    layout->addStretch(3);
}

}  // namespace stallscope
