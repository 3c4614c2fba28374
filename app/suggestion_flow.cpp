#include "app/suggestion_flow.h"

#include <QListWidget>

#include "app/tab_registry.h"
#include "core/kinds.h"
#include "views/common/async_job.h"
#include "views/replay/replay_profile_tab.h"

namespace stallscope {
namespace {

QList<SuggestionItem> dockItems(const ReplayDocument& document) {
    QList<SuggestionItem> items;
    for (const auto& s : document.analysis.suggestions) {
        SuggestionItem item{QString::fromStdString(s.kind), QString::fromStdString(s.text),
                            static_cast<double>(s.savingCycles)};
        item.canApply = true;
        for (int64_t id : s.dmas) item.dmas.append(id);
        QStringList evidence;
        for (const auto& [key, value] : s.evidence)
            evidence << QStringLiteral("%1=%2").arg(QString::fromStdString(key)).arg(value);
        item.evidence = evidence.join(QStringLiteral(", "));
        items.append(item);
    }
    return items;
}

}  // namespace

SuggestionFlow::SuggestionFlow(SuggestionsDock* dock, TabRegistry* tabs,
                               const QString& workspacePath, QObject* parent)
    : QObject(parent),
      dock_(dock),
      tabs_(tabs),
      workspacePath_(workspacePath),
      applyJob_(this,
                [this](const QString& error) {
                    emit status(tr("Could not save the edited trace: %1").arg(error), true);
                    emit applied(false, 0, error);
                }),
      documentJob_(this, [this](const QString& error) { showDocument(nullptr, error); }),
      parentJob_(this, [this](const QString& error) {
          emit status(tr("Cannot compare with the original: %1").arg(error), true);
      }) {
    connect(dock_, &SuggestionsDock::suggestionActivated, this, &SuggestionFlow::show);
    connect(dock_, &SuggestionsDock::previewRequested, this, &SuggestionFlow::preview);
    connect(dock_, &SuggestionsDock::applyRequested, this, &SuggestionFlow::apply);
    connect(dock_, &SuggestionsDock::compareWithParentRequested, this,
            &SuggestionFlow::compareWithParent);
    connect(this, &SuggestionFlow::applied, dock_, [this](bool ok, qint64 id, const QString&) {
        if (ok) dock_->setDerivedProfile(id);
    });
}

void SuggestionFlow::setWorkspacePath(const QString& path) {
    workspacePath_ = path;
    viewSuggestions_.clear();
    adopted_.clear();
    select(std::nullopt);
}

void SuggestionFlow::setSuggestions(const QList<SuggestionItem>& suggestions) {
    dock_->setSuggestions(suggestions);
}

void SuggestionFlow::select(const std::optional<ProfileInfo>& profile) {
    // The same profile again (the workspace dock announces it after every reload and whenever
    // editing is switched): keep the list and the user's selection in it, take fresh fields
    // (a rename). A new profile that reuses a deleted one's id was imported at another time.
    if (profile && dockProfile_ && dockProfile_->id == profile->id &&
        dockProfile_->importedAt == profile->importedAt) {
        dockProfile_ = profile;
        if (replayProfile_) replayProfile_ = profile;
        return;
    }
    documentJob_.supersede();  // a late analysis of the previous selection is dropped
    replayProfile_.reset();
    document_.reset();
    dockProfile_ = profile;
    // Compare with Original belongs to a derived profile: the one just applied (until another
    // profile is chosen) or one chosen that has an original.
    dock_->setDerivedProfile(profile && profile->parentId ? std::optional<qint64>(profile->id)
                                                          : std::nullopt);
    if (!profile || profile->kind != kinds::kReplay) {
        // Other kinds: what their open view derived (nothing until it has loaded).
        dock_->setEmptyMessage(emptyMessageFor(profile));
        dock_->setSuggestions(profile ? viewSuggestions_.value(profile->id)
                                      : QList<SuggestionItem>{});
        return;
    }
    dock_->setEmptyMessage(tr("Analysing “%1”…").arg(QString::fromStdString(profile->name)));
    replayProfile_ = profile;
    // Loading and analysing a trace takes up to seconds on big ones: the cache does it on a
    // worker once for the dock and the profile's tab.
    documentJob_.follow(
        ReplayDocumentCache::instance().load(workspacePath_, *profile),
        [this](ReplayDocumentPtr document) { showDocument(std::move(document), {}); });
}

QString SuggestionFlow::emptyMessageFor(const std::optional<ProfileInfo>& profile) const {
    if (!profile) return {};
    const QString name = QString::fromStdString(profile->name);
    const ViewKind* kind = findViewKind(profile->kind);
    if (!kind || !kind->watchSuggestions)
        return tr("%1 profiles have no suggestions").arg(QString::fromStdString(profile->kind));
    // Their view derives them: say so, rather than the generic text, over a profile that has
    // some (an import selects the profile without opening it).
    if (viewSuggestions_.contains(profile->id))
        return tr("The analysis of “%1” found nothing to change").arg(name);
    if (tabs_->indexOfProfile(profile->id) < 0 && !adopted_.contains(profile->id))
        return tr("Open “%1” (double-click it, or Enter) to see its suggestions").arg(name);
    return tr("Suggestions for “%1” appear once its analysis has run").arg(name);
}

void SuggestionFlow::showDocument(ReplayDocumentPtr document, const QString& error) {
    document_ = std::move(document);
    QList<SuggestionItem> items;
    if (document_)
        items = dockItems(*document_);
    else
        items.append(
            {QStringLiteral("error"), tr("Could not analyse this profile: %1").arg(error), 0});
    dock_->setSuggestions(items);
    emit suggestionsLoaded();
}

void SuggestionFlow::adoptView(QWidget* view, const ProfileInfo& profile) {
    if (auto* tab = qobject_cast<ReplayProfileTab*>(view)) {
        // A suggestion chosen on the tab (its overview card) is the dock's current one, so
        // Preview and Apply act on it.
        const qint64 id = profile.id;
        connect(tab, &ReplayProfileTab::suggestionShown, this, [this, id](int index) {
            if (replayProfile_ && replayProfile_->id == id && index < dock_->list()->count())
                dock_->list()->setCurrentRow(index);
        });
        // The dock may already hold this profile's document: share it instead of waiting.
        if (document_ && replayProfile_ && replayProfile_->id == profile.id &&
            replayProfile_->importedAt == profile.importedAt)
            tab->setDocument(document_);
        return;
    }
    if (const ViewKind* kind = findViewKind(profile.kind); kind && kind->watchSuggestions) {
        const qint64 id = profile.id;
        adopted_.insert(id);
        kind->watchSuggestions(view, this, [this, id](const QList<SuggestionItem>& suggestions) {
            viewSuggestions_[id] = suggestions;
            if (dockProfile_ && dockProfile_->id == id) {
                dock_->setEmptyMessage(emptyMessageFor(dockProfile_));
                dock_->setSuggestions(suggestions);
            }
        });
        if (dockProfile_ && dockProfile_->id == id)
            dock_->setEmptyMessage(emptyMessageFor(dockProfile_));
    }
}

void SuggestionFlow::keepOnly(const QSet<qint64>& presentIds) {
    adopted_.intersect(presentIds);
    for (auto it = viewSuggestions_.begin(); it != viewSuggestions_.end();)
        it = presentIds.contains(it.key()) ? std::next(it) : viewSuggestions_.erase(it);
}

ReplayProfileTab* SuggestionFlow::show(int index) {
    if (!replayProfile_ && dockProfile_) {
        // A suggestion another kind's view derived: that view shows it.
        const ViewKind* kind = findViewKind(dockProfile_->kind);
        if (kind && kind->showSuggestion)
            if (QWidget* view = tabs_->openProfile(*dockProfile_))
                kind->showSuggestion(view, index);
        return nullptr;
    }
    if (!replayProfile_ || !document_) return nullptr;
    auto* tab = qobject_cast<ReplayProfileTab*>(tabs_->openProfile(*replayProfile_));
    if (!tab) return nullptr;
    if (!tab->isLoaded()) tab->setDocument(document_);
    tab->showSuggestion(index);
    return tab;
}

bool SuggestionFlow::previewInView(int index, bool apply) {
    if (replayProfile_ || !dockProfile_) return false;
    // A suggestion another kind's view derived and can re-simulate (a trace's step
    // recommendation, in its what-if).
    const ViewKind* kind = findViewKind(dockProfile_->kind);
    if (!kind || !kind->previewSuggestion) return true;
    if (QWidget* view = tabs_->openProfile(*dockProfile_))
        kind->previewSuggestion(view, index, apply);
    return true;
}

ReplayProfileTab* SuggestionFlow::preview(int index) {
    if (previewInView(index, false)) return nullptr;
    ReplayProfileTab* tab = show(index);
    if (tab) tab->previewSuggestion(index);
    return tab;
}

void SuggestionFlow::apply(int index) {
    if (previewInView(index, true)) return;
    if (!replayProfile_ || !document_ || index < 0 ||
        size_t(index) >= document_->analysis.suggestions.size())
        return;
    if (!writable_) {
        emit status(tr("This workspace is read-only; the edited trace cannot be saved."), true);
        return;
    }
    emit status(tr("Saving the edited trace…"), false);
    const QString path = workspacePath_;
    const ReplayDocumentPtr document = document_;
    applyJob_.start([path, document,
                     index] { return applySuggestionAsProfile(path, *document, size_t(index)); },
                    [this](ProfileInfo derived) {
                        const QString name = QString::fromStdString(derived.name);
                        emit status(tr("Saved “%1”, ready to compare with its parent").arg(name),
                                    false);
                        emit applied(true, derived.id, name);
                    });
}

void SuggestionFlow::compareWithParent(qint64 derivedId) {
    // Profile rows are read on a worker; the comparison opens when both are known.
    struct Pair {
        std::optional<ProfileInfo> parent, derived;
    };
    const std::string path = workspacePath_.toStdString();
    parentJob_.start(
        [path, derivedId] {
            auto workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
            Pair pair;
            pair.derived = workspace->profile(derivedId);
            if (pair.derived && pair.derived->parentId)
                pair.parent = workspace->profile(*pair.derived->parentId);
            return pair;
        },
        [this](Pair pair) {
            if (pair.parent && pair.derived)
                tabs_->openComparison(*pair.parent, *pair.derived);
            else
                emit status(tr("The original of this profile is no longer in the workspace"), true);
        });
}

}  // namespace stallscope
