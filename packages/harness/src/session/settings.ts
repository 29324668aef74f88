import type { EngClient } from '@eng/sdk';
import { bindConfiguration } from '../shared/configuration.ts';

/** The `session-manager` configuration entry (hot-reloaded). */
export interface SessionSettings extends Record<string, unknown> {
  default_list_limit: number;
  max_list_limit: number;
  max_attachment_bytes: number;
  max_message_bytes: number;
  max_session_bytes: number;
  max_total_bytes: number;
  max_sessions: number;
}

const MiB = 1024 * 1024;

/**
 * The quotas (issue 24 item 9) are sized for a person's chat history on one machine. A message
 * may carry inline images (the model needs their bytes; providers take up to ~5 MB each), so
 * 8 MiB; text alone never comes near. A session holds a long agent run with its attachments in
 * 64 MiB; all sessions together 1 GiB, which the engine's state store keeps (in memory or a file);
 * 2,000 sessions is years of conversations, and every session's record stays in memory.
 */
export const SESSION_DEFAULTS: SessionSettings = {
  default_list_limit: 50,
  max_list_limit: 500,
  max_attachment_bytes: 8 * MiB,
  max_message_bytes: 8 * MiB,
  max_session_bytes: 64 * MiB,
  max_total_bytes: 1024 * MiB,
  max_sessions: 2000,
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
    max_message_bytes: {
      type: 'integer',
      minimum: 1,
      // an entry is one state value, which must fit the state module's limit (16 MiB by default)
      maximum: 12 * MiB,
      description: 'largest message or custom entry (its JSON) an append or update-message accepts',
    },
    max_session_bytes: {
      type: 'integer',
      minimum: 1,
      description: "largest a session may grow: its entries' JSON, its attachments' decoded bytes and its record",
    },
    max_total_bytes: { type: 'integer', minimum: 1, description: 'largest all sessions together may grow, counted like max_session_bytes' },
    max_sessions: {
      type: 'integer',
      minimum: 1,
      description: 'most sessions the store holds (create, ensure and fork are refused beyond it)',
    },
  },
  additionalProperties: false,
};

export function bindSessionSettings(client: EngClient, log: (line: string) => void) {
  return bindConfiguration<SessionSettings>(client, {
    id: 'session-manager',
    name: 'Session store',
    description: 'List page sizes, the attachment size limit and the quotas of the session store',
    schema: SCHEMA,
    defaults: SESSION_DEFAULTS,
    handlerId: 'session::on-config-change',
    log,
  });
}
