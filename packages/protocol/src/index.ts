export * from './decode.ts';
export * from './errors.ts';
export * from './functions.ts';
export * from './messages.ts';
export * from './observability.ts';
export * from './records.ts';
export * from './redact.ts';
