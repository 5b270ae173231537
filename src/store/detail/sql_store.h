#pragma once

#include <memory>

#include "store/detail/dialect.h"
#include "store/store.h"

namespace kj::store::detail {

// The store over a dialect's database, migrated to the current schema.
std::unique_ptr<Store> open_sql_store(std::unique_ptr<Dialect> dialect, StoreOptions options);

}  // namespace kj::store::detail
