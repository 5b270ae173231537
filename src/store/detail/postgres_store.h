#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace kj::store::detail {

// Connects to the PostgreSQL database at url (postgres://...), loading libpq on first use, and
// migrates it to the current schema.
std::unique_ptr<Store> open_postgres_store(const std::string& url, StoreOptions options);

}  // namespace kj::store::detail
