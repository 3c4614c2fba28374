#pragma once

#include <QWidget>
#include <optional>

#include "core/workspace.h"

class QLabel;
class QStackedWidget;

namespace stallscope {

class ProfileDetailsForm;

// The selected profile's stored fields, or a hint when nothing is selected.
class DetailsDock : public QWidget {
    Q_OBJECT
  public:
    explicit DetailsDock(QWidget* parent = nullptr);

    void setProfile(const std::optional<ProfileInfo>& profile);
    std::optional<int64_t> profileId() const { return profileId_; }
    ProfileDetailsForm* form() const { return form_; }

  private:
    QStackedWidget* stack_;
    QLabel* placeholder_;
    ProfileDetailsForm* form_;
    std::optional<int64_t> profileId_;
};

}  // namespace stallscope
