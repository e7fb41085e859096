'use strict';
// sno IDs for node-postgres: an ID is its 16-character text, a plain string, which sorts and
// compares as the 10 bytes do (the alphabet is in ASCII order). The functions here check, read
// and build them; registerSno makes node-postgres return every sno result, text or binary, and
// sno[] arrays, as such strings (binary ones with a caveat: see serverBytes). Parameters need
// nothing: node-postgres sends a string untyped and the server reads it as sno, and a Buffer of
// the 10 bytes goes as sno's binary form.
//
// The SQL edition (sno_sql, for managed services that load no extension library) stores an ID
// in a sno_sql.sno column, a domain over uuid: the 10 bytes and 6 zero bytes. node-postgres
// returns it as a uuid string; fromUuid and toUuid convert, so an ID is the same string in both
// editions, and registerEdition sets the parsers for a client or a query.

const ALPHABET = '23456789abcdefghijklmnopqrstuvwx';
const VALUES = new Map();
for (let i = 0; i < ALPHABET.length; i++) {
  VALUES.set(ALPHABET[i], i);
  VALUES.set(ALPHABET[i].toUpperCase(), i);
}
const EPOCH_MS = 1262304000000;
const MAX_UNITS = 2 ** 39 - 1;
const SIZE = 10;
const HALF = 2 ** 40; // each 5-byte half of an ID is 8 characters, and fits a double exactly

/** A value that is not a sno ID, or a part out of its range. */
class SnoError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SnoError';
  }
}

function halfToText(bytes, start) {
  let number = 0;
  for (let i = start; i < start + 5; i++) number = number * 256 + bytes[i];
  let text = '';
  for (let i = 7; i >= 0; i--) text += ALPHABET[Math.floor(number / 2 ** (5 * i)) % 32];
  return text;
}

/** The 16 characters of an ID's 10 bytes (a Buffer or Uint8Array). */
function fromBytes(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new SnoError(`a sno's bytes are a Buffer or Uint8Array, not ${typeof bytes}`);
  if (bytes.length !== SIZE) throw new SnoError(`a sno is ${SIZE} bytes, not ${bytes.length}`);
  return halfToText(bytes, 0) + halfToText(bytes, 5);
}

/** The ID of a text, in its canonical (lower-case) form; a SnoError says what is wrong. */
function parse(text) {
  if (typeof text !== 'string') throw new SnoError(`a sno is a string, not ${text === null ? 'null' : typeof text}`);
  if (text.length !== 16) throw new SnoError(`invalid sno ${JSON.stringify(text)}: ${text.length} characters, expected 16`);
  for (let i = 0; i < 16; i++) {
    if (!VALUES.has(text[i])) {
      throw new SnoError(`invalid sno ${JSON.stringify(text)}: character ${JSON.stringify(text[i])} at position ${i + 1} is not one of ${ALPHABET}`);
    }
  }
  return text.toLowerCase();
}

/** Whether a value is a valid sno text. */
function isSno(value) {
  try {
    parse(value);
    return true;
  } catch (error) {
    if (error instanceof SnoError) return false;
    throw error;
  }
}

function textToHalf(text, start, bytes, offset) {
  let number = 0;
  for (let i = start; i < start + 8; i++) number = number * 32 + VALUES.get(text[i]);
  for (let i = 4; i >= 0; i--) {
    bytes[offset + i] = number % 256;
    number = Math.floor(number / 256);
  }
}

/** The 10 bytes of an ID's text, as a Buffer. */
function toBytes(text) {
  const canonical = parse(text);
  const bytes = Buffer.alloc(SIZE);
  textToHalf(canonical, 0, bytes, 0);
  textToHalf(canonical, 8, bytes, 5);
  return bytes;
}

// A uuid's text as the server prints it (upper case accepted): its last group is its last 6
// bytes, zero in a sno_sql.sno value, and the other four are the ID's 10 bytes.
const UUID_TEXT = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i;
const EDITION_TAIL = '000000000000';

/**
 * The ID of a value of the SQL edition's sno_sql.sno type, as node-postgres returns it (a uuid
 * string). A uuid whose last 6 bytes are not zero is not such a value: a SnoError.
 */
function fromUuid(uuid) {
  if (typeof uuid !== 'string') throw new SnoError(`a sno_sql.sno value is a uuid string, not ${uuid === null ? 'null' : typeof uuid}`);
  const groups = UUID_TEXT.exec(uuid);
  if (!groups) throw new SnoError(`invalid uuid ${JSON.stringify(uuid)}: not the text of a uuid`);
  if (groups[5] !== EDITION_TAIL) {
    throw new SnoError(`uuid ${uuid.toLowerCase()} is not a sno (sno_sql.sno): its last 6 bytes must be zero, not ${groups[5].toLowerCase()}`);
  }
  return fromBytes(Buffer.from(groups.slice(1, 5).join(''), 'hex'));
}

/** The uuid string of an ID for the SQL edition's sno_sql.sno type: what to send for it. */
function toUuid(text) {
  const hex = toBytes(text).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${EDITION_TAIL}`;
}

/** The parts of an ID, as SQL's sno_decode: time (a Date: the start of its 4 ms unit). */
function parts(text) {
  const bytes = toBytes(text);
  const time = bytes.readUIntBE(0, 5);
  const unixMs = EPOCH_MS + 4 * Math.floor(time / 2);
  return {
    time: new Date(unixMs),
    unixMs,
    tickTock: time % 2,
    meta: bytes[5],
    partition: bytes.readUInt16BE(6),
    sequence: bytes.readUInt16BE(8),
  };
}

function unitsOf(at) {
  const ms = at instanceof Date ? at.getTime() : at;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new SnoError(`a time is a Date or Unix milliseconds, not ${String(at)}`);
  const units = Math.floor((ms - EPOCH_MS) / 4);
  if (units < 0 || units > MAX_UNITS) {
    throw new SnoError(`time ${new Date(ms).toISOString()} is outside 2010-01-01 .. 2079-09-07 15:47:35.548 UTC`);
  }
  return units;
}

function checkRange(name, value, bits) {
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** bits) {
    throw new SnoError(`${name} ${value} is out of range 0..${2 ** bits - 1}`);
  }
  return value;
}

/** The ID of these parts, as SQL's sno_from_parts; time is a Date or Unix milliseconds. */
function fromParts({ time, meta = 0, partition = 0, sequence = 0, tickTock = 0 }) {
  const bytes = Buffer.alloc(SIZE);
  bytes.writeUIntBE(unitsOf(time) * 2 + checkRange('tickTock', tickTock, 1), 0, 5);
  bytes[5] = checkRange('meta', meta, 8);
  bytes.writeUInt16BE(checkRange('partition', partition, 16), 6);
  bytes.writeUInt16BE(checkRange('sequence', sequence, 16), 8);
  return fromBytes(bytes);
}

/** The smallest ID of the 4 ms unit containing a time: SQL's sno_min. */
function snoMin(at) {
  return fromParts({ time: at });
}

/** The largest ID of the 4 ms unit containing a time: SQL's sno_max. */
function snoMax(at) {
  return fromParts({ time: at, meta: 255, partition: 65535, sequence: 65535, tickTock: 1 });
}

// node-postgres (8.x) reads every result as UTF-8 text before a parser sees it, binary ones too
// (pg-protocol's BufferReader), and hands a binary parser Buffer.from(that text): bytes that
// were not valid UTF-8 come back as U+FFFD (EF BF BD), and the length may not even change. So a
// binary result is only taken when it has no U+FFFD in it: then it is the server's bytes
// exactly. Otherwise it is an error, never a wrong ID.
const REPLACEMENT = Buffer.from([0xef, 0xbf, 0xbd]);

function serverBytes(buffer) {
  if (buffer.includes(REPLACEMENT)) {
    throw new SnoError('node-postgres decoded this binary sno result as UTF-8, which changed its bytes: read sno in text (node-postgres\'s default)');
  }
  return buffer;
}

function parseBinary(buffer) {
  return fromBytes(serverBytes(buffer));
}

// Arrays. Text: '{a,b,NULL}', nested for more dimensions (a sno never needs quotes). Binary:
// PostgreSQL's array_send: dimensions, a has-nulls flag, the element type, then per dimension
// its length and lower bound, then each element as a length (-1: NULL) and its bytes. Each
// parser reads its elements with `element` (text: the element's text; binary: its bytes);
// `type` names the array's type in errors.
function textArrayParser(type, element) {
  return (text) => {
    let position = 0;
    function list() {
      if (text[position] !== '{') throw new SnoError(`invalid ${type} ${JSON.stringify(text)}`);
      position++;
      const items = [];
      if (text[position] === '}') {
        position++;
        return items;
      }
      for (;;) {
        if (text[position] === '{') {
          items.push(list());
        } else {
          let end = position;
          while (end < text.length && text[end] !== ',' && text[end] !== '}') end++;
          const value = text.slice(position, end);
          items.push(value === 'NULL' ? null : element(value));
          position = end;
        }
        const separator = text[position++];
        if (separator === '}') return items;
        if (separator !== ',') throw new SnoError(`invalid ${type} ${JSON.stringify(text)}`);
      }
    }
    return list();
  };
}

function binaryArrayParser(element) {
  return (buffer) => {
    serverBytes(buffer);
    const dimensions = buffer.readInt32BE(0);
    if (dimensions === 0) return [];
    const lengths = [];
    for (let d = 0; d < dimensions; d++) lengths.push(buffer.readInt32BE(12 + 8 * d));
    let offset = 12 + 8 * dimensions;
    function level(d) {
      const items = [];
      for (let i = 0; i < lengths[d]; i++) {
        if (d + 1 < dimensions) {
          items.push(level(d + 1));
          continue;
        }
        const length = buffer.readInt32BE(offset);
        offset += 4;
        if (length === -1) {
          items.push(null);
        } else {
          items.push(element(buffer.subarray(offset, offset + length)));
          offset += length;
        }
      }
      return items;
    }
    return level(0);
  };
}

const parseTextArray = textArrayParser('sno[]', parse);
const parseBinaryArray = binaryArrayParser(fromBytes);

/**
 * Looks the sno type up by name in the connected database (its OID differs between databases)
 * and sets parsers for it and sno[] on `types`: a pg Client (the default: `queryable` itself),
 * a pg TypeOverrides, or pg.types for every connection of the process. `queryable` is a pg
 * Client or Pool. Returns the OIDs.
 */
async function registerSno(queryable, types = queryable) {
  const { rows } = await queryable.query(
    "SELECT to_regtype('sno')::oid AS oid, to_regtype('sno[]')::oid AS array_oid",
  );
  const { oid, array_oid: arrayOid } = rows[0];
  if (oid === null) throw new SnoError('type sno not found: run CREATE EXTENSION sno in this database');
  if (typeof types.setTypeParser !== 'function') {
    throw new SnoError('registerSno(pool) needs where to register: registerSno(pool, pg.types) or a TypeOverrides');
  }
  types.setTypeParser(Number(oid), 'text', (text) => text);
  types.setTypeParser(Number(oid), 'binary', parseBinary);
  types.setTypeParser(Number(arrayOid), 'text', parseTextArray);
  types.setTypeParser(Number(arrayOid), 'binary', parseBinaryArray);
  return { oid: Number(oid), arrayOid: Number(arrayOid) };
}

// sno_sql.sno's binary form is uuid's: 16 bytes, the ID's 10 and 6 zero bytes.
function editionBytes(bytes) {
  if (bytes.length !== 16) throw new SnoError(`a sno_sql.sno value is a uuid, 16 bytes, not ${bytes.length}`);
  const hex = bytes.toString('hex');
  return fromUuid(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
}

function parseEditionBinary(buffer) {
  return editionBytes(serverBytes(buffer));
}

const parseEditionTextArray = textArrayParser('sno_sql.sno[]', fromUuid);
const parseEditionBinaryArray = binaryArrayParser(editionBytes);

const UUID_OID = 2950; // a built-in type: the same OID in every database
const UUID_ARRAY_OID = 2951;

/**
 * For the SQL edition: looks sno_sql.sno[] up by name and sets parsers on `types` (a pg Client,
 * the default: `queryable` itself; a pg TypeOverrides, which a query may take as its `types`; or
 * pg.types) so that its results are sno strings. A sno_sql.sno column comes back with uuid's OID
 * (the server reports a domain's base type), so with `{ uuids: true }` (the default) every uuid
 * and uuid[] result read through `types` is taken as a sno, and one that is not (its last 6 bytes
 * not zero) throws SnoError. Returns the OIDs.
 */
async function registerEdition(queryable, types = queryable, { uuids = true } = {}) {
  const { rows } = await queryable.query(
    "SELECT to_regtype('sno_sql.sno')::oid AS oid, to_regtype('sno_sql.sno[]')::oid AS array_oid",
  );
  const { oid, array_oid: arrayOid } = rows[0];
  if (oid === null) throw new SnoError('type sno_sql.sno not found: install sno\'s SQL edition in this database first');
  if (typeof types.setTypeParser !== 'function') {
    throw new SnoError('registerEdition(pool) needs where to register: registerEdition(pool, pg.types) or a TypeOverrides');
  }
  types.setTypeParser(Number(arrayOid), 'text', parseEditionTextArray);
  types.setTypeParser(Number(arrayOid), 'binary', parseEditionBinaryArray);
  if (uuids) {
    types.setTypeParser(UUID_OID, 'text', fromUuid);
    types.setTypeParser(UUID_OID, 'binary', parseEditionBinary);
    types.setTypeParser(UUID_ARRAY_OID, 'text', parseEditionTextArray);
    types.setTypeParser(UUID_ARRAY_OID, 'binary', parseEditionBinaryArray);
  }
  return { oid: Number(oid), arrayOid: Number(arrayOid) };
}

module.exports = {
  SnoError,
  parse,
  isSno,
  fromBytes,
  toBytes,
  parts,
  fromParts,
  snoMin,
  snoMax,
  registerSno,
  fromUuid,
  toUuid,
  registerEdition,
  NIL: '2222222222222222',
  MAX: 'xxxxxxxxxxxxxxxx',
};
