// SQLSTATE codes kanon sends or checks, under PostgreSQL's condition names
// (src/backend/utils/errcodes.txt). Every error kanon makes uses one of these;
// no SQLSTATE literal appears anywhere else in non-test code.
#pragma once

namespace kanon::sqlstate {

inline constexpr const char kSuccessfulCompletion[] = "00000";
inline constexpr const char kConnectionFailure[] = "08006";
inline constexpr const char kProtocolViolation[] = "08P01";
inline constexpr const char kFeatureNotSupported[] = "0A000";
inline constexpr const char kInvalidParameterValue[] = "22023";
inline constexpr const char kInvalidTextRepresentation[] = "22P02";
inline constexpr const char kInvalidAuthorizationSpecification[] = "28000";
inline constexpr const char kInvalidPassword[] = "28P01";
inline constexpr const char kInFailedSqlTransaction[] = "25P02";
inline constexpr const char kInvalidSqlStatementName[] = "26000";
inline constexpr const char kInvalidCursorName[] = "34000";
inline constexpr const char kSerializationFailure[] = "40001";
inline constexpr const char kSyntaxError[] = "42601";
inline constexpr const char kInsufficientPrivilege[] = "42501";
inline constexpr const char kUndefinedObject[] = "42704";
inline constexpr const char kUndefinedTable[] = "42P01";
inline constexpr const char kUndefinedColumn[] = "42703";
inline constexpr const char kObjectNotInPrerequisiteState[] = "55000";
inline constexpr const char kIoError[] = "58030";
inline constexpr const char kConfigFileError[] = "F0000";
inline constexpr const char kInvalidCatalogName[] = "3D000";
inline constexpr const char kTooManyConnections[] = "53300";
inline constexpr const char kQueryCanceled[] = "57014";
inline constexpr const char kAdminShutdown[] = "57P01";
inline constexpr const char kCannotConnectNow[] = "57P03";
inline constexpr const char kInternalError[] = "XX000";

}  // namespace kanon::sqlstate
