#include "core/trace/spill_sorter.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/errors.h"

namespace stallscope::trace::spill_file {

FILE* create() {
    FILE* file = std::tmpfile();
    if (!file)
        throw Failure(
            std::string("trace import: cannot create a temporary spill file in " P_tmpdir ": ") +
            std::strerror(errno) + "; nothing was stored");
    return file;
}

void write(FILE* file, uint64_t offset, const void* data, size_t bytes) {
    size_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::pwrite(fileno(file), static_cast<const char*>(data) + done,
                                   bytes - done, off_t(offset + done));
        if (n <= 0)
            throw Failure(std::string("trace import: cannot write its temporary spill file "
                                      "in " P_tmpdir " (") +
                          std::strerror(errno) +
                          ": the disk holding it is full, or a file size limit was reached); "
                          "nothing was stored. Free space there and import again");
        done += size_t(n);
    }
}

void read(FILE* file, uint64_t offset, void* data, size_t bytes) {
    size_t done = 0;
    while (done < bytes) {
        const ssize_t got = ::pread(fileno(file), static_cast<char*>(data) + done, bytes - done,
                                    off_t(offset + done));
        if (got <= 0) throw Failure("trace import: cannot read the temporary spill file");
        done += size_t(got);
    }
}

void damaged() {
    throw Failure("trace import: its temporary spill file in " P_tmpdir
                  " read back differently from what was written; nothing was stored");
}

}  // namespace stallscope::trace::spill_file
