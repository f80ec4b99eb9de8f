#include "rewriter/statement_kind.h"

#include "base/name_table.h"

namespace kanon::rewriter {

namespace {

const base::NameTable<StatementKind> kNodeNames{
    {StatementKind::kSelect, "SelectStmt"},
    {StatementKind::kCopy, "CopyStmt"},
    {StatementKind::kPrepare, "PrepareStmt"},
    {StatementKind::kDeclareCursor, "DeclareCursorStmt"},
    {StatementKind::kCreateFunction, "CreateFunctionStmt"},
    {StatementKind::kVariableSet, "VariableSetStmt"},
    {StatementKind::kExplain, "ExplainStmt"},
    {StatementKind::kDiscard, "DiscardStmt"},
    {StatementKind::kDeallocate, "DeallocateStmt"},
    {StatementKind::kCreateTableAs, "CreateTableAsStmt"},
    {StatementKind::kClosePortal, "ClosePortalStmt"},
    {StatementKind::kUpdate, "UpdateStmt"},
    {StatementKind::kInsert, "InsertStmt"},
    {StatementKind::kFetch, "FetchStmt"},
    {StatementKind::kExecute, "ExecuteStmt"},
    {StatementKind::kDo, "DoStmt"},
    {StatementKind::kDelete, "DeleteStmt"},
    {StatementKind::kCall, "CallStmt"},
    {StatementKind::kVariableShow, "VariableShowStmt"},
    {StatementKind::kTransaction, "TransactionStmt"},
    {StatementKind::kMerge, "MergeStmt"},
    {StatementKind::kUnlisten, "UnlistenStmt"},
    {StatementKind::kTruncate, "TruncateStmt"},
    {StatementKind::kNotify, "NotifyStmt"},
    {StatementKind::kListen, "ListenStmt"},
    {StatementKind::kCreatePLang, "CreatePLangStmt"},
    {StatementKind::kCreateEventTrig, "CreateEventTrigStmt"},
    {StatementKind::kView, "ViewStmt"},
    {StatementKind::kRule, "RuleStmt"},
    {StatementKind::kLoad, "LoadStmt"},
    {StatementKind::kImportForeignSchema, "ImportForeignSchemaStmt"},
    {StatementKind::kDrop, "DropStmt"},
    {StatementKind::kCreateUserMapping, "CreateUserMappingStmt"},
    {StatementKind::kCreateTrig, "CreateTrigStmt"},
    {StatementKind::kCreateSubscription, "CreateSubscriptionStmt"},
    {StatementKind::kCreateTable, "CreateStmt"},
    {StatementKind::kCreatePublication, "CreatePublicationStmt"},
    {StatementKind::kCreatePolicy, "CreatePolicyStmt"},
    {StatementKind::kCreateForeignTable, "CreateForeignTableStmt"},
    {StatementKind::kCreateForeignServer, "CreateForeignServerStmt"},
    {StatementKind::kCreateExtension, "CreateExtensionStmt"},
    {StatementKind::kConstraintsSet, "ConstraintsSetStmt"},
    {StatementKind::kAlterUserMapping, "AlterUserMappingStmt"},
    {StatementKind::kAlterSystem, "AlterSystemStmt"},
    {StatementKind::kAlterSubscription, "AlterSubscriptionStmt"},
    {StatementKind::kAlterPublication, "AlterPublicationStmt"},
    {StatementKind::kAlterForeignServer, "AlterForeignServerStmt"},
    {StatementKind::kAlterExtension, "AlterExtensionStmt"},
    {StatementKind::kAlterExtensionContents, "AlterExtensionContentsStmt"},
    {StatementKind::kVacuum, "VacuumStmt"},
    {StatementKind::kCluster, "ClusterStmt"},
    {StatementKind::kReindex, "ReindexStmt"},
    {StatementKind::kDefine, "DefineStmt"},
    {StatementKind::kCreateCast, "CreateCastStmt"},
    {StatementKind::kCreateDomain, "CreateDomainStmt"},
    {StatementKind::kCreateRange, "CreateRangeStmt"},
    {StatementKind::kCreateOpClass, "CreateOpClassStmt"},
    {StatementKind::kCreateOpFamily, "CreateOpFamilyStmt"},
    {StatementKind::kAlterOpFamily, "AlterOpFamilyStmt"},
    {StatementKind::kCreateConversion, "CreateConversionStmt"},
    {StatementKind::kCreateTransform, "CreateTransformStmt"},
    {StatementKind::kAlterOperator, "AlterOperatorStmt"},
    {StatementKind::kAlterType, "AlterTypeStmt"},
    {StatementKind::kAlterDomain, "AlterDomainStmt"},
};

}  // namespace

StatementKind statement_kind(std::string_view node) {
  return kNodeNames.parse(node).value_or(StatementKind::kOther);
}

}  // namespace kanon::rewriter
