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

export declare const NIL: string;
export declare const MAX: string;
