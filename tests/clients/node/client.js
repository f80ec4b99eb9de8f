// node-postgres client of the real-client matrix (tests/clients/README.md).
//
// Usage: node client.js CONFIG_JSON < steps
// CONFIG_JSON is a pg.Client configuration; "ssl": {"ca_file": PATH} is
// turned into a verifying TLS configuration with that CA.
// Each input line is a step, fields separated by tabs:
//   query NAME SQL              simple query protocol
//   prepared NAME SQL P1 P2...  named prepared statement ($1..), parameters i:<int> or s:<text>
// Prints "== NAME" then one line per row (values tab-separated, NULL as \N),
// or "!! NAME<tab>SQLSTATE<tab>message" when the statement fails.
'use strict';
const fs = require('fs');
const { Client } = require('pg');

// Values exactly as the server sent them (no Date or number conversion).
const rawTypes = { getTypeParser: () => (value) => value };

function param(p) {
  const sep = p.indexOf(':');
  const kind = p.slice(0, sep), value = p.slice(sep + 1);
  return kind === 'i' ? Number.parseInt(value, 10) : value;
}

async function main() {
  const config = JSON.parse(process.argv[2]);
  if (config.ssl && config.ssl.ca_file) {
    config.ssl = { ca: fs.readFileSync(config.ssl.ca_file, 'utf8'), rejectUnauthorized: true };
  }
  const client = new Client(config);
  await client.connect();
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.length > 0);
  const out = [];
  for (const line of lines) {
    const [kind, name, sql, ...params] = line.split('\t');
    let query;
    if (kind === 'query') {
      query = { text: sql, rowMode: 'array', types: rawTypes };
    } else if (kind === 'prepared') {
      query = { name: 'kanon_' + name, text: sql, values: params.map(param), rowMode: 'array',
                types: rawTypes };
    } else {
      throw new Error('node client: unsupported step ' + kind);
    }
    try {
      const result = await client.query(query);
      out.push('== ' + name);
      for (const row of result.rows) out.push(row.map((v) => (v === null ? '\\N' : v)).join('\t'));
    } catch (e) {
      if (!e.code) throw e;
      out.push('!! ' + name + '\t' + e.code + '\t' + e.message);
    }
  }
  await client.end();
  process.stdout.write(out.map((l) => l + '\n').join(''));
}

main().catch((e) => {
  process.stderr.write('node client: ' + (e.stack || e) + '\n');
  process.exit(1);
});
