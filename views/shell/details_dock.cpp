#include "views/shell/details_dock.h"

#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "views/shell/profile_summary.h"

namespace stallscope {

DetailsDock::DetailsDock(QWidget* parent)
    : QWidget(parent),
      stack_(new QStackedWidget(this)),
      placeholder_(new QLabel(tr("Select a profile to see its details."), stack_)),
      form_(new ProfileDetailsForm(stack_)) {
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setWordWrap(true);
    placeholder_->setMargin(16);
    placeholder_->setForegroundRole(QPalette::PlaceholderText);
    stack_->addWidget(placeholder_);
    stack_->addWidget(form_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->addWidget(stack_);
    setProfile(std::nullopt);
}

void DetailsDock::setProfile(const std::optional<ProfileInfo>& profile) {
    if (!profile) {
        profileId_.reset();
        stack_->setCurrentWidget(placeholder_);
        return;
    }
    profileId_ = profile->id;
    form_->setProfile(*profile);
    stack_->setCurrentWidget(form_);
}

}  // namespace stallscope
