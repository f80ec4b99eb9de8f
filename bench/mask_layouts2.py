#!/usr/bin/env python3
"""Mask layouts, round 2: masks evaluated once per distinct quasi-identifier
tuple instead of once per row (issue 28 item 2; not a test, not product code).

Same data and queries as bench/mask_layouts.py (ADULT x 32, k = 320, the BI
queries of bench/proxy_masked.sh), timed in one psql session in alternating
order:

  direct      the raw table, server defaults (JIT, parallel workers)
  direct+rs   the raw table, jit = off, no parallel workers
  cur         kanon's masks as `kanon tree --format sql` prints them: per row
  memo        t CROSS JOIN LATERAL (SELECT <masks> OFFSET 0) m: the planner may
              put a Memoize node keyed on the quasi-identifiers over m
  memo-wm     the same with work_mem = 64MB (Memoize's cache is hash_mem)
  map         t LEFT JOIN <map> ON the eight quasi-identifiers (=); the map
              (one row per distinct tuple, built from `cur` when the snapshot
              is built, with the released bitmask) gives each column as
              CASE WHEN m.bits IS NULL THEN <today's mask>
                   WHEN (m.bits & b) <> 0 THEN t.col END
              so tuples the map lacks (new rows, NULLs) fall back to the mask
  maph        the same joined on one expression key, hash_record(ROW(<QIs>))
              = m.h, the quasi-identifiers rechecked NULL-safely (IS NOT
              DISTINCT FROM, which is not hashable, so not a hash key)
  mapx        the same on hashtextextended(concat_ws(E'\\x1f', <QIs>), 0) = m.hx
  mapH        the same on a copy of the table with a stored generated column h
              (kanon cannot add a column to a customer's table: measured only
              to separate hashing from joining)
  mapH0       mapH without the recheck: a lower bound, wrong on a collision
  push(-wm)   GROUP BY pushdown: count per distinct tuple first, mask the
              groups, re-aggregate (sum of counts; avg via sums); rewritten per
              query, no LIMIT query
  *-par       jit = off with the server's parallel workers

bench/mask_layouts2.sh builds everything (a scratch PostgreSQL, ADULT x 32,
the masks from `kanon tree --format sql`), runs this and stops the server:

  bench/mask_layouts2.sh [--reps 5] [script options]
  bench/mask_layouts2.py --port P --masks masks.sql --table public.adult_inline \
      [--reps 5] [--no-check] [--only cur,memo,...]

Checks (always run first): every layout gives the value `cur` gives for every
row and column (per id), `push` gives the same result set as `cur` for each
query, a deliberately broken map is caught, and rows inserted after the map
was built (new values, NULLs) are masked as `cur` masks them.
"""
import argparse
import re
import subprocess
import sys

from mask_layouts import QUERIES, print_planning_ms, print_ratio_table, qi, timed_medians

# The same aggregates over :grp, the masked groups (masked QIs + n = rows).
PUSH = [
    'SELECT occupation, sex, sum(n)::int8 AS count FROM :grp GROUP BY occupation, sex',
    'SELECT education, sum(n)::int8 AS count FROM :grp GROUP BY education',
    'SELECT coalesce(sum(n), 0)::int8 AS count FROM :grp WHERE age = 39',
    'SELECT count(DISTINCT "native-country") FROM :grp',
    'SELECT a.workclass, g.grp, sum(n)::int8 AS count FROM :grp a '
    'JOIN occupation_group g USING (occupation) GROUP BY 1, 2',
    'SELECT race, sum(n * age)::numeric / nullif(sum(n) FILTER (WHERE age IS NOT NULL), 0) AS avg, '
    'sum(n)::int8 AS count FROM :grp GROUP BY race',
    None,
]
SER = ['SET jit = off', 'SET max_parallel_workers_per_gather = 0', 'RESET work_mem']
PAR = ['SET jit = off', 'RESET max_parallel_workers_per_gather', 'RESET work_mem']
DEF = ['RESET jit', 'RESET max_parallel_workers_per_gather', 'RESET work_mem']
WM = ['SET jit = off', 'SET max_parallel_workers_per_gather = 0', "SET work_mem = '64MB'"]


# Values the 40 rows insert_new_rows adds take: unseen ones and NULLs.
NEW_VALUES = {
    'occupation': "CASE WHEN id % 4 = 0 THEN 'Astronaut' WHEN id % 4 = 1 THEN NULL ELSE occupation END",
    'age': 'CASE WHEN id % 5 = 0 THEN NULL WHEN id % 5 = 1 THEN 130 ELSE age END',
    'native-country': 'CASE WHEN id % 3 = 0 THEN NULL ELSE "native-country" END'}


def insert_new_rows(sql, table, columns, more=None):
    """Adds 40 rows (ids above 900,000,000) copied from the first 40 with
    NEW_VALUES (and `more`) in place of their values."""
    newval = dict(NEW_VALUES, **(more or {}))
    sql('INSERT INTO %s (%s) SELECT 900000000 + id, %s FROM %s WHERE id <= 40;' % (
        table, ', '.join(qi(c) for c in columns),
        ', '.join(newval.get(c, qi(c)) for c in columns if c != 'id'), table))


class Layouts:
    def __init__(self, masks_sql, table):
        body = masks_sql.strip().rstrip(';')
        lines = body.split('\n')
        assert lines[0] == 'SELECT' and lines[-1].startswith('FROM ')
        self.table = table
        self.columns, self.expr = [], {}
        for ln in lines[1:-1]:
            ln = ln.strip().rstrip(',')
            m = re.match(r'^(.*) AS ("(?:[^"]|"")*")$', ln, re.S)
            name = m.group(2)[1:-1].replace('""', '"')
            self.columns.append(name)
            self.expr[name] = m.group(1)
        self.qis = [c for c in self.columns if self.expr[c] != qi(c)]
        self.bit = {c: 1 << i for i, c in enumerate(self.qis)}
        for c in self.qis:
            e = self.expr[c]
            assert e.startswith('CASE WHEN ') and e.endswith(' THEN %s END' % qi(c)), c

    def mk(self, c):
        return '"m %s"' % c.replace('"', '""')

    def qualify(self, expr, alias):
        # column references in kanon's masks: "col" before OPERATOR or THEN/END
        for c in self.qis:
            expr = expr.replace(qi(c) + ' OPERATOR', alias + '.' + qi(c) + ' OPERATOR')
            expr = expr.replace('THEN ' + qi(c) + ' END', 'THEN ' + alias + '.' + qi(c) + ' END')
        return expr

    def cur(self, table=None):
        return '(SELECT %s FROM %s)' % (', '.join(
            '%s AS %s' % (self.expr[c], qi(c)) for c in self.columns), table or self.table)

    def memo(self):
        inner = ', '.join('%s AS %s' % (self.expr[c], qi(c)) for c in self.qis)
        outer = ', '.join(('m.' if c in self.bit else 't.') + qi(c) for c in self.columns)
        # Each QI referenced once from the lateral subquery: PostgreSQL 15 makes
        # every occurrence of an outer Var a cache key of its own (thousands).
        refs = ', '.join('t.%s AS %s' % (qi(c), qi(c)) for c in self.qis)
        return ('(SELECT %s FROM %s t CROSS JOIN LATERAL (SELECT %s FROM (SELECT %s OFFSET 0) s OFFSET 0) m)'
                % (outer, self.table, inner, refs))

    def bits_expr(self, alias):
        return ' OPERATOR(pg_catalog.|) '.join(
            'CASE WHEN %s IS NOT NULL THEN %d ELSE 0 END' % (self.qualify(self.expr[c], alias), self.bit[c])
            for c in self.qis)

    def hash_expr(self, alias):
        return 'pg_catalog.hash_record(ROW(%s))' % ', '.join(alias + '.' + qi(c) for c in self.qis)

    def text_hash_expr(self, alias):
        return 'pg_catalog.hashtextextended(pg_catalog.concat_ws(%s, %s), 0)' % (
            "E'\\x1f'", ', '.join(alias + '.' + qi(c) for c in self.qis))

    def map_ddl(self, name):
        """The map: one row per distinct tuple, its released bitmask, h, hx."""
        keys = ', '.join('%s AS %s' % (qi(c), self.mk(c)) for c in self.qis)
        return ('DROP TABLE IF EXISTS %s; CREATE TABLE %s AS SELECT %s, %s AS bits, %s AS h, %s AS hx '
                'FROM (SELECT DISTINCT %s FROM %s) d; '
                'CREATE UNIQUE INDEX ON %s (%s); CREATE INDEX ON %s (h); CREATE INDEX ON %s (hx); '
                'ANALYZE %s;') % (
            name, name, keys, self.bits_expr('d'), self.hash_expr('d'), self.text_hash_expr('d'),
            ', '.join(qi(c) for c in self.qis), self.table,
            name, ', '.join(self.mk(c) for c in self.qis), name, name, name)

    def map_rel(self, mapname, how, table=None):
        cols = []
        for c in self.columns:
            if c in self.bit:
                cols.append('CASE WHEN m.bits IS NULL THEN %s WHEN (m.bits OPERATOR(pg_catalog.&) %d) '
                            'OPERATOR(pg_catalog.<>) 0 THEN t.%s END AS %s' % (
                                self.qualify(self.expr[c], 't'), self.bit[c], qi(c), qi(c)))
            else:
                cols.append('t.' + qi(c))
        if how == 'eq':
            on = ' AND '.join('t.%s OPERATOR(pg_catalog.=) m.%s' % (qi(c), self.mk(c)) for c in self.qis)
        elif how == 'stored0':  # a lower bound only: no recheck, wrong on a hash collision
            on = 't.h OPERATOR(pg_catalog.=) m.h'
        else:
            key = {'stored': 't.h', 'expr': self.hash_expr('t'),
                   'concat': self.text_hash_expr('t')}[how] + ' OPERATOR(pg_catalog.=) m.' + (
                       'hx' if how == 'concat' else 'h')
            on = key + ' AND ' + ' AND '.join(
                't.%s IS NOT DISTINCT FROM m.%s' % (qi(c), self.mk(c)) for c in self.qis)
        return '(SELECT %s FROM %s t LEFT JOIN %s m ON %s)' % (', '.join(cols), table or self.table, mapname, on)

    def groups(self):
        inner = ', '.join(qi(c) for c in self.qis)
        return '(SELECT %s, n FROM (SELECT %s, count(*) AS n FROM %s GROUP BY %s) g)' % (
            ', '.join('%s AS %s' % (self.expr[c], qi(c)) for c in self.qis), inner, self.table, inner)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', required=True)
    ap.add_argument('--masks', required=True)
    ap.add_argument('--table', required=True)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--no-check', action='store_true')
    ap.add_argument('--only', default='', help='comma-separated layouts to time (default: all)')
    args = ap.parse_args()
    L = Layouts(open(args.masks).read(), args.table)
    psql = ['psql', '-X', '-q', '-h', '127.0.0.1', '-p', args.port, '-U', 'postgres', '-d', 'postgres',
            '-v', 'ON_ERROR_STOP=1']

    def sql(text, at=True):
        p = subprocess.run(psql + (['-At'] if at else []), input=text, capture_output=True, text=True)
        if p.returncode:
            sys.exit('psql failed: %s\n%s' % (p.stderr, text[:2000]))
        return p.stdout

    def log(*a):
        print(*a, file=sys.stderr, flush=True)

    # The map and the table with a stored hash (what kanon could not add).
    hcopy = args.table + '_h'
    sql(L.map_ddl('public.kanon_map'))
    exists = sql("SELECT to_regclass('%s') IS NOT NULL" % hcopy).strip() == 't'
    if not exists:
        sql('CREATE TABLE %s AS SELECT *, %s AS h FROM %s t; ALTER TABLE %s ADD PRIMARY KEY (id); '
            'VACUUM ANALYZE %s;' % (hcopy, L.hash_expr('t'), args.table, hcopy, hcopy))
    log('map: %s rows, %s' % tuple(sql("SELECT count(*), pg_size_pretty(pg_total_relation_size("
                                       "'public.kanon_map')) FROM public.kanon_map").strip().split('|')))

    rel = {
        'cur': L.cur(),
        'memo': L.memo(),
        'map': L.map_rel('public.kanon_map', 'eq'),
        'maph': L.map_rel('public.kanon_map', 'expr'),
        'mapx': L.map_rel('public.kanon_map', 'concat'),
        'mapH': L.map_rel('public.kanon_map', 'stored', hcopy),
        'mapH0': L.map_rel('public.kanon_map', 'stored0', hcopy),
    }
    qis = L.qis
    differ = ' OR '.join('c.%s IS DISTINCT FROM w.%s' % (qi(c), qi(c)) for c in qis)

    def check_rows(label, layout, against=None):
        n = sql('SET jit = off; SELECT count(*) FROM %s c FULL JOIN %s w USING (id) WHERE c.id IS NULL '
                'OR w.id IS NULL OR %s;' % (against or rel['cur'], layout, differ)).strip().split('\n')[-1]
        log('check %s: %s rows differ from cur' % (label, n))
        return int(n)

    if not args.no_check:
        ok = True
        for k in ('memo', 'map', 'maph', 'mapx'):
            ok &= check_rows(k, rel[k]) == 0
        ok &= check_rows('mapH', rel['mapH'], L.cur(hcopy)) == 0
        ok &= check_rows('mapH0', rel['mapH0'], L.cur(hcopy)) == 0
        # the check can fail: a map with one tuple's bits flipped
        sql('DROP TABLE IF EXISTS public.kanon_map_bad; CREATE TABLE public.kanon_map_bad AS '
            'SELECT * FROM public.kanon_map; UPDATE public.kanon_map_bad SET bits = bits # 16 '
            'WHERE ctid = (SELECT min(ctid) FROM public.kanon_map_bad);')
        ok &= check_rows('map over a broken map (must differ)', L.map_rel('public.kanon_map_bad', 'eq')) > 0
        sql('DROP TABLE public.kanon_map_bad')
        # group-by pushdown: same result set as cur, query by query
        for (qname, qsql), psh in zip(QUERIES, PUSH):
            if psh is None:
                continue
            a = qsql.replace(':tbl', rel['cur'] + ('' if ' a ' in qsql else ' AS t'))
            b = psh.replace(':grp', L.groups() + ('' if ' a ' in psh else ' AS t'))
            n = sql('SET jit = off; SELECT (SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x) + '
                    '(SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) y);' % (a, b, b, a)).strip().split('\n')[-1]
            log('check push %s: %s rows differ' % (qname, n))
            ok &= n == '0'
        # rows that arrived after the map was built: new values and NULLs
        insert_new_rows(sql, args.table, L.columns)
        miss = sql('SELECT count(*) FROM %s t LEFT JOIN public.kanon_map m ON %s WHERE t.id > 900000000 '
                   'AND m.bits IS NULL' % (args.table, ' AND '.join(
                       't.%s = m.%s' % (qi(c), L.mk(c)) for c in L.qis))).strip()
        log('new rows: %s, of which %s not in the map' % (
            sql('SELECT count(*) FROM %s WHERE id > 900000000' % args.table).strip(), miss))
        for k in ('memo', 'map', 'maph', 'mapx'):
            ok &= check_rows(k + ' with new rows', rel[k]) == 0
        sql('DELETE FROM %s WHERE id > 900000000; VACUUM ANALYZE %s;' % (args.table, args.table))
        if not ok:
            sys.exit('CHECK FAILED')

    # EXPLAIN facts
    for k, setup in (('memo', SER), ('memo-wm', WM), ('memo-par', PAR)):
        for qname, qsql in QUERIES[:2] + QUERIES[6:]:
            plan = sql(';'.join(setup) + ';EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' + qsql.replace(
                ':tbl', rel['memo'] + ' AS t') + ';')
            facts = [ln.strip() for ln in plan.split('\n') if re.search(
                r'Memoize|Hits:|Cache Key|Execution Time|Workers|Nested Loop|Gather|Aggregate', ln)]
            log('EXPLAIN %s / %s:\n    %s' % (k, qname, '\n    '.join(facts)))
    for k in ('map', 'maph', 'mapx', 'mapH', 'mapH0'):
        for setup, sl in ((SER, ''), (PAR, '-par')):
            for qname, qsql in QUERIES[1:2] + QUERIES[6:]:
                plan = sql(';'.join(setup) + ';EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' + qsql.replace(
                    ':tbl', rel[k] + ' AS t') + ';')
                facts = [ln.strip() for ln in plan.split('\n') if re.search(
                    r'Join|Hash|Buckets|Execution Time|Workers|Gather|Scan|Memoize|Hits', ln)]
                log('EXPLAIN %s%s / %s:\n    %s' % (k, sl, qname, '\n    '.join(facts)))
    # indexed join: stays on the primary key?
    tiny = 'SELECT a.sex, a.education FROM %s a JOIN tiny USING (id)'
    for k in rel:
        plan = sql('SET jit = off; SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, COSTS OFF) ' +
                   tiny % rel[k] + ';')
        log('indexed join %s: %s | %s' % (k, ' / '.join(ln.strip() for ln in plan.split('\n') if re.search(
            r'Index|Seq Scan|Hash Join|Nested|Memoize', ln))[:400],
            re.search(r'Execution Time: ([0-9.]+)', plan).group(1)))

    variants = [('direct', DEF, args.table), ('direct+rs', SER, args.table), ('cur', SER, rel['cur']),
                ('memo', SER, rel['memo']), ('memo-wm', WM, rel['memo']),
                ('map', SER, rel['map']), ('maph', SER, rel['maph']), ('mapx', SER, rel['mapx']),
                ('mapH', SER, rel['mapH']), ('mapH0', SER, rel['mapH0']),
                ('push', SER, None), ('push-wm', WM, None), ('memo-par', PAR, rel['memo']), ('map-par', PAR, rel['map']),
                ('push-par', PAR, None)]
    if args.only:
        keep = set(args.only.split(',')) | {'direct'}
        variants = [v for v in variants if v[0] in keep]
    stmts = []
    for r in range(args.reps + 1):  # the first round warms up
        for i, (qname, qsql) in enumerate(QUERIES):
            for lab, setup, relation in (variants if r % 2 == 0 else variants[::-1]):
                if relation is None:
                    if PUSH[i] is None:
                        continue
                    text = PUSH[i].replace(':grp', L.groups() + ('' if ' a ' in PUSH[i] else ' AS t'))
                else:
                    text = qsql.replace(':tbl', relation + ('' if ' a ' in qsql else ' AS t'))
                stmts += [(None, s) for s in setup]
                stmts.append(((lab, qname) if r else None, text))
    log('timing %d statements; load before: %s' % (len(stmts), open('/proc/loadavg').read().strip()))
    med = timed_medians(psql, stmts)
    log('load after: %s' % open('/proc/loadavg').read().strip())
    print_ratio_table([v[0] for v in variants], [q for q, _ in QUERIES], med)

    print_planning_ms(sql, variants, QUERIES[6][1])


if __name__ == '__main__':
    main()
