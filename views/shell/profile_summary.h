#pragma once

#include <QWidget>

#include "core/workspace.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace stallscope {

// The stored fields of one profile as a read-only form. Shared by the Details dock and the
// summary tab that opens for kinds without a dedicated view.
class ProfileDetailsForm : public QWidget {
    Q_OBJECT
  public:
    explicit ProfileDetailsForm(QWidget* parent = nullptr);

    void setProfile(const ProfileInfo& profile);
    const ProfileInfo& profile() const { return profile_; }

    // Formatting shared with other widgets that show profile fields.
    static QString formatSize(int64_t bytes);
    static QString formatImportTime(const std::string& isoUtc);
    static QString prettyMetadata(const std::string& json);
    // What the importer noted it could not use or had to assume (the metadata's "warnings"),
    // one per line; empty when it noted nothing.
    static QString importNotes(const std::string& metadataJson);
    QString importNotesText() const;

  private:
    ProfileInfo profile_;
    QLineEdit* name_;
    QLineEdit* kind_;
    QLineEdit* id_;
    QLineEdit* source_;
    QLineEdit* size_;
    QLineEdit* hash_;
    QLineEdit* importedAt_;
    QLineEdit* parent_;
    QLabel* notes_;
    QPlainTextEdit* metadata_;
};

// Read-only summary page of a profile: a heading and its details form.
class ProfileSummaryPage : public QWidget {
    Q_OBJECT
  public:
    explicit ProfileSummaryPage(const ProfileInfo& profile, QWidget* parent = nullptr);

    void setProfile(const ProfileInfo& profile);
    int64_t profileId() const { return form_->profile().id; }

  private:
    QLabel* title_;
    QLabel* subtitle_;
    ProfileDetailsForm* form_;
};

}  // namespace stallscope
