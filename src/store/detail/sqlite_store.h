#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace kj::store::detail {

// Opens (creating if missing) the SQLite database at path and migrates it.
std::unique_ptr<Store> open_sqlite_store(const std::string& path, StoreOptions options);

}  // namespace kj::store::detail
