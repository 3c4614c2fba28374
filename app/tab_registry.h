#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>

#include "core/workspace.h"
#include "views/view_kinds.h"

class QTabWidget;
class QWidget;

namespace stallscope {

// The central tabs and what each one shows: a profile's view (one tab per profile, found again by
// its id) or a comparison of two profiles. Views come from the kinds table
// (views/view_kinds.h) unless a factory is registered for the kind; a kind without a view
// opens as a summary page. A new profile list renames tabs whose profile was renamed and closes
// those whose profile (or one of whose two profiles) is gone.
class TabRegistry : public QObject {
    Q_OBJECT
  public:
    using ViewFactory = ViewKind::ViewFactory;
    using ProfileLookup = std::function<std::optional<ProfileInfo>(qint64 id)>;

    TabRegistry(QTabWidget* tabs, const QString& workspacePath, QObject* parent = nullptr);

    void setWorkspacePath(const QString& path) { workspacePath_ = path; }
    // Replaces the kinds table's view for `kind` (tests, plug-ins).
    void registerView(const QString& kind, ViewFactory factory);

    // Focuses the profile's tab, or opens one. Returns the tab's widget.
    QWidget* openProfile(const ProfileInfo& profile);
    // A before (a) / after (b) tab; nullptr (and failed()) for profiles of different kinds or a
    // kind without a side-by-side view.
    QWidget* openComparison(const ProfileInfo& a, const ProfileInfo& b);
    // A view of a profile in another workspace (a merged run's host, in its shard): one tab per
    // `key`, focused again when asked twice; `create` makes the view. Such tabs follow no
    // profile list. Returns the tab's widget.
    QWidget* openForeign(const QString& key, const QString& title, const QString& toolTip,
                         const std::function<QWidget*()>& create);
    void closeTab(int index);
    void closeAll();

    int indexOfProfile(qint64 id) const;
    // The profile a tab shows (none for a comparison).
    std::optional<qint64> profileIdAt(int index) const;
    // Follows a new profile list (see the class comment).
    void followProfiles(const ProfileLookup& lookup);

  signals:
    // A profile's view was created, before it is shown: what else it needs can be wired here.
    void viewCreated(QWidget* view, const stallscope::ProfileInfo& profile);
    void countChanged();
    void failed(const QString& message);

  private:
    QTabWidget* tabs_;
    QString workspacePath_;
    QHash<QString, ViewFactory> registered_;
};

}  // namespace stallscope
