#include "views/shell/profile_summary.h"

#include <QDateTime>
#include <QFontDatabase>
#include <QFormLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "views/common/format.h"

namespace stallscope {
namespace {

QLineEdit* makeField(QWidget* parent, bool monospace = false) {
    auto* field = new QLineEdit(parent);
    field->setReadOnly(true);
    field->setFrame(false);
    // Read-only fields must not swallow file drops meant for the main window.
    field->setAcceptDrops(false);
    field->setFocusPolicy(Qt::ClickFocus);
    // Blend into the form: a selectable label that scrolls when the text is long.
    field->setStyleSheet("QLineEdit { background: transparent; }");
    if (monospace) field->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return field;
}

void setField(QLineEdit* field, const QString& text) {
    field->setText(text);
    field->setToolTip(text);
    field->setCursorPosition(0);
}

}  // namespace

ProfileDetailsForm::ProfileDetailsForm(QWidget* parent)
    : QWidget(parent),
      name_(makeField(this)),
      kind_(makeField(this)),
      id_(makeField(this)),
      source_(makeField(this)),
      size_(makeField(this)),
      hash_(makeField(this, true)),
      importedAt_(makeField(this)),
      parent_(makeField(this)),
      notes_(new QLabel(this)),
      metadata_(new QPlainTextEdit(this)) {
    notes_->setWordWrap(true);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes_->setTextFormat(Qt::PlainText);
    metadata_->setReadOnly(true);
    metadata_->setAcceptDrops(false);
    metadata_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    metadata_->setLineWrapMode(QPlainTextEdit::NoWrap);
    metadata_->setMinimumHeight(80);

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::DontWrapRows);
    form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    form->addRow(tr("Name:"), name_);
    form->addRow(tr("Kind:"), kind_);
    form->addRow(tr("ID:"), id_);
    form->addRow(tr("Source:"), source_);
    form->addRow(tr("Size:"), size_);
    form->addRow(tr("Content hash:"), hash_);
    form->addRow(tr("Imported:"), importedAt_);
    form->addRow(tr("Derived from:"), parent_);
    form->addRow(tr("Import notes:"), notes_);
    form->addRow(tr("Metadata:"), metadata_);
}

void ProfileDetailsForm::setProfile(const ProfileInfo& profile) {
    profile_ = profile;
    setField(name_, QString::fromStdString(profile.name));
    setField(kind_, QString::fromStdString(profile.kind));
    setField(id_, QString::number(profile.id));
    setField(source_, QString::fromStdString(profile.sourcePath));
    setField(size_, formatSize(profile.sourceSize));
    setField(hash_, QString::fromStdString(profile.sourceHash));
    setField(importedAt_, formatImportTime(profile.importedAt));
    importedAt_->setToolTip(QString::fromStdString(profile.importedAt));
    setField(parent_, profile.parentId ? tr("profile %1").arg(*profile.parentId) : tr("—"));
    const QString notes = importNotes(profile.metadataJson);
    // Notes quote names and paths: breakable, so that none widens the dock.
    notes_->setText(
        format::wrappable(notes.isEmpty() ? tr("none: everything in the file was used") : notes));
    metadata_->setPlainText(prettyMetadata(profile.metadataJson));
}

QString ProfileDetailsForm::importNotesText() const {
    return QString(notes_->text()).remove(QChar(0x200b));
}

QString ProfileDetailsForm::importNotes(const std::string& metadataJson) {
    const QJsonObject meta =
        QJsonDocument::fromJson(QByteArray::fromStdString(metadataJson)).object();
    QStringList lines;
    for (const QJsonValue& w : meta.value("warnings").toArray())
        lines << QStringLiteral("• ") + w.toString();
    return lines.join('\n');
}

QString ProfileDetailsForm::formatSize(int64_t bytes) {
    const QLocale locale;
    if (bytes < 1024) return tr("%1 bytes").arg(bytes);
    return tr("%1 (%2 bytes)")
        .arg(locale.formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat),
             locale.toString(static_cast<qlonglong>(bytes)));
}

QString ProfileDetailsForm::formatImportTime(const std::string& isoUtc) {
    const QString text = QString::fromStdString(isoUtc);
    QDateTime when = QDateTime::fromString(text, Qt::ISODate);
    if (!when.isValid()) return text;
    return when.toLocalTime().toString("yyyy-MM-dd HH:mm:ss");
}

QString ProfileDetailsForm::prettyMetadata(const std::string& json) {
    const QByteArray raw = QByteArray::fromStdString(json);
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(raw, &error);
    if (error.error != QJsonParseError::NoError) return QString::fromUtf8(raw);
    return QString::fromUtf8(document.toJson(QJsonDocument::Indented)).trimmed();
}

ProfileSummaryPage::ProfileSummaryPage(const ProfileInfo& profile, QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      form_(new ProfileDetailsForm(this)) {
    QFont titleFont = title_->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.6);
    titleFont.setBold(true);
    title_->setFont(titleFont);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    subtitle_->setForegroundRole(QPalette::PlaceholderText);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(24, 20, 24, 20);
    layout->setSpacing(6);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addSpacing(12);
    layout->addWidget(form_, 1);
    setProfile(profile);
}

void ProfileSummaryPage::setProfile(const ProfileInfo& profile) {
    title_->setText(QString::fromStdString(profile.name));
    subtitle_->setText(tr("%1 profile · imported %2")
                           .arg(QString::fromStdString(profile.kind),
                                ProfileDetailsForm::formatImportTime(profile.importedAt)));
    form_->setProfile(profile);
}

}  // namespace stallscope
