import { customType } from 'drizzle-orm/pg-core';

/** A Drizzle column of the sno type; values are the IDs' 16-character strings. */
export declare const sno: ReturnType<typeof customType<{ data: string; driverData: string }>>;
