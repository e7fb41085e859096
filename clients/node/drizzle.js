'use strict';
// A Drizzle column type for sno (drizzle-orm/pg-core's customType): values are the 16-character
// strings of index.js, checked on the way in (a bad one throws SnoError before the query is
// sent), read from the text form Drizzle's drivers return (or the 10 bytes, should a driver
// give binary).
//
//   const { sno } = require('sno-pg/drizzle');
//   const items = pgTable('items', { id: sno('id').primaryKey().default(sql`sno_generate(1)`) });

const { customType } = require('drizzle-orm/pg-core');
const { parse, fromBytes } = require('./index');

const sno = customType({
  dataType() {
    return 'sno';
  },
  toDriver(value) {
    return parse(value);
  },
  fromDriver(value) {
    return typeof value === 'string' ? value : fromBytes(value);
  },
});

module.exports = { sno };
