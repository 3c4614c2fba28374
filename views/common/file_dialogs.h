#pragma once

// The file dialogs of the application. Every one goes through here: Qt's stock dialogs find a
// file's type and icon by reading its first bytes, and reading the open workspace (its .sqlite,
// -wal or -shm file, listed in the folder shown) and closing it again drops the SQLite locks
// this process holds on it (core/open_workspaces.h). These dialogs name types and pick icons by
// file name only, and refuse to save onto an open workspace.

#include <QFileDialog>
#include <QString>
#include <QStringList>

class QWidget;

namespace stallscope::dialogs {

// Files to read (Import…); empty when cancelled.
QStringList askOpenFiles(QWidget* parent, const QString& title, const QString& folder,
                         const QString& filter);
// A folder to read (a multi-host run); empty when cancelled.
QString askFolder(QWidget* parent, const QString& title, const QString& folder);
// A file to write; empty when cancelled. An open workspace's own files are refused with a
// message (askWorkspace below is how a workspace is opened).
QString askSaveFile(QWidget* parent, const QString& title, const QString& start,
                    const QString& filter);
// A workspace to open or create (the open one may be picked again).
QString askWorkspace(QWidget* parent, const QString& title, const QString& folder,
                     const QString& filter);

// A dialog set up as those above (for tests: its model lists the folder as a user sees it).
void makeContentBlind(QFileDialog& dialog);

}  // namespace stallscope::dialogs
