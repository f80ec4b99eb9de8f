#!/usr/bin/env python3
"""Masks evaluated by the C function kanon_mask.released against today's SQL
masks (issue 28 item 2, round 3; not a test). bench/mask_function.sh sets it
up. Same data and queries as bench/mask_layouts.py, in one psql session, in
alternating order:

  direct      the raw table, server defaults (JIT, parallel workers)
  direct+rs   the raw table, jit = off, no parallel workers
  cur         kanon's masks in the cost-based SQL form, serial, jit = off
  fn          the masks as calls of kanon_mask.released, serial, jit = off
  fn-par      the same with the server's parallel workers (jit = off)
  fn-def      the same with the server's defaults (JIT as configured)
  fence-par   fn-par inside a subquery PostgreSQL does not pull up (a dead
              CASE arm calling pg_catalog.clock_timestamp(), volatile and
              parallel safe): the outer query groups on the subquery's
              columns, which the planner estimates at 200 values instead of
              10% of the rows; join clauses are no longer pushed into it.
              As the rewriter writes it: listing only the columns the query
              names (all for `*`)
  fence-raw   the same subquery with the raw columns instead of masks: what
              the fence itself costs (parallel workers, jit = off)
  fence-call  the same with masks whose code answers TRUE at once (no test):
              what the calls cost (arguments, the wider deform), without
              the walk; fence-par minus fence-call is the walk

After the table, one run of `... JOIN tiny USING (id)` (10 ids) per layout:
whether the primary key is still used.

Checks (first, unless --no-check): fn gives the value cur gives for every row
and column; so it does with rows added afterwards (values never seen, NULLs);
and a function mask given another column's code differs (the check can fail).
"""
import argparse
import re
import subprocess
import sys

from mask_layouts import QUERIES, print_planning_ms, print_ratio_table, qi, timed_medians
from mask_layouts2 import DEF, PAR, SER, Layouts, insert_new_rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', required=True)
    ap.add_argument('--masks', required=True)
    ap.add_argument('--fn-masks', required=True)
    ap.add_argument('--table', required=True)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--no-check', action='store_true')
    args = ap.parse_args()
    cur = Layouts(open(args.masks).read(), args.table)
    fn = Layouts(open(args.fn_masks).read(), args.table)
    assert cur.qis == fn.qis, (cur.qis, fn.qis)
    calls = sum('"kanon_mask"."released"(' in fn.expr[c] for c in fn.qis)
    psql = ['psql', '-X', '-q', '-h', '127.0.0.1', '-p', args.port, '-U', 'postgres', '-d', 'postgres',
            '-v', 'ON_ERROR_STOP=1']

    def sql(text):
        p = subprocess.run(psql + ['-At'], input=text, capture_output=True, text=True)
        if p.returncode:
            sys.exit('psql failed: %s\n%s' % (p.stderr, text[:2000]))
        return p.stdout

    def log(*a):
        print(*a, file=sys.stderr, flush=True)

    log('function masks: %d of %d quasi-identifiers call kanon_mask.released' % (calls, len(fn.qis)))
    differ = ' OR '.join('c.%s IS DISTINCT FROM w.%s' % (qi(c), qi(c)) for c in cur.qis)

    def check_rows(label, layout):
        n = sql('SET jit = off; SELECT count(*) FROM %s c FULL JOIN %s w USING (id) WHERE c.id IS NULL '
                'OR w.id IS NULL OR %s;' % (cur.cur(), layout, differ)).strip().split('\n')[-1]
        log('check %s: %s rows differ from cur' % (label, n))
        return int(n)

    if not args.no_check:
        ok = check_rows('fn', fn.cur()) == 0
        a, b = fn.qis[4], fn.qis[7]  # education's mask with occupation's code
        broken = Layouts(open(args.fn_masks).read(), args.table)
        code_b = re.search(r'CASE WHEN (.*) THEN ', fn.expr[b]).group(1)
        broken.expr[a] = 'CASE WHEN %s THEN %s END' % (code_b, qi(a))
        ok &= check_rows('fn with %s given %s\'s code (must differ)' % (a, b), broken.cur()) > 0
        insert_new_rows(sql, args.table, cur.columns, {'sex': "CASE WHEN id % 7 = 0 THEN NULL ELSE sex END"})
        ok &= check_rows('fn with 40 new rows (unseen values, NULLs)', fn.cur()) == 0
        sql('DELETE FROM %s WHERE id > 900000000; VACUUM ANALYZE %s;' % (args.table, args.table))
        if not ok:
            sys.exit('CHECK FAILED')

    for setup, label in ((SER, 'fn'), (PAR, 'fn-par')):
        for qname, qsql in QUERIES[1:2] + QUERIES[6:]:
            plan = sql(';'.join(setup) + ';EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' + qsql.replace(
                ':tbl', fn.cur() + ' AS t') + ';')
            facts = [ln.strip() for ln in plan.split('\n') if re.search(
                r'Aggregate|Gather|Workers|Sort Method|Scan|Planning Time|Execution Time', ln)]
            log('EXPLAIN %s / %s:\n    %s' % (label, qname, '\n    '.join(facts)))

    def trivial(expr):
        """The mask with a code of no test answering TRUE (same arguments)."""
        def code(m):
            nargs = bytes.fromhex(m.group(1))[4]
            return m.group(0).replace(m.group(1), (b'KMP1' + bytes([nargs]) + (1).to_bytes(4, 'little') +
                                                   (0).to_bytes(4, 'little')).hex())
        return re.sub(r"E'\\\\x([0-9a-f]+)'", code, expr)

    def fence(exprs):
        """The fenced relation listing the columns a query names, as the rewriter writes it."""
        def relation(query):
            named = [c for c in fn.columns if '*' in query or re.search(r'\b%s\b' % re.escape(c), query)]
            return '(SELECT %s FROM (SELECT %s%sCASE WHEN false THEN pg_catalog.clock_timestamp() END ' \
                'AS "kanon fence" FROM %s) s)' % (', '.join(qi(c) for c in named), ', '.join(
                    '%s AS %s' % (exprs[c], qi(c)) for c in named), ', ' if named else '', args.table)
        return relation

    variants = [('direct', DEF, args.table), ('direct+rs', SER, args.table), ('cur', SER, cur.cur()),
                ('fn', SER, fn.cur()), ('fn-par', PAR, fn.cur()), ('fn-def', DEF, fn.cur()),
                ('fence-raw', PAR, fence({c: qi(c) for c in fn.columns})),
                ('fence-call', PAR, fence({c: trivial(fn.expr[c]) for c in fn.columns})),
                ('fence-par', PAR, fence(fn.expr))]
    stmts = []
    for r in range(args.reps + 1):  # the first round warms up
        for qname, qsql in QUERIES:
            for lab, setup, relation in (variants if r % 2 == 0 else variants[::-1]):
                rel = relation(qsql) if callable(relation) else relation
                stmts += [(None, s) for s in setup]
                stmts.append(((lab, qname) if r else None,
                              qsql.replace(':tbl', rel + ('' if ' a ' in qsql else ' AS t'))))
    log('timing %d statements; load before: %s' % (len(stmts), open('/proc/loadavg').read().strip()))
    med = timed_medians(psql, stmts)
    log('load after: %s' % open('/proc/loadavg').read().strip())
    print_ratio_table([v[0] for v in variants], [q for q, _ in QUERIES], med)

    tiny = 'SELECT a.sex, a.education FROM %s a JOIN tiny USING (id)'
    def resolved(query):
        return [(lab, setup, relation(query) if callable(relation) else relation)
                for lab, setup, relation in variants]

    for lab, setup, relation in resolved(tiny):
        plan = sql(';'.join(setup) + ';EXPLAIN (ANALYZE, COSTS OFF) ' + tiny % relation + ';')
        print('indexed join %s: %s ms, %s' % (lab, re.search(r'Execution Time: ([0-9.]+)', plan).group(1),
              'primary key' if 'adult_inline_pkey' in plan else 'full scan'))
    print_planning_ms(sql, resolved(QUERIES[6][1]), QUERIES[6][1])


if __name__ == '__main__':
    main()
