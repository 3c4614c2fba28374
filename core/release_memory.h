#pragma once

namespace stallscope {

// Empties a container and gives its memory back. (`v = {}` does not: it assigns an empty
// initializer list and keeps the capacity.)
template <class Container>
void releaseMemory(Container& c) {
    Container().swap(c);
}

}  // namespace stallscope
