import { domainError, storageError } from '../shared/errors.ts';

/** `session/<code>: message` (console-worker.md §2.2). */
export const sessionError = (code: string, message: string) => domainError('session', code, message);
export const sessionStorageError = (what: string, err: unknown) => storageError('session', what, err);
