// Reading Spark's JSON frames, which arrive untyped.
export type Json = Record<string, unknown>;
export { isObject } from '../../shared';
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');
