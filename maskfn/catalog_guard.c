/*
 * The catalog guard in C (rewriter/catalog_guard.h, catalog/catalog_watch.h):
 *
 *   kanon_mask.catalog_is(decided int8) RETURNS boolean
 *   kanon_mask.catalog_stays(decided int8) RETURNS boolean
 *
 * The same checks as the PL/pgSQL kanon.catalog_is and kanon.catalog_stays
 * that kanon creates with its catalog watch: true when the sequence
 * kanon.catalog_generation stands at `decided`, else the error KN001, which
 * kanon answers by deciding the statement again. catalog_stays first takes
 * the advisory lock (7306355, 3) shared to the end of the transaction, the
 * one every DDL's event trigger takes exclusively.
 *
 * Why C: a new backend compiles the PL/pgSQL function and plans its query at
 * its first call (about 1.2 ms), and every call runs that query through SPI
 * (5-12 us). Here the sequence's one tuple is read as SELECT last_value
 * reads it: AccessShareLock on the sequence (held to the end of the
 * transaction, as a query's is) and a scan under the active snapshot (the
 * tuple is frozen and nextval changes it in place). Not
 * pg_sequence_last_value: that takes RowExclusiveLock and is parallel
 * unsafe, and catalog_is runs in parallel workers too.
 *
 * The sequence is found by name in schema kanon, whatever the caller's
 * search_path, with no privilege check: the generation is no secret.
 * Without it every call fails.
 *
 *   kanon_mask.copy_current(copy regclass, message text) RETURNS boolean
 *
 * The guard of a read of a masked copy (mode: materialized,
 * rewriter/rewrite_plan.cc): true when the statement's snapshot sees the
 * copy's pg_class row, which the refresh that swapped the copy in wrote (a
 * snapshot that cannot see it cannot see the copy's rows either); else
 * SQLSTATE 22P02 with `message` followed by the snapshot, as the SQL form
 * `CASE WHEN EXISTS (SELECT FROM pg_class ...) THEN true ELSE
 * concat(message, pg_current_snapshot())::bool END` fails. The same check
 * without planning a subquery over pg_class: a new backend's first statement
 * planned that one for 2.7 ms on the VM of bench/README.md "Stop 67".
 *
 *   kanon_mask.snapshot_sees(replaced_by xid8, message text) RETURNS boolean
 *
 * The guard of a masked view (mode: view, store/materializer.cc): true when
 * pg_visible_in_snapshot(replaced_by, pg_current_snapshot()), else SQLSTATE
 * 22P02 with `message` followed by the snapshot, as the SQL form `CASE WHEN
 * pg_visible_in_snapshot(...) THEN true ELSE concat(message,
 * pg_current_snapshot())::bool END` fails, without the four functions and
 * the cast a new backend looks up for that form (1.1 ms of its first
 * statement there).
 */
// PostgreSQL wants its own header first.
// clang-format off
#include "postgres.h"
// clang-format on

#include "access/heapam.h"
#include "access/genam.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/sequence.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(kanon_mask_catalog_is);
PG_FUNCTION_INFO_V1(kanon_mask_catalog_stays);
PG_FUNCTION_INFO_V1(kanon_mask_copy_current);
PG_FUNCTION_INFO_V1(kanon_mask_snapshot_sees);

/* catalog/catalog_watch.h: the lock DDL takes exclusively. */
#define KG_LOCK_KEY1 7306355
#define KG_LOCK_KEY2 3

static int64 kg_generation(void) {
  const Oid schema = get_namespace_oid("kanon", true);
  const Oid relid =
      OidIsValid(schema) ? get_relname_relid("catalog_generation", schema) : InvalidOid;
  Relation rel = OidIsValid(relid) ? try_relation_open(relid, AccessShareLock) : NULL;
  TableScanDesc scan;
  HeapTuple tuple;
  int64 value;
  if (rel == NULL)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("kanon: the catalog generation kanon.catalog_generation does not "
                           "exist")));
  if (rel->rd_rel->relkind != RELKIND_SEQUENCE)
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("kanon: kanon.catalog_generation is not a sequence")));
  scan = table_beginscan(rel, ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot(),
                         0, NULL);
  tuple = heap_getnext(scan, ForwardScanDirection);
  if (tuple == NULL)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("kanon: the sequence kanon.catalog_generation has no row")));
  value = ((Form_pg_sequence_data)GETSTRUCT(tuple))->last_value;
  table_endscan(scan);
  relation_close(rel, NoLock);
  return value;
}

/* `decided` NULL (kanon never writes it) fails as a stale one does. */
static bool kg_check(FunctionCallInfo fcinfo) {
  const int64 now_at = kg_generation();
  int64 decided;
  if (PG_ARGISNULL(0))
    ereport(ERROR,
            (errcode(MAKE_SQLSTATE('K', 'N', '0', '0', '1')),
             errmsg("kanon: the catalog changed (generation " INT64_FORMAT ", decided under none)",
                    now_at)));
  decided = PG_GETARG_INT64(0);
  if (now_at == decided) return true;
  ereport(ERROR, (errcode(MAKE_SQLSTATE('K', 'N', '0', '0', '1')),
                  errmsg("kanon: the catalog changed (generation " INT64_FORMAT
                         ", decided under " INT64_FORMAT ")",
                         now_at, decided)));
  return false;
}

Datum kanon_mask_catalog_is(PG_FUNCTION_ARGS) {
  PG_RETURN_BOOL(kg_check(fcinfo));
}

Datum kanon_mask_catalog_stays(PG_FUNCTION_ARGS) {
  DirectFunctionCall2(pg_advisory_xact_lock_shared_int4, Int32GetDatum(KG_LOCK_KEY1),
                      Int32GetDatum(KG_LOCK_KEY2));
  PG_RETURN_BOOL(kg_check(fcinfo));
}

Datum kanon_mask_copy_current(PG_FUNCTION_ARGS) {
  Relation pg_class;
  ScanKeyData key;
  SysScanDesc scan;
  bool seen;
  char* snapshot;
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("kanon_mask.copy_current: an argument is NULL")));
  pg_class = table_open(RelationRelationId, AccessShareLock);
  ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(PG_GETARG_OID(0)));
  scan = systable_beginscan(pg_class, ClassOidIndexId, true,
                            ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot(),
                            1, &key);
  seen = HeapTupleIsValid(systable_getnext(scan));
  systable_endscan(scan);
  table_close(pg_class, AccessShareLock);
  if (seen) PG_RETURN_BOOL(true);
  snapshot = OidOutputFunctionCall(F_PG_SNAPSHOT_OUT, OidFunctionCall0(F_PG_CURRENT_SNAPSHOT));
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("%s%s", text_to_cstring(PG_GETARG_TEXT_PP(1)), snapshot)));
  PG_RETURN_BOOL(false);
}

Datum kanon_mask_snapshot_sees(PG_FUNCTION_ARGS) {
  Datum snapshot;
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("kanon_mask.snapshot_sees: an argument is NULL")));
  snapshot = OidFunctionCall0(F_PG_CURRENT_SNAPSHOT);
  if (DatumGetBool(OidFunctionCall2(F_PG_VISIBLE_IN_SNAPSHOT, PG_GETARG_DATUM(0), snapshot)))
    PG_RETURN_BOOL(true);
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("%s%s", text_to_cstring(PG_GETARG_TEXT_PP(1)),
                         OidOutputFunctionCall(F_PG_SNAPSHOT_OUT, snapshot))));
  PG_RETURN_BOOL(false);
}
