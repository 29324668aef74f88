import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import type { Model } from '../../router/types.ts';
import { type Credentials, type ProviderDefinition, runProvider } from '../runtime.ts';
import { lineLimitedFetch, lineLimitFor } from '../upstream.ts';
import { builtinModels, describeModel } from './catalog.ts';
import { streamChatCompletion } from './stream.ts';

// `provider-openai`: OpenAI, and any server speaking its Chat Completions API through `api_url`
// (llama.cpp server, Ollama, vLLM, OpenRouter, DeepSeek, …).

export const PROVIDER_ID = 'openai';
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

const clients = new Map<string, OpenAI>();

/**
 * One client per key, URL and upstream line limit (it follows the answer cap, which rarely
 * changes), so keep-alive connections are reused across generations.
 */
function clientFor(credentials: Credentials, maxAnswerBytes?: number): OpenAI {
  const baseURL = credentials.api_url || DEFAULT_BASE_URL;
  // key-less local servers still need a non-empty key for the client; they ignore it
  const apiKey = credentials.api_key || 'no-key';
  const lineLimit = lineLimitFor(maxAnswerBytes);
  const cacheKey = `${baseURL}\n${apiKey}\n${lineLimit}`;
  let client = clients.get(cacheKey);
  if (!client) {
    if (clients.size > 16) clients.clear();
    client = new OpenAI({ apiKey, baseURL, maxRetries: 2, timeout: 300_000, fetch: lineLimitedFetch(lineLimit) });
    clients.set(cacheKey, client);
  }
  return client;
}

async function listModels(credentials: Credentials): Promise<Model[]> {
  const client = clientFor(credentials);
  try {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    return ids.map((id) => describeModel(id, PROVIDER_ID)).filter((m): m is Model => Boolean(m));
  } catch (err) {
    // the server does not offer GET /models: the known OpenAI models are what we can offer
    const status = (err as { status?: unknown }).status;
    if (status === 404 || status === 405 || status === 501) return builtinModels(PROVIDER_ID);
    throw err;
  }
}

export const openaiProvider: ProviderDefinition = {
  id: PROVIDER_ID,
  display_name: 'OpenAI',
  credential_env_var: 'OPENAI_API_KEY',
  base_url_env_var: 'OPENAI_BASE_URL',
  supports_model_listing: true,
  api_url_is_enough: true,
  listModels,
  stream: (request, credentials, output, signal) =>
    streamChatCompletion(
      clientFor(credentials, request.max_answer_bytes),
      request,
      output,
      signal,
      describeModel(request.model, PROVIDER_ID)?.supports_thinking === true,
    ),
};

export async function main(): Promise<void> {
  await runProvider(openaiProvider, 'provider-openai');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
