#include "views/common/file_dialogs.h"

#include <QFileIconProvider>
#include <QFileInfo>
#include <QMessageBox>
#include <QMimeDatabase>

#include "core/open_workspaces.h"

namespace stallscope::dialogs {

namespace {

// Types and icons from the file name alone; QFileIconProvider would read the file's content.
class ContentBlindIconProvider : public QFileIconProvider {
  public:
    QIcon icon(IconType type) const override { return QFileIconProvider::icon(type); }
    QIcon icon(const QFileInfo& info) const override {
        if (info.isDir()) return QFileIconProvider::icon(QFileIconProvider::Folder);
        return QFileIconProvider::icon(QFileIconProvider::File);
    }
    QString type(const QFileInfo& info) const override {
        if (info.isDir()) return QObject::tr("Folder");
        const QMimeType mime =
            QMimeDatabase().mimeTypeForFile(info.fileName(), QMimeDatabase::MatchExtension);
        return mime.isDefault() ? QObject::tr("File") : mime.comment();
    }
};

const ContentBlindIconProvider& iconProvider() {
    static const ContentBlindIconProvider provider;
    return provider;
}

QStringList runDialog(QFileDialog& dialog) {
    makeContentBlind(dialog);
    if (dialog.exec() != QDialog::Accepted) return {};
    return dialog.selectedFiles();
}

}  // namespace

void makeContentBlind(QFileDialog& dialog) {
    // Qt's own dialog, so the icon provider decides (a platform dialog sniffs content itself).
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    dialog.setOption(QFileDialog::DontUseCustomDirectoryIcons);
    dialog.setIconProvider(const_cast<ContentBlindIconProvider*>(&iconProvider()));
}

QStringList askOpenFiles(QWidget* parent, const QString& title, const QString& folder,
                         const QString& filter) {
    QFileDialog dialog(parent, title, folder, filter);
    dialog.setFileMode(QFileDialog::ExistingFiles);
    dialog.setAcceptMode(QFileDialog::AcceptOpen);
    return runDialog(dialog);
}

QString askFolder(QWidget* parent, const QString& title, const QString& folder) {
    QFileDialog dialog(parent, title, folder);
    dialog.setFileMode(QFileDialog::Directory);
    dialog.setOption(QFileDialog::ShowDirsOnly);
    const QStringList picked = runDialog(dialog);
    return picked.isEmpty() ? QString() : picked.front();
}

QString askSaveFile(QWidget* parent, const QString& title, const QString& start,
                    const QString& filter) {
    for (;;) {
        QFileDialog dialog(parent, title, start, filter);
        dialog.setAcceptMode(QFileDialog::AcceptSave);
        dialog.setFileMode(QFileDialog::AnyFile);
        const QStringList picked = runDialog(dialog);
        if (picked.isEmpty()) return {};
        const QString path = picked.front();
        if (!isOpenWorkspaceFile(path.toStdString())) return path;
        QMessageBox::warning(parent, title,
                             QObject::tr("%1 is the open workspace. Choose another file.")
                                 .arg(QFileInfo(path).fileName()));
    }
}

QString askWorkspace(QWidget* parent, const QString& title, const QString& folder,
                     const QString& filter) {
    QFileDialog dialog(parent, title, folder, filter);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setFileMode(QFileDialog::AnyFile);
    dialog.setOption(QFileDialog::DontConfirmOverwrite);
    const QStringList picked = runDialog(dialog);
    return picked.isEmpty() ? QString() : picked.front();
}

}  // namespace stallscope::dialogs
