#!/usr/bin/env bash
# The demo data of scripts/run.sh, for the postgres image's first start
# (docker-entrypoint-initdb.d): public.adult from data/adult/adult.csv and
# public.people, both protected by config/policies/; a restricted login,
# analyst, with SELECT on them (as scripts/pg-sandbox.sh --hardened grants:
# table grants, not pg_read_all_data). kanon's service account is postgres.
#
# Outside docker it runs against any empty cluster: PGHOST/PGPORT and
#   KANON_DEMO_DIR=<dir holding sql/ and adult.csv>
set -euo pipefail
DEMO="${KANON_DEMO_DIR:-/kanon-demo}"
ANALYST_PASSWORD="${KANON_ANALYST_PASSWORD:?set KANON_ANALYST_PASSWORD}"

psql -X -q -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" \
  --dbname "${POSTGRES_DB:-postgres}" -v analyst_password="$ANALYST_PASSWORD" <<SQL
\i $DEMO/sql/schema.sql
\copy public.adult (sex, age, race, "marital-status", education, "native-country", workclass, occupation, "salary-class") FROM '$DEMO/adult.csv' WITH (FORMAT csv, DELIMITER ';', HEADER true)
\i $DEMO/sql/people.sql
SET password_encryption = 'scram-sha-256';
CREATE ROLE analyst LOGIN PASSWORD :'analyst_password';
GRANT SELECT ON public.adult, public.people TO analyst;
ANALYZE;
SQL
echo "kanon demo: loaded public.adult and public.people; login analyst created"
