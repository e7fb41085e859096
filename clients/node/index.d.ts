/** A value that is not a sno ID, or a part out of its range. */
export declare class SnoError extends Error {}

/** An ID's parts, as SQL's sno_decode. */
export interface SnoParts {
  time: Date;
  unixMs: number;
  tickTock: number;
  meta: number;
  partition: number;
  sequence: number;
}

/** The ID of a text, in its canonical (lower-case) form; throws SnoError. */
export declare function parse(text: string): string;
export declare function isSno(value: unknown): value is string;
export declare function fromBytes(bytes: Uint8Array): string;
export declare function toBytes(text: string): Buffer;
export declare function parts(text: string): SnoParts;
export declare function fromParts(parts: {
  time: Date | number;
  meta?: number;
  partition?: number;
  sequence?: number;
  tickTock?: number;
}): string;
export declare function snoMin(at: Date | number): string;
export declare function snoMax(at: Date | number): string;

interface TypeParserTarget {
  setTypeParser(oid: number, format: 'text' | 'binary', parse: (value: any) => any): void;
}
interface Queryable {
  query(text: string): Promise<{ rows: any[] }>;
}
/** Sets the sno and sno[] result parsers (OIDs looked up by name); returns the OIDs. */
export declare function registerSno(
  queryable: Queryable,
  types?: TypeParserTarget,
): Promise<{ oid: number; arrayOid: number }>;

/**
 * The ID of a value of the SQL edition's sno_sql.sno type (a uuid string, as node-postgres
 * returns it); throws SnoError for a uuid whose last 6 bytes are not zero.
 */
export declare function fromUuid(uuid: string): string;
/** The uuid string to send for an ID in the SQL edition's sno_sql.sno type. */
export declare function toUuid(text: string): string;
/**
 * Sets the SQL edition's result parsers (sno_sql.sno[] looked up by name; with uuids, the
 * default, every uuid and uuid[] result too): results are sno strings. Returns the OIDs.
 */
export declare function registerEdition(
  queryable: Queryable,
  types?: TypeParserTarget,
  options?: { uuids?: boolean },
): Promise<{ oid: number; arrayOid: number }>;

export declare const NIL: string;
export declare const MAX: string;
