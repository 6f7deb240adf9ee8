export * from './value-schemas.ts';
