#!/usr/bin/env python3
"""Mask layouts measured at SQL level (issue 28 item 2; not a test, not product code).

Compares, in one psql session and in alternating order, the BI queries of
bench/proxy_masked.sh over:

  direct      the raw table, server defaults (JIT, parallel workers)
  direct+rs   the raw table, jit = off, no parallel workers
  cur         kanon's masks as `kanon tree --format sql` prints them (per
              column, cost-based form), serial, jit = off
  curC        the same with COLLATE pg_catalog."C" on every text comparison
  curB        the same masks in a subquery PostgreSQL does not pull up (a
              volatile call in a dead CASE arm of an extra column)
  walk        one walk of the disclosure tree per row in such a subquery,
              yielding the bitmask of released quasi-identifiers; each column
              is CASE WHEN (m & bit) <> 0 THEN col END
  walkC       walk with COLLATE "C"
  *-par       jit = off with the server's parallel workers

The tree is rebuilt from `kanon tree --format json` (cohort paths and their
released attributes), reduced (a test whose branches are equal is dropped,
equal subtrees shared) and written in kanon's flat form (runs of tests on
one attribute with the same result merged into = ANY).

  kanon tree --config C --table public.adult_inline --format json > tree.json
  kanon tree --config C --table public.adult_inline --format sql > masks.sql
  bench/mask_layouts.py --port P --tree tree.json --masks masks.sql \
      --table public.adult_inline --int age [--reps 5] [--check]

--check first verifies that every layout gives the same value as `cur` for
every row and column. Prints a markdown table: median ms (ratio to direct),
and for the LIMIT query the added ms.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys

QUERIES = [
    ('GROUP BY occupation, sex', 'SELECT occupation, sex, count(*) FROM :tbl GROUP BY occupation, sex'),
    ('GROUP BY education', 'SELECT education, count(*) FROM :tbl GROUP BY education'),
    ('COUNT(*) WHERE age = 39', 'SELECT count(*) FROM :tbl WHERE age = 39'),
    ('COUNT(DISTINCT "native-country")', 'SELECT count(DISTINCT "native-country") FROM :tbl'),
    ('join, GROUP BY workclass, grp', 'SELECT a.workclass, g.grp, count(*) FROM :tbl a '
     'JOIN occupation_group g USING (occupation) GROUP BY 1, 2'),
    ('GROUP BY race: avg(age), count', 'SELECT race, avg(age), count(*) FROM :tbl GROUP BY race'),
    ('SELECT * LIMIT 1000', 'SELECT * FROM :tbl LIMIT 1000'),
]
SER = ['SET jit = off', 'SET max_parallel_workers_per_gather = 0']
PAR = ['SET jit = off', 'RESET max_parallel_workers_per_gather']
DEF = ['RESET jit', 'RESET max_parallel_workers_per_gather']
C = ' COLLATE pg_catalog."C"'


def qi(name):
    return '"' + name.replace('"', '""') + '"'


class Walk:
    def __init__(self, tree, ints):
        self.ints = ints
        self.qis = list(tree['rules'].keys())
        self.bit = {q: 1 << i for i, q in enumerate(self.qis)}
        nodes = {}
        for c in tree['cohorts']:
            key = ()
            for st in c['path']:
                nodes.setdefault(key, {})['test'] = (st['attribute'], st['value'])
                key += ((st['attribute'], st['value'], st['op']),)
            nodes.setdefault(key, {})['leaf'] = sum(self.bit[q] for q in c['released'])
        self.table, interned = [], {}

        def build(key):
            n = nodes[key]
            if 'leaf' in n:
                sig = ('L', n['leaf'])
            else:
                a, v = n['test']
                e, ne = build(key + ((a, v, '='),)), build(key + ((a, v, '<>'),))
                if e == ne:
                    return e
                sig = ('T', a, v, e, ne)
            if sig not in interned:
                interned[sig] = len(self.table)
                self.table.append(sig)
            return interned[sig]

        self.root = build(())

    def literal(self, a, vs, coll):
        if len(vs) == 1:
            v = "'" + vs[0].replace("'", "''") + "'"
            return v + ('::pg_catalog.int4' if a in self.ints else '::pg_catalog.text' + (C if coll else ''))
        body = ','.join('"' + v.replace('\\', '\\\\').replace('"', '\\"') + '"' for v in vs)
        body = "'{" + body.replace("'", "''") + "}'"
        t = '::pg_catalog.int4[]' if a in self.ints else '::pg_catalog.text[]' + (C if coll else '')
        return 'ANY (' + body + t + ')'

    def sql(self, coll, i=None, out=None):
        top = out is None
        out = [] if top else out
        i = self.root if i is None else i
        if self.table[i][0] == 'L':
            out.append(str(self.table[i][1]))
        else:
            arms, run, cur = [], 0, i
            while self.table[cur][0] == 'T':
                _, a, v, e, ne = self.table[cur]
                if arms and arms[run][0] != a:
                    run = len(arms)
                for arm in arms[run:]:
                    if arm[2] == e:
                        arm[1].append(v)
                        break
                else:
                    arms.append([a, [v], e])
                cur = ne
            out.append('CASE')
            for a, vs, e in arms:
                out.append(' WHEN ' + qi(a) + ' OPERATOR(pg_catalog.=) ' + self.literal(a, vs, coll) + ' THEN ')
                self.sql(coll, e, out)
            out.append(' ELSE ')
            self.sql(coll, cur, out)
            out.append(' END')
        return ''.join(out) if top else None


def add_collate(s):
    s = s.replace("'::pg_catalog.text[])", "'::pg_catalog.text[]" + C + ")")
    return re.sub(r"('(?:[^']|'')*'::pg_catalog\.text)(?!\[)", r'\1' + C, s)


def timed_medians(psql, stmts):
    """Runs (label or None, sql) statements in one psql session with \\timing
    and returns the median milliseconds per label."""
    script = '\\timing on\n\\o /dev/null\n' + ';\n'.join(s for _, s in stmts) + ';\n'
    p = subprocess.run(psql, input=script, capture_output=True, text=True, check=True)
    times = [float(t) for t in re.findall(r'^Time: ([0-9.]+) ms', p.stdout, re.M)]
    assert len(times) == len(stmts), (len(times), len(stmts))
    res = {}
    for (lab, _), t in zip(stmts, times):
        if lab:
            res.setdefault(lab, []).append(t)
    return {k: statistics.median(v) for k, v in res.items()}


def print_ratio_table(labs, queries, med):
    """Prints one row per query (ms and ratio to 'direct'; added ms for the
    SELECT * query) and the median (worst) ratio per label; '-' where a label
    did not run a query."""
    print('| query | ' + ' | '.join(labs) + ' |\n|---|' + '---|' * len(labs))
    ratios = {lab: [] for lab in labs}
    for qname in queries:
        cells = []
        for lab in labs:
            if (lab, qname) not in med:
                cells.append('-')
                continue
            t, ref = med[(lab, qname)], med[('direct', qname)]
            if qname.startswith('SELECT *'):
                cells.append('%.1f (%+.1f)' % (t, t - ref))
            else:
                ratios[lab].append(t / ref)
                cells.append('%.0f (%.2fx)' % (t, t / ref))
        print('| %s | %s |' % (qname, ' | '.join(cells)), flush=True)
    print('| **median (worst)** | ' + ' | '.join(
        '%.2fx (%.2fx)' % (statistics.median(ratios[lab]), max(ratios[lab])) for lab in labs) + ' |')


def print_planning_ms(sql, variants, query):
    """Prints the median planning time of `query` (with :tbl) over 7 new
    sessions per (label, setup, relation) variant, alternating the order;
    variants without a relation are left out."""
    plan_ms = {}
    for r in range(7):
        for lab, setup, relation in (variants if r % 2 == 0 else variants[::-1]):
            if relation is None:
                continue
            out = sql(';'.join(setup) + ';EXPLAIN (SUMMARY) ' + query.replace(':tbl', relation + ' AS t') + ';')
            plan_ms.setdefault(lab, []).append(float(re.search(r'Planning Time: ([0-9.]+)', out).group(1)))
    print('planning ms of the LIMIT query (new session, median of 7): ' + ', '.join(
        '%s %.2f' % (k, statistics.median(v)) for k, v in plan_ms.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', required=True)
    ap.add_argument('--tree', required=True)
    ap.add_argument('--masks', required=True)
    ap.add_argument('--table', required=True)
    ap.add_argument('--int', action='append', default=[], help='integer quasi-identifier')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--check', action='store_true')
    args = ap.parse_args()
    tree = json.load(open(args.tree))
    walk = Walk(tree, set(args.int))
    body = open(args.masks).read().strip()
    select_list = body[len('SELECT'):body.rindex('FROM')].strip()
    columns = [m.group(1) for m in re.finditer(r' AS "((?:[^"]|"")*)"(?:,\n|\n|$)', select_list + '\n')]
    names = ', '.join(qi(c) for c in columns)
    marker = 'CASE WHEN false THEN pg_catalog.random() END AS "kanon volatile"'

    def walk_rel(coll):
        outer = ', '.join(
            'CASE WHEN ("kanon released" OPERATOR(pg_catalog.&) %d) OPERATOR(pg_catalog.<>) 0 '
            'THEN %s END AS %s' % (walk.bit[c], qi(c), qi(c)) if c in walk.bit else qi(c) for c in columns)
        return '(SELECT %s FROM (SELECT %s, %s AS "kanon released", %s FROM %s) AS "kanon walk")' % (
            outer, names, walk.sql(coll), marker, args.table)

    rel = {
        'cur': '(SELECT %s FROM %s)' % (select_list, args.table),
        'curC': '(SELECT %s FROM %s)' % (add_collate(select_list), args.table),
        'curB': '(SELECT %s FROM (SELECT %s, %s FROM %s) AS "kanon masks")' % (
            names, select_list, marker, args.table),
        'walk': walk_rel(False),
        'walkC': walk_rel(True),
    }
    variants = [('direct', DEF, args.table), ('direct+rs', SER, args.table)] + \
        [(k, SER, v) for k, v in rel.items()] + [('cur-par', PAR, rel['cur']), ('walkC-par', PAR, rel['walkC'])]
    print('walk: %d tests, %d bytes; cur: %d bytes' % (
        sum(1 for s in walk.table if s[0] == 'T'), len(rel['walk']), len(rel['cur'])), file=sys.stderr)
    psql = ['psql', '-X', '-q', '-h', '127.0.0.1', '-p', args.port, '-U', 'postgres', '-d', 'postgres',
            '-v', 'ON_ERROR_STOP=1']
    if args.check:
        qis = [c for c in columns if c in walk.bit]
        differ = ' OR '.join('c.%s IS DISTINCT FROM w.%s' % (qi(c), qi(c)) for c in qis)
        for k, v in rel.items():
            n = subprocess.run(psql + ['-At'], input='SET jit = off; SELECT count(*) FROM %s c JOIN %s w '
                               'USING (id) WHERE %s;' % (rel['cur'], v, differ),
                               capture_output=True, text=True, check=True)
            print('check %s: %s rows differ from cur' % (k, n.stdout.strip()), file=sys.stderr)
    stmts = []
    for r in range(args.reps + 1):  # the first round warms up
        for qname, qsql in QUERIES:
            for lab, setup, relation in (variants if r % 2 == 0 else variants[::-1]):
                stmts += [(None, s) for s in setup]
                alias = '' if ' a ' in qsql else ' AS t'
                stmts.append(((lab, qname) if r else None, qsql.replace(':tbl', relation + alias)))
    med = timed_medians(psql, stmts)
    print_ratio_table([v[0] for v in variants], [q for q, _ in QUERIES], med)


if __name__ == '__main__':
    main()
