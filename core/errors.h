#pragma once

#include <stdexcept>
#include <string>

namespace stallscope {

// Bad input from the user: a file, an argument or a workspace we refuse. Maps to exit status 2.
// The message already names the file and the line or byte offset.
class InputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The user cancelled long work. Whatever it was writing has been rolled back.
class Cancelled : public std::runtime_error {
  public:
    Cancelled() : std::runtime_error("cancelled") {}
};

// Anything else that went wrong (I/O failure, SQLite failure). Maps to exit status 1.
class Failure : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// "file:line: what" / "file: byte N: what", the shape every importer uses.
std::string atLine(const std::string& file, long long line, const std::string& what);
std::string atOffset(const std::string& file, long long offset, const std::string& what);

}  // namespace stallscope
