import { pathToFileURL } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import type { Model } from '../../router/types.ts';
import { type Credentials, type ProviderDefinition, runProvider } from '../runtime.ts';
import { lineLimitedFetch, lineLimitFor } from '../upstream.ts';
import { builtinModels, describeModel } from './catalog.ts';
import { streamMessage } from './stream.ts';

// `provider-anthropic`: the Anthropic Messages API, streaming with tool use and thinking blocks.

export const PROVIDER_ID = 'anthropic';
const DEFAULT_MAX_TOKENS = 8192;

const clients = new Map<string, Anthropic>();

/** One client per key, URL and upstream line limit (it follows the answer cap). */
function clientFor(credentials: Credentials, maxAnswerBytes?: number): Anthropic {
  // the client wants the origin: a configured `…/v1` or `…/v1/messages` is trimmed back to it
  const baseURL = credentials.api_url?.replace(/\/v1(\/messages)?\/?$/, '') || undefined;
  const apiKey = credentials.api_key || 'no-key';
  const lineLimit = lineLimitFor(maxAnswerBytes);
  const cacheKey = `${baseURL ?? ''}\n${apiKey}\n${lineLimit}`;
  let client = clients.get(cacheKey);
  if (!client) {
    if (clients.size > 16) clients.clear();
    client = new Anthropic({ apiKey, baseURL, maxRetries: 2, timeout: 300_000, fetch: lineLimitedFetch(lineLimit) });
    clients.set(cacheKey, client);
  }
  return client;
}

/** Known models by id, so a stream knows the model's thinking budgets and output limit. */
const seen = new Map<string, Model>();

async function listModels(credentials: Credentials): Promise<Model[]> {
  const client = clientFor(credentials);
  let models: Model[];
  try {
    models = [];
    for await (const info of client.models.list()) models.push(describeModel(info.id, PROVIDER_ID, info.display_name));
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (status !== 404 && status !== 405 && status !== 501) throw err;
    models = builtinModels(PROVIDER_ID);
  }
  for (const model of models) seen.set(model.id, model);
  return models;
}

export const anthropicProvider: ProviderDefinition = {
  id: PROVIDER_ID,
  display_name: 'Anthropic',
  credential_env_var: 'ANTHROPIC_API_KEY',
  base_url_env_var: 'ANTHROPIC_BASE_URL',
  supports_model_listing: true,
  api_url_is_enough: false,
  listModels,
  stream: (request, credentials, output, signal) => {
    const model = seen.get(request.model) ?? describeModel(request.model, PROVIDER_ID);
    const maxTokens = Math.min(DEFAULT_MAX_TOKENS, model.max_output_tokens);
    return streamMessage(clientFor(credentials, request.max_answer_bytes), request, model, maxTokens, output, signal);
  },
};

export async function main(): Promise<void> {
  await runProvider(anthropicProvider, 'provider-anthropic');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
