import type { EngClient } from '@eng/sdk';
import { bindConfiguration } from '../shared/configuration.ts';
import type { PermissionMode, Rule } from './policy.ts';

/** The `approval-gate` configuration entry (console-worker.md §2.7), hot-reloaded. */
export interface GateSettings extends Record<string, unknown> {
  default_mode: PermissionMode;
  rules: Rule[];
  pending_timeout_ms: number;
}

export const GATE_DEFAULTS: GateSettings = {
  default_mode: 'manual',
  rules: ['!approval::*', '!configuration::*'],
  pending_timeout_ms: 30 * 60 * 1000,
};

const MODE = { type: 'string', enum: ['manual', 'auto', 'full'] };

export const GATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    default_mode: { ...MODE, description: 'mode of sessions that never chose one' },
    rules: {
      type: 'array',
      description: 'first match wins; no match holds the call for a person. "glob" allows, "!glob" denies',
      items: {
        anyOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            additionalProperties: false,
            required: ['function', 'action'],
            properties: {
              function: { type: 'string', minLength: 1 },
              action: { type: 'string', enum: ['allow', 'deny', 'ask'] },
              modes: { type: 'array', items: MODE },
            },
          },
        ],
      },
    },
    pending_timeout_ms: {
      type: 'integer',
      minimum: 100,
      maximum: 7 * 24 * 3600 * 1000,
      description: 'a held call nobody decides on is denied (outcome timeout) after this long',
    },
  },
};

export function bindGateSettings(client: EngClient, log: (line: string) => void) {
  return bindConfiguration<GateSettings>(client, {
    id: 'approval-gate',
    name: 'Approval gate',
    description: 'Default permission mode, allow/deny rules and the pending timeout of held function calls',
    schema: GATE_SCHEMA,
    defaults: GATE_DEFAULTS,
    handlerId: 'approval::on-config-change',
    log,
  });
}
