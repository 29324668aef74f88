import type { EngClient } from '@eng/sdk';
import { bindConfiguration } from '../shared/configuration.ts';

/** The `session-manager` configuration entry (hot-reloaded). */
export interface SessionSettings extends Record<string, unknown> {
  default_list_limit: number;
  max_list_limit: number;
  max_attachment_bytes: number;
}

export const SESSION_DEFAULTS: SessionSettings = {
  default_list_limit: 50,
  max_list_limit: 500,
  max_attachment_bytes: 8 * 1024 * 1024,
};

const SCHEMA = {
  type: 'object',
  properties: {
    default_list_limit: { type: 'integer', minimum: 1, maximum: 10000, description: 'page size when list/messages omit limit' },
    max_list_limit: { type: 'integer', minimum: 1, maximum: 10000, description: 'hard cap on any requested limit' },
    max_attachment_bytes: {
      type: 'integer',
      minimum: 1,
      // base64 of the bytes must fit the state module's value limit (16 MiB by default)
      maximum: 12 * 1024 * 1024,
      description: 'largest decoded attachment session::put-attachment accepts',
    },
  },
  additionalProperties: false,
};

export function bindSessionSettings(client: EngClient, log: (line: string) => void) {
  return bindConfiguration<SessionSettings>(client, {
    id: 'session-manager',
    name: 'Session store',
    description: 'List page sizes and the attachment size limit of the session store',
    schema: SCHEMA,
    defaults: SESSION_DEFAULTS,
    handlerId: 'session::on-config-change',
    log,
  });
}
