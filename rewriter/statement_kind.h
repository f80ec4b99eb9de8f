// StatementKind: what a parsed statement is, as libpg_query's node name
// (PostgreSQL's parse node, e.g. "SelectStmt") turned into an enum at the
// parser boundary (sql_parser.h), so rules compare values, not strings. Only
// the kinds kanon's rules name have a value of their own; every other node is
// kOther (Statement::node keeps its name for messages).
#pragma once

#include <string_view>

namespace kanon::rewriter {

enum class StatementKind {
  kOther,
  kSelect,                  // SelectStmt
  kCopy,                    // CopyStmt
  kPrepare,                 // PrepareStmt
  kDeclareCursor,           // DeclareCursorStmt
  kCreateFunction,          // CreateFunctionStmt
  kVariableSet,             // VariableSetStmt
  kExplain,                 // ExplainStmt
  kDiscard,                 // DiscardStmt
  kDeallocate,              // DeallocateStmt
  kCreateTableAs,           // CreateTableAsStmt
  kClosePortal,             // ClosePortalStmt
  kUpdate,                  // UpdateStmt
  kInsert,                  // InsertStmt
  kFetch,                   // FetchStmt
  kExecute,                 // ExecuteStmt
  kDo,                      // DoStmt
  kDelete,                  // DeleteStmt
  kCall,                    // CallStmt
  kVariableShow,            // VariableShowStmt
  kTransaction,             // TransactionStmt
  kMerge,                   // MergeStmt
  kUnlisten,                // UnlistenStmt
  kTruncate,                // TruncateStmt
  kNotify,                  // NotifyStmt
  kListen,                  // ListenStmt
  kCreatePLang,             // CreatePLangStmt
  kCreateEventTrig,         // CreateEventTrigStmt
  kView,                    // ViewStmt
  kRule,                    // RuleStmt
  kLoad,                    // LoadStmt
  kImportForeignSchema,     // ImportForeignSchemaStmt
  kDrop,                    // DropStmt
  kCreateUserMapping,       // CreateUserMappingStmt
  kCreateTrig,              // CreateTrigStmt
  kCreateSubscription,      // CreateSubscriptionStmt
  kCreateTable,             // CreateStmt
  kCreatePublication,       // CreatePublicationStmt
  kCreatePolicy,            // CreatePolicyStmt
  kCreateForeignTable,      // CreateForeignTableStmt
  kCreateForeignServer,     // CreateForeignServerStmt
  kCreateExtension,         // CreateExtensionStmt
  kConstraintsSet,          // ConstraintsSetStmt
  kAlterUserMapping,        // AlterUserMappingStmt
  kAlterSystem,             // AlterSystemStmt
  kAlterSubscription,       // AlterSubscriptionStmt
  kAlterPublication,        // AlterPublicationStmt
  kAlterForeignServer,      // AlterForeignServerStmt
  kAlterExtension,          // AlterExtensionStmt
  kAlterExtensionContents,  // AlterExtensionContentsStmt
  kVacuum,                  // VacuumStmt (VACUUM and ANALYZE)
  kCluster,                 // ClusterStmt
  kReindex,                 // ReindexStmt
  kDefine,                  // DefineStmt
  kCreateCast,              // CreateCastStmt
  kCreateDomain,            // CreateDomainStmt
  kCreateRange,             // CreateRangeStmt
  kCreateOpClass,           // CreateOpClassStmt
  kCreateOpFamily,          // CreateOpFamilyStmt
  kAlterOpFamily,           // AlterOpFamilyStmt
  kCreateConversion,        // CreateConversionStmt
  kCreateTransform,         // CreateTransformStmt
  kAlterOperator,           // AlterOperatorStmt
  kAlterType,               // AlterTypeStmt
  kAlterDomain,             // AlterDomainStmt
};

// The kind of libpg_query's node `node`; kOther for any other node.
StatementKind statement_kind(std::string_view node);

}  // namespace kanon::rewriter
