// The server's HTML pages: leaderboards, problems, submissions (live while judged), users.
// Server-rendered; the only script is the submission page's live update over the event stream.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"

namespace kj::server::detail {

// A browser's token: set by /login or by `?token=` on any page; HttpOnly, SameSite=Strict.
inline constexpr char kTokenCookie[] = "kj_token";

// The kj_token cookie's value, or empty.
std::string token_cookie(const httplib::Request& req);

// A leaderboard's ranking on one GPU type, the server's cached one: the same object until the
// ranking changes (a ranked result, a hacked mark, a deadline) or ages out, so what a page
// renders from it is kept with it and rendered again only for a new object.
using RankingSource = std::function<std::shared_ptr<const std::vector<store::RankedEntry>>(
    const store::Leaderboard&, const std::string&)>;

// Registers /, /leaderboards/{name}, /problems/{name}, /submissions/{id}, /users/{name},
// /login and /logout.
void add_page_routes(httplib::Server& http, std::shared_ptr<store::Store> store,
                     RankingSource ranking);

}  // namespace kj::server::detail
