import { domainError } from '../shared/errors.ts';

// The router's errors (spec §2.2 style `router/<code>: message`), through the chat stack's one helper.

export const routerError = (code: 'no_provider_for_model' | 'provider_unavailable' | 'invalid_request', message: string) =>
  domainError('router', code, message);
