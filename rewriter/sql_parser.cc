#include "rewriter/sql_parser.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

namespace kanon::rewriter {

ParseOutcome parse_sql(std::string_view sql) {
  const std::string text(sql);  // libpg_query wants a NUL-terminated string
  PgQueryProtobufParseResult result = pg_query_parse_protobuf(text.c_str());
  ParseOutcome out;
  if (result.error != nullptr) {
    out.error = result.error->message;
    out.error_offset = result.error->cursorpos;
  } else {
    PgQuery__ParseResult* tree = pg_query__parse_result__unpack(
        nullptr, result.parse_tree.len, reinterpret_cast<const uint8_t*>(result.parse_tree.data));
    if (tree != nullptr) {
      out.ok = true;
      out.statement_count = static_cast<int>(tree->n_stmts);
      pg_query__parse_result__free_unpacked(tree, nullptr);
    } else {
      out.error = "libpg_query returned a parse tree that does not unpack";
    }
  }
  pg_query_free_protobuf_parse_result(result);
  return out;
}

}  // namespace kanon::rewriter
