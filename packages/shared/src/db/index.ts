export * from './migrate.ts';
export * from './open-database.ts';
export * from './test-database.ts';
