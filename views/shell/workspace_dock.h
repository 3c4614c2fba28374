#pragma once

#include <QHash>
#include <QSet>
#include <QWidget>
#include <optional>
#include <vector>

#include "core/workspace.h"

class QAction;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QTreeWidget;
class QTreeWidgetItem;

namespace stallscope {

// The profiles of the workspace, grouped by kind. Holds no connection: the main window loads
// the list off the GUI thread and hands it over with setProfiles(); edits come back as signals.
class WorkspaceDock : public QWidget {
    Q_OBJECT
  public:
    // Item data roles of the tree.
    static constexpr int kProfileIdRole = Qt::UserRole;  // qint64 on profile rows
    static constexpr int kKindRole = Qt::UserRole + 1;   // kind string on group and profile rows

    explicit WorkspaceDock(QWidget* parent = nullptr);
    ~WorkspaceDock() override;

    // Group order of the tree (core/kinds.h); kinds outside it get a group after these.
    static const QStringList& kindOrder();
    // Asks whether to delete `profile` (Delete / Cancel, Cancel the default).
    static bool confirmDelete(QWidget* parent, const std::vector<ProfileInfo>& profiles);

    void setProfiles(const std::vector<ProfileInfo>& profiles);
    // Replaces the tree by a message, e.g. when the workspace cannot be read.
    void showError(const QString& message);
    // Disables rename and delete (read-only workspace, or an import holds the write lock).
    void setEditingEnabled(bool enabled);

    QTreeWidget* tree() const { return tree_; }
    QAction* openAction() const { return openAction_; }
    QAction* renameAction() const { return renameAction_; }
    QAction* deleteAction() const { return deleteAction_; }
    QAction* compareAction() const { return compareAction_; }
    // Selected profiles in id order (Ctrl/Shift-click selects several).
    std::vector<ProfileInfo> selectedProfiles() const;

    std::optional<ProfileInfo> currentProfile() const;
    std::optional<ProfileInfo> profile(int64_t id) const;
    QTreeWidgetItem* itemForProfile(int64_t id) const;
    void selectProfile(int64_t id);
    int profileCount() const { return static_cast<int>(profiles_.size()); }

  signals:
    void profileActivated(const stallscope::ProfileInfo& profile);
    void currentProfileChanged(const std::optional<stallscope::ProfileInfo>& profile);
    void renameRequested(qint64 id, const QString& newName);
    // Delete chosen on the highlighted profiles (at least one).
    void deleteRequested(const std::vector<stallscope::ProfileInfo>& profiles);
    void importRequested();
    // Two profiles of one kind selected and Compare chosen: a is the older (before).
    void compareRequested(const stallscope::ProfileInfo& a, const stallscope::ProfileInfo& b);

  private:
    void rebuildTree();
    void applyFilter();
    void updateEmptyState();
    void showContextMenu(const QPoint& pos);
    void onItemChanged(QTreeWidgetItem* item, int column);
    void onCurrentItemChanged();
    void startRename();
    std::optional<ProfileInfo> profileOfItem(const QTreeWidgetItem* item) const;

    QLineEdit* filter_;
    QStackedWidget* stack_;
    QTreeWidget* tree_;
    QLabel* message_;
    QAction* openAction_;
    QAction* renameAction_;
    QAction* deleteAction_;
    QAction* compareAction_;
    QHash<qint64, ProfileInfo> profiles_;
    std::vector<int64_t> order_;    // profile ids in the order the workspace lists them
    QSet<QString> collapsedKinds_;  // survives reloads
    bool editingEnabled_ = true;
    bool rebuilding_ = false;
};

}  // namespace stallscope
