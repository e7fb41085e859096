'use strict';
// sno through clients/node (sno-pg) with node-postgres and Drizzle, as an application uses them.
//
// node-postgres: results before and after registerSno, text and binary, arrays, parameters as
// strings and Buffers. Drizzle: a table whose primary key the server makes (sno_generate), the ID
// back from the insert, get by ID, a time window with sno_min, order, bulk insert, a foreign key,
// and strings where an ID is expected (a bad one is an error, never a wrong match). Both: the
// reference vectors of SPEC.md decode, come back and sort the same in JavaScript and in SQL.
//
// Run by tests/t/060_orms.pl (PGHOST, PGPORT, PGUSER set; argument: the vectors' file) in
// the directory tests/build_orms.sh prepared. Prints PASS/FAIL per check and a summary.

const fs = require('fs');
const { isDeepStrictEqual, inspect } = require('util');
const pg = require('pg');
const { and, asc, desc, eq, gte, lt, sql } = require('drizzle-orm');
const { drizzle } = require('drizzle-orm/node-postgres');
const { integer, pgTable } = require('drizzle-orm/pg-core');
const snoPg = require('sno-pg');
const { sno } = require('sno-pg/drizzle');

const PARTITION = 31; // the node's sno.partition
const BAD_TEXT = 'brpk4q72xwf2m631'; // a '1' is not in the alphabet
const BAD_TEXT_ERROR = 'SnoError: invalid sno "brpk4q72xwf2m631": character "1" at position 16 is not one of 23456789abcdefghijklmnopqrstuvwx';
const JAN_2021 = Date.UTC(2021, 0, 1);
const JAN_2022 = Date.UTC(2022, 0, 1);
const JAN_2023 = Date.UTC(2023, 0, 1);
// An instant inside a 4 ms unit: snoMin must floor it as SQL's sno_min does.
const INSIDE_A_UNIT = new Date('2021-11-12T01:43:02.123Z');

const results = { passed: 0, failed: 0 };

function check(name, got, expected) {
  if (isDeepStrictEqual(got, expected)) {
    results.passed++;
    console.log(`PASS: ${name}`);
  } else {
    results.failed++;
    console.log(`FAIL: ${name}\n  expected: ${inspect(expected, { depth: 5 })}\n  got:      ${inspect(got, { depth: 5 })}`);
  }
}

/** What an action threw, as 'Name: message' or the SQLSTATE of a server error, or 'no error'. */
async function errorOf(action) {
  try {
    await action();
  } catch (error) {
    const cause = error.cause || error; // Drizzle wraps the driver's error
    return cause.code ? `SQLSTATE ${cause.code}` : `${cause.name}: ${cause.message}`;
  }
  return 'no error';
}

function readVectors(path) {
  return fs.readFileSync(path, 'utf8').split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [hex, text, ms, tickTock, meta, partition, sequence] = line.split(/\s+/);
      return { hex, text, unixMs: Number(ms), parts: [tickTock, meta, partition, sequence].map(Number) };
    });
}

function oldIds() {
  const at = (time, sequence = 0) => snoPg.fromParts({ time, meta: 7, partition: 500, sequence });
  return [at(JAN_2021), at(JAN_2022 - 1), at(JAN_2022), at(JAN_2023 - 1, 9), at(JAN_2023)];
}

function valueFunctions(vectors) {
  check('sno-pg: the reference vectors decode in JavaScript as in Go',
    vectors.map((v) => {
      const p = snoPg.parts(v.text);
      return [snoPg.fromBytes(Buffer.from(v.hex, 'hex')), snoPg.toBytes(v.text).toString('hex'),
        p.unixMs, [p.tickTock, p.meta, p.partition, p.sequence]];
    }),
    vectors.map((v) => [v.text, v.hex, v.unixMs, v.parts]));
  check('sno-pg: fromParts builds the vectors', vectors.map((v) => snoPg.fromParts({
    time: v.unixMs, tickTock: v.parts[0], meta: v.parts[1], partition: v.parts[2], sequence: v.parts[3],
  })), vectors.map((v) => v.text));
  check('sno-pg: string order is byte order',
    vectors.map((v) => v.text).sort(),
    vectors.map((v) => v.hex).sort().map((hex) => snoPg.fromBytes(Buffer.from(hex, 'hex'))));
  check('sno-pg: the last 4 ms unit is the max time vector\'s',
    snoPg.snoMin(Date.parse('2079-09-07T15:47:35.548Z')), 'xxxxxxxw22222222');
  check('sno-pg: upper case is read, lower case is given', snoPg.parse('BRPK4Q72XWF2M63L'), 'brpk4q72xwf2m63l');
  return Promise.all([
    errorOf(() => snoPg.parse(BAD_TEXT)),
    errorOf(() => snoPg.parse('brpk4q72xwf2m63')),
    errorOf(() => snoPg.fromBytes(Buffer.alloc(9))),
    errorOf(() => snoPg.snoMin(new Date('2009-12-31T23:59:59.999Z'))),
    errorOf(() => snoPg.snoMin(Date.parse('2079-09-07T15:47:35.552Z'))),
    errorOf(() => snoPg.fromParts({ time: JAN_2021, meta: 256 })),
    errorOf(() => snoPg.fromParts({ time: JAN_2021, partition: 1.5 })),
  ]).then((errors) => check('sno-pg: bad text, length, bytes, time and parts are SnoErrors', errors, [
    BAD_TEXT_ERROR,
    'SnoError: invalid sno "brpk4q72xwf2m63": 15 characters, expected 16',
    'SnoError: a sno is 10 bytes, not 9',
    'SnoError: time 2009-12-31T23:59:59.999Z is outside 2010-01-01 .. 2079-09-07 15:47:35.548 UTC',
    'SnoError: time 2079-09-07T15:47:35.552Z is outside 2010-01-01 .. 2079-09-07 15:47:35.548 UTC',
    'SnoError: meta 256 is out of range 0..255',
    'SnoError: partition 1.5 is out of range 0..65535',
  ])).then(() => editionValueFunctions(vectors));
}

/** fromUuid and toUuid: the SQL edition's uuid form of an ID. */
async function editionValueFunctions(vectors) {
  check('sno-pg: toUuid is the 10 bytes and 6 zero bytes; fromUuid reads it back',
    vectors.map((v) => { const u = snoPg.toUuid(v.text); return [u, snoPg.fromUuid(u), snoPg.fromUuid(u.toUpperCase())]; }),
    vectors.map((v) => [`${v.hex.slice(0, 8)}-${v.hex.slice(8, 12)}-${v.hex.slice(12, 16)}-${v.hex.slice(16)}-000000000000`, v.text, v.text]));
  check('sno-pg: uuid order is ID order',
    vectors.map((v) => snoPg.toUuid(v.text)).sort(), vectors.map((v) => v.text).sort().map(snoPg.toUuid));
  check('sno-pg: fromUuid refuses a uuid that is not a sno, toUuid a bad ID', await Promise.all([
    errorOf(() => snoPg.fromUuid('4e6f2160-a0ff-9a0a-1033-000000000001')),
    errorOf(() => snoPg.fromUuid('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')),
    errorOf(() => snoPg.fromUuid(SAMPLE)),
    errorOf(() => snoPg.fromUuid(null)),
    errorOf(() => snoPg.toUuid(BAD_TEXT)),
  ]), [
    'SnoError: uuid 4e6f2160-a0ff-9a0a-1033-000000000001 is not a sno (sno_sql.sno): its last 6 bytes must be zero, not 000000000001',
    'SnoError: uuid a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 is not a sno (sno_sql.sno): its last 6 bytes must be zero, not 6bb9bd380a11',
    'SnoError: invalid uuid "brpk4q72xwf2m63l": not the text of a uuid',
    'SnoError: a sno_sql.sno value is a uuid string, not null',
    BAD_TEXT_ERROR,
  ]);
}

const DECODE_SQL = (table) => `SELECT k, id::text AS text,
  (extract(epoch FROM sno_time(id)) * 1000)::int8::text AS ms,
  ARRAY[sno_tick_tock(id), sno_meta(id), sno_partition(id), sno_sequence(id)] AS parts
  FROM ${table} ORDER BY k`;
const SQL_ORDER_SQL = (table) => `SELECT k FROM ${table} ORDER BY id, k`;

/** The vectors as they came back through a library, and as SQL decoded and sorted them. */
async function agreeWithSql(label, query, table, vectors, back) {
  check(`${label}: reference vectors back unchanged`, back, vectors.map((v) => v.text));
  const decoded = (await query(DECODE_SQL(table))).rows;
  check(`${label}: reference vectors decoded in SQL as in Go`,
    decoded.map((r) => [r.text, Number(r.ms), r.parts]),
    vectors.map((v) => [v.text, v.unixMs, v.parts]));
  const order = (await query(SQL_ORDER_SQL(table))).rows.map((r) => r.k);
  const inJs = back.map((id, k) => [id, k]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  check(`${label}: ORDER BY id in SQL is JavaScript's order`, order, inJs.map(([, k]) => k));
}

async function nodePostgres(vectors) {
  const client = new pg.Client({ database: 'postgres' });
  await client.connect();
  try {
    await pgResults(client);
    await pgParameters(client, vectors);
  } finally {
    await client.end();
  }
}

const SAMPLE = 'brpk4q72xwf2m63l';

/** Results before and after registerSno, in text and binary, and sno[] arrays. */
async function pgResults(client) {
  const binary = (text, values = []) => client.query({ text, values, binary: true });
  check('pg: before registerSno, a text result is the string',
    (await client.query('SELECT $1::sno AS id', [SAMPLE])).rows, [{ id: SAMPLE }]);
  const rawBinary = (await binary('SELECT $1::sno AS id', [SAMPLE])).rows[0].id;
  check('pg: before registerSno, a binary result is not an ID string',
    typeof rawBinary === 'string' && snoPg.isSno(rawBinary), false);
  const oids = await snoPg.registerSno(client);
  check('pg: registerSno finds the OIDs by name',
    oids, (await client.query("SELECT 'sno'::regtype::oid::int AS oid, 'sno[]'::regtype::oid::int AS \"arrayOid\"")).rows[0]);
  // node-postgres decodes binary results as UTF-8 first: an ID whose 10 bytes are valid UTF-8
  // comes through, and one whose bytes are not is an error, never a wrong ID.
  const utf8Safe = snoPg.fromBytes(Buffer.from('0123456789'));
  check('pg: a binary result whose bytes are valid UTF-8 is the ID string',
    (await binary('SELECT $1::sno AS id', [utf8Safe])).rows, [{ id: utf8Safe }]);
  check('pg: a binary result whose bytes are not valid UTF-8 is a SnoError',
    await errorOf(() => binary('SELECT $1::sno AS id', [SAMPLE])),
    "SnoError: node-postgres decoded this binary sno result as UTF-8, which changed its bytes: read sno in text (node-postgres's default)");
  const array = [SAMPLE, null, snoPg.NIL];
  check('pg: sno[] results in text', (await client.query('SELECT $1::sno[] AS a', [array])).rows[0].a, array);
  check('pg: sno[] results in binary, when valid UTF-8',
    [(await binary('SELECT $1::sno[] AS a', [[utf8Safe, snoPg.NIL]])).rows[0].a,
      (await binary("SELECT '{}'::sno[] AS a, $1::int AS n", [1])).rows[0].a,
      (await binary('SELECT ARRAY[ARRAY[$1::sno], ARRAY[$2::sno]] AS a', [snoPg.NIL, utf8Safe])).rows[0].a],
    [[utf8Safe, snoPg.NIL], [], [[snoPg.NIL], [utf8Safe]]]);
  check('pg: ... and a SnoError when not',
    (await errorOf(() => binary('SELECT $1::sno[] AS a', [array]))).split(':')[0], 'SnoError');
}

/** Strings and Buffers as parameters, with no cast; the vectors through an array. */
async function pgParameters(client, vectors) {
  await client.query('CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)');
  const made = (await client.query('INSERT INTO t (n) VALUES (1) RETURNING id')).rows[0].id;
  const madeParts = snoPg.parts(made);
  check('pg: a server-made ID', [madeParts.meta, madeParts.partition], [1, PARTITION]);
  await client.query('INSERT INTO t VALUES ($1, 2), ($2, 3)', [SAMPLE, snoPg.toBytes(snoPg.MAX)]);
  check('pg: a string and a Buffer of the 10 bytes as parameters, no cast',
    (await client.query('SELECT n FROM t WHERE id = $1 OR id = $2 ORDER BY n',
      [SAMPLE, snoPg.toBytes(snoPg.MAX)])).rows, [{ n: 2 }, { n: 3 }]);
  check('pg: a bad string parameter is refused by the server (22P02), not matched',
    await errorOf(() => client.query('SELECT n FROM t WHERE id = $1', [BAD_TEXT])), 'SQLSTATE 22P02');
  check('pg: snoMin and snoMax are sno_min and sno_max',
    (await client.query('SELECT sno_min($1) AS min, sno_max($1) AS max', [INSIDE_A_UNIT])).rows[0],
    { min: snoPg.snoMin(INSIDE_A_UNIT), max: snoPg.snoMax(INSIDE_A_UNIT) });
  await client.query('CREATE TEMP TABLE v (k int PRIMARY KEY, id sno)');
  await client.query('INSERT INTO v SELECT k - 1, id FROM unnest($1::sno[]) WITH ORDINALITY AS u (id, k)',
    [vectors.map((v) => v.text)]);
  const back = (await client.query('SELECT id FROM v ORDER BY k')).rows.map((r) => r.id);
  await agreeWithSql('pg', (text) => client.query(text), 'v', vectors, back);
}

// The SQL edition (sno_sql.sno, a domain over uuid), installed beside the extension in the
// database "postgres" by t/060_orms.pl and configured with partition 7.
const EDITION_PARTITION = 7;
const A_UUID = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

async function edition(vectors) {
  const client = new pg.Client({ database: 'postgres' });
  await client.connect();
  try {
    const plain = (await client.query("SELECT sno_sql.from_text($1) AS id", [SAMPLE])).rows[0].id;
    check('edition, pg: unregistered, a sno_sql.sno result is a uuid string for fromUuid',
      [plain, snoPg.fromUuid(plain)], ['4e6f2160-a0ff-9a0a-1033-000000000000', SAMPLE]);
    // The edition's parsers for some queries only (their `types`); native sno on the client.
    const types = new pg.TypeOverrides();
    const oids = await snoPg.registerEdition(client, types);
    await snoPg.registerSno(client);
    check('edition, pg: registerEdition finds the OIDs by name', oids,
      (await client.query("SELECT 'sno_sql.sno'::regtype::oid::int AS oid, 'sno_sql.sno[]'::regtype::oid::int AS \"arrayOid\"")).rows[0]);
    const query = (text, values = []) => client.query({ text, values, types });
    const ids = vectors.map((v) => v.text);
    check('edition, pg: sno_sql.from_text reads the vectors as JavaScript does',
      (await query('SELECT sno_sql.from_text(t) AS id FROM unnest($1::text[]) WITH ORDINALITY AS u (t, k) ORDER BY k',
        [ids])).rows.map((r) => r.id), ids);
    const made = (await query('SELECT sno_sql.generate(3) AS id FROM generate_series(1, 20)')).rows.map((r) => r.id);
    check("edition, pg: sno_sql.generate's IDs come back as sno strings, meta 3, partition 7",
      [...new Set(made.map((id) => { const p = snoPg.parts(id); return `${p.meta} ${p.partition}`; }))],
      [`3 ${EDITION_PARTITION}`]);
    check('edition, pg: ... distinct and increasing', made, [...new Set(made)].sort());
    await client.query('CREATE TEMP TABLE ev (k int PRIMARY KEY, id sno_sql.sno NOT NULL)');
    const every = ids.concat(made);
    for (const [k, id] of every.entries()) await client.query('INSERT INTO ev VALUES ($1, $2)', [k, snoPg.toUuid(id)]);
    const rows = (await query(`SELECT id, sno_sql.to_text(id) AS text, sno_sql.to_bytea(id)::sno AS native,
      encode(sno_sql.to_bytea(id), 'hex') AS hex FROM ev ORDER BY k`)).rows;
    check('edition, pg: toUuid parameters stored and read back as the same IDs', rows.map((r) => r.id), every);
    check("edition, pg: the stored IDs are native sno's same IDs (text and bytes)",
      rows.map((r) => [r.text, r.native, r.hex]), every.map((id) => [id, id, snoPg.toBytes(id).toString('hex')]));
    const order = (await client.query('SELECT k FROM ev ORDER BY id, k')).rows.map((r) => r.k);
    check("edition, pg: ORDER BY id is JavaScript's order", order,
      every.map((id, k) => [id, k]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])).map(([, k]) => k));
    check('edition, pg: WHERE with a uuid, and = ANY of a uuid[]',
      (await client.query('SELECT array_agg(k ORDER BY k) AS ks FROM ev WHERE id = $1 OR id = ANY($2)',
        [snoPg.toUuid(made[0]), [ids[10], made[19]].map(snoPg.toUuid)])).rows[0].ks,
      [10, ids.length, every.length - 1]);
    check('edition, pg: sno_sql.sno[] results, with the uuid parsers and without',
      [(await query('SELECT array_agg(id ORDER BY k) AS a FROM ev')).rows[0].a,
        (await client.query('SELECT array_agg(id ORDER BY k) AS a FROM ev')).rows[0].a],
      [every, `{${every.map(snoPg.toUuid).join(',')}}`]);
    check('edition, pg: a real uuid read with the uuid parsers is a SnoError, and a string without',
      [await errorOf(() => query(`SELECT '${A_UUID}'::uuid AS u`)),
        (await client.query(`SELECT '${A_UUID}'::uuid AS u`)).rows[0].u],
      [`SnoError: uuid ${A_UUID} is not a sno (sno_sql.sno): its last 6 bytes must be zero, not 6bb9bd380a11`, A_UUID]);
    check("edition, pg: a sno's text compared with the column is refused (22P02)",
      [await errorOf(() => client.query(`SELECT 1 FROM ev WHERE id = '${SAMPLE}'`)),
        await errorOf(() => client.query('SELECT 1 FROM ev WHERE id = $1', [SAMPLE]))],
      ['SQLSTATE 22P02', 'SQLSTATE 22P02']);
    await snoPg.registerEdition(client, client, { uuids: false });
    check('edition, pg: registerEdition with uuids: false sets sno_sql.sno[] only',
      [(await client.query('SELECT (array_agg(id ORDER BY k))[1:2] AS a, min(id::text)::uuid AS u FROM ev')).rows[0]],
      [{ a: every.slice(0, 2), u: snoPg.toUuid([...every].sort()[0]) }]);
  } finally {
    await client.end();
  }
}

const items = pgTable('items', {
  id: sno('id').primaryKey().default(sql`sno_generate(1)`),
  n: integer('n').notNull(),
});
const children = pgTable('children', {
  id: sno('id').primaryKey().default(sql`sno_generate(2)`),
  itemId: sno('item_id').notNull().references(() => items.id),
});
const vectorsTable = pgTable('vectors', {
  k: integer('k').primaryKey(),
  id: sno('id').notNull(),
});

async function drizzleChecks(vectors) {
  const pool = new pg.Pool({ database: 'postgres', max: 1 });
  const db = drizzle(pool);
  try {
    // The tables as a migration would make them (drizzle-kit's output for this schema).
    await pool.query(`DROP TABLE IF EXISTS children, items, vectors;
      CREATE TABLE items (id sno PRIMARY KEY DEFAULT sno_generate(1), n integer NOT NULL);
      CREATE TABLE children (id sno PRIMARY KEY DEFAULT sno_generate(2),
                             item_id sno NOT NULL REFERENCES items (id));
      CREATE TABLE vectors (k integer PRIMARY KEY, id sno NOT NULL)`);
    const made = await drizzleKeysAndStrings(db, pool);
    await drizzleBulkAndOrder(db);
    await drizzleTimeWindow(db);
    await drizzleForeignKey(db, made);
    await db.insert(vectorsTable).values(vectors.map((v, k) => ({ k, id: v.text })));
    const back = (await db.select({ id: vectorsTable.id }).from(vectorsTable).orderBy(vectorsTable.k)).map((r) => r.id);
    await agreeWithSql('Drizzle', (text) => pool.query(text), 'vectors', vectors, back);
    await pool.query('DROP TABLE children, items, vectors');
  } finally {
    await pool.end();
  }
}

/** The server's key back from an insert; lookups by ID, in upper case, by bad strings. */
async function drizzleKeysAndStrings(db, pool) {
  const [{ id: made }] = await db.insert(items).values({ n: 1 }).returning({ id: items.id });
  const madeParts = snoPg.parts(made);
  check('Drizzle: insert with the server default returns the ID',
    [madeParts.meta, madeParts.partition], [1, PARTITION]);
  check('Drizzle: ... the ID the server stored', made,
    (await pool.query('SELECT id::text FROM items WHERE n = 1')).rows[0].id);
  check('Drizzle: get by ID', await db.select().from(items).where(eq(items.id, made)), [{ id: made, n: 1 }]);
  check('Drizzle: get by the ID in upper case (checked, then sent canonical)',
    await db.select({ n: items.n }).from(items).where(eq(items.id, made.toUpperCase())), [{ n: 1 }]);
  check('Drizzle: a bad string for the column is an error before the query',
    await errorOf(() => db.select().from(items).where(eq(items.id, BAD_TEXT))), BAD_TEXT_ERROR);
  check('Drizzle: a bad string in raw sql is refused by the server (22P02), not matched',
    await errorOf(() => db.select().from(items).where(sql`${items.id} = ${BAD_TEXT}`)), 'SQLSTATE 22P02');
  return made;
}

async function drizzleBulkAndOrder(db) {
  const bulk = (await db.insert(items).values([2, 3, 4, 5, 6].map((n) => ({ n })))
    .returning({ id: items.id })).map((r) => r.id);
  check('Drizzle: bulk insert returns 5 IDs, in insert order',
    [new Set(bulk).size, [...bulk].sort()], [5, bulk]);
  check('Drizzle: ORDER BY id is the insert order',
    (await db.select({ n: items.n }).from(items).orderBy(asc(items.id))).map((r) => r.n), [1, 2, 3, 4, 5, 6]);
  const loaded = (await db.select({ id: items.id }).from(items).orderBy(desc(items.id))).map((r) => r.id);
  check("Drizzle: ... and JavaScript's order of the loaded IDs", [...loaded].sort().reverse(), loaded);
}

async function drizzleTimeWindow(db) {
  const old = oldIds();
  await db.insert(items).values(old.map((id, k) => ({ id, n: 2020 + k })));
  const windowSql = await db.select({ id: items.id }).from(items)
    .where(and(gte(items.id, sql`sno_min(${new Date(JAN_2022)})`), lt(items.id, sql`sno_min(${new Date(JAN_2023)})`)))
    .orderBy(items.id);
  check('Drizzle: a time window with sno_min', windowSql.map((r) => r.id), old.slice(2, 4));
  const windowJs = await db.select({ id: items.id }).from(items)
    .where(and(gte(items.id, snoPg.snoMin(JAN_2022)), lt(items.id, snoPg.snoMin(JAN_2023))))
    .orderBy(items.id);
  check('Drizzle: the same window with snoMin', windowJs.map((r) => r.id), old.slice(2, 4));
}

async function drizzleForeignKey(db, made) {
  const [{ id: child }] = await db.insert(children).values({ itemId: made }).returning({ id: children.id });
  check('Drizzle: a foreign key to a sno key, joined',
    await db.select({ child: children.id, item: items.id, n: items.n }).from(children)
      .innerJoin(items, eq(children.itemId, items.id)),
    [{ child, item: made, n: 1 }]);
  check("Drizzle: ... the child's ID has meta 2", snoPg.parts(child).meta, 2);
  check('Drizzle: a child of no item is a foreign key violation (23503)',
    await errorOf(() => db.insert(children).values({ itemId: snoPg.fromParts({ time: JAN_2021, meta: 9 }) })),
    'SQLSTATE 23503');
}

async function main() {
  const vectors = readVectors(process.argv[2]);
  await valueFunctions(vectors);
  await nodePostgres(vectors);
  await edition(vectors);
  await drizzleChecks(vectors);
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exitCode = results.failed ? 1 : 0;
}

main().catch((error) => {
  console.log(error.stack);
  process.exitCode = 2;
});
