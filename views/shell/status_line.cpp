#include "views/shell/status_line.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include "views/shell/elided_label.h"

namespace stallscope {
namespace {

constexpr int kProgressSteps = 1000;
constexpr int kProgressWidth = 220;

}  // namespace

StatusLine::StatusLine(QWidget* parent)
    : QWidget(parent),
      message_(new ElidedLabel(this)),
      progress_(new QProgressBar(this)),
      cancel_(new QToolButton(this)),
      count_(new QLabel(this)) {
    progress_->setRange(0, kProgressSteps);
    progress_->setMaximumWidth(kProgressWidth);
    progress_->setMaximumHeight(message_->sizeHint().height() + 4);
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Cancel the import; nothing of it is stored"));
    cancel_->setAutoRaise(true);
    connect(cancel_, &QToolButton::clicked, this, &StatusLine::cancelRequested);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(message_, 1);
    layout->addWidget(progress_);
    layout->addWidget(cancel_);
    layout->addWidget(count_);
    endImport();
}

void StatusLine::setMessage(const QString& text, bool error) {
    message_->setText(text);
    QPalette palette = message_->palette();
    palette.setColor(
        QPalette::WindowText,
        error ? QColor(0xc0, 0x1c, 0x28) : QApplication::palette().color(QPalette::WindowText));
    message_->setPalette(palette);
}

QString StatusLine::message() const {
    return message_->text();
}

void StatusLine::beginImport() {
    progress_->setValue(0);
    progress_->show();
    cancel_->show();
}

void StatusLine::setImportProgress(double fraction) {
    progress_->setValue(static_cast<int>(fraction * kProgressSteps));
}

void StatusLine::endImport() {
    progress_->hide();
    cancel_->hide();
}

void StatusLine::setProfileCount(std::optional<int> count) {
    if (!count)
        count_->clear();
    else
        count_->setText(*count == 1 ? tr("1 profile") : tr("%1 profiles").arg(*count));
}

}  // namespace stallscope
