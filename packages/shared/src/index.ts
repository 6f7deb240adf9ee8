export * from './field-errors.ts';
export * from './http/client-error.ts';
export * from './ids.ts';
export * from './json-depth.ts';
export * from './problem.ts';
export * from './run-bundle.ts';
export * from './time.ts';
