#!/usr/bin/python3
"""psycopg2 client of the real-client matrix (tests/clients/README.md).

Usage: client.py CONNINFO < steps
Each input line is a step, fields separated by tabs:
  query NAME SQL              run SQL as it is
  prepared NAME SQL P1 P2...  SQL with $1.. placeholders, parameters i:<int> or s:<text>
Prints "== NAME" then one line per row (values tab-separated, NULL as \\N),
or "!! NAME<tab>SQLSTATE<tab>message" when the statement fails.
"""
import re
import sys

import psycopg2


def param(p):
    kind, _, value = p.partition(":")
    return int(value) if kind == "i" else value


def text(v):
    return "\\N" if v is None else str(v)


def main():
    conn = psycopg2.connect(sys.argv[1])
    conn.autocommit = True
    cur = conn.cursor()
    for line in sys.stdin.read().splitlines():
        if not line:
            continue
        kind, name, sql, *params = line.split("\t")
        try:
            if kind == "query":
                cur.execute(sql)
            elif kind == "prepared":
                # psycopg2 binds on the client side: %s placeholders, simple protocol.
                cur.execute(re.sub(r"\$[0-9]+", "%s", sql), [param(p) for p in params])
            else:
                raise SystemExit("psycopg2 client: unsupported step " + kind)
            print("== " + name)
            for row in cur.fetchall():
                print("\t".join(text(v) for v in row))
        except psycopg2.Error as e:
            print("!! %s\t%s\t%s" % (name, e.pgcode, str(e).strip().splitlines()[0]))
    conn.close()


if __name__ == "__main__":
    main()
