#include "views/shell/welcome_page.h"

#include <QAction>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace stallscope {

WelcomePage::WelcomePage(const QIcon& logo, QAction* importAction, QWidget* parent)
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
    auto* hint = new QLabel(tr("Double-click a profile in the workspace to open it.\n"
                               "Import replay traces, noise results, CPI stacks and estimates\n"
                               "with File ▸ Import… or by dropping the files here."),
                            this);
    hint->setAlignment(Qt::AlignCenter);
    hint->setForegroundRole(QPalette::PlaceholderText);
    auto* importButton = new QPushButton(importAction->icon(), tr("Import Files…"), this);
    connect(importButton, &QPushButton::clicked, importAction, &QAction::trigger);
    layout->addWidget(picture);
    layout->addSpacing(8);
    layout->addWidget(heading);
    layout->addWidget(hint);
    layout->addSpacing(12);
    layout->addWidget(importButton, 0, Qt::AlignHCenter);
    layout->addStretch(3);
}

}  // namespace stallscope
