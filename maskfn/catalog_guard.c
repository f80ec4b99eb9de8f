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
 */
// PostgreSQL wants its own header first.
// clang-format off
#include "postgres.h"
// clang-format on

#include "access/heapam.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/sequence.h"
#include "fmgr.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(kanon_mask_catalog_is);
PG_FUNCTION_INFO_V1(kanon_mask_catalog_stays);

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
