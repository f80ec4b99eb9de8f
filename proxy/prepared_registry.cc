#include "proxy/prepared_registry.h"

#include <algorithm>

#include "proxy/wire/message_types.h"

namespace kanon::proxy {

void PreparedRegistry::remove(const Change& change) {
  auto& map = confirmed(change.space);
  const auto matches = [&](const Change& a) {
    return a.space == change.space &&
           (change.op == Change::Op::kRemoveAll || a.name == change.name);
  };
  if (change.op == Change::Op::kRemoveAll)
    map.clear();
  else
    map.erase(change.name);
  // An addition still waiting comes before this removal: whatever it does,
  // the name holds nothing kanon knows afterwards.
  for (auto& e : expected_) std::erase_if(e.additions, matches);
}

void PreparedRegistry::push(Expected::Kind kind, std::vector<Change> changes) {
  Expected e;
  e.kind = kind;
  for (auto& c : changes) {
    if (c.op == Change::Op::kAdd)
      e.additions.push_back(std::move(c));
    else
      remove(c);
  }
  expected_.push_back(std::move(e));
}

void PreparedRegistry::sent(char frontend_type, std::vector<std::vector<Change>> changes) {
  using K = Expected::Kind;
  if (ignoring_till_sync_ && frontend_type != wire::frontend::kSync) {
    // The backend ignores it: only its removals count (forgetting is safe).
    for (auto& list : changes)
      for (auto& c : list)
        if (c.op != Change::Op::kAdd) remove(c);
    return;
  }
  switch (frontend_type) {
    case wire::frontend::kQuery:
      for (auto& list : changes) push(K::kStatement, std::move(list));
      push(K::kQueryReady, {});
      return;
    case wire::frontend::kFunctionCall:
      push(K::kQueryReady, {});
      return;
    case wire::frontend::kSync:
      ignoring_till_sync_ = false;
      if (!copy_in_) push(K::kSyncReady, {});
      return;
    case wire::frontend::kCopyDone:
    case wire::frontend::kCopyFail:
      if (copy_in_)
        copy_in_ = false;
      else
        push(K::kCopyEnd, {});
      return;
    case wire::frontend::kParse:
    case wire::frontend::kBind:
    case wire::frontend::kDescribe:
    case wire::frontend::kExecute:
    case wire::frontend::kClose:
      push(K::kAnswer, changes.empty() ? std::vector<Change>{} : std::move(changes.front()));
      return;
    default:  // Flush, COPY data: no answer of their own
      return;
  }
}

void PreparedRegistry::confirm_head() {
  for (auto& c : expected_.front().additions) confirmed(c.space)[c.name] = std::move(c.entry);
  expected_.pop_front();
}

bool PreparedRegistry::skip_until(Expected::Kind until) {
  while (!expected_.empty()) {
    if (expected_.front().kind == until) return true;
    expected_.pop_front();
  }
  return false;
}

bool PreparedRegistry::ready_owed() const {
  return std::any_of(expected_.begin(), expected_.end(), [](const Expected& e) {
    return e.kind == Expected::Kind::kQueryReady || e.kind == Expected::Kind::kSyncReady;
  });
}

void PreparedRegistry::on_backend(char backend_type, char status) {
  using K = Expected::Kind;
  // A CopyDone or CopyFail the backend reads outside a COPY (one that
  // failed before it began): it ignores them.
  while (!expected_.empty() && expected_.front().kind == K::kCopyEnd) expected_.pop_front();
  const K head = expected_.empty() ? K::kQueryReady : expected_.front().kind;
  if (backend_type == wire::backend::kCopyInResponse) {
    // The COPY at the head reads every message sent after it up to its
    // CopyDone or CopyFail: the Syncs among them get no ReadyForQuery.
    auto it = expected_.begin();
    if (it != expected_.end()) ++it;
    while (it != expected_.end() && it->kind != K::kCopyEnd)
      it = it->kind == K::kSyncReady ? expected_.erase(it) : std::next(it);
    if (it == expected_.end())
      copy_in_ = true;  // its end is not sent yet
    else
      expected_.erase(it);
    return;
  }
  switch (backend_type) {
    case wire::backend::kErrorResponse:
      copy_in_ = false;  // a COPY that failed reads no more
      // PostgreSQL skips the rest of a Query, or every extended message up
      // to Sync (a Query included).
      if (head == K::kStatement) {
        skip_until(K::kQueryReady);
      } else if (head == K::kAnswer) {
        if (!skip_until(K::kSyncReady)) ignoring_till_sync_ = true;
      }
      return;
    case wire::backend::kReadyForQuery:
      while (!expected_.empty()) {
        const K k = expected_.front().kind;
        expected_.pop_front();  // an answer still owed never came: not done
        if (k == K::kQueryReady || k == K::kSyncReady) break;
      }
      // Portals and cursors without HOLD end with their transaction.
      if (status == wire::kTxIdle)
        std::erase_if(portals_, [](const auto& p) { return !p.second.hold; });
      return;
    case wire::backend::kCommandComplete:
    case wire::backend::kEmptyQueryResponse:
      if (head == K::kStatement || head == K::kAnswer) confirm_head();
      return;
    default:
      if (head == K::kAnswer && wire::is_extended_answer(backend_type)) confirm_head();
      return;
  }
}

std::vector<const PreparedEntry*> PreparedRegistry::candidates(Space space,
                                                               const std::string& name) const {
  std::vector<const PreparedEntry*> out;
  const auto& map = confirmed(space);
  if (auto it = map.find(name); it != map.end()) out.push_back(&it->second);
  for (const auto& e : expected_)
    for (const auto& c : e.additions)
      if (c.space == space && c.name == name) out.push_back(&c.entry);
  return out;
}

std::vector<std::string> PreparedRegistry::shadowable_not_decided_at(DecidedAt now) const {
  std::vector<std::string> out;
  const auto add = [&](const PreparedEntry& e) {
    if (!(e.decided == now)) out.insert(out.end(), e.shadowable.begin(), e.shadowable.end());
  };
  for (const auto* map : {&statements_, &portals_})
    for (const auto& [name, entry] : *map) add(entry);
  for (const auto& e : expected_)
    for (const auto& c : e.additions) add(c.entry);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void PreparedRegistry::confirm_decision(Space space, const std::string& name, DecidedAt at) {
  auto& map = confirmed(space);
  if (auto it = map.find(name); it != map.end()) it->second.decided = at;
}

}  // namespace kanon::proxy
